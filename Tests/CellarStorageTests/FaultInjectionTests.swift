import CellarStorage
import CellarTestSupport
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// I/O errors and crashes at every point the engine writes or syncs, each followed by a reopen on
/// the real file and a comparison with the model: every acknowledged commit there, no partial one.
@Suite("Fault injection")
struct FaultInjectionTests {
    static let commits = 12

    /// Opens an engine whose data file is `file`.
    static func open(_ directory: TestDirectory, _ file: @escaping @Sendable () throws -> FaultInjectingFile,
                     durability: StorageOptions.Durability = .full) throws -> StorageEngine {
        var options = StorageOptions(durability: durability, initialMapSize: 1 << 20, nodeSize: 512, superblockInterval: 3)
        options.openFile = { _, _, _ in try file() }
        return try StorageEngine(directory: directory.path, options: options)
    }

    /// What the store must hold after the first `count` of `sequence`.
    static func model(_ sequence: [[Operation]], prefix count: Int) -> Model {
        var model = Model()
        for operations in sequence.prefix(count) { model.apply(operations) }
        return model
    }

    /// Reopens `directory` on the real file and checks it holds a prefix of `sequence` of at least
    /// `acknowledged` commits and at most `sequence.count`.
    static func checkReopened(_ directory: TestDirectory, sequence: [[Operation]], acknowledged: Int, key: EncryptionKey? = nil,
                              context: String) throws {
        let engine = try StorageEngine(directory: directory.path, options: StorageOptions(initialMapSize: 1 << 20, encryptionKey: key))
        defer { engine.close() }
        let t = Int(engine.lastTransactionId)
        #expect(t >= acknowledged && t <= sequence.count, "\(context): reopened at commit \(t), acknowledged \(acknowledged), attempted \(sequence.count)")
        let content = try engine.read { try Model(reading: $0) }
        let expected = model(sequence, prefix: t)
        #expect(content == expected, "\(context): content differs from the model at commit \(t): \(content.difference(from: expected) ?? "")")
        // The store still takes commits.
        try engine.write { txn in try txn.put(txn.tree("after")!, key: [1], value: [1]) }
    }

    /// Runs `attempt` for N = 1, 2, 3 …, each time in a new directory named `name` with a
    /// `FileBox` for the data file at `path`, until `attempt` says N is past the last write or
    /// sync its workload makes (returns false). Returns that N.
    static func forEveryN(_ name: String,
                          _ attempt: (_ n: Int, _ directory: TestDirectory, _ path: String, _ box: FileBox) throws -> Bool) throws -> Int {
        var n = 1
        while true {
            let directory = TestDirectory(name)
            defer { directory.remove() }
            guard try attempt(n, directory, directory.sub(StorageEngine.dataFileName), FileBox()) else { return n }
            n += 1
        }
    }

    enum WriteFault: CaseIterable { case eio, enospc, shortThenEIO }

    @Test("the Nth write fails (EIO, ENOSPC, short then EIO) for N = 1, 2, 3 … until the workload succeeds",
          arguments: WriteFault.allCases)
    func failingWrites(kind: WriteFault) throws {
        let n = try Self.forEveryN("failwrite") { n, directory, path, box in
            let fault: FaultInjectingFile.Fault = switch kind {
            case .eio: .failWrite(number: n, errno: EIO)
            case .enospc: .failWrite(number: n, errno: ENOSPC)
            case .shortThenEIO: .shortWriteThenFail(number: n, errno: EIO)
            }
            var sequence: [[Operation]] = []
            var acknowledged = 0
            var failures = 0
            do {
                let engine = try Self.open(directory, { try box.make(path: path, fault: fault) })
                for k in 1...Self.commits {
                    let operations = CrashWorkload.transaction(k, seed: 7)
                    do {
                        try engine.write { txn in try CrashWorkload.apply(operations, to: txn) }
                        sequence.append(operations)
                        acknowledged += 1
                    } catch StorageError.io {
                        // A failed write is not a commit; the store goes on.
                        failures += 1
                    }
                }
                engine.close()
            } catch StorageError.io {
                // The fault hit creation: nothing was acknowledged.
                failures += 1
            }
            #expect(acknowledged >= Self.commits - 1 || acknowledged == 0, "N=\(n): after one failed write the engine must go on committing")
            try Self.checkReopened(directory, sequence: sequence, acknowledged: acknowledged, context: "\(kind) N=\(n)")
            // Done once N is past the last write the workload makes. (A failure can also go unseen:
            // a failed superblock write is not an error, the commit it names is already durable.)
            _ = failures
            return (box.file?.counts.writes ?? 0) >= n
        }
        #expect(n > 10, "the workload should make more than 10 writes")
    }

    /// Frames above the stream's 1 MiB buffer are written in the background while the next
    /// buffer is built (`FrameStream`): a failure of such a write must fail its commit just the
    /// same, keep nothing of it, and leave the store taking commits.
    @Test("the Nth write of large frames fails, in the background or not: the commit fails whole, the store goes on")
    func failingWritesOfLargeFrames() throws {
        let commits = 2
        let perCommit = 6_000
        func key(_ commit: Int, _ i: Int) -> [UInt8] { bigEndianKey(UInt64(commit * 1_000_000 + i)) }
        let n = try Self.forEveryN("failwrite-large") { n, directory, path, box in
            var acknowledged: [Int] = []
            let fault = FaultInjectingFile.Fault.failWrite(number: n, errno: EIO)
            var opened = false
            do {
                let engine = try Self.open(directory, { try box.make(path: path, fault: fault) })
                opened = true
                for commit in 0..<commits {
                    do {
                        try engine.write { txn in
                            let tree = try txn.tree("big")!
                            let value = [UInt8](repeating: UInt8(commit + 1), count: 400)
                            for i in 0..<perCommit { try txn.put(tree, key: key(commit, i), value: value) }
                        }
                        acknowledged.append(commit)
                    } catch StorageError.io {}
                }
                engine.close()
            } catch StorageError.io {
                // The fault hit creation: nothing was acknowledged.
            }
            #expect(!opened || acknowledged.count >= commits - 1, "N=\(n): after one failed write the engine must go on committing")
            let engine = try StorageEngine(directory: directory.path, options: StorageOptions(initialMapSize: 1 << 20))
            try engine.read { txn in
                let tree = try txn.tree("big")
                #expect(try tree.map { try txn.count($0) } ?? 0 == acknowledged.count * perCommit, "N=\(n)")
                for commit in 0..<commits {
                    let value = try tree.flatMap { try txn.get($0, key: key(commit, perCommit - 1)) }
                    #expect((value != nil) == acknowledged.contains(commit), "N=\(n) commit \(commit)")
                    if let value { #expect(value == [UInt8](repeating: UInt8(commit + 1), count: 400)) }
                }
            }
            engine.close()
            return (box.file?.counts.writes ?? 0) >= n
        }
        #expect(n > 4, "each large frame should take several writes")
    }

    @Test("sync() in .none durability: it throws when any sync failed, its own included, and returns only when none did")
    func explicitSyncReportsFailures() throws {
        var failedInSync = 0
        let n = try Self.forEveryN("explicit-sync") { n, directory, path, box in
            var committed = 0
            do {
                let engine = try Self.open(directory, { [n] in try box.make(path: path, fault: .failSync(number: n, errno: EIO)) },
                                           durability: .none)
                defer { engine.close() }
                for k in 1...5 {
                    try engine.write { txn in try txn.put(txn.tree("t", create: true)!, key: [UInt8(k)], value: [UInt8(k)]) }
                    committed += 1
                }
                let syncsBefore = box.file?.counts.syncs ?? 0
                do {
                    try engine.sync()
                    // Returned: no sync failed, before it or in it.
                    #expect((box.file?.counts.syncs ?? 0) < n, "N=\(n): sync() returned though sync \(n) failed")
                } catch StorageError.commitsRefused {
                    #expect((box.file?.counts.syncs ?? 0) >= n, "N=\(n): sync() threw with no failed sync")
                    if syncsBefore < n { failedInSync += 1 }
                    #expect(throws: StorageError.self) { try engine.write { txn in try txn.put(txn.tree("t")!, key: [9], value: [9]) } }
                }
            } catch StorageError.io {
                // The failed sync was the open's (its header, its epoch): nothing committed.
                #expect(committed == 0, "N=\(n)")
            } catch StorageError.commitsRefused {
                // A sync of a commit's own (every few commits a superblock is recorded) failed.
            }
            return (box.file?.counts.syncs ?? 0) >= n
        }
        #expect(n > 2 && failedInSync == 1, "N ran to \(n); sync() itself failed \(failedInSync) times")
    }

    @Test("the Nth sync fails: the store refuses further commits, and a reopen has everything acknowledged")
    func failingSyncs() throws {
        let n = try Self.forEveryN("failsync") { n, directory, path, box in
            var sequence: [[Operation]] = []
            var acknowledged = 0
            var failed = false
            var syncsBeforeClose = Int.max
            do {
                let engine = try Self.open(directory, { [n] in try box.make(path: path, fault: .failSync(number: n, errno: EIO)) })
                for k in 1...Self.commits {
                    let operations = CrashWorkload.transaction(k, seed: 11)
                    do {
                        try engine.write { txn in try CrashWorkload.apply(operations, to: txn) }
                        sequence.append(operations)
                        acknowledged += 1
                    } catch StorageError.io {
                        // Unknown whether it is on disk: the sequence may include it.
                        sequence.append(operations)
                        failed = true
                        // Every later commit is refused.
                        #expect(throws: StorageError.self) { try engine.write { txn in try txn.put(txn.tree("x")!, key: [1], value: [1]) } }
                        do {
                            _ = try engine.beginWrite()
                            Issue.record("N=\(n): a write transaction began after a failed sync")
                        } catch StorageError.commitsRefused {
                        } catch {
                            Issue.record("N=\(n): expected commitsRefused, got \(error)")
                        }
                        break
                    } catch StorageError.commitsRefused {
                        // A sync outside a commit failed (of the zeros written ahead of the log):
                        // every commit before it was acknowledged durable, none after is taken.
                        failed = true
                        break
                    }
                }
                syncsBeforeClose = box.file?.counts.syncs ?? 0
                // close syncs too; a failure there is not reported (every commit was synced already).
                engine.close()
            } catch StorageError.io {
                failed = true  // the sync at creation
            }
            try Self.checkReopened(directory, sequence: sequence, acknowledged: acknowledged, context: "sync N=\(n)")
            if (box.file?.counts.syncs ?? 0) < n { return false }
            #expect(failed || n > syncsBeforeClose, "sync \(n) failed but nobody was told")
            return true
        }
        #expect(n > Self.commits)
    }

    @Test("short writes and EINTR everywhere: the engine loops and loses nothing")
    func shortWritesAndInterrupts() throws {
        let directory = TestDirectory("short")
        defer { directory.remove() }
        let path = directory.sub(StorageEngine.dataFileName)
        let box = FileBox()
        var sequence: [[Operation]] = []
        let engine = try Self.open(directory, { try box.make(path: path, fault: .shortAndInterrupted) })
        for k in 1...Self.commits {
            let operations = CrashWorkload.transaction(k, seed: 13)
            try engine.write { txn in try CrashWorkload.apply(operations, to: txn) }
            sequence.append(operations)
        }
        engine.close()
        try Self.checkReopened(directory, sequence: sequence, acknowledged: Self.commits, context: "short writes")
    }

    /// Runs `commits` transactions (`transaction(k)`) on a store opened with `options` whose file
    /// crashes at its Nth sync, for N = 1, 2, 3 … until the workload makes no Nth sync; after each
    /// crash, a store made of the crash image must hold a prefix of the transactions with at least
    /// those acknowledged (`countsAcknowledged`; else any prefix). Returns the last N.
    static func crashAtEverySync(_ name: String, mode: FaultInjectingFile.CrashMode, options: StorageOptions, commits: Int,
                                 countsAcknowledged: Bool, transaction: (Int) -> [Operation]) throws -> Int {
        try forEveryN(name) { n, directory, path, box in
            var sequence: [[Operation]] = []
            var acknowledged = 0
            var options = options
            options.openFile = { _, _, _ in try box.make(path: path, fault: .crashAtSync(number: n), mode: mode, seed: UInt64(n)) }
            do {
                let engine = try StorageEngine(directory: directory.path, options: options)
                defer { engine.close() }
                for k in 1...commits {
                    let operations = transaction(k)
                    sequence.append(operations)
                    try engine.write { txn in try apply(operations, to: txn) }
                    acknowledged += 1
                }
            } catch is FaultInjectingFile.Crashed {
            } catch StorageError.commitsRefused {
            }
            guard let image = box.file?.crashImage else { return false }  // N is past the last sync
            // Power comes back: the disk holds the crash image.
            let after = TestDirectory(name + "-after")
            defer { after.remove() }
            TestDirectory.write(image, to: after.sub(StorageEngine.dataFileName))
            try checkReopened(after, sequence: sequence, acknowledged: countsAcknowledged ? acknowledged : 0,
                              key: options.encryptionKey, context: "crash at sync \(n), \(mode)")
            return true
        }
    }

    @Test("a crash at every sync point, unsynced writes kept, dropped, garbled or half kept",
          arguments: FaultInjectingFile.CrashMode.allCases, [StorageOptions.Durability.full, .none])
    func crashAtEverySync(mode: FaultInjectingFile.CrashMode, durability: StorageOptions.Durability) throws {
        let options = StorageOptions(durability: durability, initialMapSize: 1 << 20, nodeSize: 512, superblockInterval: 3)
        let n = try Self.crashAtEverySync("crash", mode: mode, options: options, commits: Self.commits,
                                          countsAcknowledged: durability == .full) { CrashWorkload.transaction($0, seed: 17) }
        #expect(n > 2)
    }

    @Test("a crash at every sync point of an encrypted store, unsynced writes kept, dropped, garbled or half kept",
          arguments: FaultInjectingFile.CrashMode.allCases)
    func crashAtEverySyncEncrypted(mode: FaultInjectingFile.CrashMode) throws {
        let options = StorageOptions(initialMapSize: 1 << 20, nodeSize: 512, superblockInterval: 3, encryptionKey: TestKeys.encryption)
        let n = try Self.crashAtEverySync("crash-encrypted", mode: mode, options: options, commits: Self.commits,
                                          countsAcknowledged: true) { CrashWorkload.transaction($0, seed: 19) }
        #expect(n > 2)
    }
}

/// Holds the file the engine opened, so the test can look at it afterwards.
final class FileBox: @unchecked Sendable {
    // Set once, on the test's thread, by the engine's open.
    var file: FaultInjectingFile?

    func make(path: String, fault: FaultInjectingFile.Fault, mode: FaultInjectingFile.CrashMode = .dropAll, seed: UInt64 = 1,
              syncDelayMicroseconds: UInt32 = 0) throws -> FaultInjectingFile {
        let made = try FaultInjectingFile(path: path, create: true, readOnly: false, fault: fault, crashMode: mode, seed: seed,
                                          syncDelayMicroseconds: syncDelayMicroseconds)
        file = made
        return made
    }
}
