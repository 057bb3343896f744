// bulk-bench: N objects put in ONE write transaction, and the memory that takes.
//
//   swift run -c release --package-path Benchmarks bulk-bench --n 10000000 [--runs 1]
//       [--modes budget,unbounded,migrate] [--budget-mib 64] [--format tsv] [--dir PARENT]
//
// The objects are the CRUD workload's notes (BenchNote, `author` indexed), built once before the
// runs ("prebuilt"). Per run and mode, a fresh store on disk with the default options but the
// mode's transaction memory budget:
//   budget      `StoreOptions.transactionMemoryBudget` = --budget-mib (default 64 MiB, the
//               default): the transaction spills its changes into the file ahead of its commit
//   unbounded   `transactionMemoryBudget = Int.max`: every change held in memory until the commit
//               (what every transaction did before budgets)
// put: `box.put(notes)` in one transaction (ids returned: an array of N ids is part of what it
// holds). update: every object put again with its modificationDate a minute later, one
// transaction (the CRUD workload's step d); its memory measured the same way. For each, the time
// of the commit (the last records written, the sync) is logged apart. Before it, freed heap is handed back to the system (`malloc_trim`), the process's RSS
// is read (VmRSS: the prebuilt objects and the open store) and its high-water mark reset
// (`/proc/self/clear_refs` 5); after the commit, the high-water mark (VmHWM) minus that RSS is
// what the transaction added at its peak.
//   migrate     a migration (`StoreOptions.migration`) over the N objects the budget mode put:
//               the store reopened at schema version 1, the closure visiting every note and
//               setting its modificationDate to its creationDate plus a day (one write
//               transaction with the budget, the author index built again in it); measured from
//               before the open to its end, the same way, and checked (every note's date, the
//               index query). Its figures: objects per second, and the peak of the anonymous
//               memory (RssAnon, sampled every 25 ms) the open added: the migration reads the whole
//               store through mmap, whose file pages count in the RSS but are the kernel's to drop.
// Figures per mode (medians over the runs): objects per second of the put and of the update
// (commit included), the peak RSS each added, the data file's size after the put.
// Checks (a failed one exits 1): the ids are 1...N; `box.count()` is N; the query `author == 42`
// finds the ids ≡ 42 (mod 100), in order; 1,000 objects spread over the ids read back equal.
// Output: a human table, or with --format tsv lines `label mode n value 0` for objects_per_s,
// peak_rss_added_bytes, file_bytes, update_objects_per_s and update_peak_rss_added_bytes.
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
    var modes = ["budget", "unbounded", "migrate"]
    var budgetMiB = 64

    init() {}

    static let usage = "usage: bulk-bench [--n N] [--runs R] [--modes budget,unbounded,migrate] [--budget-mib M] [--format human|tsv] [--dir PARENT]"

    mutating func parseOwn(_ arg: String, _ arguments: inout Arguments) throws -> Bool {
        switch arg {
        case "--modes": modes = try arguments.list(arg, of: ["budget", "unbounded", "migrate"])
        case "--budget-mib": budgetMiB = try arguments.integer(arg, atLeast: 1, else: "--budget-mib must be a positive integer")
        default: return false
        }
        return true
    }
}

#if canImport(Glibc)
/// glibc's `malloc_trim`, which its module map does not export: hands freed heap back to the system.
@_silgen_name("malloc_trim")
func mallocTrim(_ pad: Int) -> Int32
#endif

struct RunResult {
    var put = Measured()
    var update = Measured()
    /// The data file after the put.
    var fileBytes = 0
}

/// What `measured` saw of one transaction.
struct Measured {
    var seconds = 0.0
    /// Of `seconds`, the commit (the last records written, the sync).
    var commitSeconds = 0.0
    /// The RSS high-water mark during it, less the RSS before it.
    var peakAdded = 0
}

/// Runs `body` in one transaction of `store`: freed heap handed back first, the RSS read and its
/// high-water mark reset; returns what `body` returned, the time (and the commit's share) and
/// the peak RSS the transaction added.
func measured<T>(_ store: Store, _ body: () throws -> T) throws -> (T, Measured) {
    #if canImport(Glibc)
    _ = mallocTrim(0)
    #endif
    let baseline = processStatusBytes("VmRSS") ?? 0
    resetPeakRSS()
    let start = now()
    var beforeCommit = 0.0
    let value = try store.runInTransaction {
        let value = try body()
        beforeCommit = now()
        return value
    }
    let end = now()
    return (value, Measured(seconds: end - start, commitSeconds: end - beforeCommit, peakAdded: peakRSS() - baseline))
}

func check(_ what: String, _ ok: Bool) throws {
    if !ok { throw BenchError("check failed: \(what)") }
}

/// The migrate mode: puts the notes (with the budget), closes the store, and measures the open
/// that migrates it.
func migrateOnce(_ notes: [Note], budget: Int, parent: String) throws -> RunResult {
    let n = notes.count
    let folder = try makeTemporaryFolder(in: parent, prefix: "bulk-bench")
    defer { removeTree(folder) }
    var options = StoreOptions(transactionMemoryBudget: budget)
    var result = RunResult()
    do {
        let store = try Store(directoryPath: folder + "/cellar", model: Note.indexedModel, options: options)
        _ = try store.box(for: Note.self).put(notes)
        store.close()
    }
    options.schemaVersion = 1
    options.migration = { migration in
        try migration.enumerateObjects(ofType: "Note") { old, new in
            guard let created = try old["creationDate"].dateValue else { throw BenchError("a note without creationDate") }
            try new?.set("modificationDate", to: .date(created.addingTimeInterval(86_400)))
        }
    }
    #if canImport(Glibc)
    _ = mallocTrim(0)
    #endif
    var opened: Store?
    let start = now()
    let peak = try peakAnonymousAdded {
        opened = try Store(directoryPath: folder + "/cellar", model: Note.indexedModel, options: options)
    }
    result.put = Measured(seconds: now() - start, commitSeconds: 0, peakAdded: peak)
    let store = opened!
    defer { store.close() }
    result.fileBytes = Int(store.fileSize.total)
    let box = store.box(for: Note.self)
    try check("box.count() == \(n)", try box.count() == n)
    let expected = Array(stride(from: Id(42), through: Id(n), by: 100))
    try check("author == 42 finds the ids ≡ 42 (mod 100)", try box.query { Note.author == 42 }.build().findIds().map(\.value) == expected)
    for i in stride(from: 0, to: n, by: max(1, n / 1_000)) {
        var note = notes[i]
        note.id = Id(i + 1)
        note.modificationDate = note.creationDate.addingTimeInterval(86_400)
        try check("object \(i + 1) migrated", try box.get(Id(i + 1)) == note)
    }
    return result
}

func runOnce(_ notes: [Note], mode: String, budget: Int, parent: String) throws -> RunResult {
    if mode == "migrate" { return try migrateOnce(notes, budget: budget, parent: parent) }
    let n = notes.count
    let folder = try makeTemporaryFolder(in: parent, prefix: "bulk-bench")
    defer { removeTree(folder) }
    let options = StoreOptions(transactionMemoryBudget: mode == "budget" ? budget : Int.max)
    var result = RunResult()
    do {
        let store = try Store(directoryPath: folder + "/cellar", model: Note.indexedModel, options: options)
        defer { store.close() }
        let box = store.box(for: Note.self)
        let ids: [EntityId<Note>]
        (ids, result.put) = try measured(store) { try box.put(notes) }
        try check("\(n) ids", ids.count == n)
        for (k, id) in ids.enumerated() where id.value != Id(k + 1) {
            throw BenchError("check failed: object \(k + 1) got id \(id.value)")
        }
        try check("box.count() == \(n)", try box.count() == n)
        let expected = Array(stride(from: Id(42), through: Id(n), by: 100))
        try check("author == 42 finds the ids ≡ 42 (mod 100)", try box.query { Note.author == 42 }.build().findIds().map(\.value) == expected)
        let step = max(1, n / 1_000)
        for i in stride(from: 0, to: n, by: step) {
            var note = notes[i]
            note.id = Id(i + 1)
            try check("object \(i + 1) reads back equal", try box.get(Id(i + 1)) == note)
        }
        result.fileBytes = Int(store.fileSize.total)

        // update: every object again, its modificationDate a minute later, in one transaction
        // (the CRUD workload's step d).
        (_, result.update) = try measured(store) {
            for i in 0..<n {
                var note = notes[i]
                note.id = Id(i + 1)
                note.modificationDate = note.creationDate.addingTimeInterval(60)
                try box.put(note)
            }
        }
        for i in stride(from: 0, to: n, by: step) {
            try check("object \(i + 1) updated", try box.get(Id(i + 1))?.modificationDate == notes[i].creationDate.addingTimeInterval(60))
        }
    }
    return result
}

runMain("bulk-bench") {
    let options = try Options.parseCommandLine()
    let n = options.n
    let parent = try scratchParent(options.directory, tool: "bulk-bench", reason: "the stores must be on a real disk")
    log("bulk-bench: N=\(n), runs=\(options.runs), modes \(options.modes.joined(separator: ",")), budget \(options.budgetMiB) MiB, stores under \(parent.path) (\(parent.fs)); building the objects")
    let notes = Note.fresh(n)
    var results: [String: [RunResult]] = [:]
    for run in 0..<options.runs {
        // The order of the modes alternates from run to run.
        let modes = run % 2 == 0 ? options.modes : options.modes.reversed()
        for mode in modes {
            let r = try runOnce(notes, mode: mode, budget: options.budgetMiB << 20, parent: parent.path)
            results[mode, default: []].append(r)
            if mode == "migrate" {
                log(String(format: "run %d migrate: %.2f s, %.0f objects/s, peak anonymous memory added %.1f MiB, file %.1f MiB", run + 1, r.put.seconds,
                           Double(n) / r.put.seconds, Double(r.put.peakAdded) / 1048576, Double(r.fileBytes) / 1048576))
                continue
            }
            log(String(format: "run %d %@: put %.2f s (commit %.2f s), %.0f objects/s, peak RSS added %.1f MiB, file %.1f MiB; update %.2f s (commit %.2f s), %.0f objects/s, peak RSS added %.1f MiB",
                       run + 1, mode, r.put.seconds, r.put.commitSeconds, Double(n) / r.put.seconds, Double(r.put.peakAdded) / 1048576,
                       Double(r.fileBytes) / 1048576, r.update.seconds, r.update.commitSeconds, Double(n) / r.update.seconds,
                       Double(r.update.peakAdded) / 1048576))
        }
    }
    for mode in options.modes {
        let rs = results[mode]!
        let rate = Double(n) / median(rs.map(\.put.seconds))
        let peak = median(rs.map { Double($0.put.peakAdded) })
        let file = median(rs.map { Double($0.fileBytes) })
        let updateRate = Double(n) / median(rs.map(\.update.seconds))
        let updatePeak = median(rs.map { Double($0.update.peakAdded) })
        if mode == "migrate" {
            if options.tsv {
                print("objects_per_s\t\(mode)\t\(n)\t\(Int(rate))\t0")
                print("peak_anonymous_added_bytes\t\(mode)\t\(n)\t\(Int(peak))\t0")
            } else {
                print(String(format: "%-10@ migration %6.0f objects/s, peak anonymous memory added %8.1f MiB", mode, rate, peak / 1048576))
            }
        } else if options.tsv {
            print("objects_per_s\t\(mode)\t\(n)\t\(Int(rate))\t0")
            print("peak_rss_added_bytes\t\(mode)\t\(n)\t\(Int(peak))\t0")
            print("file_bytes\t\(mode)\t\(n)\t\(Int(file))\t0")
            print("update_objects_per_s\t\(mode)\t\(n)\t\(Int(updateRate))\t0")
            print("update_peak_rss_added_bytes\t\(mode)\t\(n)\t\(Int(updatePeak))\t0")
        } else {
            print(String(format: "%-10@ put %12.0f objects/s, peak RSS added %8.1f MiB, file %8.1f MiB; update %12.0f objects/s, peak RSS added %8.1f MiB",
                         mode, rate, peak / 1048576, file / 1048576, updateRate, updatePeak / 1048576))
        }
    }
}
