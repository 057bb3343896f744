@testable import CellarStorage
import Atomics
import CellarTestSupport
import Dispatch
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Compaction while the store is open (`StorageEngine.compact()`): writers go on and their commits
/// are brought in; readers on old snapshots finish on the old file; errors leave the store working.
@Suite struct OnlineCompactionTests {
    /// One commit of the concurrent writer: puts and deletes over two trees, now and then a tree
    /// dropped and filled again, and a new empty tree.
    static func writerTransaction(_ k: Int, rng: inout SplitMix64) -> (operations: [Operation], created: String?) {
        var operations: [Operation] = []
        for _ in 0..<(1 + Int(rng.next() % 8)) {
            let tree = rng.next() % 2 == 0 ? "a" : "b"
            let key = bigEndianKey(rng.next() % 1_500)
            if rng.next() % 4 == 0 {
                operations.append(.delete(tree: tree, key: key))
            } else {
                let size = rng.next() % 30 == 0 ? 2_000 + Int(rng.next() % 3_000) : Int(rng.next() % 100)
                operations.append(.put(tree: tree, key: key, value: [UInt8](repeating: UInt8(truncatingIfNeeded: k), count: size)))
            }
        }
        if k % 12 == 0 {
            operations.append(.drop(tree: "c"))
            for i in 0..<UInt64(k % 7) { operations.append(.put(tree: "c", key: bigEndianKey(UInt64(k) * 10 + i), value: bigEndianKey(UInt64(k)))) }
        }
        return (operations, k % 90 == 0 ? "new-\(k)" : nil)
    }

    @Test("writers go on during three compactions; every commit is kept, ids go up, old snapshots read the old file",
          arguments: [Compression.none, .zstdDictionary()].filter(\.isAvailable))
    func writersGoOnAndEverythingIsKept(compression: Compression) throws {
        let seed = SplitMix64.testSeed()
        let dir = TestDirectory("online-compact")
        defer { dir.remove() }
        let start = try CompactionTests.makeStoreWithGarbage(dir.path, seed: seed)
        // With dictionaries: each compaction trains new ones while the writer compresses with the
        // ones the one before made.
        var options = StorageOptions(durability: .none, nodeSize: 1024, compression: compression)
        options.automaticCompaction = nil  // exactly the three compactions below
        let engine = try StorageEngine(directory: dir.path, options: options)
        let uuid = engine.uuid

        // A reader on the snapshot before any compaction, read again after all of them.
        let oldReader = try engine.beginRead()

        let stop = ManagedAtomic<Bool>(false)
        let commits = ManagedAtomic<Int>(0)
        let result = Locked<(model: Model, ids: [UInt64], error: String?)>((start, [], nil))
        let compacted = Locked<(reports: [CompactionReport], commitsDuring: Int, error: String?)>(([], 0, nil))
        // Two threads: 0 writes until told to stop; 1 compacts three times meanwhile.
        DispatchQueue.concurrentPerform(iterations: 2) { thread in
            if thread == 1 {
                do {
                    for round in 1...3 {
                        while commits.load(ordering: .relaxed) < 50 * round && !stop.load(ordering: .relaxed) { usleep(1_000) }
                        let before = commits.load(ordering: .relaxed)
                        // Held in its copy until the writer made 5 more commits: each compaction
                        // has commits to catch up with, however the threads are scheduled.
                        let report = try engine.compact(changingKey: nil) { _, _ in
                            while commits.load(ordering: .relaxed) < before + 5 && !stop.load(ordering: .relaxed) { usleep(200) }
                        }
                        compacted.withLock {
                            $0.reports.append(report)
                            $0.commitsDuring += commits.load(ordering: .relaxed) - before
                        }
                    }
                    let afterLast = commits.load(ordering: .relaxed)
                    while commits.load(ordering: .relaxed) < afterLast + 30 && !stop.load(ordering: .relaxed) { usleep(1_000) }
                } catch {
                    compacted.withLock { $0.error = "\(error)" }
                }
                stop.store(true, ordering: .relaxed)
                return
            }
            var model = start, ids: [UInt64] = [], rng = SplitMix64(seed: seed ^ 0xC0FFEE)
            var k = 0
            do {
                while !stop.load(ordering: .relaxed) {
                    k += 1
                    let (operations, created) = Self.writerTransaction(k, rng: &rng)
                    // The id of each commit (a transaction that changed nothing makes none).
                    if let id = try engine.write({ txn in
                        try apply(operations, to: txn)
                        if let created { _ = try txn.tree(created) }
                        return txn.changedTreeNames.isEmpty ? nil : txn.transactionId
                    }) { ids.append(id) }
                    model.apply(operations)
                    if let created { model.trees[created] = [:] }
                    commits.wrappingIncrement(ordering: .relaxed)
                    usleep(100)  // a busy app's pace, not a benchmark's: the store stays small
                }
            } catch {
                result.withLock { $0.error = "commit \(k): \(error)" }
            }
            result.withLock { $0.model = model; $0.ids = ids }
            stop.store(true, ordering: .relaxed)
        }
        let (model, ids, error) = result.withLock { $0 }
        let (reports, commitsDuring, compactionError) = compacted.withLock { $0 }
        #expect(error == nil && compactionError == nil, "\(error ?? "") \(compactionError ?? "") (seed \(seed))")
        #expect(reports.count == 3)
        print("online compaction with a writer: \(ids.count) commits, \(commitsDuring) during compactions; \(reports)")

        #expect(commitsDuring > 0, "no commit landed during a compaction: nothing to catch up (seed \(seed))")
        for report in reports {
            #expect(report.bytesAfter < report.bytesBefore, "\(report)")
            #expect(report.catchUpRounds >= 2 && report.longestWriterWaitMicroseconds > 0, "\(report)")
        }
        #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 }, "transaction ids go up across compactions: \(zip(ids, ids.dropFirst()).filter { $0 >= $1 }) \(reports)")
        #expect(engine.compactions.load(ordering: .relaxed) == 3)
        #expect(!TestDirectory.exists(dir.sub(StorageEngine.compactionDirectoryName)))

        let content = try engine.read { try Model(reading: $0) }
        #expect(content == model, "\(content.difference(from: model) ?? "") (seed \(seed))")
        #expect(try Model(reading: oldReader) == start, "a snapshot taken before the compactions reads the old file")
        // The store goes on after the swaps and reopens with the same content and UUID.
        try engine.write { txn in try txn.put(txn.tree("a")!, key: [1], value: [2]) }
        engine.close()
        var expected = model
        expected.trees["a", default: [:]][[1]] = [2]
        let reopened = try StorageEngine(directory: dir.path)
        defer { reopened.close() }
        #expect(reopened.uuid == uuid)
        #expect(try reopened.read { try Model(reading: $0) } == expected, "seed \(seed)")
    }

    /// A writer that changes, during each catch-up round, more than the round caught up with (as
    /// on a busy machine, or with a window whose replay of each commit is slower than the writer):
    /// the compaction stops its unlocked rounds at the second and finishes under the lock, instead
    /// of growing each round up to the last. The writer commits only what the test allows, at
    /// counted points: 30 commits of 100 new keys during the copy, then after each round one
    /// commit more than the round caught up with.
    @Test("catch-up rounds stop once one is no smaller than the one before; every commit is kept",
          arguments: [false, true])
    func catchUpStopsWhenTheRoundsDoNotShrink(window: Bool) throws {
        let dir = TestDirectory("online-compact-rounds")
        defer { dir.remove() }
        var options = StorageOptions(durability: .none, nodeSize: 1024)
        options.automaticCompaction = nil
        if window { options.pastRetention = .commits(20) }
        let engine = try StorageEngine(directory: dir.path, options: options)
        defer { engine.close() }
        let keysPerCommit = 100
        @Sendable func commit(_ k: Int) throws {
            try engine.write { txn in
                let tree = try txn.tree("w", create: true)!
                for i in 0..<keysPerCommit { try txn.put(tree, key: bigEndianKey(UInt64(k * keysPerCommit + i)), value: [UInt8(k & 0xFF)]) }
            }
        }
        for k in 0..<50 { try commit(k) }  // commits before the window's first

        let allowed = ManagedAtomic<Int>(50), made = ManagedAtomic<Int>(50), stop = ManagedAtomic<Bool>(false)
        let failure = Locked<String?>(nil)
        /// Lets the writer make `count` more commits and waits until it made them.
        @Sendable func allow(_ count: Int) {
            let target = allowed.wrappingIncrementThenLoad(by: count, ordering: .relaxed)
            while made.load(ordering: .relaxed) < target && failure.withLock({ $0 }) == nil { usleep(200) }
        }
        let caughtUp = Locked<[Int]>([])
        let report = Locked<CompactionReport?>(nil)
        DispatchQueue.concurrentPerform(iterations: 2) { thread in
            if thread == 0 {
                do {
                    while !stop.load(ordering: .relaxed) {
                        let k = made.load(ordering: .relaxed)
                        if k < allowed.load(ordering: .relaxed) {
                            try commit(k)
                            made.wrappingIncrement(ordering: .relaxed)
                        } else {
                            usleep(100)
                        }
                    }
                } catch {
                    failure.withLock { $0 = "commit: \(error)" }
                }
                return
            }
            defer { stop.store(true, ordering: .relaxed) }
            let copyHeld = ManagedAtomic<Bool>(false)
            do {
                let done = try engine.compact(changingKey: nil, progress: { _, _ in
                    // The copy's first batch: 30 commits (3,000 keys) land meanwhile.
                    if !copyHeld.exchange(true, ordering: .relaxed) { allow(30) }
                }, afterRound: { work in
                    caughtUp.withLock { $0.append(work) }
                    // One commit more than the round caught up with (in commits, or keys).
                    allow((window ? work : work / keysPerCommit) + 1)
                })
                report.withLock { $0 = done }
            } catch {
                failure.withLock { $0 = "compact: \(error)" }
            }
        }
        #expect(failure.withLock { $0 } == nil, "\(failure.withLock { $0 } ?? "")")
        let rounds = caughtUp.withLock { $0 }
        let expected = window ? [30, 31] : [3_000, 3_100]
        #expect(rounds == expected, "the unlocked rounds caught up with \(rounds)")
        #expect(report.withLock { $0 }?.catchUpRounds == 3, "\(String(describing: report.withLock { $0 }))")
        let total = made.load(ordering: .relaxed)
        let count = try engine.read { txn in try txn.count(txn.tree("w")!) }
        #expect(count == total * keysPerCommit, "\(count) keys after \(total) commits")
        #expect(try engine.read { txn in try txn.get(txn.tree("w")!, key: bigEndianKey(UInt64(total * keysPerCommit - 1))) } == [UInt8((total - 1) & 0xFF)])
    }

    @Test("ENOSPC while copying: compact throws, nothing is left behind, the open store goes on and compacts later")
    func noSpaceAbortsAndTheStoreGoesOn() throws {
        let dir = TestDirectory("online-compact-enospc")
        defer { dir.remove() }
        var model = try CompactionTests.makeStoreWithGarbage(dir.path, seed: 11)
        let failing = ManagedAtomic<Bool>(true)
        var options = StorageOptions(durability: .none)
        options.openFile = { path, create, readOnly -> any StorageFile in
            let copy = path.contains("/" + StorageEngine.compactionDirectoryName + "/")
            return try FaultInjectingFile(path: path, create: create, readOnly: readOnly,
                                          fault: copy && failing.load(ordering: .relaxed) ? .failWrite(number: 2, errno: ENOSPC) : .none)
        }
        let engine = try StorageEngine(directory: dir.path, options: options)
        defer { engine.close() }
        let sizeBefore = engine.fileSize
        #expect(throws: StorageError.io(operation: "pwrite", errno: ENOSPC, path: dir.sub("\(StorageEngine.compactionDirectoryName)/\(StorageEngine.dataFileName)"))) {
            try engine.compact()
        }
        #expect(!TestDirectory.exists(dir.sub(StorageEngine.compactionDirectoryName)))
        #expect(engine.fileSize == sizeBefore && engine.compactions.load(ordering: .relaxed) == 0)
        // Commits go on (and are not journaled for a compaction that is over).
        try engine.write { txn in try txn.put(txn.tree("a")!, key: [7], value: [7, 7]) }
        model.trees["a", default: [:]][[7]] = [7, 7]
        #expect(engine.journal == nil)
        #expect(try engine.read { try Model(reading: $0) } == model)
        failing.store(false, ordering: .relaxed)
        let report = try engine.compact()
        #expect(report.bytesAfter < sizeBefore / 2)
        #expect(try engine.read { try Model(reading: $0) } == model)
    }

    @Test("a store that closes during a compaction: the compaction gives up or finishes, the store reopens whole")
    func closingDuringACompaction() throws {
        let dir = TestDirectory("online-compact-close")
        defer { dir.remove() }
        let model = try CompactionTests.makeStoreWithGarbage(dir.path, seed: 12)
        for delay in [0, 200, 1_000, 5_000] as [UInt32] {
            let engine = try StorageEngine(directory: dir.path)
            let outcome = Locked<String>("")
            DispatchQueue.concurrentPerform(iterations: 2) { thread in
                if thread == 1 {
                    usleep(delay)
                    engine.close()
                    return
                }
                do {
                    _ = try engine.compact()
                    outcome.withLock { $0 = "finished" }
                } catch StorageError.closed {
                    outcome.withLock { $0 = "closed" }
                } catch {
                    outcome.withLock { $0 = "\(error)" }
                }
            }
            let said = outcome.withLock { $0 }
            #expect(said == "finished" || said == "closed", "delay \(delay) µs: \(said)")
            let reopened = try StorageEngine(directory: dir.path)
            #expect(try reopened.read { try Model(reading: $0) } == model, "delay \(delay) µs (\(said))")
            #expect(!TestDirectory.exists(dir.sub(StorageEngine.compactionDirectoryName)))
            reopened.close()
        }
    }

    @Test("a store compacts itself once garbage passes the policy's share, and not without a policy")
    func automaticCompaction() throws {
        for automatic in [true, false] {
            let dir = TestDirectory("online-compact-auto")
            defer { dir.remove() }
            var options = StorageOptions(durability: .none, nodeSize: 1024)
            options.automaticCompaction = automatic ? .init(garbageShare: 0.6, minimumFileSize: 512 << 10) : nil
            let engine = try StorageEngine(directory: dir.path, options: options)
            defer { engine.close() }
            var model = Model()
            // Overwrite the same 200 keys: every commit makes the last one's values garbage.
            for round in 0..<400 {
                let value = [UInt8](repeating: UInt8(truncatingIfNeeded: round), count: 300)
                try engine.write { txn in
                    let tree = try txn.tree("t")!
                    for i in 0..<UInt64(20) {
                        let key = bigEndianKey((UInt64(round) * 20 + i) % 200)
                        try txn.put(tree, key: key, value: value)
                        model.trees["t", default: [:]][key] = value
                    }
                }
            }
            engine.compactionQueue.sync {}  // waits for a scheduled compaction
            let count = engine.compactions.load(ordering: .relaxed)
            if automatic {
                #expect(count > 0, "no automatic compaction")
                // Commits made while a compaction runs schedule none: the share may end above 0.6,
                // the size stays near the threshold.
                #expect(engine.fileSize < 1 << 20, "size \(engine.fileSize) after \(count) compactions")
            } else {
                #expect(count == 0)
                #expect(engine.fileSize > 2 << 20, "without a policy the file keeps growing")
            }
            #expect(try engine.read { try Model(reading: $0) } == model, "automatic: \(automatic)")
        }
    }

    @Test func readOnlyAndInMemoryStoresDoNotCompact() throws {
        let memory = try StorageEngine(directory: "memory", options: StorageOptions(inMemory: true))
        defer { memory.close() }
        #expect(throws: StorageError.self) { try memory.compact() }
        let dir = TestDirectory("online-compact-readonly")
        defer { dir.remove() }
        _ = try CompactionTests.makeStoreWithGarbage(dir.path, seed: 13)
        let reader = try StorageEngine(directory: dir.path, options: StorageOptions(readOnly: true))
        defer { reader.close() }
        #expect(throws: StorageError.readOnly) { try reader.compact() }
    }
}
