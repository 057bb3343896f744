// live-bench: one-object commits under live queries (`store.liveQuery`), on the CRUD workload's
// `Note` (BenchNote, no index).
//
//   swift run -c release --package-path Benchmarks live-bench --n 100000 --commits 10000 [--runs 3]
//       [--format tsv] [--live Q] [--seed S] [--durability full|none] [--dir PARENT]
//
// Per run and mode, a fresh store (default options: durability .full, as crud's; `--durability
// none` for commits that do not wait for the disk) in a new temporary folder on disk (never tmpfs):
//   setup    N objects (default 100,000; the CRUD workload's) put in one write transaction
//   live     the mode's live queries, delivering on one private serial queue; wait for their first
//            results. Query q: even q `author <= 50`, odd q `author > 50` (half of the objects each)
//   commits  C one-object commits (default 10,000), each a `box.put` or `box.remove` outside an
//            explicit transaction: 35 % updates of objects with author ≤ 50, 35 % updates of
//            objects with author > 50 (text and modificationDate change, author does not), 15 %
//            inserts (author uniform in 1...100), 15 % removes; the same commits in every mode
//            (SplitMix64 seeded with --seed, default 42), each existing object touched at most once
// Modes (their order rotates from run to run):
//   none           no live query: the writer's rate alone
//   unordered      the primary live query (author ≤ 50), no order: updated from the changed objects
//   unordered-xQ   Q live queries (default 10), no order
//   ordered        the primary live query ordered by title: the query runs again for each update
// Figures: the writer's commits per second over the C commits, and its thread's CPU time per
// commit (its own work, without the waits for the disk or for a core), and the whole process's
// (the live queries' updates and the delivery queue too), and every other thread's from the first
// commit until the live queries are drained (their whole work, also what they deferred past the
// last commit); per mode against `none`; the
// delivery latency of every commit that changes a live query's results (a matching object
// updated, inserted or removed), from just before the commit to the moment the LiveResults
// publishes the first update that contains it (seen on the delivery queue: an observation of
// `updateCount`, whose new `lastChange` names the object), p50 and p99 over those commits (all
// live queries of the mode pooled); the updates published per live query (commits coalesce); the
// drain: from the last commit until every live query has published everything. On each update
// the recorder reads what a list view would: the count and the objects that came or changed.
// Checks (a failed one exits 1): the setup's ids are 1...N; after the commits every live query's
// `ids` equal `query.findIds()` (waited for); every published change names exactly the objects
// the commits changed in that query's results, each once, as the right kind (an update as a
// modification, an insert as an insertion, a remove as a deletion), and nothing else.
// Output: a human table (medians over the runs) or, with --format tsv, lines `mode commits n
// commits_per_s seconds`, `writer_cpu_us_per_commit mode n value 0` and
// `process_cpu_us_per_commit mode n value 0`, `background_cpu_us_per_commit mode n value 0`, then `label mode n value 0`
// for vs_none (the commit time's ratio), latency_p50_ms, latency_p99_ms, updates_per_query,
// drain_ms and first_result_ms.
import BenchNote
import BenchSupport
import Cellar
import Dispatch
import Foundation
import Observation

struct Options: BenchOptions {
    var common = CommonOptions()
    var commits = 10_000
    var live = 10
    var seed: UInt64 = 42
    /// `--durability none`: commits that do not wait for the disk (the default `full` is the
    /// store's default, as crud's), so that the writer's rate says what live queries cost it
    /// rather than how fast the disk syncs.
    var durable = true

    init() {}

    static let usage = "usage: live-bench [--n N] [--commits C] [--runs R] [--format human|tsv] [--live Q] [--seed S] [--durability full|none] [--dir PARENT]"

    mutating func parseOwn(_ arg: String, _ arguments: inout Arguments) throws -> Bool {
        switch arg {
        case "--commits": commits = try arguments.integer(arg, atLeast: 1, else: "--commits must be a positive integer")
        case "--live": live = try arguments.integer(arg, atLeast: 2, else: "--live must be an integer of at least 2")
        case "--durability":
            switch try arguments.value(arg) {
            case "full": durable = true
            case "none": durable = false
            case let d: throw BenchError("unknown --durability \(d) (full or none)")
            }
        case "--seed":
            guard let s = UInt64(try arguments.value(arg)) else { throw BenchError("--seed must be a non-negative integer") }
            seed = s
        default: return false
        }
        return true
    }
}

/// A mode: how many live queries, and whether they are ordered.
struct Mode {
    let name: String
    let queries: Int
    let ordered: Bool
}

/// What one live query published, recorded on the delivery queue: for every object a published
/// change named, when it was first named and how. Armed with `withObservationTracking` on
/// `updateCount`, which `LiveResults` sets last: when it is about to change, `lastChange` is the
/// new update's; the observation is armed again at once, on the same queue, so no update is missed.
final class Recorder: @unchecked Sendable {
    // Thread safety: touched only on the delivery queue.
    let live: LiveResults<Note>
    /// Per object: (seconds on the monotonic clock, 0 deleted / 1 inserted / 2 modified).
    var named: [Id: (time: Double, how: UInt8)] = [:]
    /// Objects named twice (a failed check).
    var namedAgain: [Id] = []
    /// Updates published after the first result.
    var updates = 0
    /// What the recorder read of the objects (kept so that the reads are not optimised away).
    var touched = 0

    init(_ live: LiveResults<Note>) { self.live = live }

    func arm() {
        withObservationTracking {
            _ = live.updateCount
        } onChange: { [self] in
            published()
        }
    }

    private func published() {
        let time = now()
        if let change = live.lastChange, !change.isInitial {
            updates += 1
            // What a list view reads to redraw: the count and the rows that came or changed.
            var characters = live.count
            for j in change.insertions + change.modifications { characters &+= live[j].text.utf8.count }
            touched &+= characters
            for (ids, how) in [(change.deletedIds, UInt8(0)), (change.insertedIds, 1), (change.modifiedIds, 2)] {
                for id in ids {
                    if named[id] != nil { namedAgain.append(id) } else { named[id] = (time, how) }
                }
            }
        }
        arm()
    }
}

/// One mode's results in one run.
struct ModeResult {
    var commitSeconds = 0.0
    /// The writer thread's CPU seconds over the commits (its own work, without the waits for the
    /// disk or for a core).
    var commitCPUSeconds = 0.0
    /// The whole process's CPU seconds over the commits (the writer, the live queries' updates,
    /// the delivery queue).
    var processCPUSeconds = 0.0
    /// The CPU seconds of every thread but the writer's from the first commit until every live
    /// query published everything: the live queries' work, including what they did after the
    /// last commit (and the store's own background work, as in `none`).
    var backgroundCPUSeconds = 0.0
    var latencies: [Double] = []
    var updatesPerQuery = 0.0
    var drainSeconds = 0.0
    var firstResultSeconds = 0.0
}

/// The process's CPU time (all threads) in seconds.
func processCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// The calling thread's CPU time in seconds.
func threadCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// Polls `condition` every millisecond until it holds; throws `failure()` after `timeout` seconds.
func wait(timeout: Double, _ condition: () throws -> Bool, else failure: () throws -> BenchError) throws {
    let deadline = now() + timeout
    while try !condition() {
        guard now() < deadline else { throw try failure() }
        usleep(1000)
    }
}

func runMode(_ mode: Mode, fresh: [Note], plan: [Commit], durable: Bool, parent: String) throws -> ModeResult {
    let n = fresh.count
    let folder = try makeTemporaryFolder(in: parent, prefix: "live-bench")
    defer { removeTree(folder) }
    let store = try durable ? Store(directoryPath: folder + "/cellar", model: Note.model)
        : Store(directoryPath: folder + "/cellar", model: Note.model, options: StoreOptions(durability: .none))
    defer { store.close() }
    let box = store.box(for: Note.self)
    var result = ModeResult()

    let ids = try box.put(fresh)
    guard ids.count == n, ids.enumerated().allSatisfy({ $0.element.value == Id($0.offset + 1) }) else {
        throw BenchError("\(mode.name): setup: the ids are not 1...\(n)")
    }

    let delivery = DispatchQueue(label: "live-bench.delivery")
    let queries = try (0..<mode.queries).map { q -> Query<Note> in
        let builder = box.query { q % 2 == 0 ? Note.author <= 50 : Note.author > 50 }
        return try (mode.ordered ? builder.ordered(by: Note.title) : builder).build()
    }
    var start = now()
    let lives = try queries.map { try store.liveQuery($0, queue: delivery) }
    defer { for live in lives { live.cancel() } }
    let recorders = lives.map(Recorder.init)
    delivery.sync { for r in recorders { r.arm() } }
    try wait(timeout: 600, { delivery.sync { lives.allSatisfy { $0.updateCount >= 1 } } },
             else: { BenchError("\(mode.name): no first result after 600 s") })
    result.firstResultSeconds = now() - start

    // The commits.
    var before = [Double](repeating: 0, count: plan.count)
    var inserted = [Id](repeating: 0, count: plan.count)
    start = now()
    let cpuStart = threadCPUSeconds()
    let processStart = processCPUSeconds()
    for (k, commit) in plan.enumerated() {
        before[k] = now()
        if let note = commit.note {
            let id = try box.put(note)
            if commit.kind == .insert { inserted[k] = id.value }
        } else {
            _ = try box.remove(commit.id)
        }
    }
    let end = now()
    result.commitSeconds = end - start
    result.commitCPUSeconds = threadCPUSeconds() - cpuStart
    result.processCPUSeconds = processCPUSeconds() - processStart

    // What each live query must end with and name.
    let expected = try queries.map { try $0.findIds().map(\.value) }
    var changes: [[Id: (k: Int, how: UInt8)]] = []
    for q in 0..<mode.queries {
        var byId: [Id: (k: Int, how: UInt8)] = [:]
        for (k, commit) in plan.enumerated() where matches(commit.author, query: q) {
            switch commit.kind {
            case .updateIn, .updateOut: byId[commit.id] = (k, 2)
            case .insert: byId[inserted[k]] = (k, 1)
            case .remove: byId[commit.id] = (k, 0)
            }
        }
        changes.append(byId)
    }
    try wait(timeout: 600, {
        delivery.sync { (0..<mode.queries).allSatisfy { lives[$0].ids == expected[$0] && recorders[$0].named.count >= changes[$0].count } }
    }, else: {
        let q = delivery.sync { (0..<mode.queries).first { lives[$0].ids != expected[$0] } }
        if let q {
            let got = delivery.sync { lives[q].ids }
            return BenchError("\(mode.name): live query \(q) holds \(got.count) ids after 600 s, findIds() \(expected[q].count); "
                + "only live: \(Set(got).subtracting(expected[q]).sorted().prefix(10)), only found: \(Set(expected[q]).subtracting(got).sorted().prefix(10))")
        }
        return BenchError("\(mode.name): some commits never published after 600 s")
    })
    result.drainSeconds = now() - end
    result.backgroundCPUSeconds = (processCPUSeconds() - processStart) - (threadCPUSeconds() - cpuStart)

    // Every published change names exactly the commits' changes in that query, each once, rightly.
    let names = ["deleted", "inserted", "modified"]
    for q in 0..<mode.queries {
        let (named, again, updates) = delivery.sync { (recorders[q].named, recorders[q].namedAgain, recorders[q].updates) }
        guard again.isEmpty else { throw BenchError("\(mode.name): live query \(q) named objects \(again.prefix(10)) in two updates") }
        for (id, seen) in named {
            guard let change = changes[q][id] else {
                throw BenchError("\(mode.name): live query \(q) published object \(id) as \(names[Int(seen.how)]), which no commit changed in its results")
            }
            guard change.how == seen.how else {
                throw BenchError("\(mode.name): live query \(q) published object \(id) as \(names[Int(seen.how)]), commit \(change.k) \(names[Int(change.how)]) it")
            }
            result.latencies.append(seen.time - before[change.k])
        }
        guard named.count == changes[q].count else {
            throw BenchError("\(mode.name): live query \(q) published \(named.count) changed objects, the commits changed \(changes[q].count)")
        }
        result.updatesPerQuery += Double(updates) / Double(mode.queries)
    }
    return result
}

@main
struct LiveBench {
    static func main() {
        runMain("live-bench") { try run(Options.parseCommandLine()) }
    }

    static func run(_ options: Options) throws {
        let (n, c) = (options.n, options.commits)
        let parent = try scratchParent(options.directory, tool: "live-bench", reason: "durable commits need a real disk")
        log("live-bench: N=\(n), \(c) commits, runs=\(options.runs), \(options.live) live queries in the many-query mode, seed \(options.seed), durability \(options.durable ? "full" : "none"), "
            + "stores under \(parent.path) (\(parent.fs)); building the objects and the commits")
        let fresh = Note.fresh(n)
        let plan = try makePlan(n: n, commits: c, seed: options.seed, fresh: fresh)
        let modes = [
            Mode(name: "none", queries: 0, ordered: false),
            Mode(name: "unordered", queries: 1, ordered: false),
            Mode(name: "unordered-x\(options.live)", queries: options.live, ordered: false),
            Mode(name: "ordered", queries: 1, ordered: true),
        ]

        var results: [String: [ModeResult]] = [:]
        for run in 0..<options.runs {
            // Rotate which mode goes first.
            for i in 0..<modes.count {
                let mode = modes[(i + run) % modes.count]
                let r = try runMode(mode, fresh: fresh, plan: plan, durable: options.durable, parent: parent.path)
                results[mode.name, default: []].append(r)
                let latency = r.latencies.isEmpty ? "" : String(format: "  delivery p50 %.2f ms p99 %.2f ms, %.0f updates/query, drain %.1f ms",
                                                               percentile(r.latencies, 0.5) * 1e3, percentile(r.latencies, 0.99) * 1e3,
                                                               r.updatesPerQuery, r.drainSeconds * 1e3)
                log("run \(run + 1)/\(options.runs) \(mode.name): \(formatRate(Double(c) / r.commitSeconds)) commits/s, writer CPU "
                    + String(format: "%.1f µs/commit (process %.1f)", r.commitCPUSeconds / Double(c) * 1e6,
                             r.processCPUSeconds / Double(c) * 1e6) + "\(latency)  (checks passed)")
            }
        }

        let base = results["none"]!
        func rate(_ name: String) -> Double { median(results[name]!.map { Double(c) / $0.commitSeconds }) }
        /// The writer's CPU microseconds per commit.
        func cpu(_ name: String) -> Double { median(results[name]!.map { $0.commitCPUSeconds / Double(c) * 1e6 }) }
        /// The process's CPU microseconds per commit (every thread).
        func processCPU(_ name: String) -> Double { median(results[name]!.map { $0.processCPUSeconds / Double(c) * 1e6 }) }
        /// Every other thread's CPU microseconds per commit, up to the end of the drain.
        func backgroundCPU(_ name: String) -> Double { median(results[name]!.map { $0.backgroundCPUSeconds / Double(c) * 1e6 }) }
        /// The mode's commit time against `none`'s of the same run: > 1 is slower.
        func slowdown(_ name: String) -> Double { median(zip(results[name]!, base).map { $0.commitSeconds / $1.commitSeconds }) }
        func p(_ name: String, _ q: Double) -> Double { median(results[name]!.map { percentile($0.latencies, q) * 1e3 }) }
        func updates(_ name: String) -> Double { median(results[name]!.map(\.updatesPerQuery)) }
        func drain(_ name: String) -> Double { median(results[name]!.map { $0.drainSeconds * 1e3 }) }
        func first(_ name: String) -> Double { median(results[name]!.map { $0.firstResultSeconds * 1e3 }) }

        if options.tsv {
            for mode in modes {
                let r = rate(mode.name)
                print(tsvLine(mode.name, "commits", n, opsPerSecond: r, seconds: Double(c) / r))
                print(tsvRatioLine("writer_cpu_us_per_commit", mode.name, n, cpu(mode.name)))
                print(tsvRatioLine("process_cpu_us_per_commit", mode.name, n, processCPU(mode.name)))
                print(tsvRatioLine("background_cpu_us_per_commit", mode.name, n, backgroundCPU(mode.name)))
            }
            for mode in modes.dropFirst() {
                print(tsvRatioLine("vs_none", mode.name, n, slowdown(mode.name)))
                print(tsvRatioLine("latency_p50_ms", mode.name, n, p(mode.name, 0.5)))
                print(tsvRatioLine("latency_p99_ms", mode.name, n, p(mode.name, 0.99)))
                print(tsvRatioLine("updates_per_query", mode.name, n, updates(mode.name)))
                print(tsvRatioLine("drain_ms", mode.name, n, drain(mode.name)))
                print(tsvRatioLine("first_result_ms", mode.name, n, first(mode.name)))
            }
            return
        }
        print("")
        print("live-bench: N=\(grouped(n)), \(grouped(c)) one-object commits (durability \(options.durable ? "full" : "none")), \(runsPhrase(options.runs))")
        print("")
        let rows = modes.map { mode -> [String] in
            let none = mode.queries == 0
            func ms(_ v: Double) -> String { none ? "–" : String(format: "%.2f", v) }
            return [mode.name, "\(mode.queries)", formatRate(rate(mode.name)), String(format: "%.1f", cpu(mode.name)),
                    String(format: "%.1f", processCPU(mode.name)), String(format: "%.1f", backgroundCPU(mode.name)),
                    none ? "–" : String(format: "%+.1f %%", (slowdown(mode.name) - 1) * 100),
                    ms(p(mode.name, 0.5)), ms(p(mode.name, 0.99)), none ? "–" : String(format: "%.0f", updates(mode.name)),
                    ms(drain(mode.name)), ms(first(mode.name))]
        }
        printTable(header: ["mode", "live queries", "commits/s", "writer CPU µs/commit", "process CPU µs/commit",
                            "other threads' CPU µs/commit to drained",
                            "commit time vs none", "delivery p50 ms", "p99 ms",
                            "updates/query", "drain ms", "first result ms"], rows: rows)
        let x = slowdown("unordered-x\(options.live)")
        print("")
        print(String(format: "\(options.live) live queries: commits %.1f %% slower than none (target ≤ 10 %%: %@)",
                     (x - 1) * 100, x <= 1.10 ? "met" : "NOT MET"))
    }
}
