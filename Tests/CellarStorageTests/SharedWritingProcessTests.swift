import CellarStorage
import CellarTestSupport
import Dispatch
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// Three writer processes on one store (`StorageOptions.sharedWriting`, `.full` durability), each
/// incrementing one counter and recording its steps (`SharedCounterWorkload`), compacting now and
/// then; one of them killed with SIGKILL at counted points (after 3 to 26 more acknowledged
/// commits of all of them) and started again. At the end every acknowledged step is in the store
/// and the counter equals the records: no increment was built on a stale state, none was lost.
/// `CELLAR_SHARED_KILLS` sets how many kills (12 by default).
@Suite("several writing processes, killed")
struct SharedWritingProcessTests {
    @Test("three writer processes killed at counted points: every acknowledged commit kept, no increment lost",
          arguments: [false, true])
    func writersKilled(encrypted: Bool) throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let kills = getenv("CELLAR_SHARED_KILLS").flatMap { Int(String(cString: $0)) } ?? 12
        let directory = TestDirectory("shared-processes")
        defer { directory.remove() }
        let store = directory.sub("store")
        let writers = try (0..<3).map { w in
            try RestartableChild(KillTests.childPath, [store, String(seed), "shared-writer", String(w)] + (encrypted ? ["encrypted"] : []))
        }
        func commits() -> Int { writers.map(\.commits).reduce(0, +) }
        var problems: [String] = []
        var made = 0
        var nextKill = 3 + Int(rng.next() % 24)
        // The clock only guards against a hang (minutes, not a pace any machine must keep).
        let guardUntil = DispatchTime.now().uptimeNanoseconds + 600_000_000_000
        while problems.isEmpty && made < kills {
            for child in writers {
                child.drain()
                if let found = child.exitedProblems() { problems += found }
            }
            if DispatchTime.now().uptimeNanoseconds > guardUntil {
                problems.append("no end after 600 s: \(made) kills, \(commits()) commits")
                break
            }
            if commits() >= nextKill {
                problems += try writers[Int(rng.next() % 3)].restart()
                made += 1
                nextKill = commits() + 3 + Int(rng.next() % 24)
            } else {
                usleep(1_000)  // polling the children's output
            }
        }
        for child in writers { problems += child.stop() }
        let acknowledged = writers.map(\.acknowledged)
        #expect(problems == [], "seed \(seed)")
        let compactions = writers.map(\.compacted).reduce(0, +)
        print("shared writers\(encrypted ? " (encrypted)" : ""): \(made) kills, \(commits()) acknowledged commits, \(compactions) compactions, last steps acknowledged \(acknowledged)")

        var options = StorageOptions(initialMapSize: 1 << 20)
        if encrypted { options.encryptionKey = TestKeys.encryption }
        let engine = try StorageEngine(directory: store, options: options)
        defer { engine.close() }
        let (counter, records) = try SharedCounterWorkload.records(engine)
        #expect(counter == UInt64(records), "the counter missed increments (seed \(seed))")
        var lastSteps = 0
        for w in 0..<3 {
            let last = Int(try SharedCounterWorkload.lastStep(engine, writer: UInt8(w)))
            lastSteps += last
            #expect(last >= acknowledged[w], "writer \(w): step \(acknowledged[w]) acknowledged, \(last) in the store (seed \(seed))")
            let missing = try (1...max(1, acknowledged[w])).filter {
                acknowledged[w] > 0 ? try !SharedCounterWorkload.contains(engine, writer: UInt8(w), step: UInt32($0)) : false
            }
            #expect(missing == [], "writer \(w) lost acknowledged steps (seed \(seed))")
        }
        #expect(records == lastSteps, "a step recorded twice or skipped (seed \(seed))")
    }
}
