// export-bench: `cellar export` and `cellar import` of a store of N objects, as a user runs them.
//
//   swift build -c release --package-path Benchmarks --product cellar
//   swift run -c release --package-path Benchmarks export-bench --n 1000000 [--runs 1]
//       [--cellar PATH] [--batch-size B] [--format tsv] [--dir PARENT]
//
// The objects are the CRUD workload's notes (BenchNote, `author` indexed), put in transactions of
// 100,000 into a fresh store on disk. Then, per run, the `cellar` tool (by default the one built
// beside this program) runs as a child process:
//   export   `cellar export STORE --to FILE`: every object as a JSON line, from one snapshot
//   import   `cellar import NEW --from FILE [--batch-size B]` into a new store: records, the
//            author index, the next ids
// Each is timed from spawn to exit; its peak memory is the child's resident-set high-water mark
// (VmHWM, read every 5 ms while it runs: Linux only), so what the tool holds at its peak, not
// this program.
// Figures (medians over the runs): objects per second of each, their peak RSS and the largest
// anonymous part of it seen (heap and stacks: the rest is pages of the store's file, mapped for
// reading, which the kernel can drop), the file's size.
// Checks (a failed one exits 1): the file has N + 2 lines (header, objects, end); the imported
// store has N objects; `author == 42` finds the ids ≡ 42 (mod 100) in order; 1,000 objects spread
// over the ids read back equal; a new object gets id N + 1.
import BenchNote
import BenchSupport
import Cellar
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct Options: BenchOptions {
    var common = CommonOptions()
    var cellar: String?
    var batchSize: Int?

    init() {}

    static let usage = "usage: export-bench [--n N] [--runs R] [--cellar PATH] [--batch-size B] [--format human|tsv] [--dir PARENT]"

    mutating func parseOwn(_ arg: String, _ arguments: inout Arguments) throws -> Bool {
        switch arg {
        case "--cellar": cellar = try arguments.value(arg)
        case "--batch-size": batchSize = try arguments.integer(arg, atLeast: 1, else: "--batch-size must be a positive integer")
        default: return false
        }
        return true
    }
}

/// What one child process took.
struct ChildRun {
    var seconds: Double
    /// Its maximum resident set size, in bytes.
    var peakRSS: Int
    /// The largest anonymous part of its resident set seen (its heap and stacks, without the
    /// pages of files it maps), in bytes.
    var peakAnonymous: Int
}

/// Runs `tool` with `arguments`, its standard output and error going to this program's; throws
/// when it exits with another status than 0.
func runChild(_ tool: String, _ arguments: [String]) throws -> ChildRun {
    let argv = ([tool] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let start = now()
    let spawned = posix_spawn(&pid, tool, nil, nil, argv, environ)
    guard spawned == 0 else { throw BenchError("cannot start \(tool): \(String(cString: strerror(spawned)))") }
    // The child's peak: its high-water mark (VmHWM), read every 5 ms until it exits. `wait4`'s
    // `ru_maxrss` would not do: posix_spawn starts the child in this process's memory, and Linux
    // keeps that resident size (the notes, hundreds of MiB) as the child's maximum across exec.
    var peak = 0
    var anonymous = 0
    var status: Int32 = 0
    while true {
        let reaped = waitpid(pid, &status, WNOHANG)
        if reaped == pid { break }
        if reaped < 0 && errno != EINTR { throw BenchError("waitpid: \(String(cString: strerror(errno)))") }
        let now = memory(of: pid)
        peak = max(peak, now.highWaterMark)
        anonymous = max(anonymous, now.anonymous)
        usleep(5_000)
    }
    let seconds = now() - start
    // Exited normally with 0: the low 7 bits (the signal) and the exit status are 0.
    guard status == 0 else { throw BenchError("\(tool) \(arguments.joined(separator: " ")) failed (wait status \(status))") }
    return ChildRun(seconds: seconds, peakRSS: peak, peakAnonymous: anonymous)
}

/// The resident-set high-water mark of process `pid` and the anonymous part of its resident set
/// now, in bytes (`VmHWM`, `RssAnon` in /proc; 0 when they cannot be read).
func memory(of pid: pid_t) -> (highWaterMark: Int, anonymous: Int) {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return (0, 0) }
    func field(_ name: String) -> Int {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }),
              let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else { return 0 }
        return kib * 1024
    }
    return (field("VmHWM"), field("RssAnon"))
}

func check(_ what: String, _ ok: Bool) throws {
    if !ok { throw BenchError("check failed: \(what)") }
}

/// The number of lines of the file at `path`.
func lineCount(_ path: String) throws -> Int {
    guard let file = fopen(path, "r") else { throw BenchError("cannot read \(path)") }
    defer { fclose(file) }
    var lines = 0
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    while true {
        let read = fread(&buffer, 1, buffer.count, file)
        if read == 0 { break }
        lines += buffer[..<read].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
    }
    return lines
}

/// The `cellar` tool: `--cellar`, else the one beside this program.
func cellarTool(_ explicit: String?) throws -> String {
    if let explicit { return explicit }
    let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    let beside = me.deletingLastPathComponent().appendingPathComponent("cellar").path
    guard access(beside, X_OK) == 0 else {
        throw BenchError("no cellar tool at \(beside): build it with `swift build -c release --package-path Benchmarks --product cellar`, or pass --cellar PATH")
    }
    return beside
}

runMain("export-bench") {
    let options = try Options.parseCommandLine()
    let n = options.n
    let tool = try cellarTool(options.cellar)
    let parent = try scratchParent(options.directory, tool: "export-bench", reason: "the stores must be on a real disk")
    let folder = try makeTemporaryFolder(in: parent.path, prefix: "export-bench")
    defer { removeTree(folder) }
    log("export-bench: N=\(n), runs=\(options.runs), tool \(tool), stores under \(parent.path) (\(parent.fs)); building the store")
    let notes = Note.fresh(n)
    let source = folder + "/source"
    do {
        let store = try Store(directoryPath: source, model: Note.indexedModel)
        defer { store.close() }
        for start in stride(from: 0, to: n, by: 100_000) {
            try store.box(for: Note.self).put(Array(notes[start..<min(start + 100_000, n)]))
        }
    }
    var exports: [ChildRun] = []
    var imports: [ChildRun] = []
    var fileBytes = 0
    for run in 0..<options.runs {
        let file = folder + "/export-\(run).jsonl"
        let target = folder + "/imported-\(run)"
        let exported = try runChild(tool, ["export", source, "--to", file])
        try check("the file has \(n) objects, a header and an end line", try lineCount(file) == n + 2)
        var status = stat()
        stat(file, &status)
        fileBytes = Int(status.st_size)
        let imported = try runChild(tool, ["import", target, "--from", file] + (options.batchSize.map { ["--batch-size", String($0)] } ?? []))
        do {
            let store = try Store(directoryPath: target, model: Note.indexedModel)
            defer { store.close() }
            let box = store.box(for: Note.self)
            try check("\(n) objects imported", try box.count() == n)
            let expected = Array(stride(from: Id(42), through: Id(n), by: 100))
            try check("author == 42 finds the ids ≡ 42 (mod 100)", try box.query { Note.author == 42 }.build().findIds().map(\.value) == expected)
            for i in stride(from: 0, to: n, by: max(1, n / 1_000)) {
                var note = notes[i]
                note.id = Id(i + 1)
                try check("object \(i + 1) reads back equal", try box.get(Id(i + 1)) == note)
            }
            try check("a new object gets id \(n + 1)", try box.put(Note(title: "new")).value == Id(n + 1))
        }
        removeTree(target)
        unlink(file)
        log(String(format: "run %d: export %.2f s, %.0f objects/s, peak RSS %.1f MiB (anonymous %.1f); import %.2f s, %.0f objects/s, peak RSS %.1f MiB (anonymous %.1f); file %.1f MiB",
                   run + 1, exported.seconds, Double(n) / exported.seconds, Double(exported.peakRSS) / 1048576,
                   Double(exported.peakAnonymous) / 1048576, imported.seconds, Double(n) / imported.seconds,
                   Double(imported.peakRSS) / 1048576, Double(imported.peakAnonymous) / 1048576, Double(fileBytes) / 1048576))
        exports.append(exported)
        imports.append(imported)
    }
    let rows: [(String, [ChildRun])] = [("export", exports), ("import", imports)]
    for (step, runs) in rows {
        let rate = Double(n) / median(runs.map(\.seconds))
        let peak = median(runs.map { Double($0.peakRSS) })
        let anonymous = median(runs.map { Double($0.peakAnonymous) })
        if options.tsv {
            print("objects_per_s\t\(step)\t\(n)\t\(Int(rate))\t0")
            print("peak_rss_bytes\t\(step)\t\(n)\t\(Int(peak))\t0")
            print("peak_anonymous_bytes\t\(step)\t\(n)\t\(Int(anonymous))\t0")
        } else {
            print(String(format: "%-7@ %12.0f objects/s, peak RSS %8.1f MiB (anonymous %8.1f MiB)", step, rate, peak / 1048576, anonymous / 1048576))
        }
    }
    if options.tsv { print("file_bytes\texport\t\(n)\t\(fileBytes)\t0") } else { print(String(format: "file    %8.1f MiB", Double(fileBytes) / 1048576)) }
}
