// window-bench: what a window of past commits costs (`StoreOptions.pastRetention`, read with
// `Store.read(asOf:)`). A store of N notes (the CRUD workload's, `Note.fresh`) under a steady
// update load: one commit a second, each changing K notes (title and modification date), for
// twice the window; the window is W commits (`--window`, default 3,600: one hour at one commit a
// second, what `.duration(.seconds(3600))` keeps under that load). Then a compaction.
//
//   window-bench [--n N] [--runs R] [--objects 1,10,100] [--window 3600] [--format human|tsv] [--dir PARENT]
//
// Per run and K, two stores side by side (the order alternating): `.commits(W)` and no window.
// Reported: the file after the compaction with and without the window, the window's bytes per
// commit kept, the compaction's time for each, and the time to open a read of the window's oldest
// commit and read one note there. Durability `.none`, automatic compaction off (the compaction at
// the end is the measured one). Each run checks the oldest commit of the window and one note as
// it was there (a failed check exits 1).
import BenchNote
import BenchSupport
import Cellar
import Foundation

struct Options: BenchOptions {
    var common = CommonOptions()
    var objects = [1, 10, 100]
    var window = 3_600

    init() { common.n = 10_000 }

    static let usage = "usage: window-bench [--n N] [--runs R] [--objects 1,10,100] [--window 3600] [--format human|tsv] [--dir PARENT]"

    mutating func parseOwn(_ arg: String, _ arguments: inout Arguments) throws -> Bool {
        switch arg {
        case "--objects":
            objects = try arguments.integers(arg, in: 1...Int.max, what: "positive counts")
        case "--window":
            window = try arguments.integer(arg, atLeast: 1, else: "--window must be a positive integer")
        default:
            return false
        }
        return true
    }
}

/// One store's run.
struct Outcome {
    var bytesBefore: UInt64
    var bytesAfter: UInt64
    var compactSeconds: Double
    var pastReadSeconds: Double?
}

func fileBytes(_ path: String) -> UInt64 {
    ((try? FileManager.default.attributesOfItem(atPath: path + "/data.cellar")[.size]) as? NSNumber)?.uint64Value ?? 0
}

/// Fills a store in `path`, runs `2 × window` commits of `objects` notes each, compacts, and
/// (with a window) reads the window's oldest commit.
func measure(path: String, n: Int, objects: Int, window: Int, keeping: PastRetention?, fresh: [Note]) throws -> Outcome {
    var options = StoreOptions(durability: .none, automaticCompaction: nil)
    options.pastRetention = keeping
    let store = try Store(directoryPath: path, model: Note.model, options: options)
    defer { store.close() }
    let box = store.box(for: Note.self)
    var notes = fresh
    let ids = try box.put(notes)
    for i in notes.indices { notes[i].id = ids[i].value }
    var random = SplitMix64(state: UInt64(objects))
    var oldest: (commit: UInt64, id: Id, title: String)?
    for commit in 0..<(2 * window) {
        try store.runInTransaction {
            for _ in 0..<objects {
                let i = Int(random.next() % UInt64(n))
                notes[i].title = "edit \(commit) " + Note.nineDigits(i)
                notes[i].modificationDate = Date(timeIntervalSince1970: Double(Note.baseMs) / 1000 + Double(commit))
                try box.put(notes[i])
            }
        }
        if commit == window {  // the window's oldest commit once the last one is made
            let i = Int(random.next() % UInt64(n))
            oldest = (store.lastCommitId, notes[i].id, notes[i].title)
        }
    }
    let before = fileBytes(path)
    let start = now()
    try store.compact()
    let compactSeconds = now() - start
    let after = fileBytes(path)
    var pastRead: Double?
    if keeping != nil, let oldest {
        let begin = now()
        let title = try store.read(asOf: .commit(oldest.commit)) { try box.get(oldest.id)?.title }
        pastRead = now() - begin
        guard title == oldest.title else {
            throw BenchError("the window's oldest commit \(oldest.commit) reads note \(oldest.id) as \(title ?? "nil"), not \(oldest.title)")
        }
        guard try store.oldestReadableCommit()?.commit == oldest.commit else {
            throw BenchError("the oldest readable commit is \(String(describing: try store.oldestReadableCommit())), not \(oldest.commit)")
        }
    }
    return Outcome(bytesBefore: before, bytesAfter: after, compactSeconds: compactSeconds, pastReadSeconds: pastRead)
}

@main
struct WindowBench {
    static func main() {
        runMain("window-bench") { try run(Options.parseCommandLine()) }
    }

    static func run(_ options: Options) throws {
        let n = options.n, window = options.window
        let parent = try scratchParent(options.directory, tool: "window-bench", reason: "file sizes are measured on disk")
        log("window-bench: N=\(n) notes, \(2 * window) commits of K notes each, window \(window) commits, K in \(options.objects), runs=\(options.runs), under \(parent.path) (\(parent.fs))")
        let fresh = Note.fresh(n)
        var results: [Int: (windowed: [Outcome], plain: [Outcome])] = [:]
        for r in 0..<options.runs {
            for k in options.objects {
                for side in (r % 2 == 0 ? [true, false] : [false, true]) {
                    let folder = try makeTemporaryFolder(in: parent.path, prefix: "window-bench")
                    defer { removeTree(folder) }
                    let outcome = try measure(path: folder + "/store", n: n, objects: k, window: window,
                                              keeping: side ? .commits(window) : nil, fresh: fresh)
                    if side { results[k, default: ([], [])].windowed.append(outcome) } else { results[k, default: ([], [])].plain.append(outcome) }
                    log("run \(r + 1)/\(options.runs) K=\(k) \(side ? "window" : "none  "): \(outcome.bytesBefore >> 10) KiB before, \(outcome.bytesAfter >> 10) KiB after compaction in \(String(format: "%.3f", outcome.compactSeconds)) s"
                        + (outcome.pastReadSeconds.map { String(format: ", oldest commit read in %.3f ms", $0 * 1e3) } ?? ""))
                }
            }
        }
        var rows: [[String]] = []
        for k in options.objects {
            let (w, p) = results[k]!
            let after = median(w.map { Double($0.bytesAfter) }), plain = median(p.map { Double($0.bytesAfter) })
            let perCommit = (after - plain) / Double(window)
            let past = median(w.compactMap(\.pastReadSeconds))
            if options.tsv {
                print(tsvLine("cellar-window", "bytes-after-K\(k)", n, opsPerSecond: after, seconds: 0))
                print(tsvLine("cellar", "bytes-after-K\(k)", n, opsPerSecond: plain, seconds: 0))
                print(tsvLine("cellar-window", "past-read-K\(k)", n, opsPerSecond: 1 / past, seconds: past))
                continue
            }
            rows.append([String(k), "\(Int(plain) >> 10)", "\(Int(after) >> 10)", String(format: "%.1f", after / plain),
                         grouped(Int(perCommit.rounded())),
                         String(format: "%.2f / %.2f", median(p.map(\.compactSeconds)), median(w.map(\.compactSeconds))),
                         String(format: "%.3f", past * 1e3)])
        }
        if options.tsv { return }
        print("window-bench: \(grouped(n)) notes, \(grouped(2 * window)) commits of K notes, a window of \(grouped(window)) commits, \(runsPhrase(options.runs)) (\(parent.fs))")
        printTable(header: ["K", "KiB no window", "KiB window", "×", "bytes/commit kept", "compact s (none / window)", "oldest read ms"], rows: rows)
    }
}

