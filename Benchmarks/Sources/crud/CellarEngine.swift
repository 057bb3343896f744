import BenchSupport
import Cellar
import CellarStorage
import Foundation

/// The steps through Cellar's public API: the generated `Store(directoryPath:)` (model-crud.json's
/// model) with default options (durability `.full`: every
/// commit is synced, which is what step f asks for), `Box<Note>`, and `box.query { Note.author == 42 }`.
enum CellarEngine {
    static func run(_ w: Workload, folder: String) throws -> RunResult {
        let n = w.n
        let path = folder + "/cellar"
        var result = RunResult()
        let store = try Store(directoryPath: path)
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

        // b: one read transaction, every object by id in WORKLOAD.md's random order, title length
        // read from the stored record (Box.visit(id:), as the anchors read one FlatBuffers field).
        start = now()
        let (found, titleBytes) = try timedVisits(store, box, w.permutation)
        result.seconds[.b] = now() - start
        try check("b: every object found", found == n, "\(found) of \(n)")
        try check("b: Σ title length == 20 N", titleBytes == 20 * n, "\(titleBytes)")

        // bget: the same with every Note built (Box.get), as most apps read.
        start = now()
        let (built, builtTitleBytes) = try timedGets(store, box, w.permutation)
        result.seconds[.bget] = now() - start
        try check("bget: every object found", built == n, "\(built) of \(n)")
        try check("bget: Σ title length == 20 N", builtTitleBytes == 20 * n, "\(builtTitleBytes)")

        // c: scan all objects in id order, Σ creationDate (read from each record, no object built).
        start = now()
        let (scanned, creationSum, ordered) = try timedScan(box)
        result.seconds[.c] = now() - start
        try check("c: scanned N objects", scanned == n, "\(scanned)")
        try check("c: ids ascending 1...N", ordered)
        try check("c: Σ creationDate == closed form", creationSum == w.creationSum, "\(creationSum) vs \(w.creationSum)")

        // d: one write transaction, every object rebuilt with modificationDate = creationDate + 60 s.
        start = now()
        try timedUpdateAll(store, box, &objects)
        result.seconds[.d] = now() - start
        try checkModificationDates("d", box, w, afterF: false)
        result.sizeAfterD = folderBytes(path)

        // After d: a copy of the data file (read and written, not mapped: no RSS), compacted after
        // the run by `compactCopy`, so that the compaction is not in the run's peak RSS.
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
        start = now()
        try timedDurableCommits(box, &objects, Workload.commits(n))
        result.seconds[.f] = now() - start
        try checkModificationDates("f", box, w, afterF: true)

        // g: remove all in one write transaction.
        start = now()
        let removed = try timedRemoveAll(box)
        result.seconds[.g] = now() - start
        try check("g: removed N", removed == n, "\(removed)")
        try check("g: store empty", try box.count() == 0 && box.all().isEmpty)
        try check("g: the author index empty", try query.count() == 0 && query.findIds().isEmpty)
        return result
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

    /// Compacts the copy of the store made after d offline (`StorageEngine.compact`: the store in
    /// use stayed as it was for the next steps) and records its size. Online compaction, while
    /// readers and writers go on, is not built yet.
    static func compactCopy(folder: String, _ w: Workload, into result: inout RunResult) throws {
        let n = w.n
        let copy = compactionFolder(folder)
        let report = try StorageEngine.compact(directory: copy)
        result.sizeAfterCompaction = folderBytes(copy)
        result.compactionSeconds = Double(report.milliseconds) / 1000
        result.compactedBytes = Int(report.bytesBefore)
        let store = try Store(directoryPath: copy)
        defer { store.close() }
        try check("compaction: the copy keeps every object", try store.box(for: Note.self).count() == n)
        let query = try store.box(for: Note.self).query { Note.author == 42 }.build()
        try check("compaction: the author index answers as before", try query.count() == w.authorIds.count)
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
