@testable import CellarStorage
import CellarTestSupport
import Dispatch
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// Write transactions larger than their memory budget (`StorageOptions.transactionMemoryBudget`):
/// they write their changes into the log ahead of the commit record (spill) and go on from there.
/// Each must read its own changes, commit exactly them or (aborted, failed, killed) nothing, keep
/// the live-bytes count exact, and stay within its budget.
@Suite("Transactions that spill")
struct SpillTests {
    /// Applies `operations` one by one to `txn` and to `model`, checking now and then that what
    /// the transaction reads (gets, and a cursor over a whole tree) is the model.
    static func applyChecking(_ operations: [Operation], to txn: WriteTransaction, model: inout Model,
                              rng: inout SplitMix64, context: String) throws {
        for (i, operation) in operations.enumerated() {
            try apply([operation], to: txn)
            model.apply([operation])
            if i % 50 == 49 {
                let name = "s\(rng.next() % 3)"
                for _ in 0..<8 {
                    let key = bigEndianKey(rng.next() % 4_000)
                    let got = try txn.tree(name, create: false).flatMap { try txn.get($0, key: key) }
                    #expect(got == model.trees[name]?[key], "\(context): op \(i): get \(name)/\(key)")
                }
            }
            if i % 400 == 399 {
                let name = "s\(rng.next() % 3)"
                var entries: [[UInt8]: [UInt8]] = [:]
                if let tree = try txn.tree(name, create: false) {
                    try txn.cursor(tree).scan { key, value in
                        entries[Array(key)] = Array(value)
                        return true
                    }
                    #expect(try txn.count(tree) == entries.count, "\(context): op \(i): count of \(name)")
                }
                #expect(entries == (model.trees[name] ?? [:]), "\(context): op \(i): cursor over \(name) differs from the model")
            }
        }
    }

    /// The bytes of every record reachable from the newest commit: what its live-bytes count must say.
    static func reachableBytes(_ engine: StorageEngine) throws -> UInt64 {
        let txn = try engine.beginRead()
        let records = txn.snapshot.generation.records
        var total: UInt64 = 0
        func walk(_ ref: UInt64, below: UInt64, isCatalog: Bool) throws {
            guard ref != 0 else { return }
            let node = try txn.node(ref, below: below)
            total += UInt64(records.recordLength(at: ref))
            for i in 0..<node.count {
                if !node.isLeaf {
                    try walk(node.child(i), below: ref, isCatalog: isCatalog)
                    continue
                }
                switch node.value(i) {
                case .outOfLine(let value, let length, _):
                    // The record as the file holds it (with the tag, when encrypted).
                    total += UInt64(records.recordLength(at: value))
                    #expect(records.recordLength(at: value) >= LogRecord.paddedLength(body: length))
                case .inline(let bytes, _):
                    if isCatalog {
                        let name = String(decoding: node.keyBuffer(i), as: UTF8.self)
                        let entry = try CatalogEntry.decode(bytes, name: name, at: ref)
                        try walk(entry.root, below: txn.limit, isCatalog: false)
                    }
                }
            }
        }
        try walk(txn.snapshot.catalogRoot, below: txn.limit, isCatalog: true)
        return total
    }

    /// `SpillWorkload.options`, encrypted with the tests' key when `encrypted`.
    static func options(encrypted: Bool, durability: StorageOptions.Durability = .full) -> StorageOptions {
        var options = SpillWorkload.options(durability: durability)
        if encrypted { options.encryptionKey = TestKeys.encryption }
        return options
    }

    @Test("transactions several times their budget read their own changes and commit exactly them; aborted ones leave nothing",
          arguments: [false, true])
    func spillingTransactionsMatchTheModel(encrypted: Bool) throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let directory = TestDirectory("spill-model")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path, options: Self.options(encrypted: encrypted))
        var committed = Model()
        var spills: [Int] = []
        for k in 1...12 {
            let context = "transaction \(k) (seed \(seed))"
            let txn = try engine.beginWrite()
            var model = committed
            try Self.applyChecking(SpillWorkload.transaction(k, seed: seed), to: txn, model: &model, rng: &rng, context: context)
            spills.append(txn.spillCount)
            let lengthBefore = engine.fileSize
            if k % 4 == 3 {
                txn.abort()
                #expect(engine.fileSize == lengthBefore, "\(context): an aborted transaction commits nothing")
                #if os(Linux) && !CELLAR_PORTABLE_POSIX
                // What it wrote ahead of a commit reads as zeros (a hole punched). Where no hole can
                // be punched (the portable path, Apple platforms) it stays as garbage past the log's
                // end, which the next frame overwrites: the reads below and the reopen check that.
                let file = try PosixFile(path: directory.sub(StorageEngine.dataFileName), create: false, readOnly: true)
                let size = try file.size()
                var tail = [UInt8](repeating: 1, count: Int(size - lengthBefore))
                _ = try tail.withUnsafeMutableBytes { try file.read(into: $0, at: lengthBefore) }
                file.close()
                #expect(tail.count > 0 && tail.allSatisfy { $0 == 0 }, "\(context): \(tail.count) bytes past the log's end, not all zeros")
                #endif
            } else {
                try txn.commit()
                committed = model
            }
            let content = try engine.read { try Model(reading: $0) }
            #expect(content == committed, "\(context): \(content.difference(from: committed) ?? "")")
            #expect(try Self.reachableBytes(engine) == engine.liveBytes, "\(context): live bytes")
        }
        #expect(spills.allSatisfy { $0 >= 2 }, "every transaction should spill several times: \(spills)")
        engine.close()

        // After a reopen (which finds the aborted frames' records past the newest commit and
        // overwrites them with zeros), and after a compaction.
        let reopened = try StorageEngine(directory: directory.path, options: Self.options(encrypted: encrypted))
        #expect(try reopened.read { try Model(reading: $0) } == committed)
        #expect(try Self.reachableBytes(reopened) == reopened.liveBytes)
        try reopened.write { txn in try apply(SpillWorkload.transaction(13, seed: seed, count: 100), to: txn) }
        committed.apply(SpillWorkload.transaction(13, seed: seed, count: 100))
        _ = try reopened.compact()
        #expect(try reopened.read { try Model(reading: $0) } == committed)
        reopened.close()
        let readOnly = try StorageEngine(directory: directory.path, options: StorageOptions(readOnly: true, encryptionKey: encrypted ? TestKeys.encryption : nil))
        #expect(try readOnly.read { try Model(reading: $0) } == committed)
        readOnly.close()
    }

    @Test("a transaction's changes hold at most its budget in memory, however many it makes")
    func memoryStaysWithinTheBudget() throws {
        let directory = TestDirectory("spill-memory")
        defer { directory.remove() }
        let budget = 256 << 10
        let engine = try StorageEngine(directory: directory.path, options: StorageOptions(durability: .none, transactionMemoryBudget: budget))
        defer { engine.close() }
        let count = 60_000
        var peak = 0
        var spills = 0
        try engine.write { txn in
            let tree = try txn.tree("bulk")!
            let index = try txn.tree("index")!
            for i in 0..<count {
                try txn.put(tree, key: bigEndianKey(UInt64(i)), value: [UInt8](repeating: UInt8(i % 251), count: 100 + i % 300))
                // An index's keys, in another order: held back and applied in batches.
                try txn.putDeferred(index, key: bigEndianKey(UInt64(i % 100)) + bigEndianKey(UInt64(i)), value: [])
                peak = max(peak, txn.heldChangeMemory)
            }
            spills = txn.spillCount
        }
        // One change past the threshold (a split: a few nodes) before the spill that follows it.
        let slack = 8 * (4096 + 4096 / 4 + 64 + 128)
        #expect(peak <= budget + slack, "peak \(peak) bytes held, budget \(budget)")
        #expect(spills >= 20, "\(spills) spills")
        try engine.read { txn in
            let bulk = try txn.tree("bulk")!
            let index = try txn.tree("index")!
            #expect(try txn.count(bulk) == count)
            #expect(try txn.count(index) == count)
            for i in stride(from: 0, to: count, by: 997) {
                #expect(try txn.get(bulk, key: bigEndianKey(UInt64(i))) == [UInt8](repeating: UInt8(i % 251), count: 100 + i % 300))
            }
        }
        #expect(try Self.reachableBytes(engine) == engine.liveBytes)

        // The same without a budget holds everything: the measure above measures something.
        var unbounded = 0
        let other = TestDirectory("spill-memory-unbounded")
        defer { other.remove() }
        let plain = try StorageEngine(directory: other.path, options: StorageOptions(durability: .none, transactionMemoryBudget: Int.max))
        defer { plain.close() }
        try plain.write { txn in
            let tree = try txn.tree("bulk")!
            for i in 0..<count { try txn.put(tree, key: bigEndianKey(UInt64(i)), value: [UInt8](repeating: 1, count: 100 + i % 300)) }
            unbounded = txn.heldChangeMemory
            #expect(txn.spillCount == 0)
        }
        #expect(unbounded > 8 * budget, "without a budget: \(unbounded) bytes held")
    }

    @Test("bytes a get returned stay valid through the spill that the next change makes")
    func borrowedBytesSurviveASpill() throws {
        let directory = TestDirectory("spill-borrowed")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path, options: SpillWorkload.options(durability: .none))
        defer { engine.close() }
        try engine.write { txn in
            let tree = try txn.tree("t")!
            let other = try txn.tree("u")!
            var i: UInt64 = 0
            try txn.put(tree, key: [0], value: Array("kept".utf8))
            while txn.spillCount < 3 {
                // Borrowed from a dirty leaf, then a change (maybe a spill) in another tree.
                let borrowed = try [UInt8(0)].withUnsafeBytes { try txn.get(tree, key: $0)! }
                try txn.put(other, key: bigEndianKey(i), value: [UInt8](repeating: 7, count: 60))
                #expect(Array(borrowed) == Array("kept".utf8))
                try txn.put(tree, key: [0], value: Array("kept".utf8))
                i += 1
            }
        }
    }

    @Test("spilling transactions beside small durable commits on other threads (group commit) and readers: everything committed, nothing torn")
    func spillsBesideGroupCommitsAndReaders() throws {
        let seed = SplitMix64.testSeed()
        let directory = TestDirectory("spill-threads")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path, options: SpillWorkload.options())
        defer { engine.close() }
        let failures = Locked<[String]>([])
        let stop = Locked(false)
        let done = DispatchGroup()
        let small = 150
        for t in 0..<3 {
            done.enter()
            Threads.start {
                defer { done.leave() }
                do {
                    if t == 0 {
                        for k in 1...4 {
                            try engine.write { txn in try apply(SpillWorkload.transaction(k, seed: seed), to: txn) }
                        }
                    } else {
                        for i in 0..<small {
                            try engine.write { txn in try txn.put(txn.tree("small\(t)")!, key: bigEndianKey(UInt64(i)), value: [UInt8(t)]) }
                        }
                    }
                } catch {
                    failures.withLock { $0.append("thread \(t): \(error)") }
                }
            }
        }
        done.enter()
        Threads.start {
            defer { done.leave() }
            var reads = 0
            while !stop.withLock({ $0 }) || reads < 3 {
                do {
                    try engine.read { txn in
                        let content = try Model(reading: txn)
                        // Each small thread's keys are a prefix of its commits.
                        for t in 1...2 {
                            let keys = (content.trees["small\(t)"] ?? [:]).keys.sorted { $0.lexicographicallyPrecedes($1) }
                            if keys != (0..<keys.count).map({ bigEndianKey(UInt64($0)) }) {
                                failures.withLock { $0.append("small\(t) is not a prefix of its commits at commit \(txn.transactionId)") }
                            }
                        }
                    }
                } catch {
                    failures.withLock { $0.append("reader: \(error)") }
                }
                reads += 1
            }
        }
        // The writers end by themselves; then the reader is told to stop.
        while true {
            usleep(10_000)
            if try engine.read({ txn in try (1...2).allSatisfy { t in try txn.tree("small\(t)").map { try txn.count($0) } == small } }),
               engine.lastTransactionId >= UInt64(4 + 2 * small) { break }
            if !failures.withLock({ $0.isEmpty }) { break }
        }
        stop.withLock { $0 = true }
        done.wait()
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 }) (seed \(seed))")
        var content = try engine.read { try Model(reading: $0) }
        #expect(content.trees["small1"]?.count == small && content.trees["small2"]?.count == small)
        content.trees["small1"] = nil
        content.trees["small2"] = nil
        let expected = SpillWorkload.model(after: 4, seed: seed)
        #expect(content == expected, "\(content.difference(from: expected) ?? "") (seed \(seed))")
        #expect(try Self.reachableBytes(engine) == engine.liveBytes)
    }

    @Test("a read-only engine beside a transaction that spills sees the last commit, never the spilled records; then the commit",
          arguments: [false, true])
    func aFollowerIgnoresSpilledRecords(encrypted: Bool) throws {
        let seed = SplitMix64.testSeed()
        let directory = TestDirectory("spill-follow")
        defer { directory.remove() }
        var options = Self.options(encrypted: encrypted, durability: .none)
        options.automaticCompaction = nil
        let writer = try StorageEngine(directory: directory.path, options: options)
        defer { writer.close() }
        try writer.write { txn in try apply(SpillWorkload.transaction(1, seed: seed), to: txn) }
        let committed = SpillWorkload.model(after: 1, seed: seed)
        let reader = try StorageEngine(directory: directory.path, options: StorageOptions(readOnly: true, initialMapSize: 1 << 20,
                                                                                          encryptionKey: options.encryptionKey))
        defer { reader.close() }
        let txn = try writer.beginWrite()
        var spills = 0
        for (i, operation) in SpillWorkload.transaction(2, seed: seed).enumerated() {
            try apply([operation], to: txn)
            if txn.spillCount > spills || i % 300 == 0 {
                spills = txn.spillCount
                // The spilled records are in the file, past the last commit: not a commit.
                #expect(try reader.read { try Model(reading: $0) } == committed, "op \(i), \(spills) spills (seed \(seed))")
            }
        }
        #expect(spills >= 2)
        try txn.commit()
        #expect(try reader.read { try Model(reading: $0) } == SpillWorkload.model(after: 2, seed: seed), "after the commit (seed \(seed))")
    }

    @Test("a compaction started while a transaction spills waits for it, and the store it leaves holds every commit")
    func compactionBesideASpillingTransaction() throws {
        let seed = SplitMix64.testSeed()
        let directory = TestDirectory("spill-compact")
        defer { directory.remove() }
        var options = SpillWorkload.options(durability: .none)
        options.automaticCompaction = nil
        let engine = try StorageEngine(directory: directory.path, options: options)
        defer { engine.close() }
        for k in 1...3 { try engine.write { txn in try apply(SpillWorkload.transaction(k, seed: seed), to: txn) } }
        let failures = Locked<[String]>([])
        let compacted = DispatchSemaphore(value: 0)
        for k in 4...7 {
            let txn = try engine.beginWrite()
            let operations = SpillWorkload.transaction(k, seed: seed)
            for (i, operation) in operations.enumerated() {
                try apply([operation], to: txn)
                if k == 4 && i == 200 {
                    // Copies the state of the commit before this transaction, then waits for the
                    // writer to catch up.
                    Threads.start {
                        defer { compacted.signal() }
                        do { _ = try engine.compact() } catch { failures.withLock { $0.append("compaction: \(error)") } }
                    }
                }
            }
            #expect(txn.spillCount >= 2)
            try txn.commit()
        }
        compacted.wait()
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        #expect(engine.compactions.load(ordering: .relaxed) == 1)
        let expected = SpillWorkload.model(after: 7, seed: seed)
        #expect(try engine.read { try Model(reading: $0) } == expected, "(seed \(seed))")
        #expect(try Self.reachableBytes(engine) == engine.liveBytes)
        engine.close()
        let reopened = try StorageEngine(directory: directory.path, options: options)
        #expect(try reopened.read { try Model(reading: $0) } == expected, "after a reopen (seed \(seed))")
        reopened.close()
    }

    @Test("a budget below 64 KiB is refused")
    func tooSmallABudget() {
        #expect(throws: StorageError.self) {
            try StorageEngine(directory: "unused", options: StorageOptions(inMemory: true, transactionMemoryBudget: 1_000))
        }
    }

    @Test("a write that fails during a spill fails the transaction; the store keeps every commit before it and goes on")
    func failingWritesDuringSpills() throws {
        let seed: UInt64 = 5
        let commits = 4
        let n = try FaultInjectionTests.forEveryN("spill-failwrite") { n, directory, path, box in
            var sequence: [[Operation]] = []
            var acknowledged = 0
            var failedWhileWriting = false
            do {
                var options = SpillWorkload.options()
                options.openFile = { _, _, _ in try box.make(path: path, fault: .failWrite(number: n, errno: EIO)) }
                let engine = try StorageEngine(directory: directory.path, options: options)
                for k in 1...commits {
                    let operations = SpillWorkload.transaction(k, seed: seed, count: 600)
                    let txn = try engine.beginWrite()
                    do {
                        try apply(operations, to: txn)
                    } catch StorageError.io {
                        // The spill's write failed: the transaction cannot commit any more.
                        failedWhileWriting = true
                        #expect(throws: StorageError.self) { try txn.commit() }
                        continue
                    }
                    do {
                        try txn.commit()
                        sequence.append(operations)
                        acknowledged += 1
                    } catch StorageError.io {}
                }
                engine.close()
            } catch StorageError.io {
                // The fault hit creation.
            }
            try FaultInjectionTests.checkReopened(directory, sequence: sequence, acknowledged: acknowledged, context: "spill N=\(n)")
            _ = failedWhileWriting
            return (box.file?.counts.writes ?? 0) >= n
        }
        #expect(n > 8, "the spilling transactions should make several writes each")
    }

    @Test("power loss at any sync during spilling transactions keeps every acknowledged commit and no partial one",
          arguments: FaultInjectingFile.CrashMode.allCases)
    func crashAtSyncDuringSpills(mode: FaultInjectingFile.CrashMode) throws {
        let n = try FaultInjectionTests.crashAtEverySync("spill-crash", mode: mode, options: SpillWorkload.options(), commits: 4,
                                                         countsAcknowledged: true) { SpillWorkload.transaction($0, seed: 9, count: 600) }
        #expect(n > 4)
    }
}
