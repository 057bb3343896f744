@_spi(Sync) import Cellar
@testable import CellarSync
import Foundation
import Logging
import PostgresNIO
import Testing

/// Sync under faults: connections killed in the middle of transactions, the server crashed and
/// started again, a syncing client killed with SIGKILL mid-push. Afterwards the stores converge,
/// no object is lost, and no change is applied twice.
@Suite(.serialized, .enabled(if: TestServer.enabled, TestServer.skipped))
struct FaultTests {
    /// Options for live clients that notice faults quickly.
    static func liveOptions() -> SyncOptions {
        var options = SyncOptions()
        options.pushEntries = 10
        options.pullChanges = 40
        options.pollInterval = .milliseconds(2)
        options.pullInterval = .milliseconds(300)
        options.retryDelay = .milliseconds(10)
        options.timeout = .seconds(2)
        // The change log is kept whole: the checks count its rows per object.
        options.changeRetention = nil
        return options
    }

    /// Two stores syncing with `server` in `schema`, with ``liveOptions()``; `subscribed`, by
    /// subscriptions that match every object the tests make (so that the counts still
    /// converge, through the subscriptions' filtered reads and leave checks).
    static func twoStores(on server: PrivateServer, schema: String, subscribed: Bool) async throws -> SyncHarness {
        var options = liveOptions()
        options.bySubscription = subscribed
        let harness = try SyncHarness(schema: schema, options: options)
        harness.server = try SyncServer(url: server.url)
        for _ in 0..<2 {
            let (store, client) = try harness.addStore()
            guard subscribed else { continue }
            try await client.subscribe(try store.box(for: Item.self).query { Item.count >= 0 && Item.title.startsWith("a-") }.build())
            try await client.subscribe(try store.box(for: Person.self).query { Person.age < 45 || Person.age >= 45 }.build())
        }
        return harness
    }

    /// Store 0 creates `items` items and updates some; store 1 creates `people` persons and
    /// updates items it has seen; both sync live all along. `midway` runs once, concurrently,
    /// when store 0 has made half its items; `fault` runs now and then while they write.
    static func writeWhileLive(_ harness: SyncHarness, items: Int, people: Int,
                               midway: @escaping @Sendable () async throws -> Void = {}) async throws {
        let a = harness.stores[0], b = harness.stores[1]
        let itemsA = a.box(for: Item.self), itemsB = b.box(for: Item.self), peopleB = b.box(for: Person.self)
        var midwayTask: Task<Void, any Error>?
        var made = 0, madePeople = 0
        while made < items || madePeople < people {
            if made < items {
                let batch = (made..<min(items, made + 5)).map { Item(title: "a-\($0)", count: $0) }
                try itemsA.put(batch)
                made += batch.count
                if made >= items / 2, midwayTask == nil { midwayTask = Task { try await midway() } }
                if made % 20 == 0, let item = try itemsA.all().randomElement() {
                    item.done.toggle()
                    try itemsA.put(item)
                }
            }
            if madePeople < people {
                try peopleB.put(Person(name: "b-\(madePeople)", age: madePeople % 90))
                madePeople += 1
                if madePeople % 10 == 0, let item = try itemsB.all().randomElement() {
                    item.score += 1
                    try itemsB.put(item)
                }
            }
            try await Task.sleep(for: .milliseconds(12))
        }
        try await midwayTask?.value
    }

    /// Waits until both stores hold `items` items and `people` persons, have nothing left to
    /// push, and hold the same objects; fails after `timeout`.
    static func awaitConvergence(_ harness: SyncHarness, items: Int, people: Int, timeout: Duration = .seconds(120)) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            let a = harness.stores[0], b = harness.stores[1]
            if try a.box(for: Item.self).count() == items, try b.box(for: Item.self).count() == items,
               try a.box(for: Person.self).count() == people, try b.box(for: Person.self).count() == people,
               try !harness.clients[0].hasPendingChanges(), try !harness.clients[1].hasPendingChanges(),
               try SyncHarness.picture(of: a) == SyncHarness.picture(of: b) {
                return
            }
            guard ContinuousClock.now < deadline else {
                let counts = try [a.box(for: Item.self).count(), b.box(for: Item.self).count(),
                                  a.box(for: Person.self).count(), b.box(for: Person.self).count()]
                let states = try harness.stores.map { store in
                    let state = try store.replicaState()
                    return "acknowledged \(state.acknowledged) of \(try store.lastHistorySequence()), pulled \(state.pulled)"
                }
                Issue.record("no convergence within \(timeout): items and persons in each store \(counts); \(states)")
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The server holds `items` items and `people` persons, each once; every person (created,
    /// never updated) has exactly one change: a push retried after a lost reply added none.
    static func checkServer(_ connection: PostgresConnection, schema: String, items: Int, people: Int) async throws {
        let logger = TestServer.logger
        let counts = try await connection.rows("""
            SELECT (SELECT count(*) FROM "\(schema)"."Item")::text, (SELECT count(DISTINCT cellar_id) FROM "\(schema)"."Item")::text,
                   (SELECT count(*) FROM "\(schema)"."Person")::text,
                   (SELECT count(*) FROM "\(schema)".cellar_changes c JOIN "\(schema)".cellar_tables t ON t.uid = c.table_uid
                    WHERE t.name = 'Person')::text
            """, logger: logger)
        #expect(counts.first == ["\(items)", "\(items)", "\(people)", "\(people)"],
                "server: items, distinct items, persons, person changes")
    }

    @Test(arguments: [false, true])
    func connectionsKilledMidTransaction(subscribed: Bool) async throws {
        // A server of its own: the test ends every connection but its own, wherever they are.
        try await PrivateServer.with { server in
            let schema = "killed"
            let harness = try await Self.twoStores(on: server, schema: schema, subscribed: subscribed)
            defer { Task { await harness.close() } }
            let connection = try await SyncServer(url: server.url).connect(logger: TestServer.logger)
            let live = harness.clients.map { client in Task { await client.run() } }
            // Every 15 ms, every other backend ends: mid-push, mid-pull, listening, connecting;
            // while the stores write, and on until at least 12 connections were ended (counted,
            // not timed: the 600 s are a guard against a hang).
            let writing = Flag(true)
            let killing = Task {
                var killed = 0
                let deadline = ContinuousClock.now + .seconds(600)
                while writing.value || killed < 12, ContinuousClock.now < deadline {
                    let rows = try await connection.rows("""
                        SELECT count(pg_terminate_backend(pid))::text FROM pg_stat_activity
                        WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'
                        """, logger: TestServer.logger)
                    killed += Int(rows.first?.first.flatMap { $0 } ?? "0") ?? 0
                    try await Task.sleep(for: .milliseconds(15))
                }
                return killed
            }
            try await Self.writeWhileLive(harness, items: 300, people: 120)
            writing.value = false
            let killed = try await killing.value
            #expect(killed >= 12, "the test ended \(killed) connections before its 600 s guard: too few to test anything")
            try await Self.awaitConvergence(harness, items: 300, people: 120)
            for task in live { task.cancel() }
            for task in live { await task.value }
            try await Self.checkServer(connection, schema: schema, items: 300, people: 120)
            try? await connection.close()
        }
    }

    @Test(arguments: [false, true])
    func serverCrashedAndRestarted(subscribed: Bool) async throws {
        try await PrivateServer.with { server in
            let schema = "crash"
            let harness = try await Self.twoStores(on: server, schema: schema, subscribed: subscribed)
            defer { Task { await harness.close() } }
            let live = harness.clients.map { client in Task { await client.run() } }
            // Halfway, the server crashes (every backend killed, no shutdown checkpoint), stays
            // away a second while both stores go on writing, and starts again (crash recovery).
            try await Self.writeWhileLive(harness, items: 300, people: 120) {
                try await server.crash()
                try await Task.sleep(for: .seconds(1))
                try await server.restart()
            }
            try await Self.awaitConvergence(harness, items: 300, people: 120)
            for task in live { task.cancel() }
            for task in live { await task.value }
            let connection = try await SyncServer(url: server.url).connect(logger: TestServer.logger)
            try await Self.checkServer(connection, schema: schema, items: 300, people: 120)
            try? await connection.close()
        }
    }

    /// The benchmark's writer (an executable of this package) is killed with SIGKILL three
    /// times while it puts and pushes objects, then run to its end: the server holds each
    /// object once, with one change each. `subscribed`: the writer syncs by a subscription
    /// every object matches.
    @Test(arguments: [false, true])
    func writerKilledMidPush(subscribed: Bool) async throws {
        let writer = try Self.writerExecutable()
        try await TestServer.freshSchema { connection, schema in
            let directory = NSTemporaryDirectory() + "cellar-sync-writer-" + UUID().uuidString
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let total = 2_000
            let arguments = ["writer", "--url", TestServer.url!, "--schema", schema, "--store", directory,
                             "--count", String(total), "--batch", "10", "--push-entries", "20"] + (subscribed ? ["--subscribed"] : [])
            func serverCount() async throws -> Int {
                let table = try await connection.rows("SELECT to_regclass($1)::text", ["\"\(schema)\".cellar_changes"], logger: TestServer.logger)
                guard table.first?.first.flatMap({ $0 }) != nil else { return 0 }  // the writer has not made it yet
                let rows = try await connection.rows("SELECT count(*)::text FROM \"\(schema)\".cellar_changes", logger: TestServer.logger)
                return Int(rows.first?.first.flatMap { $0 } ?? "0") ?? 0
            }
            var kills = 0
            for stage in 1...3 {
                let child = ChildProcess(writer, arguments)
                try child.start()
                // Until the server holds a quarter, a half, three quarters of the objects.
                let deadline = ContinuousClock.now + .seconds(120)
                var ended = false
                while try await serverCount() < total * stage / 4, ContinuousClock.now < deadline {
                    if !child.isRunning { ended = true; break }
                    try await Task.sleep(for: .milliseconds(5))
                }
                child.kill()
                let (status, signalled) = await child.exit()
                if signalled { kills += 1 } else { #expect(ended && status == 0, "the writer failed: \(child.output)") }
            }
            #expect(kills >= 2, "the writer was killed \(kills) times: it ended before the test could kill it")
            let last = ChildProcess(writer, arguments)
            try last.start()
            let (status, _) = await last.exit()
            #expect(status == 0, "the writer's last run failed: \(last.output)")
            let rows = try await connection.rows("""
                SELECT (SELECT count(*) FROM "\(schema)"."BenchNote")::text,
                       (SELECT count(DISTINCT title) FROM "\(schema)"."BenchNote")::text,
                       (SELECT count(*) FROM "\(schema)"."BenchNote" WHERE title <> 'note ' || lpad(count::text, 9, '0'))::text,
                       (SELECT count(*) FROM "\(schema)".cellar_changes)::text,
                       (SELECT count(DISTINCT cellar_id) FROM "\(schema)".cellar_changes)::text
                """, logger: TestServer.logger)
            #expect(rows.first == ["\(total)", "\(total)", "0", "\(total)", "\(total)"],
                    "server: objects, distinct titles, objects whose values disagree, changes, distinct changed objects")
        }
    }

    /// `sync-bench`, beside the test bundle in the build directory.
    static func writerExecutable() throws -> String {
        var candidates: [String] = []
        if let bundle = Bundle.main.executableURL { candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("sync-bench").path) }
        candidates.append(repositoryRoot + "/.build/debug/sync-bench")
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw ChildProcess.Failed(description: "sync-bench is not built (swift build --build-tests builds it); looked at \(candidates)")
        }
        return found
    }
}

/// A flag shared between tasks.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Bool
    init(_ value: Bool) { current = value }
    var value: Bool {
        get { lock.withLock { current } }
        set { lock.withLock { current = newValue } }
    }
}

/// A PostgreSQL server of one test's own (`scripts/postgres.sh`), which it may crash and start
/// again without disturbing the other tests' server.
struct PrivateServer: Sendable {
    let directory: String
    let url: String

    /// Runs `body` with a new server, stopped and removed afterwards.
    static func with(_ body: (PrivateServer) async throws -> Void) async throws {
        let server = try await start()
        do {
            try await body(server)
        } catch {
            try? await server.stop()
            throw error
        }
        try await server.stop()
    }

    static func start() async throws -> PrivateServer {
        let directory = try await ChildProcess.shell("mktemp -d").trimmingCharacters(in: .whitespacesAndNewlines)
        var lastError: (any Error)?
        for _ in 0..<3 {
            let port = Int.random(in: 56_000..<57_000)
            do {
                let output = try await ChildProcess.shell("'\(repositoryRoot)/scripts/postgres.sh' start '\(directory)' \(port)")
                return PrivateServer(directory: directory, url: try printed("CELLAR_SYNC_POSTGRES", in: output))
            } catch {
                lastError = error  // a port in use: another one
            }
        }
        _ = try? await ChildProcess.shell("'\(repositoryRoot)/scripts/postgres.sh' stop '\(directory)'")
        throw lastError!
    }

    /// The value of the `NAME=value` line `postgres.sh` printed in `output`.
    static func printed(_ name: String, in output: String) throws -> String {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix(name + "=") }) else {
            throw ChildProcess.Failed(description: "postgres.sh printed no \(name) line: \(output)")
        }
        return String(line.dropFirst(name.count + 1))
    }

    /// `pg_ctl` with `arguments`, as the postgres user when we are root.
    private func pgctl(_ arguments: String) async throws {
        let d = "'\(directory)'"
        _ = try await ChildProcess.shell("""
            cd \(d) && ctl="$(cat \(d)/bindir)/pg_ctl"
            if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$ctl" \(arguments); else "$ctl" \(arguments); fi
            """)
    }

    /// Every server process killed at once: a crash, recovered from at the next start.
    func crash() async throws { try await pgctl("-D \(directory)/data -w stop -m immediate") }

    func restart() async throws {
        try await pgctl("-D \(directory)/data -l \(directory)/log -o \"$(cat '\(directory)/options')\" -w -t 60 start")
    }

    func stop() async throws {
        _ = try await ChildProcess.shell("'\(repositoryRoot)/scripts/postgres.sh' stop '\(directory)'")
    }
}
