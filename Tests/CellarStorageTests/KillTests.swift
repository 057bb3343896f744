import CellarStorage
import CellarTestSupport
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// `kill -9` at random moments: a child process commits the crash workload and reports each
/// acknowledged commit through a pipe; the parent kills it, reopens the store, and checks that
/// every acknowledged commit is there and the content is exactly that of some commit at or after it.
@Suite("kill -9")
struct KillTests {
    /// The crash child sits next to the test binary in the build folder.
    static var childPath: String {
        let me = CommandLine.arguments[0]
        let folder = me.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return (folder.isEmpty ? "." : folder) + "/CellarCrashChild"
    }

    /// Starts the child; returns its pid and the read end of its stdout pipe (non-blocking).
    static func spawn(_ arguments: [String]) throws -> (pid: pid_t, output: Int32) {
        try ChildProcess.spawn(childPath, arguments)
    }

    /// Reads what the child wrote so far; returns the highest acknowledged commit in it.
    static func drain(_ fd: Int32, into buffer: inout [UInt8]) -> Int? {
        ChildProcess.drain(fd, into: &buffer)
        return ChildProcess.acknowledged(buffer)
    }

    /// Starts the child with `arguments`, lets it run 5 to 120 ms collecting its acknowledgements
    /// (the highest goes into `acknowledged`), kills it with SIGKILL and returns all it printed.
    static func runAndKill(_ arguments: [String], rng: inout SplitMix64, acknowledged: inout Int) throws -> [UInt8] {
        let runFor = 5_000 + Int(rng.next() % 115_000)
        return try run(arguments, acknowledged: &acknowledged) { waited, _ in waited >= runFor }
    }

    /// Starts the child with `arguments` and kills it with SIGKILL as soon as `killNow` (asked every
    /// 2 ms with the microseconds waited and what the child printed so far) says so; collects its
    /// acknowledgements (the highest goes into `acknowledged`) and returns all it printed.
    static func run(_ arguments: [String], acknowledged: inout Int,
                    killWhen killNow: (_ waited: Int, _ output: [UInt8]) -> Bool) throws -> [UInt8] {
        let child = try spawn(arguments)
        var output: [UInt8] = []
        var waited = 0
        repeat {
            usleep(2_000)
            waited += 2_000
            if let k = drain(child.output, into: &output) { acknowledged = max(acknowledged, k) }
        } while !killNow(waited, output)
        kill(child.pid, SIGKILL)
        var status: Int32 = 0
        waitpid(child.pid, &status, 0)
        if let k = drain(child.output, into: &output) { acknowledged = max(acknowledged, k) }
        close(child.output)
        return output
    }

    /// `kills` rounds: the child commits with `arguments` (the directory and seed go first) and
    /// is killed at a random moment; the store is reopened with `options` and must hold every
    /// acknowledged commit and exactly the content of the commit it reopens at (`transaction(k,
    /// seed)` is what commit k did). Returns the commits made and the rounds that reopened past
    /// the last acknowledgement.
    static func killRounds(_ kills: Int, name: String, arguments: [String], options: StorageOptions,
                           transaction: (Int, UInt64) -> [Operation]) throws -> (commits: Int, pastAcknowledged: Int) {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let directory = TestDirectory(name)
        defer { directory.remove() }
        var model = Model()
        var modelAt = 0
        var acknowledged = 0
        var killedWhileCommitting = 0
        for round in 0..<kills {
            _ = try runAndKill([directory.path, String(seed)] + arguments, rng: &rng, acknowledged: &acknowledged)
            let engine = try StorageEngine(directory: directory.path, options: options)
            let t = Int(engine.lastTransactionId)
            #expect(t >= acknowledged, "round \(round): reopened at commit \(t) but \(acknowledged) were acknowledged (seed \(seed))")
            if t > acknowledged { killedWhileCommitting += 1 }
            while modelAt < t {
                modelAt += 1
                model.apply(transaction(modelAt, seed))
            }
            let content = try engine.read { try Model(reading: $0) }
            #expect(content == model, "round \(round): content at commit \(t) differs: \(content.difference(from: model) ?? "") (seed \(seed))")
            engine.close()
            // The child continues from the store's last commit; commits past our acknowledgements
            // (made just before the kill) count as acknowledged from now on.
            acknowledged = t
        }
        return (modelAt, killedWhileCommitting)
    }

    @Test("60 kills (40 in .full, 20 in .none) at random moments lose no acknowledged commit and leave no partial one",
          arguments: [(StorageOptions.Durability.full, 40), (.none, 20)])
    func killNine(durability: StorageOptions.Durability, kills: Int) throws {
        let (commits, past) = try Self.killRounds(kills, name: "kill", arguments: [durability == .full ? "full" : "none"],
                                                  options: StorageOptions(initialMapSize: 1 << 20), transaction: CrashWorkload.transaction)
        #expect(commits > kills, "the children committed too little to test anything: \(commits) commits in \(kills) rounds")
        print("kill -9 (\(durability)): \(kills) kills, \(commits) commits, \(past) reopened past the last acknowledgement")
    }

    @Test("30 kills of a process whose transactions spill (write their changes ahead of the commit) lose no acknowledged commit and leave no partial one")
    func killNineDuringSpills() throws {
        let (commits, past) = try Self.killRounds(30, name: "kill-spill", arguments: ["spill"], options: SpillWorkload.options()) {
            SpillWorkload.transaction($0, seed: $1)
        }
        #expect(commits >= 10, "the children committed too little to test anything: \(commits) commits in 30 rounds")
        print("kill -9 (spill): 30 kills, \(commits) commits, \(past) reopened past the last acknowledgement")
    }

    @Test("20 kills of a process whose transactions spill into an encrypted store lose no acknowledged commit and leave no partial one")
    func killNineEncrypted() throws {
        var options = SpillWorkload.options()
        options.encryptionKey = TestKeys.encryption
        let (commits, past) = try Self.killRounds(20, name: "kill-encrypted", arguments: ["encrypted-spill"], options: options) {
            SpillWorkload.transaction($0, seed: $1)
        }
        #expect(commits >= 6, "the children committed too little to test anything: \(commits) commits in 20 rounds")
        print("kill -9 (encrypted, spill): 20 kills, \(commits) commits, \(past) reopened past the last acknowledgement")
    }

    @Test("30 kills of a process that commits while another thread compacts lose no acknowledged commit, whenever in the compaction they land")
    func killNineDuringCompaction() throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let directory = TestDirectory("kill-compact")
        defer { directory.remove() }
        var model = Model()
        var modelAt = 0
        var acknowledged = 0
        var duringCompaction = 0, midCopy = 0, compactions = 0, withDictionaries = 0
        let arguments = [directory.path, String(seed), "compact"]
        // Checks the store after the child of `round` printed `output` and was killed.
        func check(_ output: [UInt8], round: Int) throws {
            let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
            if lines.last(where: { $0.hasPrefix("compact") }) == "compacting" { duringCompaction += 1 }
            compactions += lines.filter { $0 == "compacted" }.count
            #expect(!lines.contains { $0.hasPrefix("compaction error") }, "round \(round): \(lines.filter { $0.hasPrefix("compaction error") })")
            if TestDirectory.exists(directory.sub(StorageEngine.compactionDirectoryName)) { midCopy += 1 }
            // Reopen (which removes a half-built copy) and compare.
            let progress = try CrashWorkload.progress(in: directory.path)
            #expect(progress >= acknowledged, "round \(round): the store has \(progress) transactions but \(acknowledged) were acknowledged (seed \(seed))")
            while modelAt < progress {
                modelAt += 1
                model.apply(CrashWorkload.transaction(modelAt, seed: seed))
            }
            let engine = try StorageEngine(directory: directory.path, options: StorageOptions(readOnly: true))
            var content = try engine.read { try Model(reading: $0) }
            if try !engine.read({ try $0.dictionaryIds() }).isEmpty { withDictionaries += 1 }
            engine.close()
            content.trees[CrashWorkload.progressTree] = nil
            #expect(content == model, "round \(round): content after \(progress) transactions differs: \(content.difference(from: model) ?? "") (seed \(seed))")
            #expect(!TestDirectory.exists(directory.sub(StorageEngine.compactionDirectoryName)), "a writable open removes the half-built copy")
            acknowledged = progress
        }
        for round in 0..<30 {
            try check(try Self.runAndKill(arguments, rng: &rng, acknowledged: &acknowledged), round: round)
        }
        // The kills above land 5 to 120 ms after a child starts: on a slow machine (a debug build
        // under a sanitizer, a busy runner) none of its compactions may finish, or train a
        // dictionary, in that time. What they did not reach, rounds that wait for it do: the child
        // runs until it reports a compaction that left trained dictionaries and then starts the
        // next one, and is killed there (during a compaction). At most 5 such rounds of at most
        // 30 s each; on a fast machine there are none.
        var waitingRounds = 0
        while (modelAt <= 30 || duringCompaction == 0 || withDictionaries == 0) && waitingRounds < 5 {
            let output = try Self.run(arguments, acknowledged: &acknowledged) { waited, output in
                waited >= 30_000_000 || Self.compactingAfterDictionaries(output)
            }
            try check(output, round: 30 + waitingRounds)
            waitingRounds += 1
        }
        #expect(modelAt > 30, "the children committed too little: \(modelAt) transactions")
        #expect(duringCompaction > 0, "no kill landed during a compaction")
        #expect(withDictionaries > 0, "the child's compactions never trained a dictionary")
        print("kill -9 during compaction: 30 kills at random moments and \(waitingRounds) waiting for a compaction with dictionaries, \(modelAt) transactions, \(compactions) compactions finished, \(duringCompaction) kills during a compaction, \(midCopy) with a half-built copy on disk, \(withDictionaries) reopened with trained dictionaries")
    }

    /// Whether the compacting child's `output` reports a compaction that left trained
    /// dictionaries and then the start of the next one.
    static func compactingAfterDictionaries(_ output: [UInt8]) -> Bool {
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
        guard let trained = lines.firstIndex(of: "dictionaries") else { return false }
        return lines[trained...].contains("compacting")
    }

    @Test("while another process writes to a store, opening it for writing throws storeLocked")
    func anotherProcessHoldsTheLock() throws {
        let directory = TestDirectory("lock-process")
        defer { directory.remove() }
        let child = try Self.spawn([directory.path, "1", "full"])
        defer {
            kill(child.pid, SIGKILL)
            var status: Int32 = 0
            waitpid(child.pid, &status, 0)
            close(child.output)
        }
        // Wait until the child has committed once: it holds the lock from then on.
        var output: [UInt8] = []
        var waited = 0
        while Self.drain(child.output, into: &output) == nil {
            usleep(5_000)
            waited += 5_000
            try #require(waited < 20_000_000, "the child never committed")
        }
        #expect(throws: StorageError.storeLocked(path: directory.sub(StorageEngine.lockFileName))) {
            _ = try StorageEngine(directory: directory.path)
        }
        // Reading is fine while it writes.
        let reader = try StorageEngine(directory: directory.path, options: StorageOptions(readOnly: true))
        #expect(reader.lastTransactionId >= 1)
        reader.close()
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
