@_spi(CellarGenerated) @_spi(Testing) import Cellar
import CellarTestSupport
import Dispatch
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// Three writer processes and one observer process on one database through `Store`
/// (`StoreOptions.sharedWriting`, `SharedStoreWorkload`: puts, updates and removes of persons with
/// a unique email, durable commits, a compaction now and then); a writer killed with SIGKILL at
/// counted points (after 3 to 18 more acknowledged steps of all of them) and started again. Then:
/// every acknowledged step's effects are in the database, no unique email twice, no person
/// overwritten by another process's id, and the observer's last live result equals a fresh query.
/// `CELLAR_SHARED_STORE_KILLS` sets how many kills (8 by default).
@Suite("several writing processes through Store, and an observer process")
struct SharedWritingStoreProcessTests {
    @Test("three writer processes killed at counted points and an observer process: every acknowledged step kept, unique emails once, the live result equals a fresh query",
          arguments: [false, true])
    func writersAndObserver(encrypted: Bool) async throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let kills = getenv("CELLAR_SHARED_STORE_KILLS").flatMap { Int(String(cString: $0)) } ?? 8
        let directory = TestDirectory("shared-store-processes")
        defer { directory.remove() }
        let path = directory.sub("store")
        let options = SharedStoreWorkload.options(encrypted: encrypted)
        try Store(directoryPath: path, model: SharedStoreWorkload.model, options: options).close()
        let variant = encrypted ? ["encrypted"] : []
        let observer = try RestartableChild(VectorCrashTests.childPath, [path, "shared-observer"] + variant)
        defer { _ = observer.stop() }
        #expect(ChildProcess.wait(for: { String(decoding: $0, as: UTF8.self).contains("observing") }, on: observer.output,
                                  into: &observer.printed))
        let writers = try (0..<3).map { w in try RestartableChild(VectorCrashTests.childPath, [path, "shared-writer", String(w), String(seed)] + variant) }
        var problems: [String] = []
        var made = 0
        var nextKill = 3 + Int(rng.next() % 16)
        func commits() -> Int { writers.map(\.commits).reduce(0, +) }
        // The clock only guards against a hang.
        let guardUntil = DispatchTime.now().uptimeNanoseconds + 600_000_000_000
        while problems.isEmpty && made < kills {
            for child in writers {
                child.drain()
                if let found = child.exitedProblems() { problems += found }
            }
            observer.drain()
            if DispatchTime.now().uptimeNanoseconds > guardUntil {
                problems.append("no end after 600 s: \(made) kills, \(commits()) steps")
                break
            }
            if commits() >= nextKill {
                problems += try writers[Int(rng.next() % 3)].restart()
                made += 1
                nextKill = commits() + 3 + Int(rng.next() % 16)
            } else {
                usleep(1_000)  // polling the children's output
            }
        }
        for child in writers { problems += child.stop() }
        #expect(problems == [], "seed \(seed)")
        let acknowledged = writers.map(\.acknowledged)
        print("shared stores\(encrypted ? " (encrypted)" : ""): \(made) kills, \(commits()) acknowledged steps, last acknowledged \(acknowledged)")

        let store = try Store(directoryPath: path, model: SharedStoreWorkload.model, options: options)
        defer { store.close() }
        let box = store.box(for: SharedStoreWorkload.Person.self)
        let everyone = try box.all()
        var emails: [String: SharedStoreWorkload.Person] = [:]
        for person in everyone {
            guard case .string(let email)? = person.values["email"] else { continue }
            #expect(emails[email] == nil, "email \(email) twice (seed \(seed))")
            emails[email] = person
        }
        for w in 0..<3 {
            let progress = try SharedStoreWorkload.progress(store, writer: w)
            #expect(progress >= acknowledged[w], "writer \(w): step \(acknowledged[w]) acknowledged, progress \(progress) (seed \(seed))")
            var wrong: [Int] = []
            for k in 1...max(1, progress) where progress > 0 {
                let removed = (k + 6) % 7 == 0 && k + 6 <= progress && k > 0 && k + 6 > 6
                let person = emails[SharedStoreWorkload.emailOf(writer: w, step: k)]
                if removed != (person == nil) { wrong.append(k) }
                if let person, k + 1 <= progress, (k + 1) % 3 == 0, person.values["age"] != .string("u\(k + 1)") { wrong.append(k) }
                if let person, person.values["lastName"] != .string(String(k)) { wrong.append(k) }
            }
            #expect(wrong == [], "writer \(w): steps whose effects are wrong (seed \(seed))")
        }
        // The observer's last publication is what the database holds.
        let fresh = "live " + SharedStoreWorkload.digest(try SharedStoreWorkload.writersQuery(store).find())
        let heard = await eventually {
            observer.drain()
            return observer.lines.last(where: { $0.hasPrefix("live ") }).map(String.init) == fresh
        }
        #expect(heard, "the observer's last live result \(observer.lines.last(where: { $0.hasPrefix("live ") }) ?? "none") is not \(fresh) (seed \(seed))")
    }
}
