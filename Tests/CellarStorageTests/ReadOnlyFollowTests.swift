import CellarStorage
import CellarTestSupport
import Dispatch
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// A read-only engine beside the engine that writes the store (here in the same process; the
/// read-only open takes no lock): each read transaction starts on the newest whole commit, never
/// on a partial one, and follows a compaction that renames a new file over the data file.
@Suite("read-only engines follow the writer")
struct ReadOnlyFollowTests {
    static func writerOptions() -> StorageOptions {
        var options = StorageOptions(durability: .none, initialMapSize: 1 << 20, nodeSize: 512)
        options.automaticCompaction = nil
        return options
    }

    static let readerOptions = StorageOptions(readOnly: true, initialMapSize: 1 << 20)

    /// Random puts and deletes on two trees, some values large (so that the file outgrows the
    /// reader's first mapping), applied to `model` too.
    static func randomCommit(_ engine: StorageEngine, model: inout Model, rng: inout SplitMix64) throws {
        var operations: [Operation] = []
        for _ in 0..<(1 + Int(rng.next() % 20)) {
            let tree = rng.next() % 2 == 0 ? "a" : "b"
            let key = bigEndianKey(rng.next() % 200)
            if rng.next() % 4 == 0 {
                operations.append(.delete(tree: tree, key: key))
            } else {
                let size = rng.next() % 10 == 0 ? 20_000 : Int(rng.next() % 300)
                operations.append(.put(tree: tree, key: key, value: (0..<size).map { _ in UInt8(truncatingIfNeeded: rng.next()) }))
            }
        }
        try engine.write { txn in try apply(operations, to: txn) }
        model.apply(operations)
    }

    @Test("each read transaction of a read-only engine starts on the writer's newest commit; one already open keeps its own")
    func followsCommits() throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let directory = TestDirectory("follow")
        defer { directory.remove() }
        let writer = try StorageEngine(directory: directory.path, options: Self.writerOptions())
        defer { writer.close() }
        var model = Model()
        try Self.randomCommit(writer, model: &model, rng: &rng)
        let reader = try StorageEngine(directory: directory.path, options: Self.readerOptions)
        defer { reader.close() }
        for round in 0..<200 {
            let before = try reader.beginRead()
            let modelBefore = model
            try Self.randomCommit(writer, model: &model, rng: &rng)
            let txn = try reader.beginRead()
            #expect(txn.transactionId == writer.lastTransactionId, "round \(round) (seed \(seed))")
            let seen = try Model(reading: txn)
            #expect(seen == model, "round \(round): \(seen.difference(from: model) ?? "") (seed \(seed))")
            #expect(try Model(reading: before) == modelBefore, "round \(round): an open read transaction changed (seed \(seed))")
        }
        // The file outgrew the reader's first mapping (1 MiB: the store was tiny at its open).
        #expect(writer.fileSize > 2 << 20)
    }

    @Test("a read-only engine follows a compaction of the writer to the new file; a read transaction open across it keeps reading the old one",
          arguments: [nil, .commits(10)] as [StorageOptions.PastRetention?])
    func followsCompaction(window: StorageOptions.PastRetention?) throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let directory = TestDirectory("follow-compaction")
        defer { directory.remove() }
        var options = Self.writerOptions()
        // With a window the compacted file ends on the newest commit's own id (not a higher one),
        // and the reader reads the window's commits there.
        options.pastRetention = window
        let writer = try StorageEngine(directory: directory.path, options: options)
        defer { writer.close() }
        var model = Model()
        let reader = try StorageEngine(directory: directory.path, options: Self.readerOptions)
        defer { reader.close() }
        var recent: [(id: UInt64, model: Model)] = []
        for round in 0..<6 {
            for _ in 0..<30 {
                try Self.randomCommit(writer, model: &model, rng: &rng)
                recent = recent.suffix(9) + [(writer.lastTransactionId, model)]
            }
            let old = try reader.beginRead()
            let oldModel = model
            #expect(try Model(reading: old) == model)
            try writer.compact()
            // The old snapshot reads the old file, unlinked now.
            #expect(try Model(reading: old) == oldModel, "round \(round) (seed \(seed))")
            let txn = try reader.beginRead()
            #expect(txn.transactionId == writer.lastTransactionId, "round \(round) (seed \(seed))")
            #expect(try Model(reading: txn) == model, "round \(round) (seed \(seed))")
            if window != nil {
                for state in recent {
                    #expect(try Model(reading: reader.beginRead(asOf: .transaction(state.id))) == state.model, "round \(round) (seed \(seed))")
                }
            }
            // Commits to the new file are seen too.
            try Self.randomCommit(writer, model: &model, rng: &rng)
            #expect(try reader.read { try Model(reading: $0) } == model, "round \(round) (seed \(seed))")
            #expect(try Model(reading: old) == oldModel, "round \(round) (seed \(seed))")
        }
        #expect(reader.followedCompactions == 6)
        #expect(reader.lastTransactionId == writer.lastTransactionId)
    }

    @Test("readers on many threads follow a writer and its compactions: every snapshot is one the writer committed, ids never go back")
    func concurrentReaders() throws {
        let seed = SplitMix64.testSeed()
        let directory = TestDirectory("follow-threads")
        defer { directory.remove() }
        let writer = try StorageEngine(directory: directory.path, options: Self.writerOptions())
        defer { writer.close() }
        // Commit k puts key 0 = k and key k = k in tree "a": a snapshot at id t must hold
        // exactly keys 0 and 1...t with those values.
        try writer.write { try $0.put($0.tree("a")!, key: bigEndianKey(0), value: bigEndianKey(1)) }
        let reader = try StorageEngine(directory: directory.path, options: Self.readerOptions)
        defer { reader.close() }
        let failures = Locked<[String]>([])
        let done = Locked(false)
        let group = DispatchGroup()
        for _ in 0..<3 {
            DispatchQueue.global().async(group: group) {
                var last: UInt64 = 0
                while !done.withLock({ $0 }) {
                    do {
                        let txn = try reader.beginRead()
                        let tree = try txn.tree("a")!
                        let k = try txn.get(tree, key: bigEndianKey(0)).map { $0.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } } ?? 0
                        let count = try txn.count(tree)
                        if k < last || count != Int(k) { failures.withLock { $0.append("at \(k) after \(last): \(count) keys") } }
                        last = k
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        for k in 2...400 {
            try writer.write { txn in
                let tree = try txn.tree("a")!
                try txn.put(tree, key: bigEndianKey(0), value: bigEndianKey(UInt64(k)))
                try txn.put(tree, key: bigEndianKey(UInt64(k - 1)), value: [UInt8](repeating: 7, count: Int(k % 50) * 40))
            }
            if k % 100 == 0 { try writer.compact() }
        }
        done.withLock { $0 = true }
        group.wait()
        #expect(failures.withLock { $0 } == [], "seed \(seed)")
        #expect(try reader.read { txn in try txn.count(txn.tree("a")!) } == 400)
    }
}

/// A frame being appended (or torn by a writer that died) at the end of the log is never taken by
/// a read-only engine's forward scan: it stays on the last whole commit until the frame is whole.
@Suite("read-only engines and torn frames")
struct ReadOnlyTornFrameTests {
    @Test("a partial or corrupt last frame appended to the data file is never read; the whole frame is")
    func tornFrame() throws {
        let source = TestDirectory("torn-source")
        defer { source.remove() }
        let copy = TestDirectory("torn-copy")
        defer { copy.remove() }
        let file = StorageEngine.dataFileName
        // The store before its last commit, and the frame of that commit.
        let before: [UInt8], frame: [UInt8], frameStart: Int, oldModel: Model, newModel: Model
        do {
            let engine = try StorageEngine(directory: source.path, options: ReadOnlyFollowTests.writerOptions())
            defer { engine.close() }
            var rng = SplitMix64(seed: 42)
            var model = Model()
            for _ in 0..<20 { try ReadOnlyFollowTests.randomCommit(engine, model: &model, rng: &rng) }
            oldModel = model
            frameStart = Int(engine.fileSize)
            before = TestDirectory.read(source.sub(file))
            // A large frame: several records before the commit record.
            try engine.write { txn in
                for k in 0..<20 { try txn.put(txn.tree("c")!, key: bigEndianKey(UInt64(k)), value: [UInt8](repeating: UInt8(k), count: 3000)) }
            }
            newModel = try engine.read { try Model(reading: $0) }
            #expect(engine.lastTransactionId == 21)
            frame = Array(TestDirectory.read(source.sub(file))[frameStart..<Int(engine.fileSize)])
        }
        TestDirectory.write(before, to: copy.sub(file))
        let reader = try StorageEngine(directory: copy.path, options: StorageOptions(readOnly: true, initialMapSize: 1 << 16))
        defer { reader.close() }
        #expect(try reader.read { try Model(reading: $0) } == oldModel)
        let oldId = reader.lastTransactionId

        // Every prefix of the frame (at a few hundred cuts, the last byte missing among them).
        var cuts = Array(stride(from: 8, to: frame.count, by: max(1, frame.count / 300)))
        cuts.append(frame.count - 1)
        for cut in cuts {
            TornTailTests.writeBack(Array(frame[0..<cut]), at: frameStart, to: copy.sub(file))
            let txn = try reader.beginRead()
            #expect(txn.transactionId == oldId, "cut at \(cut) of \(frame.count)")
            #expect(try Model(reading: txn) == oldModel, "cut at \(cut) of \(frame.count)")
        }
        // The whole frame with one byte changed, anywhere in it: in a node or value record the
        // walk stops there, in a commit record that commit does not verify.
        for at in stride(from: 0, to: frame.count, by: max(1, frame.count / 97)) + [frame.count - 1] {
            var bad = frame
            bad[at] ^= 0x20
            TornTailTests.writeBack(bad, at: frameStart, to: copy.sub(file))
            let txn = try reader.beginRead()
            #expect(txn.transactionId == oldId, "byte \(at) of \(frame.count) changed")
            #expect(try Model(reading: txn) == oldModel, "byte \(at) of \(frame.count) changed")
        }
        // Whole: taken.
        TornTailTests.writeBack(frame, at: frameStart, to: copy.sub(file))
        let txn = try reader.beginRead()
        #expect(txn.transactionId == oldId + 1)
        #expect(try Model(reading: txn) == newModel)
    }
}

extension ReadOnlyTornFrameTests {
    /// Opens the store in `directory` (making 20 commits of `ReadOnlyFollowTests.randomCommit`,
    /// seed 42, when it is new), then commits `last`: returns the file before that commit, the
    /// frame of it, where it starts, and the content after.
    static func lastFrame(_ directory: TestDirectory, new: Bool, last: (WriteTransaction) throws -> Void)
        throws -> (before: [UInt8], frame: [UInt8], frameStart: Int, newModel: Model) {
        let file = directory.sub(StorageEngine.dataFileName)
        let engine = try StorageEngine(directory: directory.path, options: ReadOnlyFollowTests.writerOptions())
        defer { engine.close() }
        if new {
            var rng = SplitMix64(seed: 42)
            var model = Model()
            for _ in 0..<20 { try ReadOnlyFollowTests.randomCommit(engine, model: &model, rng: &rng) }
        }
        let frameStart = Int(engine.fileSize)
        let before = TestDirectory.read(file)
        try engine.write(last)
        let newModel = try engine.read { try Model(reading: $0) }
        return (before, Array(TestDirectory.read(file)[frameStart..<Int(engine.fileSize)]), frameStart, newModel)
    }

    @Test("a frame partly written, then overwritten by another commit's frame (an aborted frame, then the next commit), is read as the new frame")
    func overwrittenFrame() throws {
        let a = TestDirectory("overwrite-a"), b = TestDirectory("overwrite-b"), copy = TestDirectory("overwrite-copy")
        defer { a.remove(); b.remove(); copy.remove() }
        // Two different last commits on the same store (B's made on a copy of it): A large, B small.
        let frameA = try Self.lastFrame(a, new: true) { txn in
            for k in 0..<40 { try txn.put(txn.tree("c")!, key: bigEndianKey(UInt64(k)), value: [UInt8](repeating: UInt8(k), count: 3000)) }
        }
        TestDirectory.write(frameA.before, to: b.sub(StorageEngine.dataFileName))
        let frameB = try Self.lastFrame(b, new: false) { txn in
            for k in 0..<5 { try txn.put(txn.tree("d")!, key: bigEndianKey(UInt64(k)), value: [UInt8](repeating: UInt8(100 + k), count: 500)) }
        }
        #expect(frameA.frameStart == frameB.frameStart)
        #expect(frameA.frame.count > frameB.frame.count && frameA.newModel != frameB.newModel)
        let file = copy.sub(StorageEngine.dataFileName)
        TestDirectory.write(frameA.before, to: file)
        let reader = try StorageEngine(directory: copy.path, options: StorageOptions(readOnly: true, initialMapSize: 1 << 16))
        defer { reader.close() }
        let oldId = reader.lastTransactionId
        // A's frame, written in steps and never finished: the reader stays, and remembers its records.
        for cut in stride(from: frameA.frame.count / 10, to: frameA.frame.count * 9 / 10, by: frameA.frame.count / 10) {
            TornTailTests.writeBack(Array(frameA.frame[0..<cut]), at: frameA.frameStart, to: file)
            #expect(try reader.read { $0.transactionId } == oldId)
        }
        // B's frame over it, whole: read as B.
        TornTailTests.writeBack(frameB.frame, at: frameB.frameStart, to: file)
        let txn = try reader.beginRead()
        #expect(txn.transactionId == oldId + 1)
        #expect(try Model(reading: txn) == frameB.newModel)
    }
}

/// A writable open waits for the store's write lock as long as `lockWaitTimeout` says.
@Suite("waiting for the write lock")
struct LockWaitTests {
    @Test("a second writer with a timeout gets the store once the first closes within it, storeLocked after it otherwise")
    func lockWait() throws {
        let directory = TestDirectory("lock-wait")
        defer { directory.remove() }
        let locked = StorageError.storeLocked(path: directory.sub(StorageEngine.lockFileName))
        let first = try StorageEngine(directory: directory.path)
        try first.write { try $0.put($0.tree("t")!, key: [1], value: [1]) }

        // The lower bounds are the deadlines themselves; the upper ones only catch a wait many
        // times too long (a wait without end hangs the test instead), and leave a busy machine
        // seconds to spare: how long a thread sleeping on a deadline oversleeps is not judged.
        // By default: storeLocked once the short grace for forked children (200 ms) is over.
        var started = DispatchTime.now().uptimeNanoseconds
        #expect(throws: locked) { try StorageEngine(directory: directory.path) }
        let graceMs = (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
        #expect(graceMs >= 200 && graceMs < 10_000, "waited \(graceMs) ms")

        // A timeout that passes: storeLocked, not before it.
        started = DispatchTime.now().uptimeNanoseconds
        #expect(throws: locked) { try StorageEngine(directory: directory.path, options: StorageOptions(lockWaitTimeout: .milliseconds(700))) }
        let waitedMs = (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
        #expect(waitedMs >= 700 && waitedMs < 10_700, "waited \(waitedMs) ms")

        // The first closes 300 ms (or more) after the clock starts, within a 60 s wait: the second
        // gets the store then, not before.
        started = DispatchTime.now().uptimeNanoseconds
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(300)) { first.close() }
        let second = try StorageEngine(directory: directory.path, options: StorageOptions(lockWaitTimeout: .seconds(60)))
        defer { second.close() }
        let tookMs = (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
        #expect(tookMs >= 300, "took \(tookMs) ms")
        #expect(try second.read { try $0.get($0.tree("t")!, key: [1]) } == [1])

        #expect(throws: StorageError.illegalArgument("lockWaitTimeout must not be negative, got -1.0 seconds")) {
            try StorageEngine(directory: directory.path, options: StorageOptions(lockWaitTimeout: .seconds(-1)))
        }
    }
}
