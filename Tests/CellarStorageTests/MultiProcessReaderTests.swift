import CellarStorage
import CellarTestSupport
import Dispatch
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// Several processes on one store: a writer process makes random commits and compactions,
/// announcing each state (id and content digest) before it commits it; two reader processes and
/// this one read it read-only, checking that every snapshot is an announced state and that ids
/// never go back; writer and readers are killed with SIGKILL at counted points (after a random
/// number of the writer's commits) and started again. `CELLAR_FOLLOW_KILLS` sets how many kills
/// (16 by default); the test goes on until it made them and every process saw enough.
@Suite("several processes on one store")
struct MultiProcessReaderTests {
    final class Child {
        let arguments: [String]
        var pid: pid_t
        var output: Int32
        var printed: [UInt8] = []
        /// `checked N` lines of earlier incarnations, summed.
        var checkedBefore = 0
        var distinctBefore = 0
        var compactionsFollowed = 0
        /// `compacted` lines (the writer's finished compactions), summed over incarnations.
        var compacted = 0
        /// `ack N` lines (the writer's commits) of earlier incarnations, summed.
        var acksBefore = 0
        var incarnations = 1

        init(_ arguments: [String]) throws {
            self.arguments = arguments
            (pid, output) = try ChildProcess.spawn(KillTests.childPath, arguments)
        }

        func drain() { ChildProcess.drain(output, into: &printed) }

        var lines: [Substring] { String(decoding: printed, as: UTF8.self).split(separator: "\n") }

        /// The numbers of the last `checked N distinct D compactions C` line of this incarnation.
        var lastChecked: (checked: Int, distinct: Int, compactions: Int) {
            guard let line = lines.last(where: { $0.hasPrefix("checked ") }) else { return (0, 0, 0) }
            let parts = line.split(separator: " ")
            return (Int(parts[1]) ?? 0, Int(parts[3]) ?? 0, Int(parts[5]) ?? 0)
        }

        /// Failures this child reported or died of (not counting our SIGKILL).
        func problems(status: Int32?) -> [String] {
            var found = lines.filter { $0.hasPrefix("bad") || $0.hasPrefix("error") }.map(String.init)
            if let status, !(status & 0x7f == SIGKILL) { found.append("exited by itself (status \(status)): \(arguments)") }
            return found
        }

        /// Kills it with SIGKILL and starts it again; returns its problems.
        func restart() throws -> [String] {
            let problems = stop()
            (pid, output) = try ChildProcess.spawn(KillTests.childPath, arguments)
            incarnations += 1
            return problems
        }

        /// Kills it with SIGKILL (when still running) and returns its problems.
        func stop() -> [String] {
            var status: Int32 = 0
            let exited = waitpid(pid, &status, WNOHANG) == pid
            if !exited {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
            }
            drain()
            close(output)
            let (checked, distinct, compactions) = lastChecked
            checkedBefore += checked
            distinctBefore += distinct
            compactionsFollowed += compactions
            compacted += lines.filter { $0 == "compacted" }.count
            acksBefore += ChildProcess.acknowledgements(printed)
            let found = problems(status: exited ? status : nil)
            printed = []
            return found
        }

        /// Problems of a child that ended by itself while running.
        func exitedProblems() -> [String]? {
            var status: Int32 = 0
            guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
            drain()
            return problems(status: status) + ["ended early: \(String(decoding: printed.suffix(300), as: UTF8.self))"]
        }
    }

    @Test("a writable open waiting for the lock gets the store when the writing process dies within the wait, storeLocked when it outlives it")
    func lockWaitAcrossProcesses() throws {
        let directory = TestDirectory("lock-wait-processes")
        defer { directory.remove() }
        let store = directory.sub("store"), published = directory.sub("published")
        let locked = StorageError.storeLocked(path: store + "/" + StorageEngine.lockFileName)
        let writer = try Child([store, "7", "publish", published])
        defer { _ = writer.stop() }
        // Wait until it has the store (its first commit acknowledged).
        #expect(ChildProcess.wait(for: { ChildProcess.acknowledged($0) != nil }, on: writer.output, into: &writer.printed))

        // The lower bounds are the deadlines themselves; the upper one only catches a wait many
        // times too long, with seconds to spare for a busy machine (as in ReadOnlyFollowTests).
        var started = DispatchTime.now().uptimeNanoseconds
        #expect(throws: locked) { try StorageEngine(directory: store, options: StorageOptions(lockWaitTimeout: .milliseconds(500))) }
        let waitedMs = (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
        #expect(waitedMs >= 500 && waitedMs < 10_500, "waited \(waitedMs) ms")

        // Killed 300 ms (or more) after the clock starts, within a 60 s wait: the lock goes with
        // the process, and the open gets it then, not before.
        let pid = writer.pid
        started = DispatchTime.now().uptimeNanoseconds
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(300)) { kill(pid, SIGKILL) }
        let engine = try StorageEngine(directory: store, options: StorageOptions(lockWaitTimeout: .seconds(60)))
        defer { engine.close() }
        let tookMs = (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
        #expect(tookMs >= 300, "took \(tookMs) ms")
        #expect(engine.lastTransactionId >= 1)
    }

    @Test("a writer process with compactions and reader processes, killed at counted points: every snapshot read is an announced state, ids never go back")
    func writerAndReaders() throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let kills = getenv("CELLAR_FOLLOW_KILLS").flatMap { Int(String(cString: $0)) } ?? 16
        let directory = TestDirectory("processes")
        defer { directory.remove() }
        let store = directory.sub("store"), published = directory.sub("published")
        do {
            let engine = try StorageEngine(directory: store, options: StorageOptions(durability: .none))
            try engine.write { try $0.put($0.tree("t0")!, key: [0], value: [0]) }
            let fd = open(published, O_WRONLY | O_APPEND | O_CREAT, 0o644)
            PublishedStates.announce(id: engine.lastTransactionId, digest: try engine.read { try Model(reading: $0) }.digest, to: fd)
            close(fd)
            engine.close()
        }
        // The readers run until they are killed (an hour is a guard, not a length).
        let readerMilliseconds = String(3_600_000)
        let writer = try Child([store, String(seed), "publish", published])
        let readers = try (0..<2).map { _ in try Child([store, "0", "verify", published, readerMilliseconds]) }
        var problems: [String] = []
        var writerKills = 0, readerKills = 0

        // This process reads too.
        let reader = try StorageEngine(directory: store, options: StorageOptions(readOnly: true, initialMapSize: 1 << 20))
        defer { reader.close() }
        var states = PublishedStates(path: published)
        var last: UInt64 = 0, checked = 0, distinct = 0
        /// The writer's commits, over its incarnations: the clock the kills go by.
        func writerCommits() -> Int { writer.acksBefore + ChildProcess.acknowledgements(writer.printed) }
        /// What the reader processes saw, over their incarnations.
        func childrenSaw() -> (checks: Int, distinct: Int) {
            (readers.map { $0.checkedBefore + $0.lastChecked.checked }.reduce(0, +),
             readers.map { $0.distinctBefore + $0.lastChecked.distinct }.reduce(0, +))
        }
        var nextKill = 3 + Int(rng.next() % 24)
        // Until the kills are made and every process saw enough; the clock only guards against a
        // hang (minutes, not a pace any machine must keep).
        let guardUntil = DispatchTime.now().uptimeNanoseconds + 600_000_000_000
        while problems.isEmpty {
            let saw = childrenSaw()
            if writerKills + readerKills >= kills && checked > 10 && distinct > 5 && saw.checks > 10 && saw.distinct > 5 { break }
            if DispatchTime.now().uptimeNanoseconds > guardUntil {
                problems.append("no end after 600 s: \(writerKills + readerKills) kills, \(checked) snapshots (\(distinct) ids) here, \(saw) in the readers")
                break
            }
            let txn = try reader.beginRead()
            let id = txn.transactionId
            let digest = try Model(reading: txn).digest
            if id < last { problems.append("this process: id \(id) after \(last)") }
            if !states.contains(id: id, digest: digest) { problems.append("this process: id \(id) digest \(digest) never announced") }
            if id != last { distinct += 1 }
            last = id
            checked += 1
            for child in [writer] + readers {
                child.drain()
                if let found = child.exitedProblems() { problems += found }
            }
            if writerCommits() >= nextKill {
                // The writer half the time, else one of the readers.
                if rng.next() % 2 == 0 {
                    problems += try writer.restart()
                    writerKills += 1
                } else {
                    problems += try readers[Int(rng.next() % 2)].restart()
                    readerKills += 1
                }
                nextKill = writerCommits() + 3 + Int(rng.next() % 24)
            }
            // Reads at varied moments of the writer's work (a jitter, not a wait for anything).
            usleep(UInt32(rng.next() % 2_000))
        }
        problems += writer.stop()
        for child in readers { problems += child.stop() }
        #expect(problems == [], "seed \(seed)")

        let childChecks = readers.map(\.checkedBefore).reduce(0, +)
        let childDistinct = readers.map(\.distinctBefore).reduce(0, +)
        print("multi-process: \(writerKills + readerKills) kills, writer killed \(writerKills)x and compacted \(writer.compacted)x, readers killed \(readerKills)x; this process checked \(checked) snapshots (\(distinct) distinct ids, \(reader.followedCompactions) compactions followed); reader processes \(childChecks) (\(childDistinct) distinct, \(readers.map(\.compactionsFollowed).reduce(0, +)) compactions followed)")
        #expect(checked > 10 && distinct > 5, "this process saw too little: \(checked) snapshots, \(distinct) ids")
        #expect(childChecks > 10 && childDistinct > 5, "the reader processes saw too little: \(childChecks) snapshots, \(childDistinct) ids")

        // The store verifies: a writable open, every value read, an announced state.
        let engine = try StorageEngine(directory: store)
        defer { engine.close() }
        let model = try engine.read { try Model(reading: $0) }
        let announced = states.contains(id: engine.lastTransactionId, digest: model.digest)
        #expect(announced, "the store reopened at \(engine.lastTransactionId) holds no announced state (seed \(seed))")
        #expect(engine.lastTransactionId >= last)
    }
}
