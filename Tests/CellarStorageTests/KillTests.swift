import CellarStorage
import CellarTestSupport
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// `kill -9` at counted points (after a random number of acknowledged commits): a child process
/// commits the crash workload and reports each acknowledged commit through a pipe; the parent
/// kills it, reopens the store, and checks that every acknowledged commit is there and the content
/// is exactly that of some commit at or after it.
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

    /// Starts the child with `arguments` and kills it with SIGKILL at a counted point
    /// (`ChildProcess.killPoint`: after 1 to 12 acknowledged commits, the kill then landing in the
    /// next commit wherever in it the child is; or, one round in eight, as soon as it says
    /// `opening`, in its open and recovery or its first commit). Collects its acknowledgements (the
    /// highest goes into `acknowledged`) and returns all it printed with the acknowledgements the
    /// round waited for (0 for a round killed at its open): what a round reaches does not depend
    /// on how fast the machine is.
    static func runAndKill(_ arguments: [String], rng: inout SplitMix64, acknowledged: inout Int) throws -> (output: [UInt8], waitedFor: Int) {
        let target = ChildProcess.killPoint(&rng)
        let output = try run(arguments, acknowledged: &acknowledged) { _, output in ChildProcess.reached(target, in: output) }
        return (output, target)
    }

    /// Starts the child with `arguments` and kills it with SIGKILL as soon as `killNow` says so
    /// (`ChildProcess.run`); the highest acknowledgement it printed goes into `acknowledged`.
    static func run(_ arguments: [String], acknowledged: inout Int,
                    killWhen killNow: (_ waited: Int, _ output: [UInt8]) -> Bool) throws -> [UInt8] {
        let output = try ChildProcess.run(childPath, arguments, killWhen: killNow)
        if let k = ChildProcess.acknowledged(output) { acknowledged = max(acknowledged, k) }
        return output
    }

    /// `kills` rounds: the child commits with `arguments` (the directory and seed go first) and
    /// is killed at a counted point (`runAndKill`); the store is reopened with `options` and must hold every
    /// acknowledged commit and exactly the content of the commit it reopens at (`transaction(k,
    /// seed)` is what commit k did). Returns the commits made, the rounds that reopened past the
    /// last acknowledgement, and the commits the rounds waited for (the least they made).
    static func killRounds(_ kills: Int, name: String, arguments: [String], options: StorageOptions,
                           transaction: (Int, UInt64) -> [Operation]) throws -> (commits: Int, pastAcknowledged: Int, waitedFor: Int) {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let directory = TestDirectory(name)
        defer { directory.remove() }
        var model = Model()
        var modelAt = 0
        var acknowledged = 0
        var killedWhileCommitting = 0
        var waitedFor = 0
        for round in 0..<kills {
            waitedFor += try runAndKill([directory.path, String(seed)] + arguments, rng: &rng, acknowledged: &acknowledged).waitedFor
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
        return (modelAt, killedWhileCommitting, waitedFor)
    }

    @Test("60 kills (40 in .full, 20 in .none) at counted points lose no acknowledged commit and leave no partial one",
          arguments: [(StorageOptions.Durability.full, 40), (.none, 20)])
    func killNine(durability: StorageOptions.Durability, kills: Int) throws {
        let (commits, past, waitedFor) = try Self.killRounds(kills, name: "kill", arguments: [durability == .full ? "full" : "none"],
                                                             options: StorageOptions(initialMapSize: 1 << 20), transaction: CrashWorkload.transaction)
        #expect(commits >= waitedFor && waitedFor > 0, "the children committed \(commits) times, the rounds waited for \(waitedFor) commits")
        print("kill -9 (\(durability)): \(kills) kills, \(commits) commits, \(past) reopened past the last acknowledgement")
    }

    @Test("30 kills of a process whose transactions spill (write their changes ahead of the commit) lose no acknowledged commit and leave no partial one")
    func killNineDuringSpills() throws {
        let (commits, past, waitedFor) = try Self.killRounds(30, name: "kill-spill", arguments: ["spill"], options: SpillWorkload.options()) {
            SpillWorkload.transaction($0, seed: $1)
        }
        #expect(commits >= waitedFor && waitedFor > 0, "the children committed \(commits) times, the rounds waited for \(waitedFor) commits")
        print("kill -9 (spill): 30 kills, \(commits) commits, \(past) reopened past the last acknowledgement")
    }

    @Test("20 kills of a process whose transactions spill into an encrypted store lose no acknowledged commit and leave no partial one")
    func killNineEncrypted() throws {
        var options = SpillWorkload.options()
        options.encryptionKey = TestKeys.encryption
        let (commits, past, waitedFor) = try Self.killRounds(20, name: "kill-encrypted", arguments: ["encrypted-spill"], options: options) {
            SpillWorkload.transaction($0, seed: $1)
        }
        #expect(commits >= waitedFor && waitedFor > 0, "the children committed \(commits) times, the rounds waited for \(waitedFor) commits")
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
        var waitedFor = 0
        for round in 0..<30 {
            let (output, waited) = try Self.runAndKill(arguments, rng: &rng, acknowledged: &acknowledged)
            waitedFor += waited
            try check(output, round: round)
        }
        // The kills above land after a few commits: on a slow machine (a debug build under a
        // sanitizer, a busy runner) none of the child's compactions may have finished, or trained
        // a dictionary, by then. What they did not reach, rounds that wait for it do: the child
        // runs until it reports a compaction that left trained dictionaries and then starts the
        // next one, and is killed there (during a compaction). At most 5 such rounds of at most
        // 120 s each (a bound for a hung child, not a pace); on a fast machine there are none.
        // A build without zstd compacts without dictionaries: there the rounds wait for a
        // compaction that finished and the start of the next one.
        let dictionaries = Compression.zstdDictionary().isAvailable
        var waitingRounds = 0
        while (duringCompaction == 0 || (dictionaries && withDictionaries == 0)) && waitingRounds < 5 {
            let output = try Self.run(arguments, acknowledged: &acknowledged) { waited, output in
                waited >= 120_000_000 || Self.compactingAfter(dictionaries ? "dictionaries" : "compacted", output)
            }
            try check(output, round: 30 + waitingRounds)
            waitingRounds += 1
        }
        #expect(modelAt >= waitedFor && waitedFor > 0, "the children committed \(modelAt) transactions, the rounds waited for \(waitedFor)")
        #expect(duringCompaction > 0, "no kill landed during a compaction")
        #expect(withDictionaries > 0 || !dictionaries, "the child's compactions never trained a dictionary")
        print("kill -9 during compaction: 30 kills after counted commits and \(waitingRounds) waiting for a compaction with dictionaries, \(modelAt) transactions, \(compactions) compactions finished, \(duringCompaction) kills during a compaction, \(midCopy) with a half-built copy on disk, \(withDictionaries) reopened with trained dictionaries")
    }

    /// Rounds of `killNineDuringCompactionWithLargeKeys`: `CELLAR_KILL_ROUNDS` when set (thousands,
    /// by hand), else `rounds`.
    static func largeKeyRounds(_ rounds: Int) -> Int {
        getenv("CELLAR_KILL_ROUNDS").flatMap { Int(String(cString: $0)) } ?? rounds
    }

    /// A store that grows over many rounds, in 4 KiB nodes, with keys of up to 40 KiB (far over a
    /// node: a branch of two such separators is over the node size on its own), values up to
    /// 40 KiB, large transactions now and then, a compaction thread looping, and every other
    /// round compressed with trained dictionaries. Each kill lands at a counted point (after a
    /// number of acknowledged commits, or after the start of the nth compaction and a few more
    /// commits), so what the test reaches does not depend on the machine's speed. After each
    /// kill: every acknowledged commit is there, the content is exact, and no tree is deeper
    /// than log2(count) + 1 (splits near large keys once added a level each, until a cursor
    /// refused a tree of 1,000 keys as corrupt at 65 levels). Also in an encrypted store, with
    /// large transactions spilling (written ahead of their commit) while the copy runs, and with
    /// compactions that keep a window of past commits (replayed one by one into the copy).
    @Test("kills during compactions of a growing store with keys and values of tens of KiB, half with dictionaries, lose nothing and keep trees shallow",
          arguments: [([String](), 24), (["encrypted"], 12), (["spill"], 12), (["window"], 12)])
    func killNineDuringCompactionWithLargeKeys(variants: [String], rounds suiteRounds: Int) throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let directory = TestDirectory("kill-compact-large")
        var options = StorageOptions(initialMapSize: 1 << 20)
        options.encryptionKey = variants.contains("encrypted") ? TestKeys.encryption : nil
        defer { directory.remove() }
        var model = Model()
        var modelAt = 0
        var acknowledged = 0
        var duringCompaction = 0, compactions = 0, deepest = 0
        let rounds = Self.largeKeyRounds(suiteRounds)
        for round in 0..<rounds {
            let compression = round % 2 == 0 || !Compression.zstdDictionary().isAvailable ? "plain" : "dictionary"
            // Where to kill: after 1 to 40 acknowledgements, or once the 1st to 3rd compaction of
            // this child started and 0 to 4 more commits were acknowledged.
            let afterCompactions = rng.next() % 2 == 0 ? 0 : 1 + Int(rng.next() % 3)
            let afterAcks = afterCompactions == 0 ? 1 + Int(rng.next() % 40) : Int(rng.next() % 5)
            var stopped = false
            let output = try Self.run([directory.path, String(seed), "compact-large", compression] + variants, acknowledged: &acknowledged) { waited, output in
                let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
                if lines.contains(where: { $0.hasPrefix("compaction error") }) || waited > 300_000_000 {
                    stopped = true
                    return true
                }
                var started = 0, acks = 0
                for line in lines {
                    if line == "compacting" { started += 1 } else if line.hasPrefix("ack ") && started >= afterCompactions { acks += 1 }
                }
                return started >= afterCompactions && acks >= afterAcks
            }
            let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
            #expect(!stopped, "round \(round): the child stopped announcing: \(lines.suffix(3)) (seed \(seed))")
            if lines.last(where: { $0.hasPrefix("compact") }) == "compacting" { duringCompaction += 1 }
            compactions += lines.filter { $0 == "compacted" }.count
            let progress = try CrashWorkload.progress(in: directory.path, options: options)
            #expect(progress >= acknowledged, "round \(round): the store has \(progress) transactions but \(acknowledged) were acknowledged (seed \(seed))")
            while modelAt < progress {
                modelAt += 1
                model.apply(CrashWorkload.largeTransaction(modelAt, seed: seed))
            }
            var readOnly = options
            readOnly.readOnly = true
            let engine = try StorageEngine(directory: directory.path, options: readOnly)
            var content = try engine.read { try Model(reading: $0) }
            try engine.read { txn in
                for name in try txn.treeNames() {
                    let tree = try txn.tree(name)!
                    let count = try txn.count(tree)
                    let height = try txn.height(tree)
                    let bound = Tree.maximumHeight(count: count)
                    #expect(height <= bound, "round \(round): tree \(name) is \(height) levels deep for \(count) entries (seed \(seed))")
                    deepest = max(deepest, height)
                }
            }
            engine.close()
            content.trees[CrashWorkload.progressTree] = nil
            #expect(content == model, "round \(round): content after \(progress) transactions differs: \(content.difference(from: model) ?? "") (seed \(seed))")
            acknowledged = progress
            if stopped { break }
        }
        #expect(duringCompaction > 0, "no kill landed during a compaction")
        #expect(deepest >= 3, "the trees never grew past two levels: the test tests little (seed \(seed))")
        print("kill -9 during compaction, large keys \(variants): \(rounds) kills, \(modelAt) transactions, \(compactions) compactions finished, \(duringCompaction) kills during a compaction, deepest tree \(deepest) levels")
    }

    /// Whether the compacting child's `output` has `line` (`compacted`: a compaction finished;
    /// `dictionaries`: one left trained dictionaries) and then the start of the next compaction.
    static func compactingAfter(_ line: Substring, _ output: [UInt8]) -> Bool {
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
        guard let reported = lines.firstIndex(of: line) else { return false }
        return lines[reported...].contains("compacting")
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
        try #require(ChildProcess.wait(for: { ChildProcess.acknowledged($0) != nil }, on: child.output, into: &output),
                     "the child never committed")
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
