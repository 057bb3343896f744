// engine-bench: Cellar's storage engine and LMDB on the same steps, side by side in one process.
//
//   swift run -c release --package-path Benchmarks engine-bench --n 100000 [--runs 3] [--format tsv] [--dir PATH] [--node-size BYTES]
//
// Steps (WORKLOAD.md's letters): a. put N keys (8-byte big-endian 1...N, 200-byte values) in one
// write transaction; b. get every key in random order in one read transaction; c. scan in key order
// with a cursor; f. 1,000 durable single-key commits (the two engines' commits interleaved one by
// one). Every run uses fresh stores in a new temporary folder on disk (never tmpfs) and checks
// what it reads; a failed check exits 1.
import CellarStorage
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

    /// Issue 2's target for Cellar/LMDB.
    var target: Double {
        switch self {
        case .a, .b, .c: 1.0
        case .f: 1.8
        }
    }

    /// WORKLOAD.md's "LMDB raw" anchors (the CRUD workload: FlatBuffers values, an index DBI), for
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

struct Options {
    var n = 100_000
    var runs = 1
    var tsv = false
    var directory: String?
    var engines = ["cellar", "lmdb"]
    /// Cellar's B+tree node size (StorageOptions.nodeSize); the default is the engine's.
    var nodeSize = StorageOptions().nodeSize

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var rest = arguments[...]
        func value(_ name: String) throws -> String {
            guard let v = rest.popFirst() else { throw BenchError("\(name) needs a value") }
            return v
        }
        while let arg = rest.popFirst() {
            switch arg {
            case "--n":
                guard let n = Int(try value(arg).replacingOccurrences(of: "_", with: "")), n >= 1 else { throw BenchError("--n must be a positive integer") }
                options.n = n
            case "--runs":
                guard let r = Int(try value(arg)), r >= 1 else { throw BenchError("--runs must be a positive integer") }
                options.runs = r
            case "--format":
                switch try value(arg) {
                case "tsv": options.tsv = true
                case "human", "table": options.tsv = false
                case let f: throw BenchError("unknown --format \(f) (human or tsv)")
                }
            case "--dir":
                options.directory = try value(arg)
            case "--node-size":
                guard let size = Int(try value(arg)), size >= 256 else { throw BenchError("--node-size must be at least 256") }
                options.nodeSize = size
            case "--engines":
                let list = try value(arg).split(separator: ",").map(String.init)
                guard !list.isEmpty, Set(list).count == list.count, list.allSatisfy({ $0 == "cellar" || $0 == "lmdb" }) else {
                    throw BenchError("--engines takes cellar, lmdb or cellar,lmdb")
                }
                options.engines = list
            case "-h", "--help":
                print("usage: engine-bench [--n N] [--runs R] [--format human|tsv] [--dir PARENT] [--engines cellar,lmdb] [--node-size BYTES]")
                exit(0)
            default:
                throw BenchError("unknown argument \(arg)")
            }
        }
        return options
    }
}

@main
struct EngineBench {
    static func main() {
        do {
            try run(Options.parse(Array(CommandLine.arguments.dropFirst())))
        } catch {
            log("engine-bench: FAILED: \(error)")
            exit(1)
        }
    }

    static func run(_ options: Options) throws {
        let n = options.n
        let workload = Workload(n: n, commits: min(1000, n))
        let parent = try scratchParent(options.directory)
        log("engine-bench: N=\(n), runs=\(options.runs), stores under \(parent.path) (\(parent.fs)), LMDB \(LMDBEngine.version)")

        // seconds[engine][step], one entry per run
        var seconds: [String: [Step: [Double]]] = [:]
        var sizeAfterA: [String: [UInt64]] = [:]
        for run in 0..<options.runs {
            // Both stores open at once and every step run for both engines back to back, so that a
            // burst of load from elsewhere hits both; which engine goes first alternates per run.
            let order = run % 2 == 0 ? options.engines : options.engines.reversed()
            let folder = try makeTemporaryFolder(in: parent.path)
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
                log("run \(run + 1)/\(options.runs) \(name): " + Step.allCases.map { step in
                    "\(step.rawValue) \(formatRate(Double(count(step, workload)) / times[name]![step]!))/s"
                }.joined(separator: "  ") + "  (checks passed)")
            }
        }

        func rate(_ engine: String, _ step: Step) -> Double {
            Double(count(step, workload)) / median(seconds[engine]![step]!)
        }
        guard options.engines.count == 2 else {
            // One engine (profiling): its medians only.
            let name = options.engines[0]
            for step in Step.allCases {
                print("\(name)\t\(step.rawValue)\t\(n)\t\(String(format: "%.1f", rate(name, step)))\t\(String(format: "%.6f", median(seconds[name]![step]!)))")
            }
            return
        }
        if options.tsv {
            for name in options.engines {
                for step in Step.allCases {
                    let s = median(seconds[name]![step]!)
                    print("\(name)\t\(step.rawValue)\t\(n)\t\(String(format: "%.1f", rate(name, step)))\t\(String(format: "%.6f", s))")
                }
                print("\(name)\tsize_after_a\t\(n)\t\(medianSize(sizeAfterA[name]!))\t0")
            }
            for step in Step.allCases {
                print("ratio\t\(step.rawValue)\t\(n)\t\(String(format: "%.3f", rate("cellar", step) / rate("lmdb", step)))\t0")
            }
            return
        }

        print("")
        print("Cellar storage engine vs LMDB \(LMDBEngine.version): N = \(grouped(n)), 8-byte keys, 200-byte values, "
              + (options.runs > 1 ? "median of \(options.runs) runs" : "1 run"))
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
        print("* WORKLOAD.md's LMDB raw figure for the same letter on its CRUD workload (FlatBuffers values, an index DBI),")
        print("  measured 2026-11-21 on this kind of machine; context only, not the same work as here.")
        print("  Ratio = Cellar ops/s / LMDB ops/s in this run. Differences under ~20% are noise on this machine.")
    }

    /// Operations a step counts.
    static func count(_ step: Step, _ w: Workload) -> Int {
        step == .f ? w.commits : w.n
    }

    static func median(_ xs: [Double]) -> Double {
        let s = xs.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    static func medianSize(_ xs: [UInt64]) -> UInt64 {
        xs.sorted()[xs.count / 2]
    }

    static func log(_ line: String) {
        var text = line + "\n"
        text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }
}

// MARK: - Folders

/// The folder the temporary stores go in: `--dir`, else $TMPDIR or /tmp, unless that is tmpfs
/// (which would make durable commits free): then `.build/engine-bench-tmp` under the current folder.
func scratchParent(_ explicit: String?) throws -> (path: String, fs: String) {
    if let explicit {
        _ = try makeFolder(explicit)
        let fs = fileSystemName(explicit)
        if fs == "tmpfs" || fs == "ramfs" {
            throw BenchError("--dir \(explicit) is on \(fs); durable commits need a real disk")
        }
        return (explicit, fs)
    }
    let env = getenv("TMPDIR").map { String(cString: $0) }
    let tmp = (env?.isEmpty == false ? env! : "/tmp")
    let fs = fileSystemName(tmp)
    if fs != "tmpfs" && fs != "ramfs" { return (tmp, fs) }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
    guard getcwd(&buffer, buffer.count) != nil else { throw BenchError("getcwd failed") }
    let cwd = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let fallback = try makeFolder(cwd + "/.build/engine-bench-tmp")
    return (fallback, fileSystemName(fallback))
}

/// The type of the file system holding `path`, from the longest matching mount point in /proc/mounts.
func fileSystemName(_ path: String) -> String {
    guard let resolved = realpath(path, nil) else { return "unknown" }
    let full = String(cString: resolved)
    free(resolved)
    guard let f = fopen("/proc/mounts", "r") else { return "unknown" }
    defer { fclose(f) }
    var best = (length: -1, type: "unknown")
    var line: UnsafeMutablePointer<CChar>?
    var capacity = 0
    while getline(&line, &capacity, f) > 0 {
        let fields = String(cString: line!).split(separator: " ")
        guard fields.count >= 3 else { continue }
        let mount = fields[1].replacingOccurrences(of: "\\040", with: " ")
        let matches = mount == "/" || full == mount || full.hasPrefix(mount + "/")
        if matches && mount.count > best.length { best = (mount.count, String(fields[2])) }
    }
    free(line)
    return best.type
}

@discardableResult
func makeFolder(_ path: String) throws -> String {
    if mkdir(path, 0o755) != 0 && errno != EEXIST {
        throw BenchError("mkdir \(path): \(String(cString: strerror(errno)))")
    }
    return path
}

func makeTemporaryFolder(in parent: String) throws -> String {
    var template = Array((parent + "/engine-bench-XXXXXX").utf8CString)
    guard let p = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        throw BenchError("mkdtemp in \(parent): \(String(cString: strerror(errno)))")
    }
    return String(cString: p)
}

/// rm -r of a folder this program made (regular files and folders only).
func removeTree(_ path: String) {
    if let dir = opendir(path) {
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            let child = path + "/" + name
            var st = stat()
            if lstat(child, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR { removeTree(child) } else { unlink(child) }
        }
        closedir(dir)
    }
    rmdir(path)
}

// MARK: - Formatting

func grouped(_ value: Int) -> String {
    let digits = String(value.magnitude)
    var out = ""
    for (i, ch) in digits.enumerated() {
        if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
        out.append(ch)
    }
    return value < 0 ? "-" + out : out
}

func formatRate(_ r: Double) -> String {
    r >= 10_000_000 ? String(format: "%.1fM", r / 1e6) : grouped(Int(r.rounded()))
}

func printTable(header: [String], rows: [[String]]) {
    let all = [header] + rows
    let widths = (0..<header.count).map { c in all.map { $0[c].count }.max()! }
    func line(_ cells: [String]) -> String {
        cells.enumerated().map { c, cell in
            let pad = String(repeating: " ", count: widths[c] - cell.count)
            return c == 0 ? cell + pad : pad + cell
        }.joined(separator: "   ")
    }
    print(line(header))
    print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "   "))
    for row in rows { print(line(row)) }
}
