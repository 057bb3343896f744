import ArgumentParser
import Cellar
import CellarSync
import Foundation
import Logging
import PostgresNIO

/// The sync benchmark and its load generator.
///
///   sync-bench measure --url URL [--n 100000] [--samples 200] [--subscribed]
///       objects/s pushed and pulled (a first sync and an update of every object), and the time
///       from a commit on one store to its arrival in another while both run live, p50 and p99;
///       checks that the receiving store holds exactly the objects sent.
///   sync-bench writer --url URL --schema S --store DIR --count N [--subscribed]
///       puts objects `note 0` … `note N-1` into the store in DIR (continuing after the ones it
///       holds) while syncing live, and exits once the server has acknowledged all of them: the
///       sync tests kill it with SIGKILL mid-push and run it again.
@main
struct SyncBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-bench",
        abstract: "Sync through PostgreSQL: throughput, latency, and a writer to kill.",
        subcommands: [Measure.self, Writer.self],
        defaultSubcommand: Measure.self)
}

/// A store that records its change history, in `path`.
func openStore(_ path: String) throws -> Store {
    var options = StoreOptions()
    options.changeHistory = true
    return try Store(directoryPath: path, options: options)
}

/// Failed correctness check: the benchmark exits non-zero.
struct CheckFailed: Error, CustomStringConvertible {
    var description: String
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw CheckFailed(description: "check failed: " + message()) }
}

/// Puts objects into a store while a live client pushes them, until the server holds them all.
struct Writer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Put N objects while syncing live; exit when all are acknowledged.")

    @Option(help: "The server's URL (postgres://…).") var url: String
    @Option(help: "The PostgreSQL schema to sync in.") var schema: String
    @Option(help: "The store's directory (reused: objects already in it are not put again).") var store: String
    @Option(help: "Objects in all.") var count: Int
    @Option(help: "Objects per commit.") var batch: Int = 10
    @Option(help: "History entries per push transaction.") var pushEntries: Int = 20
    @Flag(help: "Sync by a subscription every object matches (SyncOptions.bySubscription).") var subscribed = false

    func run() async throws {
        let store = try openStore(self.store)
        defer { store.close() }
        var options = SyncOptions()
        options.schema = schema
        options.pushEntries = pushEntries
        options.pollInterval = .milliseconds(2)
        options.retryDelay = .milliseconds(20)
        options.bySubscription = subscribed
        let client = SyncClient(store: store, server: try SyncServer(url: url), options: options)
        let notes = store.box(for: BenchNote.self)
        if subscribed { try await client.subscribe(try notes.query { BenchNote.count >= 0 }.build()) }
        let live = Task { await client.run() }
        var next = try notes.count()
        while next < count {
            let end = min(count, next + batch)
            try notes.put((next..<end).map { BenchNote(number: $0) })
            next = end
            try await Task.sleep(for: .milliseconds(1))
        }
        while try client.hasPendingChanges() {
            try await Task.sleep(for: .milliseconds(5))
        }
        live.cancel()
        await live.value
        print("writer: \(count) objects acknowledged")
    }
}

/// Throughput and latency of sync between two stores through one server.
struct Measure: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Objects/s pushed and pulled, and commit-to-arrival latency.")

    @Option(help: "The server's URL (postgres://…); default: CELLAR_SYNC_POSTGRES.") var url: String?
    @Option(help: "Objects synced.") var n: Int = 100_000
    @Option(help: "Latency samples (one-object commits, one at a time).") var samples: Int = 200
    @Option(help: "Rounds of edits of every object (two properties each) after the first sync: the server's size is reported after them, and after pruning.") var editRounds: Int = 1
    @Flag(help: "Prune the server's changes after every round (as a client does by itself, at most every pruneInterval), then VACUUM them as autovacuum would.") var pruneEachRound = false
    @Option(help: "The longest a live client waits between looks for local commits (commits wake it at once), in milliseconds.") var pollMs: Int = 1000
    @Flag(help: "The receiving store syncs by subscription, to a query every object matches (the cost of the filtered reads).") var subscribed = false
    @Option(help: "Objects per push transaction (SyncOptions.pushObjects).") var pushObjects: Int = SyncOptions().pushObjects

    func run() async throws {
        guard let url = url ?? ProcessInfo.processInfo.environment["CELLAR_SYNC_POSTGRES"] else {
            throw ValidationError("no server: pass --url or set CELLAR_SYNC_POSTGRES (scripts/postgres.sh start DIR prints one)")
        }
        let server = try SyncServer(url: url)
        let logger = Logger(label: "sync-bench")
        let schema = "bench_" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let directory = NSTemporaryDirectory() + "sync-bench-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let admin = try await server.connect(logger: logger)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            try await measure(server: server, schema: schema, directory: directory)
        } catch {
            _ = try? await admin.query(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \(schema) CASCADE"), logger: logger)
            try? await admin.close()
            throw error
        }
        try await admin.query(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \(schema) CASCADE"), logger: logger)
        try await admin.close()
    }

    func measure(server: SyncServer, schema: String, directory: String) async throws {
        var options = SyncOptions()
        options.schema = schema
        options.pollInterval = .milliseconds(pollMs)
        options.pushObjects = pushObjects
        let a = try openStore(directory + "/a"), b = try openStore(directory + "/b")
        defer { a.close(); b.close() }
        let clientA = SyncClient(store: a, server: server, options: options)
        var optionsB = options
        optionsB.bySubscription = subscribed
        let clientB = SyncClient(store: b, server: server, options: optionsB)
        let notesA = a.box(for: BenchNote.self), notesB = b.box(for: BenchNote.self)
        if subscribed { try await clientB.subscribe(try notesB.query { BenchNote.count >= 0 }.build()) }
        try await clientA.sync()  // connects and creates the server's tables outside the timings
        try await clientB.sync()
        print("sync-bench: \(n) objects of about 150 bytes, schema \(schema); \(samples) latency samples, looking for commits at least every \(pollMs) ms")

        let start = ContinuousClock.now
        for first in stride(from: 0, to: n, by: 10_000) {
            try notesA.put((first..<min(n, first + 10_000)).map { BenchNote(number: $0) })
        }
        report("local put (history recorded)", n, since: start)

        try await pushAndPull(from: clientA, to: clientB, "new objects")
        try checkSame(notesA, notesB, "after the first sync")

        for round in 0..<editRounds {
            let all = try notesA.all()
            for note in all { note.count += 1; note.score += 1 }
            for first in stride(from: 0, to: all.count, by: 10_000) { try notesA.put(Array(all[first..<min(all.count, first + 10_000)])) }
            try await pushAndPull(from: clientA, to: clientB, "two properties of every object" + (editRounds > 1 ? " (\(round + 1))" : ""))
            try checkSame(notesA, notesB, "after the update")
            if pruneEachRound { try await serverSize(server: server, schema: schema, pruning: clientA, report: false) }
        }
        try await serverSize(server: server, schema: schema, pruning: clientA, report: true)

        // Latency: both stores live; one object committed on A at a time, timed until B's
        // observer sees it (the store holds n objects meanwhile).
        let liveA = Task { await clientA.run() }, liveB = Task { await clientB.run() }
        let arrivals = Arrivals()
        let observation = try notesB.observe(on: DispatchQueue(label: "sync-bench.arrivals")) {
            if let count = try? notesB.count() { arrivals.saw(count) }
        }
        var latencies: [Duration] = []
        for sample in 0..<samples {
            let committed = ContinuousClock.now
            try notesA.put(BenchNote(number: n + sample))
            guard let arrived = await arrivals.wait(for: n + sample + 1, timeout: .seconds(30)) else {
                throw CheckFailed(description: "check failed: object \(n + sample) did not reach the other store within 30 s")
            }
            latencies.append(arrived - committed)
        }
        observation.cancel()
        liveA.cancel(); liveB.cancel()
        await liveA.value; await liveB.value
        try checkSame(notesA, notesB, "after the live commits")
        latencies.sort()
        func percentile(_ p: Double) -> String {
            guard !latencies.isEmpty else { return "-" }
            let value = latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
            return String(format: "%.1f ms", Double(value.components.attoseconds) / 1e15 + Double(value.components.seconds) * 1000)
        }
        print("  commit on A to arrival on B (live, \(latencies.count) samples): p50 \(percentile(0.5)), p99 \(percentile(0.99)), max \(percentile(1))")
        await clientA.close(); await clientB.close()
        print("sync-bench: checks passed")
    }

    /// Prunes the changes both stores have pulled (through `client`), with the server's change
    /// log and entity table in rows and bytes before and after when `report`. Each measure
    /// follows a `VACUUM` (which autovacuum would run by itself): it makes the space of pruned
    /// changes free for new ones, and gives back what is free at the end of a table.
    func serverSize(server: SyncServer, schema: String, pruning client: SyncClient, report: Bool) async throws {
        let logger = Logger(label: "sync-bench")
        let connection = try await server.connect(logger: logger)
        func vacuum() async throws {
            for table in ["cellar_changes", "\"BenchNote\""] {
                try await connection.query(PostgresQuery(unsafeSQL: "VACUUM \(schema).\(table)"), logger: logger)
            }
        }
        func size(_ when: String) async throws {
            try await vacuum()
            let rows = try await connection.query(PostgresQuery(unsafeSQL: """
                SELECT (SELECT count(*) FROM \(schema).cellar_changes), pg_total_relation_size('\(schema).cellar_changes'),
                       pg_total_relation_size('\(schema)."BenchNote"')
                """), logger: logger)
            for try await (count, changes, notes) in rows.decode((Int, Int, Int).self) {
                print("  server \(when): cellar_changes \(count) rows, \(changes / 1_048_576) MiB; the entity table \(notes / 1_048_576) MiB")
            }
        }
        do {
            if report { try await size("before pruning") }
            let start = ContinuousClock.now
            let dropped = try await client.pruneServer()
            if report {
                print("  pruned \(dropped) changes in \(ContinuousClock.now - start)")
                try await size("after pruning")
            } else {
                try await vacuum()
            }
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }

    /// One timed round on `sender` (every object pushed), then one on `receiver` (every object
    /// applied).
    func pushAndPull(from sender: SyncClient, to receiver: SyncClient, _ what: String) async throws {
        var start = ContinuousClock.now
        let pushed = try await sender.sync().pushed
        try check(pushed == n, "pushed \(pushed) objects (\(what)), expected \(n)")
        report("push, " + what, n, since: start)
        start = .now
        let applied = try await receiver.sync().applied
        try check(applied == n, "applied \(applied) objects (\(what)), expected \(n)")
        report("pull, " + what, n, since: start)
    }

    func report(_ step: String, _ count: Int, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("  " + step.padding(toLength: 40, withPad: " ", startingAt: 0)
              + String(format: "%10.0f objects/s  (%.2f s)", Double(count) / seconds, seconds))
    }

    /// The two stores hold the same notes, each once.
    func checkSame(_ a: Box<BenchNote>, _ b: Box<BenchNote>, _ when: String) throws {
        func picture(_ box: Box<BenchNote>) throws -> [String: String] {
            var notes: [String: String] = [:]
            for note in try box.all() {
                try check(notes[note.title] == nil, "\(note.title) twice in one store \(when)")
                notes[note.title] = "\(note.text)|\(note.count)|\(note.score)|\(note.updated.timeIntervalSince1970)"
            }
            return notes
        }
        let pa = try picture(a), pb = try picture(b)
        try check(pa.count == pb.count, "\(pa.count) objects in A, \(pb.count) in B \(when)")
        try check(pa == pb, "the stores' objects differ \(when)")
    }
}

/// When the receiving store first held a number of objects.
final class Arrivals: @unchecked Sendable {
    private let lock = NSLock()
    private var highest = 0
    private var times: [Int: ContinuousClock.Instant] = [:]

    func saw(_ count: Int) {
        let now = ContinuousClock.now
        lock.withLock {
            if count > highest {
                for c in highest + 1...count { times[c] = now }
                highest = count
            }
        }
    }

    func wait(for count: Int, timeout: Duration) async -> ContinuousClock.Instant? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let time = lock.withLock({ times[count] }) { return time }
            try? await Task.sleep(for: .microseconds(200))
        }
        return nil
    }
}
