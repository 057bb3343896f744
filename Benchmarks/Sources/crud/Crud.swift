// crud: /work/shared/WORKLOAD.md's CRUD steps a b c d e e2 e3 f g, exactly, for two engines in one
// process, beside ObjectBox's anchors from the same machine:
//   cellar  Cellar through its public API (Store, Box, Query) with WORKLOAD.md's `Note` entity,
//           `author` indexed (BenchNote's binding, written the way the generator writes one)
//   sqlite  SQLite through GRDB 7.10.0: WAL, synchronous=NORMAL (FULL during f), the table and
//           index of WORKLOAD.md, cached prepared statements, `Note` rows as GRDB records
//
//   swift run -c release --package-path Benchmarks crud --n 100000 [--runs 3] [--format tsv]
//       [--engines cellar,sqlite] [--dir PARENT] [--compression none|zstd|dictionary]
//
// --compression opens Cellar's store with `StoreOptions.compression` `.none` (default), `.zstd()`
// or `.zstdDictionary()`. With `dictionary`, the store is compacted right after a (untimed; it
// trains the Note dictionary and recompresses every record with it) and b…g run on that store:
// `cellar size_after_a_trained n bytes 0` and `cellar training_compaction_ms n ms 0` report it.
//
// Per run and engine: a fresh database in a new temporary folder on disk (never tmpfs). The
// objects (strings included) are built before any timer. Every check of WORKLOAD.md runs after
// the timers; a failed one exits 1. See Engines.swift for the steps.
// Output: a human table (ops/s, cellar/sqlite, ObjectBox's anchor and the ratio to it at N =
// 100,000 and 1,000,000) or, with --format tsv, lines `engine step n ops_per_s seconds` (medians
// over the runs), `engine size_after_a n bytes 0`, `engine size_after_d n bytes 0`, for Cellar
// `cellar size_after_compaction n bytes 0` (a copy of the store after d, compacted online after
// the run while a thread commits to it: the compacted log's length), `cellar
// compaction_longest_writer_wait_us n µs 0`, `cellar compaction_mb_per_s n MB/s 0` (of the log it started from),
// `cellar compaction_written_mb_per_s n MB/s 0` (of the compacted log) and `engine peak_rss n bytes 0`.
import BenchSupport
import Foundation

enum Step: String, CaseIterable {
    case a, b, bget, c, d, e, e2, e2find, e3, f, g

    var title: String {
        switch self {
        case .a: "put N new, one txn"
        case .b: "get by id, random, title length"
        case .bget: "get objects by id, random"
        case .c: "scan, Σ creationDate"
        case .d: "update all, one txn"
        case .e: "count author==42 (queries/s)"
        case .e2: "visit hits, title length (q/s)"
        case .e2find: "find hits, title length (q/s)"
        case .e3: "ids of author==42 (queries/s)"
        case .f: "durable 1-object commits (/s)"
        case .g: "remove all, one txn"
        }
    }

    /// Operations the step counts.
    func ops(_ n: Int) -> Int {
        switch self {
        case .a, .b, .bget, .c, .d, .g: n
        case .e, .e2, .e2find, .e3: Workload.queries
        case .f: Workload.commits(n)
        }
    }

    /// ObjectBox C 5.3.2 on this machine (WORKLOAD.md), at N = 100,000 and 1,000,000 only. e2 and
    /// e2find have none: e's (ObjectBox's count visits the hits).
    func anchor(_ n: Int) -> Double? {
        switch (self, n) {
        case (.a, 100_000): 641_867
        case (.a, 1_000_000): 580_281
        case (.b, 100_000), (.bget, 100_000): 982_024
        case (.b, 1_000_000), (.bget, 1_000_000): 688_917
        case (.c, 100_000): 26.7e6
        case (.c, 1_000_000): 25.1e6
        case (.d, 100_000): 1_134_864
        case (.d, 1_000_000): 1_103_335
        case (.e, 100_000), (.e2, 100_000), (.e2find, 100_000): 3_075
        case (.e, 1_000_000), (.e2, 1_000_000), (.e2find, 1_000_000): 87.8
        case (.e3, 100_000): 43_816
        case (.e3, 1_000_000): 4_219
        case (.f, 100_000): 4_659
        case (.f, 1_000_000): 3_429
        case (.g, 100_000): 4.11e6
        case (.g, 1_000_000): 3.84e6
        default: nil
        }
    }

    /// WORKLOAD.md's target for Cellar, as a multiple of ObjectBox's anchor.
    var target: Double? {
        switch self {
        case .a, .b, .e3: 1.5
        case .c, .g: 1.0
        case .d: 1.2
        case .e: 10
        case .f: 1.8
        case .bget, .e2, .e2find: nil
        }
    }
}

/// What one run of one engine measured: seconds per step, bytes on disk, peak RSS.
struct RunResult {
    var seconds: [Step: Double] = [:]
    var sizeAfterA = 0
    var sizeAfterD = 0
    /// Cellar only: the log's length after a (the file without the zeros written ahead of it).
    var logAfterA = 0
    /// Cellar only: the online compaction of a copy of the store after d.
    var compaction = CompactionFigures()
    /// Cellar with `--compression dictionary` only: the store after a, compacted (dictionary
    /// trained), and how long that compaction took.
    var sizeAfterATrained = 0
    var trainingSeconds = 0.0
    var peakRSS = 0
}

/// What `CellarEngine.compactCopy` measured (seconds unless named otherwise).
struct CompactionFigures {
    /// The compacted log's length at the swap, and the log's length it started from.
    var bytesAfter = 0
    var bytesBefore = 0
    var seconds = 0.0
    /// The longest hold compaction had on the writer lock.
    var writerLockHold = 0.0
    /// The writer thread's durable commits: during the compaction and outside it.
    var commitsDuring = 0
    var p99During = 0.0, p99Outside = 0.0
    var longestDuring = 0.0, longestOutside = 0.0
}

struct Options: BenchOptions {
    var common = CommonOptions()
    var engines = ["cellar", "sqlite"]
    var compression = "none"

    static let usage = "usage: crud [--n N] [--runs R] [--format human|tsv] [--engines cellar,sqlite] [--dir PARENT] [--compression none|zstd|dictionary]"

    mutating func parseOwn(_ arg: String, _ arguments: inout Arguments) throws -> Bool {
        switch arg {
        case "--engines": engines = try arguments.list(arg, of: ["cellar", "sqlite"])
        case "--compression":
            let chosen = try arguments.list(arg, of: ["none", "zstd", "dictionary"])
            guard chosen.count == 1 else { throw BenchError("--compression takes one of none, zstd, dictionary") }
            compression = chosen[0]
        default: return false
        }
        return true
    }

    /// Cellar's store options for `--compression`.
    var cellarCompression: CellarCompression {
        switch compression {
        case "zstd": .zstd()
        case "dictionary": .zstdDictionary()
        default: .none
        }
    }
}

@main
struct Crud {
    static func main() {
        runMain("crud") { try run(Options.parseCommandLine()) }
    }

    static func run(_ options: Options) throws {
        let n = options.n
        let parent = try scratchParent(options.directory, tool: "crud", reason: "the databases must be on a real disk")
        log("crud: N=\(n), runs=\(options.runs), engines \(options.engines.joined(separator: ",")), databases under \(parent.path) (\(parent.fs)); building the objects")
        let workload = Workload(n: n)

        var results: [String: [RunResult]] = [:]
        for run in 0..<options.runs {
            for engine in options.engines {
                let folder = try makeTemporaryFolder(in: parent.path, prefix: "crud-\(engine)")
                defer { removeTree(folder) }
                resetPeakRSS()
                var result = engine == "cellar"
                    ? try CellarEngine.run(workload, folder: folder, compression: options.cellarCompression)
                    : try SQLiteEngine.run(workload, folder: folder)
                result.peakRSS = peakRSS()
                if engine == "cellar" {
                    try CellarEngine.compactCopy(folder: folder, workload, compression: options.cellarCompression, into: &result)
                }
                results[engine, default: []].append(result)
                logRun(run, of: options.runs, engine, rates: Step.allCases.compactMap { step in
                    result.seconds[step].map { (step.rawValue, Double(step.ops(n)) / $0) }
                })
            }
        }

        func seconds(_ engine: String, _ step: Step) -> Double? {
            guard let runs = results[engine], runs.allSatisfy({ $0.seconds[step] != nil }) else { return nil }
            return median(runs.map { $0.seconds[step]! })
        }
        func rate(_ engine: String, _ step: Step) -> Double? { seconds(engine, step).map { Double(step.ops(n)) / $0 } }
        func bytes(_ engine: String, _ value: (RunResult) -> Int) -> Int {
            Int(median(results[engine]!.map { Double(value($0)) }))
        }

        if options.tsv {
            for engine in options.engines {
                for step in Step.allCases {
                    if let s = seconds(engine, step) {
                        print(tsvLine(engine, step.rawValue, n, opsPerSecond: Double(step.ops(n)) / s, seconds: s))
                    }
                }
                print("\(engine)\tsize_after_a\t\(n)\t\(bytes(engine, \.sizeAfterA))\t0")
                print("\(engine)\tsize_after_d\t\(n)\t\(bytes(engine, \.sizeAfterD))\t0")
                if engine == "cellar" {
                    print("\(engine)\tsize_after_compaction\t\(n)\t\(bytes(engine, \.compaction.bytesAfter))\t0")
                    let runs = results[engine]!
                    print("\(engine)\tcompaction_longest_writer_wait_us\t\(n)\t\(Int(median(runs.map(\.compaction.writerLockHold)) * 1e6))\t0")
                    print("\(engine)\tcompaction_mb_per_s\t\(n)\t\(Int(median(runs.map { Double($0.compaction.bytesBefore) / 1e6 / max($0.compaction.seconds, 1e-9) })))\t0")
                    print("\(engine)\tcompaction_written_mb_per_s\t\(n)\t\(Int(median(runs.map { Double($0.compaction.bytesAfter) / 1e6 / max($0.compaction.seconds, 1e-9) })))\t0")
                    if options.compression == "dictionary" {
                        print("\(engine)\tsize_after_a_trained\t\(n)\t\(bytes(engine, \.sizeAfterATrained))\t0")
                        print("\(engine)\ttraining_compaction_ms\t\(n)\t\(Int(median(runs.map(\.trainingSeconds)) * 1e3))\t0")
                    }
                }
                print("\(engine)\tpeak_rss\t\(n)\t\(bytes(engine, \.peakRSS))\t0")
            }
            return
        }

        print("")
        print("CRUD workload (WORKLOAD.md), N = \(grouped(n)), " + runsPhrase(options.runs) + "; ops/s (queries/s for e*, commits/s for f)"
              + (options.compression == "none" ? "" : "; Cellar compression: \(options.compression)"))
        print("")
        let hasCellar = options.engines.contains("cellar")
        let hasSQLite = options.engines.contains("sqlite")
        var header = ["step"]
        if hasCellar { header.append("cellar") }
        if hasSQLite { header.append("sqlite (GRDB)") }
        if hasCellar && hasSQLite { header.append("cellar/sqlite") }
        if hasCellar { header += ["ObjectBox", "cellar/OBX", "target"] }
        var rows: [[String]] = []
        for step in Step.allCases {
            var cells = [step.rawValue + "  " + step.title]
            let c = hasCellar ? rate("cellar", step) : nil
            let s = hasSQLite ? rate("sqlite", step) : nil
            if hasCellar { cells.append(c.map(formatOps) ?? "–") }
            if hasSQLite { cells.append(s.map(formatOps) ?? "–") }
            if hasCellar && hasSQLite {
                cells.append(c != nil && s != nil ? String(format: "%.2f×", c! / s!) : "–")
            }
            if hasCellar {
                if let anchor = step.anchor(n), let c {
                    let ratio = c / anchor
                    cells += [formatOps(anchor), String(format: "%.2f×", ratio),
                              step.target.map { String(format: "≥ %g× %@", $0, ratio >= $0 ? "met" : "NOT MET") } ?? ""]
                } else {
                    cells += ["–", "–", step.target.map { String(format: "≥ %g×", $0) } ?? ""]
                }
            }
            rows.append(cells)
        }
        func mb(_ b: Int) -> String { String(format: "%.1f MB", Double(b) / 1e6) }
        for (label, value) in [("file after a", { (r: RunResult) in r.sizeAfterA }), ("file after d", { $0.sizeAfterD }),
                               ("peak RSS", { $0.peakRSS })] as [(String, (RunResult) -> Int)] {
            var cells = [label]
            if hasCellar { cells.append(mb(bytes("cellar", value))) }
            if hasSQLite { cells.append(mb(bytes("sqlite", value))) }
            if hasCellar && hasSQLite {
                cells.append(String(format: "%.2f×", Double(bytes("cellar", value)) / Double(bytes("sqlite", value))))
            }
            if hasCellar {
                let anchor: Double? = switch (label, n) {
                case ("file after a", 100_000): 29.3e6
                case ("file after a", 1_000_000): 293.7e6
                case ("file after d", 100_000): 53.6e6
                case ("file after d", 1_000_000): 536.3e6
                default: nil
                }
                if let anchor {
                    cells += [mb(Int(anchor)), String(format: "%.2f×", Double(bytes("cellar", value)) / anchor), ""]
                } else {
                    cells += ["–", "–", ""]
                }
            }
            rows.append(cells)
        }
        if hasCellar {
            // Online compaction of a copy of Cellar's store after d; the target is against a (the
            // log's length after a: the compacted length has no zeros written ahead either).
            let after = bytes("cellar", \.compaction.bytesAfter), a = bytes("cellar", \.logAfterA)
            let ratio = Double(after) / Double(max(a, 1))
            var cells = ["file after d, compacted", mb(after)]
            if hasSQLite { cells += ["–", "–"] }
            cells += ["–", String(format: "%.2f× a", ratio), String(format: "≤ 1.05× a %@", ratio <= 1.05 ? "met" : "NOT MET")]
            rows.append(cells)
        }
        if hasCellar && options.compression == "dictionary" {
            // WORKLOAD.md: file after a ≤ 0.5× ObjectBox's with zstd; the dictionary exists once a
            // compaction trained it.
            let trained = bytes("cellar", \.sizeAfterATrained)
            let anchor: Double? = n == 100_000 ? 29.3e6 : n == 1_000_000 ? 293.7e6 : nil
            var cells = ["file after a, compacted (dictionary)", mb(trained)]
            if hasSQLite { cells += ["–", "–"] }
            if let anchor {
                let ratio = Double(trained) / anchor
                cells += [mb(Int(anchor)), String(format: "%.2f×", ratio), String(format: "≤ 0.5× %@", ratio <= 0.5 ? "met" : "NOT MET")]
            } else {
                cells += ["–", "–", "≤ 0.5×"]
            }
            rows.append(cells)
        }
        printTable(header: header, rows: rows)
        if hasCellar && options.compression == "dictionary" {
            print(String(format: "Dictionary training: the compaction right after a took %.0f ms (not in any step's time).",
                         median(results["cellar"]!.map(\.trainingSeconds)) * 1e3))
        }
        print("")
        print("ObjectBox: WORKLOAD.md's anchors (C API 5.3.2, this machine; only at N = 100,000 and 1,000,000).")
        print("e2/e2find are compared to e's anchor (ObjectBox's count costs as much as visiting the hits).")
        print("b and e2 read the title from the stored bytes (Cellar Box.visit(id:) / Query.visit; SQLite a Row);")
        print("bget and e2find build every object (Cellar Box.get / Query.find; SQLite GRDB records).")
        print("bget and e2/e2find have no target: b's anchor and e's are shown for comparison.")
        print("sqlite sizes: the database file plus its -wal file. Peak RSS: the process's high-water mark during")
        print("the engine's run (reset before it), the prebuilt objects included.")
        if hasCellar {
            let results = results["cellar"]!
            let seconds = median(results.map(\.compaction.seconds))
            let before = median(results.map { Double($0.compaction.bytesBefore) }) / 1e6
            let after = median(results.map { Double($0.compaction.bytesAfter) }) / 1e6
            print(String(format: "Compaction: online (Store.compact()) of a copy of the store after d, a thread committing durable one-object updates meanwhile: %.1f MB → %.1f MB in %.2f s: %.0f MB/s of log, %.0f MB/s written.",
                         before, after, seconds, before / max(seconds, 1e-9), after / max(seconds, 1e-9)))
            let wait = median(results.map(\.compaction.writerLockHold)) * 1e3
            print(String(format: "Longest writer wait it reports (its hold on the writer lock): %.1f ms (target at 1M: ≤ 50 ms %@).", wait, wait <= 50 ? "met" : "NOT MET"))
            print(String(format: "The writer's durable commits during it: p99 %.1f ms, longest %.1f ms (%d commits); outside it: p99 %.1f ms, longest %.1f ms.",
                         median(results.map(\.compaction.p99During)) * 1e3, median(results.map(\.compaction.longestDuring)) * 1e3,
                         Int(median(results.map { Double($0.compaction.commitsDuring) })),
                         median(results.map(\.compaction.p99Outside)) * 1e3, median(results.map(\.compaction.longestOutside)) * 1e3))
        }
        print("Differences under ~20% between invocations are noise on this machine.")
    }

    static func formatOps(_ r: Double) -> String { r < 1_000 ? String(format: "%.1f", r) : formatRate(r) }
}

// MARK: - Peak RSS and sizes on disk

/// Resets the process's RSS high-water mark (Linux: `5` to /proc/self/clear_refs), so that the next
/// `peakRSS()` measures one engine's run.
func resetPeakRSS() {
    let fd = open("/proc/self/clear_refs", O_WRONLY)
    guard fd >= 0 else { return }
    _ = "5".withCString { write(fd, $0, 1) }
    close(fd)
}

/// The RSS high-water mark in bytes (VmHWM of /proc/self/status; else getrusage's ru_maxrss).
func peakRSS() -> Int {
    if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) {
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            if let kb = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") {
                return kb * 1024
            }
        }
    }
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Int(usage.ru_maxrss) * 1024
}

/// Bytes of the regular files in `folder` and its subfolders (st_size).
func folderBytes(_ folder: String) -> Int {
    var total = 0
    guard let dir = opendir(folder) else { return 0 }
    defer { closedir(dir) }
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
        if name == "." || name == ".." { continue }
        let child = folder + "/" + name
        var st = stat()
        guard lstat(child, &st) == 0 else { continue }
        if (st.st_mode & S_IFMT) == S_IFDIR { total += folderBytes(child) } else if (st.st_mode & S_IFMT) == S_IFREG { total += Int(st.st_size) }
    }
    return total
}
