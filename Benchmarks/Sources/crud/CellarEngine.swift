import BenchSupport
@_spi(Testing) import Cellar
import CellarStorage
import Foundation

/// The steps through Cellar's public API: the generated `Store(directoryPath:)` (model-crud.json's
/// model) with default options (durability `.full`: every
/// commit is synced, which is what step f asks for), `Box<Note>`, and `box.query { Note.author == 42 }`.
/// `StoreOptions.compression`, named for Crud.swift (which does not import Cellar).
typealias CellarCompression = Cellar.Compression

enum CellarEngine {
    /// The key of the `cellar-encrypted` engine's stores (`StoreOptions.encryptionKey`): 32 random
    /// bytes, drawn once per process, so that every run of the invocation uses the same key.
    static let encryptionKey = EncryptionKey.random()

    /// The options the cellar engines open their stores with: values compressed as `compression`
    /// says, encrypted with `encryptionKey` when `encrypted`, the change history when `history`.
    static func storeOptions(compression: CellarCompression = .none, encrypted: Bool = false, history: Bool) -> StoreOptions {
        StoreOptions(compression: compression, encryptionKey: encrypted ? encryptionKey : nil, changeHistory: history)
    }

    /// `encrypted`: the `cellar-encrypted` engine, the store encrypted with `encryptionKey` (the
    /// default `decryptedCacheSize`); else a plain store. `history`: the `cellar-history` engine,
    /// the store with `StoreOptions.changeHistory` on.
    /// `undoableUpdate`: the `cellar-undo` engine, step d an undoable write
    /// (`Store.write(actionName:)`, which needs `history`).
    static func run(_ w: Workload, folder: String, compression: CellarCompression, encrypted: Bool,
                    history: Bool = false, undoableUpdate: Bool = false) throws -> RunResult {
        let n = w.n
        let path = folder + "/cellar"
        var result = RunResult()
        let store = try Store(directoryPath: path, options: storeOptions(compression: compression, encrypted: encrypted, history: history))
        defer { store.close() }
        let box = store.box(for: Note.self)

        // a: put N new objects in one write transaction; the store assigns ids 1...N.
        var objects = w.notes
        objects.withUnsafeMutableBufferPointer { _ in }  // the copy the put writes ids into, made before the timer
        var start = now()
        let ids = try timedPut(box, &objects)
        result.seconds[.a] = now() - start
        try check("a: \(n) ids", ids.count == n, "\(ids.count)")
        for (k, id) in ids.enumerated() where id.value != Id(k + 1) || objects[k].id != Id(k + 1) {
            throw BenchError("check failed: a: object \(k + 1) got id \(id.value), expected \(k + 1)")
        }
        try check("a: box.count() == N", try box.count() == n)
        result.sizeAfterA = folderBytes(path)
        result.logAfterA = Int(store.fileSize.total)
        if compression == .zstdDictionary() {
            // The dictionary is trained by a compaction: one now (untimed), so that b…g run on
            // records compressed with it, as they would once the store has compacted itself.
            start = now()
            try store.compact()
            result.trainingSeconds = now() - start
            result.sizeAfterATrained = folderBytes(path)
            try check("a, compacted: box.count() == N", try box.count() == n)
        }

        // b: one read transaction, every object by id in the CRUD workload's random order, title length
        // read from the stored record (Box.visit(id:), as the anchors read one FlatBuffers field).
        start = now()
        let (found, titleBytes) = try timedVisits(store, box, w.permutation)
        result.seconds[.b] = now() - start
        try w.checkGets("cellar b", found: found, titleBytes: titleBytes)

        // bget: the same with every Note built (Box.get), as most apps read.
        start = now()
        let (built, builtTitleBytes) = try timedGets(store, box, w.permutation)
        result.seconds[.bget] = now() - start
        try w.checkGets("cellar bget", found: built, titleBytes: builtTitleBytes)

        // c: scan all objects in id order, Σ creationDate (read from each record, no object built).
        start = now()
        let (scanned, creationSum, ordered) = try timedScan(box)
        result.seconds[.c] = now() - start
        try w.checkScan("cellar c", scanned: scanned, ordered: ordered, creationSum: creationSum)

        result.seconds[.d] = try stepD(store, box, &objects, w, undoable: undoableUpdate)
        result.sizeAfterD = folderBytes(path)
        if undoableUpdate { try undoAndRedoD(store, box, w) }

        // After d: a copy of the data file (read and written, not mapped: no RSS), compacted after
        // the run by `compactCopy` (while a writer commits to it), outside the run's peak RSS.
        try FileManager.default.createDirectory(atPath: compactionFolder(folder), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: path + "/" + StorageEngine.dataFileName,
                                         toPath: compactionFolder(folder) + "/" + StorageEngine.dataFileName)

        // e, e2, e2find, e3: the query built once, outside the timers.
        let query = try box.query { Note.author == 42 }.build()
        let hits = w.authorIds.count
        var counts = [Int](repeating: -1, count: Workload.queries)
        start = now()
        try timedCount(query, into: &counts)
        result.seconds[.e] = now() - start
        for count in counts { try check("e: count == \(hits)", count == hits, "\(count)") }

        var visits = [(hits: Int, titleBytes: Int)](repeating: (-1, -1), count: Workload.queries)
        start = now()
        try timedVisit(query, into: &visits)
        result.seconds[.e2] = now() - start
        for v in visits {
            try check("e2: \(hits) hits visited", v.hits == hits, "\(v.hits)")
            try check("e2: Σ title length == 20 × hits", v.titleBytes == 20 * hits, "\(v.titleBytes)")
        }

        var finds = [(hits: Int, titleBytes: Int, wrongAuthor: Int)](repeating: (-1, -1, -1), count: Workload.queries)
        start = now()
        try timedFind(query, into: &finds)
        result.seconds[.e2find] = now() - start
        for v in finds {
            try check("e2find: \(hits) hits", v.hits == hits, "\(v.hits)")
            try check("e2find: Σ title length == 20 × hits", v.titleBytes == 20 * hits, "\(v.titleBytes)")
            try check("e2find: every hit has author 42", v.wrongAuthor == 0, "\(v.wrongAuthor) others")
        }

        var idLists = [[EntityId<Note>]](repeating: [], count: Workload.queries)
        start = now()
        try timedIds(query, into: &idLists)
        result.seconds[.e3] = now() - start
        for list in idLists {
            try check("e3: ids == 42, 142, 242, …", list.map { Int64($0.value) } == w.authorIds,
                      "\(list.prefix(3).map(\.value))… (\(list.count))")
        }

        // f: 1,000 write transactions (implicit, one per put), each updating one object, each synced.
        let beforeF = store.lastCommitId
        start = now()
        try timedDurableCommits(box, &objects, Workload.commits(n))
        result.seconds[.f] = now() - start
        try checkModificationDates("f", box, w, afterF: true)

        // Reading the past: the commit before f, back through f's commits, and an object f changed
        // read there. (When the store compacted itself during f, the oldest commit it still holds.)
        let past = max(beforeF, try store.oldestReadableCommit()?.commit ?? beforeF)
        start = now()
        let pastDate = try store.read(asOf: .commit(past)) { try box.get(1)?.modificationDate }
        result.pastRead = (store.lastCommitId - past, now() - start)
        if past == beforeF {
            try check("past read: object 1 as it was before f", pastDate == DateEncoding.date(milliseconds: w.modificationMs(1, afterF: false)),
                      "\(String(describing: pastDate))")
        }

        // g: remove all in one write transaction.
        start = now()
        let removed = try timedRemoveAll(box)
        result.seconds[.g] = now() - start
        try check("g: removed N", removed == n, "\(removed)")
        try check("g: store empty", try box.count() == 0 && box.all().isEmpty)
        try check("g: the author index empty", try query.count() == 0 && query.findIds().isEmpty)
        return result
    }

    /// Step d: one write transaction, every object rebuilt with modificationDate = creationDate
    /// + 60 s; `undoable`: as an undoable write (`Store.write(actionName:)`). Returns its seconds,
    /// after checking the store.
    static func stepD(_ store: Store, _ box: Box<Note>, _ objects: inout [Note], _ w: Workload, undoable: Bool) throws -> Double {
        let start = now()
        if undoable {
            try store.write(actionName: "update all") { try timedUpdateAll(store, box, &objects) }
        } else {
            try timedUpdateAll(store, box, &objects)
        }
        let seconds = now() - start
        if undoable { try check("d: an undo step", try store.undoActionName() == "update all") }
        try checkModificationDates("d", box, w, afterF: false)
        return seconds
    }

    /// cellar-undo after step d: undoes d (every modification date back to its creation date),
    /// then redoes it, each checked and timed (logged, not a step of the workload: the first
    /// undo is where a step that names its commits gets its values).
    static func undoAndRedoD(_ store: Store, _ box: Box<Note>, _ w: Workload) throws {
        var start = now()
        try check("d: undone", try store.undo() == "update all")
        let undo = now() - start
        for id in [1, w.n / 2, w.n] {
            let note = try box.get(Id(id))
            try check("d undone: object \(id) as step a left it", note.map { $0.modificationDate == $0.creationDate } ?? false)
        }
        start = now()
        try check("d: redone", try store.redo() == "update all")
        let redo = now() - start
        try checkModificationDates("d redone", box, w, afterF: false)
        log(String(format: "cellar-undo: undo of d %.1f ms, its redo %.1f ms", undo * 1000, redo * 1000))
    }

    /// Step d alone, as `run` runs it: a fresh store in `folder` (with the change history when
    /// `history`), step a untimed, then d (`undoable`: as cellar-undo). Returns d's seconds.
    static func onlyStepD(_ w: Workload, folder: String, history: Bool, undoable: Bool) throws -> Double {
        let store = try Store(directoryPath: folder + "/cellar", options: storeOptions(history: history))
        defer { store.close() }
        let box = store.box(for: Note.self)
        var objects = w.notes
        _ = try timedPut(box, &objects)
        return try stepD(store, box, &objects, w, undoable: undoable)
    }

    /// Reads (id, modificationDate) of every object from the records, without building the
    /// objects (as the SQLite side reads those two columns), so that the check holds no copy of
    /// the store in memory and peak RSS stays the engine's.
    static func checkModificationDates(_ step: String, _ box: Box<Note>, _ w: Workload, afterF: Bool) throws {
        var k = 0
        try box.query().build().visit { note in
            k += 1
            let expected = w.modificationMs(k, afterF: afterF)
            let got = try note.integer(Note.modificationDate)
            guard note.id == Id(k), got == expected else {
                throw BenchError("check failed: \(step): object \(note.id) modificationDate \(got.map(String.init) ?? "nil"), expected \(expected) (object \(k))")
            }
            return true
        }
        try check("\(step): N objects read back", k == w.n, "\(k)")
    }

    // The timed work of each step, one function each (never inlined), so that a profiler can
    // collect exactly it: `callgrind --toggle-collect='*timedGets*'`.

    static func compactionFolder(_ folder: String) -> String { folder + "/cellar-after-d" }

    /// Compacts the copy of the store made after d *online* (`Store.compact()`), while another
    /// thread goes on committing durable one-object updates to it, and records the compacted size
    /// (the log's length at the swap), the throughput, and how long writers waited: the longest
    /// wait compaction reports, and the longest commit the writer saw during the compaction against
    /// the longest it saw outside it. Runs after the measured run, so the run's peak RSS is the run's.
    /// `encrypted`: the copy is of an encrypted store (`run`'s `encrypted`), opened with `encryptionKey`.
    static func compactCopy(folder: String, _ w: Workload, compression: CellarCompression, encrypted: Bool,
                            history: Bool = false, into result: inout RunResult) throws {
        let n = w.n
        let copy = compactionFolder(folder)
        var options = storeOptions(compression: compression, encrypted: encrypted, history: history)
        options.automaticCompaction = nil
        let store = try Store(directoryPath: copy, options: options)
        defer { store.close() }
        let box = store.box(for: Note.self)
        let writer = CommitLog()
        let (report, compactionWindow) = try withWriter(box, objects: n, log: writer) {
            Thread.sleep(forTimeInterval: 0.3)  // commits before: the baseline
            let start = now()
            let report = try store.compact()
            let end = now()
            Thread.sleep(forTimeInterval: 0.3)
            return (report, start...end)
        }
        let commits = writer.commits
        let during = commits.filter { compactionWindow.overlaps($0.start...$0.end) }
        let outside = commits.filter { !compactionWindow.overlaps($0.start...$0.end) }
        let latencies = (during.map { $0.end - $0.start }, outside.map { $0.end - $0.start })
        // The compacted log's length at the swap (the writer's commits after it not counted).
        result.compaction = CompactionFigures(
            bytesAfter: Int(report.bytesAfter), bytesBefore: Int(report.bytesBefore), seconds: Double(report.milliseconds) / 1000,
            writerLockHold: Double(report.longestWriterWaitMicroseconds) / 1e6, commitsDuring: during.count,
            p99During: percentile99(latencies.0), p99Outside: percentile99(latencies.1),
            longestDuring: latencies.0.max() ?? 0, longestOutside: latencies.1.max() ?? 0)
        if let error = writer.error { throw BenchError("compaction: the writer failed: \(error)") }
        try check("compaction: the writer committed during the compaction", !during.isEmpty)
        try check("compaction: the copy keeps every object", try box.count() == n)
        let query = try box.query { Note.author == 42 }.build()
        try check("compaction: the author index answers as before", try query.count() == w.authorIds.count)
        try check("compaction: the writer's updates are kept",
                  try commits.allSatisfy { commit in
                      try box.get(commit.id).map { $0.modificationDate == $0.creationDate.addingTimeInterval(90) } ?? false
                  })
    }

    static func percentile99(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        return values.sorted()[min(values.count - 1, values.count * 99 / 100)]
    }

    /// Runs `body` while a thread commits one-object updates (ids 1, 2, … `objects`, 1, 2, …;
    /// modificationDate = creationDate + 90 s; each its own durable write transaction) into `log`,
    /// then stops it.
    static func withWriter<T>(_ box: Box<Note>, objects: Int, log: CommitLog, _ body: () throws -> T) rethrows -> T {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var id: Id = 1
            while !log.stopped {
                let start = now()
                do {
                    guard var note = try box.get(id) else { throw BenchError("object \(id) is missing") }
                    note.modificationDate = note.creationDate.addingTimeInterval(90)
                    try box.put(note)
                } catch {
                    log.fail(error)
                    break
                }
                log.append(id: id, start: start, end: now())
                id = id % Id(objects) + 1
            }
            done.signal()
        }
        defer {
            log.stop()
            done.wait()
        }
        return try body()
    }

    @inline(never)
    static func timedPut(_ box: Box<Note>, _ objects: inout [Note]) throws -> [EntityId<Note>] {
        try box.put(&objects)
    }

    @inline(never)
    static func timedVisits(_ store: Store, _ box: Box<Note>, _ order: [UInt64]) throws -> (found: Int, titleBytes: Int) {
        try titleLengths(store, order) { id in try box.visit(id: id) { try $0.utf8Count(Note.title) ?? 0 } }
    }

    @inline(never)
    static func timedGets(_ store: Store, _ box: Box<Note>, _ order: [UInt64]) throws -> (found: Int, titleBytes: Int) {
        try titleLengths(store, order) { id in try box.get(id)?.title.utf8.count }
    }

    /// Steps b and bget: in one read transaction, the title length of each id in `order`
    /// (`titleLength` nil: not found).
    @inline(__always)
    static func titleLengths(_ store: Store, _ order: [UInt64], _ titleLength: (Id) throws -> Int?) throws -> (found: Int, titleBytes: Int) {
        try store.runInReadOnlyTransaction {
            var found = 0
            var titleBytes = 0
            for id in order {
                if let count = try titleLength(Id(id)) {
                    found += 1
                    titleBytes += count
                }
            }
            return (found, titleBytes)
        }
    }

    @inline(never)
    static func timedScan(_ box: Box<Note>) throws -> (count: Int, creationSum: Int64, ordered: Bool) {
        // Reads the one field the step sums from each stored record (`Query.visit`), as the
        // anchors' harnesses read one field of each FlatBuffers table; `box.all()` would build
        // every Note (two Strings and an object each).
        var (count, sum, ordered) = (0, Int64(0), true)
        try box.query().build().visit { note in
            count += 1
            sum &+= try note.integer(Note.creationDate) ?? 0
            if note.id != Id(count) { ordered = false }
            return true
        }
        return (count, sum, ordered)
    }

    @inline(never)
    static func timedUpdateAll(_ store: Store, _ box: Box<Note>, _ objects: inout [Note]) throws {
        try store.runInTransaction {
            for k in objects.indices {
                objects[k].modificationDate = DateEncoding.date(milliseconds: Workload.creationMs(k + 1) + 60_000)
            }
            _ = try box.put(objects)
        }
    }

    @inline(never)
    static func timedCount(_ query: Query<Note>, into counts: inout [Int]) throws {
        for k in counts.indices { counts[k] = try query.count() }
    }

    @inline(never)
    static func timedVisit(_ query: Query<Note>, into visits: inout [(hits: Int, titleBytes: Int)]) throws {
        for k in visits.indices {
            var (hits, titleBytes) = (0, 0)
            try query.visit {
                hits += 1
                titleBytes += try $0.utf8Count(Note.title) ?? 0
                return true
            }
            visits[k] = (hits, titleBytes)
        }
    }

    @inline(never)
    static func timedFind(_ query: Query<Note>, into finds: inout [(hits: Int, titleBytes: Int, wrongAuthor: Int)]) throws {
        for k in finds.indices {
            let notes = try query.find()
            var (titleBytes, wrongAuthor) = (0, 0)
            for note in notes {
                titleBytes += note.title.utf8.count
                if note.author != 42 { wrongAuthor += 1 }
            }
            finds[k] = (notes.count, titleBytes, wrongAuthor)
        }
    }

    @inline(never)
    static func timedIds(_ query: Query<Note>, into lists: inout [[EntityId<Note>]]) throws {
        for k in lists.indices { lists[k] = try query.findIds() }
    }

    @inline(never)
    static func timedDurableCommits(_ box: Box<Note>, _ objects: inout [Note], _ commits: Int) throws {
        for k in 0..<commits {
            objects[k].modificationDate = DateEncoding.date(milliseconds: Workload.creationMs(k + 1) + 120_000)
            _ = try box.put(objects[k])
        }
    }

    @inline(never)
    static func timedRemoveAll(_ box: Box<Note>) throws -> Int {
        try box.removeAll()
    }
}

/// The commits of `CellarEngine.withWriter`'s thread, and when to stop it.
final class CommitLog: @unchecked Sendable {
    // Every member behind `lock`.
    private let lock = NSLock()
    private var entries: [(id: Id, start: Double, end: Double)] = []
    private var stopFlag = false
    private var failure: (any Error)?

    var commits: [(id: Id, start: Double, end: Double)] { lock.withLock { entries } }
    var stopped: Bool { lock.withLock { stopFlag } }
    var error: (any Error)? { lock.withLock { failure } }
    func append(id: Id, start: Double, end: Double) { lock.withLock { entries.append((id, start, end)) } }
    func stop() { lock.withLock { stopFlag = true } }
    func fail(_ error: any Error) { lock.withLock { failure = error } }
}
