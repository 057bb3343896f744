// box-bench: the object layer (`Store` / `Box<Note>`) against the storage engine used directly,
// on the same data, in one process: what the object layer costs on top of the engine.
//
//   swift run -c release --package-path Benchmarks box-bench --n 100000 [--runs 5] [--format tsv] [--dir PATH] [--ways box,raw]
//
// Both ways store the CRUD workload's `Note` (6 fields, no index) as the same record bytes under the
// same keys, built and read by the same `RecordBuilder` / `RecordReader` calls (the binding's),
// durability `.none`. Steps, each run for both ways back to back (which goes first alternates
// per run), on fresh stores in a new temporary folder on disk (never tmpfs):
//   put     N new objects in one write txn (box: ids assigned by put, checked to be 1...N)
//   get     every object by id in random order (SplitMix64 Fisher–Yates, seed 42), one read txn
//   get1    the same, each get in its own read txn (box: `box.get` outside any transaction)
//   scan    every object in id order, decoded (box: `box.all()`)
//   update  all N objects replaced in one write txn
//   put1    2,000 write txns of one object each (the two ways' commits interleaved one by one),
//           after closing and opening both stores (untimed), so that the periodic sync of `.none`
//           does not flush what the bulk steps wrote inside put1
//   remove  every object by id in one write txn
// Output: a table with box/raw per step (the median of the per-run ratios, and that of the medians);
// with --format tsv, lines `way step n ops_per_s seconds` (medians; n is N, put1's ops are its
// commits), then `ratio step n box/raw 0` and `paired_ratio step n box/raw 0`.
// Every object read is decoded whole and compared with the original after the timer; counts
// and Σ creationDate are checked. A failed check exits 1. glibc is told to keep freed memory
// (no trimming), so that neither way pays page faults for memory the other one just freed.
@_spi(CellarGenerated) import BenchNote
import BenchSupport
@_spi(CellarGenerated) import Cellar
import CellarStorage
import Foundation

enum Step: String, CaseIterable {
    case put, get, get1, scan, update, put1, remove

    var title: String {
        switch self {
        case .put: "put N new, one txn"
        case .get: "get by id, random, one txn"
        case .get1: "get by id, random, txn each"
        case .scan: "scan (all), decoded"
        case .update: "update all, one txn"
        case .put1: "put1: 1-object write txns"
        case .remove: "remove all by id, one txn"
        }
    }
}

/// The requirement: Box loses at most 15% against the raw engine.
let requiredRatio = 0.85

struct Options: BenchOptions {
    var common = CommonOptions()
    var ways = ["box", "raw"]
    var singles = 2_000

    static let usage = "usage: box-bench [--n N] [--runs R] [--format human|tsv] [--dir PARENT] [--ways box,raw] [--singles COMMITS]"

    mutating func parseOwn(_ arg: String, _ arguments: inout Arguments) throws -> Bool {
        switch arg {
        case "--singles": singles = try arguments.integer(arg, atLeast: 1, else: "--singles must be a positive integer")
        case "--ways": ways = try arguments.list(arg, of: ["box", "raw"])
        default: return false
        }
        return true
    }
}

@main
struct BoxBench {
    static func main() {
        runMain("box-bench") { try run(Options.parseCommandLine()) }
    }

    static func run(_ options: Options) throws {
        let n = options.n
        keepFreedMemory()
        let parent = try scratchParent(options.directory, tool: "box-bench", reason: "the stores must be on a real disk")
        log("box-bench: N=\(n), runs=\(options.runs), stores under \(parent.path) (\(parent.fs)); building the objects")
        let workload = NoteWorkload(n: n, singles: min(options.singles, n))

        // seconds[way][step], one entry per run
        var seconds: [String: [Step: [Double]]] = [:]
        for run in 0..<options.runs {
            // Both stores open at once and every step run for both ways back to back, so that a
            // burst of load from elsewhere hits both; which way goes first alternates per run.
            let order = run % 2 == 0 ? options.ways : options.ways.reversed()
            let folder = try makeTemporaryFolder(in: parent.path, prefix: "box-bench")
            defer { removeTree(folder) }
            var ways: [(name: String, way: any Way)] = []
            defer { for w in ways { w.way.close() } }
            for name in order {
                let directory = folder + "/" + name
                ways.append((name, name == "box" ? try BoxWay(directory: directory) : try RawWay(directory: directory)))
            }
            var times: [String: [Step: Double]] = [:]
            for (name, way) in ways { times[name, default: [:]][.put] = try way.put(workload) }
            for (name, way) in ways { times[name]![.get] = try way.getAll(workload) }
            for (name, way) in ways { times[name]![.get1] = try way.getEach(workload) }
            for (name, way) in ways { times[name]![.scan] = try way.scan(workload) }
            for (name, way) in ways { times[name]![.update] = try way.update(workload) }
            // put1, interleaved commit by commit, so that a burst of load (or one of the engine's
            // periodic superblock syncs) hits both ways alike.
            for (_, way) in ways { try way.reopen() }
            for (name, _) in ways { times[name]![.put1] = 0 }
            for i in 1...workload.singles {
                for (name, way) in ways { times[name]![.put1]! += try way.putOne(i, workload) }
            }
            for (_, way) in ways { try way.verify(workload) }
            for (name, way) in ways { times[name]![.remove] = try way.remove(workload) }
            for (name, _) in ways {
                for step in Step.allCases { seconds[name, default: [:]][step, default: []].append(times[name]![step]!) }
                logRun(run, of: options.runs, name, rates: Step.allCases.map { step in
                    (step.rawValue, Double(count(step, workload)) / times[name]![step]!)
                })
            }
        }

        func rate(_ way: String, _ step: Step) -> Double {
            Double(count(step, workload)) / median(seconds[way]![step]!)
        }
        /// The median over the runs of the ratio within each run (both ways ran under the same load).
        func pairedRatio(_ step: Step) -> Double {
            median(zip(seconds["box"]![step]!, seconds["raw"]![step]!).map { $1 / $0 })
        }
        func line(_ way: String, _ step: Step) -> String {
            tsvLine(way, step.rawValue, n, opsPerSecond: rate(way, step), seconds: median(seconds[way]![step]!))
        }
        guard options.ways.count == 2 else {
            // One way (profiling): its medians only.
            for step in Step.allCases { print(line(options.ways[0], step)) }
            return
        }
        if options.tsv {
            for way in options.ways {
                for step in Step.allCases { print(line(way, step)) }
            }
            for step in Step.allCases {
                print(tsvRatioLine("ratio", step.rawValue, n, rate("box", step) / rate("raw", step)))
            }
            for step in Step.allCases {
                print(tsvRatioLine("paired_ratio", step.rawValue, n, pairedRatio(step)))
            }
            return
        }

        print("")
        print("Box vs raw storage engine: Note (6 fields, \(recordSize(workload))-byte records), N = \(grouped(n)), durability .none, "
              + runsPhrase(options.runs))
        print("")
        let header = ["step", "ops", "box ops/s", "raw ops/s", "box/raw", "(min–max)", "of medians",
                      "≥ \(String(format: "%.2f", requiredRatio))"]
        var rows: [[String]] = []
        for step in Step.allCases {
            let box = rate("box", step), raw = rate("raw", step)
            // The same run's two timings side by side: what a burst of load did to both cancels out.
            let paired = zip(seconds["box"]![step]!, seconds["raw"]![step]!).map { $1 / $0 }
            let ratio = pairedRatio(step)
            rows.append([step.rawValue + "  " + step.title, grouped(count(step, workload)),
                         grouped(Int(box.rounded())), grouped(Int(raw.rounded())),
                         String(format: "%.2f×", ratio), String(format: "(%.2f–%.2f)", paired.min()!, paired.max()!),
                         String(format: "%.2f×", box / raw), ratio >= requiredRatio ? "met" : "NOT MET"])
        }
        printTable(header: header, rows: rows)
        print("")
        print("ops/s: medians over the runs. box/raw: the median over the runs of box ops/s / raw ops/s within each run")
        print("(the two ways run back to back, under the same load), with its range; of medians: box median / raw median.")
        print("Requirement: Box loses at most 15% against the raw engine (box/raw ≥ 0.85).")
        print("Differences under ~20% between invocations are noise on this machine; read the ratio.")
    }

    /// Bytes of one stored record (object 1's).
    static func recordSize(_ w: NoteWorkload) -> Int {
        let builder = RecordBuilder()
        builder.begin(slotCount: NoteBinding.slots)
        guard (try? NoteBinding.encode(w.fresh[0], to: builder)) != nil else { return 0 }
        return builder.bytes.count
    }

    /// Operations a step counts.
    static func count(_ step: Step, _ w: NoteWorkload) -> Int {
        step == .put1 ? w.singles : w.n
    }
}

/// Keeps freed memory in the heap: otherwise glibc gives the previous step's objects back to the
/// kernel (trimming the heap top, unmapping large blocks), and whichever way runs next pays the
/// page faults of getting it again, which swung scan by 2× from run to run. `mallopt` is not in
/// the Glibc module: look it up. Elsewhere a no-op.
func keepFreedMemory() {
    #if canImport(Glibc)
    typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }  // RTLD_DEFAULT
    let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
    _ = mallopt(-1, Int32.max)  // M_TRIM_THRESHOLD: never trim
    _ = mallopt(-3, 32 << 20)   // M_MMAP_THRESHOLD: its maximum on 64-bit; fixed, so no dynamic changes
    #endif
}
