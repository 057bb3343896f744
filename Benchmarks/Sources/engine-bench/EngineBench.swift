// engine-bench: Cellar's storage engine and LMDB on the same steps, side by side in one process.
//
//   swift run -c release --package-path Benchmarks engine-bench --n 100000 [--runs 3] [--format tsv] [--dir PATH] [--node-size BYTES]
//
// Steps (the CRUD workload's letters): a. put N keys (8-byte big-endian 1...N, 200-byte values) in one
// write transaction; b. get every key in random order in one read transaction; c. scan in key order
// with a cursor; f. 1,000 durable single-key commits (the two engines' commits interleaved one by
// one). Every run uses fresh stores in a new temporary folder on disk (never tmpfs) and checks
// what it reads; a failed check exits 1.
import BenchSupport
import CellarStorage
import Foundation

enum Step: String, CaseIterable {
    case a, b, c, f

    var title: String {
        switch self {
        case .a: "a. put N, one txn"
        case .b: "b. get all, random order"
        case .c: "c. scan in key order"
        case .f: "f. durable 1-key commits"
        }
    }

    /// The target for Cellar/LMDB.
    var target: Double {
        switch self {
        case .a, .b, .c: 1.0
        case .f: 1.8
        }
    }

    /// The CRUD workload's "LMDB raw" anchors (the CRUD workload: FlatBuffers values, an index DBI), for
    /// context only: the steps here are plain key-value and not the same work.
    func anchor(n: Int) -> Double? {
        switch (n, self) {
        case (100_000, .a): 1_221_304
        case (100_000, .b): 2_034_142
        case (100_000, .c): 26_800_000
        case (100_000, .f): 4_731
        case (1_000_000, .a): 1_130_950
        case (1_000_000, .b): 1_155_557
        case (1_000_000, .c): 24_100_000
        case (1_000_000, .f): 3_373
        default: nil
        }
    }
}

struct Options: BenchOptions {
    var common = CommonOptions()
    var engines = ["cellar", "lmdb"]
    /// Cellar's B+tree node size (StorageOptions.nodeSize); the default is the engine's.
    var nodeSize = StorageOptions().nodeSize

    static let usage = "usage: engine-bench [--n N] [--runs R] [--format human|tsv] [--dir PARENT] [--engines cellar,lmdb] [--node-size BYTES]"

    mutating func parseOwn(_ arg: String, _ arguments: inout Arguments) throws -> Bool {
        switch arg {
        case "--node-size": nodeSize = try arguments.integer(arg, atLeast: 256, else: "--node-size must be at least 256")
        case "--engines": engines = try arguments.list(arg, of: ["cellar", "lmdb"])
        default: return false
        }
        return true
    }
}

@main
struct EngineBench {
    static func main() {
        runMain("engine-bench") { try run(Options.parseCommandLine()) }
    }

    static func run(_ options: Options) throws {
        let n = options.n
        let workload = Workload(n: n, commits: min(1000, n))
        let parent = try scratchParent(options.directory, tool: "engine-bench", reason: "durable commits need a real disk")
        log("engine-bench: N=\(n), runs=\(options.runs), stores under \(parent.path) (\(parent.fs)), LMDB \(LMDBEngine.version)")

        // seconds[engine][step], one entry per run
        var seconds: [String: [Step: [Double]]] = [:]
        var sizeAfterA: [String: [UInt64]] = [:]
        for run in 0..<options.runs {
            // Both stores open at once and every step run for both engines back to back, so that a
            // burst of load from elsewhere hits both; which engine goes first alternates per run.
            let order = run % 2 == 0 ? options.engines : options.engines.reversed()
            let folder = try makeTemporaryFolder(in: parent.path, prefix: "engine-bench")
            defer { removeTree(folder) }
            var engines: [(name: String, engine: any EngineUnderTest)] = []
            defer { for e in engines { e.engine.close() } }
            for name in order {
                let store = try makeFolder(folder + "/" + name)
                engines.append((name, name == "cellar" ? try CellarEngine(directory: store, nodeSize: options.nodeSize) : try LMDBEngine(directory: store)))
            }
            var times: [String: [Step: Double]] = [:]
            for (name, engine) in engines {
                times[name, default: [:]][.a] = try engine.put(workload)
                sizeAfterA[name, default: []].append(engine.fileBytes())
            }
            for (name, engine) in engines { times[name]![.b] = try engine.randomGets(workload) }
            for (name, engine) in engines { times[name]![.c] = try engine.scan(workload) }
            // f, interleaved commit by commit: the disk is shared with whatever else runs, and a
            // sync's cost swings by 10× within seconds; pairing the commits keeps the ratio honest.
            for (name, _) in engines { times[name]![.f] = 0 }
            for i in 1...workload.commits {
                for (name, engine) in engines { times[name]![.f]! += try engine.durableCommit(i, workload) }
            }
            for (name, engine) in engines {
                try engine.verify(workload)
                for step in Step.allCases { seconds[name, default: [:]][step, default: []].append(times[name]![step]!) }
                logRun(run, of: options.runs, name, rates: Step.allCases.map { step in
                    (step.rawValue, Double(count(step, workload)) / times[name]![step]!)
                })
            }
        }

        func rate(_ engine: String, _ step: Step) -> Double {
            Double(count(step, workload)) / median(seconds[engine]![step]!)
        }
        func line(_ engine: String, _ step: Step) -> String {
            tsvLine(engine, step.rawValue, n, opsPerSecond: rate(engine, step), seconds: median(seconds[engine]![step]!))
        }
        guard options.engines.count == 2 else {
            // One engine (profiling): its medians only.
            for step in Step.allCases { print(line(options.engines[0], step)) }
            return
        }
        if options.tsv {
            for name in options.engines {
                for step in Step.allCases { print(line(name, step)) }
                print("\(name)\tsize_after_a\t\(n)\t\(medianSize(sizeAfterA[name]!))\t0")
            }
            for step in Step.allCases {
                print(tsvRatioLine("ratio", step.rawValue, n, rate("cellar", step) / rate("lmdb", step)))
            }
            return
        }

        print("")
        print("Cellar storage engine vs LMDB \(LMDBEngine.version): N = \(grouped(n)), 8-byte keys, 200-byte values, "
              + runsPhrase(options.runs))
        print("")
        let header = ["step", "Cellar ops/s", "LMDB ops/s", "Cellar/LMDB", "target", "met", "LMDB anchor*"]
        var rows: [[String]] = []
        for step in Step.allCases {
            let cellar = rate("cellar", step), lmdb = rate("lmdb", step)
            let ratio = cellar / lmdb
            rows.append([step.title, grouped(Int(cellar.rounded())), grouped(Int(lmdb.rounded())),
                         String(format: "%.2f×", ratio), String(format: "≥ %.1f×", step.target),
                         ratio >= step.target ? "met" : "NOT MET",
                         step.anchor(n: n).map { grouped(Int($0)) } ?? "—"])
        }
        let cellarSize = medianSize(sizeAfterA["cellar"]!), lmdbSize = medianSize(sizeAfterA["lmdb"]!)
        rows.append(["file after a (bytes)", grouped(Int(cellarSize)), grouped(Int(lmdbSize)),
                     String(format: "%.2f×", Double(cellarSize) / Double(lmdbSize)), "", "", ""])
        printTable(header: header, rows: rows)
        print("")
        print("* The CRUD workload's LMDB raw figure for the same letter on its CRUD workload (FlatBuffers values, an index DBI),")
        print("  measured 2026-11-21 on this kind of machine; context only, not the same work as here.")
        print("  Ratio = Cellar ops/s / LMDB ops/s in this run. Differences under ~20% are noise on this machine.")
    }

    /// Operations a step counts.
    static func count(_ step: Step, _ w: Workload) -> Int {
        step == .f ? w.commits : w.n
    }

    static func medianSize(_ xs: [UInt64]) -> UInt64 {
        xs.sorted()[xs.count / 2]
    }
}
