// shared-bench: what several writing processes (`StoreOptions.sharedWriting`) cost a commit, and
// how soon another store hears it.
//
//   shared-bench [--n N] [--runs R] [--steps plain,alone,shared,turns] [--format human|tsv] [--dir PARENT]
//
// Commits (each step N one-object durable write transactions, `.full` durability, on one thread,
// object i the CRUD workload's `Note.fresh` i), on a fresh store on disk (not tmpfs) per step:
// - `plain`: one store, not shared (the lock held from open to close);
// - `alone`: one store with `sharedWriting` (the lock taken and let go per transaction);
// - `shared`: the same, with a second store open beside it, idle but told of each commit (its
//   follower walks it);
// - `turns`: the two shared stores commit in turn, so each commit first catches up with the one
//   commit the other made (the follower's walk, the lock, the torn-tail look).
// The steps take turns in each run (the order rotating from run to run); the tables give the
// median commits/s over the runs and the ratio of each to `plain` in the same run (median, and the
// lowest and highest).
//
// Then the delay: a store puts one object (`.none` durability) while another, sharing the
// database, observes the entity (`Box.observe(on:)`); the delay runs from just before the put to
// the observer's call, N times one after the other; p50 and p99 over all runs, with the put alone
// (the same puts' own time) for scale.
//
// The two stores are in one process: their locks are on descriptors of their own, so they take
// turns as two processes do, and the observer hears the other through the same notify file.
import BenchNote
import BenchSupport
import Cellar
import Dispatch
import Foundation

struct Options: BenchOptions {
    var common = CommonOptions()
    var steps = ["plain", "alone", "shared", "turns"]
    init() { common.n = 2_000 }
    static let usage = "usage: shared-bench [--n N] [--runs R] [--steps plain,alone,shared,turns] [--format human|tsv] [--dir PARENT]"
    mutating func parseOwn(_ arg: String, _ arguments: inout Arguments) throws -> Bool {
        guard arg == "--steps" else { return false }
        steps = try arguments.list(arg, of: ["plain", "alone", "shared", "turns"])
        if !steps.contains("plain") { steps.insert("plain", at: 0) }
        return true
    }
}

/// Seconds for `notes.count` one-object commits, alternating over `stores`.
func timeCommits(_ stores: [Store], _ notes: [Note]) throws -> Double {
    let boxes = stores.map { $0.box(for: Note.self) }
    let start = now()
    for (i, note) in notes.enumerated() { try boxes[i % boxes.count].put(note) }
    return now() - start
}

runMain("shared-bench") {
    let options = try Options.parseCommandLine()
    let (parent, fs) = try scratchParent(options.directory, tool: "shared-bench", reason: "durable commits need a real disk")
    let notes = Note.fresh(options.n)
    let steps = options.steps
    var rates: [String: [Double]] = [:]
    var ratios: [String: [Double]] = [:]
    log("shared-bench: \(grouped(options.n)) one-object durable commits per step, \(runsPhrase(options.runs)), on \(fs)")
    for run in 0..<options.runs {
        var rate: [String: Double] = [:]
        for k in 0..<steps.count {
            let step = steps[(k + run) % steps.count]
            let folder = try makeTemporaryFolder(in: parent, prefix: "shared-bench")
            defer { removeTree(folder) }
            let path = folder + "/store"
            let seconds: Double
            switch step {
            case "plain":
                let store = try Store(directoryPath: path, model: Note.model, options: BenchMain.options(shared: false))
                seconds = try timeCommits([store], notes)
                store.close()
            case "alone":
                let store = try Store(directoryPath: path, model: Note.model, options: BenchMain.options(shared: true))
                seconds = try timeCommits([store], notes)
                store.close()
            default:
                let a = try Store(directoryPath: path, model: Note.model, options: BenchMain.options(shared: true))
                let b = try Store(directoryPath: path, model: Note.model, options: BenchMain.options(shared: true))
                seconds = try timeCommits(step == "turns" ? [a, b] : [a], notes)
                a.close()
                b.close()
            }
            rate[step] = Double(notes.count) / seconds
            rates[step, default: []].append(rate[step]!)
        }
        for step in steps { ratios[step, default: []].append(rate[step]! / rate["plain"]!) }
        logRun(run, of: options.runs, "commits", rates: steps.map { ($0, rate[$0]!) })
    }

    // The delay until another store's observer hears a commit.
    var delays: [Double] = [], puts: [Double] = []
    for _ in 0..<options.runs {
        let folder = try makeTemporaryFolder(in: parent, prefix: "shared-bench")
        defer { removeTree(folder) }
        let writer = try Store(directoryPath: folder + "/store", model: Note.model, options: BenchMain.options(shared: true, durability: .none))
        let listener = try Store(directoryPath: folder + "/store", model: Note.model, options: BenchMain.options(shared: true, durability: .none))
        let heard = DispatchSemaphore(value: 0)
        let when = Moment()
        let observation = try listener.box(for: Note.self).observe(on: DispatchQueue(label: "shared-bench.observer")) {
            when.set(now())
            heard.signal()
        }
        heard.wait()  // the first call, at once
        let box = writer.box(for: Note.self)
        for note in notes {
            let start = now()
            try box.put(note)
            puts.append(now() - start)
            heard.wait()
            delays.append(when.value - start)
        }
        observation.cancel()
        writer.close()
        listener.close()
    }

    if options.tsv {
        for step in steps {
            print(tsvLine("cellar", step, options.n, opsPerSecond: median(rates[step]!), seconds: Double(options.n) / median(rates[step]!)))
            print(tsvRatioLine("\(step)/plain", step, options.n, median(ratios[step]!)))
        }
        print("delay\tp50_us\t\(Int(percentile(delays, 0.5) * 1e6))\tp99_us\t\(Int(percentile(delays, 0.99) * 1e6))")
    } else {
        printTable(header: ["step", "commits/s (median)", "÷ plain (median)", "÷ plain (lowest–highest)"], rows: steps.map { step in
            let r = ratios[step]!
            return [step, formatRate(median(rates[step]!)), String(format: "%.2f×", median(r)),
                    String(format: "%.2f–%.2f×", r.min()!, r.max()!)]
        })
        print(String(format: "heard by another store: p50 %.0f µs, p99 %.0f µs (the put alone: p50 %.0f µs, p99 %.0f µs), %d commits",
                     percentile(delays, 0.5) * 1e6, percentile(delays, 0.99) * 1e6,
                     percentile(puts, 0.5) * 1e6, percentile(puts, 0.99) * 1e6, delays.count))
    }
}

/// A namespace for the helpers the top-level code calls (it shadows nothing).
enum BenchMain {
    static func options(shared: Bool, durability: Durability = .full) -> StoreOptions {
        var options = StoreOptions(durability: durability, automaticCompaction: nil)
        options.sharedWriting = shared
        return options
    }
}

/// The moment an observer was called, handed from its queue to the timing thread.
final class Moment: @unchecked Sendable {
    private let lock = NSLock()
    private var seconds = 0.0
    var value: Double { lock.withLock { seconds } }
    func set(_ value: Double) { lock.withLock { seconds = value } }
}
