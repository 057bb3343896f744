// query-bench: the CRUD workload's query steps e, e2 and e3 through Cellar's public query API, on
// The CRUD workload's `Note` with `author` indexed (INDEXED|UNSIGNED, index id 1), beside ObjectBox's
// anchors from the same machine.
//
//   swift run -c release --package-path Benchmarks query-bench --n 100000 [--runs 3] [--format tsv] [--dir PATH] [--reps 100]
//
// Per run, a fresh store (default options: durability .full) in a new temporary folder on disk
// (never tmpfs), then in one process:
//   a   put N new objects in one write txn (`box.put(&objects)`; setup for the queries, timed
//       because the author index now costs on put)
//   e   `query.count()`, 100 times, each in its own implicit read txn
//   e2  `query.find()` and Σ title.utf8.count over the hits, 100 times (every hit built)
//   e2v `query.visit { $0.utf8Count(Note.title) }`: the same without building the objects, as
//       ObjectBox's `obx_query_visit` reads the stored bytes
//   e3  `query.findIds()`, 100 times
//   f   `find()` of every object (a query without conditions), 3 times: N full `Note`s each
//   fp  `find(as: NoteTitleRow.self)` of every object, 3 times: a two-field projection (title,
//       author; NoteTitleRow.swift) instead of the whole objects
// The query (`box.query { Note.author == 42 }.build()`) is built once, before the timers.
// Checks (after the timers; a failed one exits 1): put assigned ids 1...N; every count is the
// number of i in 1...N with i ≡ 42 (mod 100) (N/100 for N a multiple of 100); every e2 repetition
// found that many objects, all with author 42, and Σ title lengths = 20 × that; every e3 result
// has that many ids and their sum, and the last one is exactly 42, 142, 242, …
// Output: a human table with ops/s (queries/s for e, e2, e3; e2 also hits/s) and the ratio to
// ObjectBox's anchor at N = 100,000 and 1,000,000 (docs/crud-workload.md; e2 has none, so it is compared to
// e's, ObjectBox's count costing as much as visiting); with --format tsv, lines
// `cellar step n ops_per_s seconds` (medians over the runs), then `objectbox_ratio step n ratio 0`
// at the anchored N.
import BenchNote
import BenchSupport
import Cellar
import Foundation

enum Step: String, CaseIterable {
    case a, e, e2, e2v, e3, f, fp

    var title: String {
        switch self {
        case .a: "put N new, one txn (index maintained)"
        case .e: "count author==42 (queries/s)"
        case .e2: "find hits, title length (queries/s)"
        case .e2v: "visit hits, title length (queries/s)"
        case .e3: "ids of author==42 (queries/s)"
        case .f: "find every object, full Notes (queries/s)"
        case .fp: "find every object as (title, author) (queries/s)"
        }
    }

    /// ObjectBox C 5.3.2's figure on this machine at `n` (docs/crud-workload.md), if there is one; e2 has
    /// none: e's (ObjectBox's count visits the hits).
    func anchor(_ n: Int) -> Double? {
        switch (self, n) {
        case (.a, 100_000): 641_867
        case (.a, 1_000_000): 580_281
        case (.e, 100_000), (.e2, 100_000), (.e2v, 100_000): 3_075
        case (.e, 1_000_000), (.e2, 1_000_000), (.e2v, 1_000_000): 87.8
        case (.e3, 100_000): 43_816
        case (.e3, 1_000_000): 4_219
        default: nil
        }
    }

    /// The target, as a multiple of ObjectBox's anchor.
    var target: Double {
        switch self {
        case .a: 1.5
        case .e: 10
        case .e2, .e2v: 1
        case .e3: 1.5
        case .f, .fp: 0
        }
    }
}

struct Options: BenchOptions {
    var common = CommonOptions()
    /// Repetitions of each query step (docs/crud-workload.md: 100).
    var reps = 100

    static let usage = "usage: query-bench [--n N] [--runs R] [--format human|tsv] [--dir PARENT] [--reps QUERIES]"

    mutating func parseOwn(_ arg: String, _ arguments: inout Arguments) throws -> Bool {
        switch arg {
        case "--reps": reps = try arguments.integer(arg, atLeast: 1, else: "--reps must be a positive integer")
        default: return false
        }
        return true
    }
}

@main
struct QueryBench {
    static func main() {
        runMain("query-bench") { try run(Options.parseCommandLine()) }
    }

    static func run(_ options: Options) throws {
        let n = options.n
        let reps = options.reps
        let parent = try scratchParent(options.directory, tool: "query-bench", reason: "the stores must be on a real disk")
        log("query-bench: N=\(n), runs=\(options.runs), \(reps) queries per step, stores under \(parent.path) (\(parent.fs)); building the objects")
        let fresh = Note.fresh(n)
        // i ≡ 42 (mod 100): author ((i − 1) % 100) + 1 == 42.
        let expectedIds: [Id] = Array(stride(from: Id(42), through: Id(n), by: 100))
        let expectedIdSum = expectedIds.reduce(0, &+)

        var seconds: [Step: [Double]] = [:]
        for run in 0..<options.runs {
            let folder = try makeTemporaryFolder(in: parent.path, prefix: "query-bench")
            defer { removeTree(folder) }
            let store = try Store(directoryPath: folder + "/cellar", model: Note.indexedModel)
            defer { store.close() }
            let box = store.box(for: Note.self)
            var times: [Step: Double] = [:]

            // a: setup, timed.
            var objects = fresh
            objects.withUnsafeMutableBufferPointer { _ in }  // the copy the put writes ids into, made before the timer
            var start = now()
            let ids = try timedPut(box, &objects)
            times[.a] = now() - start
            for (k, id) in ids.enumerated() where id.value != Id(k + 1) {
                throw BenchError("a: object \(k + 1) got id \(id), expected \(k + 1)")
            }
            try check("a", ids.count, n)
            objects = []

            let query = try box.query { Note.author == 42 }.build()

            // e: count.
            var counts = [Int](repeating: -1, count: reps)
            start = now()
            try timedCount(query, reps, into: &counts)
            times[.e] = now() - start
            for count in counts { try check("e (count)", count, expectedIds.count) }

            // e2: find the hits, read their title length; e2v: the same through their records.
            var visits = [(hits: Int, titleBytes: Int, wrongAuthor: Int)](repeating: (-1, -1, -1), count: reps)
            for step in [Step.e2, .e2v] {
                start = now()
                if step == .e2 { try timedVisit(query, reps, into: &visits) } else { try timedRecordVisit(query, reps, into: &visits) }
                times[step] = now() - start
                for visit in visits {
                    try check("\(step) (hits)", visit.hits, expectedIds.count)
                    try check("\(step) (Σ title length)", visit.titleBytes, 20 * expectedIds.count)
                    try check("\(step) (hits with another author)", visit.wrongAuthor, 0)
                }
            }

            // e3: ids.
            var sums = [(count: Int, sum: Id)](repeating: (-1, 0), count: reps)
            var last: [EntityId<Note>] = []
            start = now()
            try timedIds(query, reps, into: &sums, last: &last)
            times[.e3] = now() - start
            for s in sums {
                try check("e3 (ids)", s.count, expectedIds.count)
                guard s.sum == expectedIdSum else { throw BenchError("e3: Σ ids \(s.sum), expected \(expectedIdSum)") }
            }
            guard last.map(\.value) == expectedIds else {
                throw BenchError("e3: ids \(last.prefix(5).map(\.value))… (\(last.count)), expected \(expectedIds.prefix(5))… (\(expectedIds.count))")
            }

            // f and fp: every object, as Notes and as a two-field projection.
            let everything = try box.query().build()
            var scans = [(count: Int, titleBytes: Int, authorSum: UInt64)](repeating: (-1, -1, 0), count: scanReps)
            start = now()
            try timedFindAll(everything, into: &scans)
            times[.f] = now() - start
            var projected = scans
            start = now()
            try timedFindAllProjected(everything, into: &projected)
            times[.fp] = now() - start
            let authorSum = (1...n).reduce(UInt64(0)) { $0 + UInt64(($1 - 1) % 100 + 1) }
            for scan in scans + projected {
                try check("f/fp (objects)", scan.count, n)
                try check("f/fp (Σ title length)", scan.titleBytes, 20 * n)
                guard scan.authorSum == authorSum else { throw BenchError("f/fp: Σ author \(scan.authorSum), expected \(authorSum)") }
            }

            for step in Step.allCases { seconds[step, default: []].append(times[step]!) }
            logRun(run, of: options.runs, "cellar", rates: Step.allCases.map { ($0.rawValue, Double(ops($0, n, reps)) / times[$0]!) })
        }

        func rate(_ step: Step) -> Double { Double(ops(step, n, reps)) / median(seconds[step]!) }

        if options.tsv {
            for step in Step.allCases {
                print(tsvLine("cellar", step.rawValue, n, opsPerSecond: rate(step), seconds: median(seconds[step]!)))
            }
            for step in Step.allCases {
                if let anchor = step.anchor(n) { print(tsvRatioLine("objectbox_ratio", step.rawValue, n, rate(step) / anchor)) }
            }
            return
        }

        print("")
        print("Cellar queries: Note.author == 42 (indexed), N = \(grouped(n)) (\(grouped(expectedIds.count)) hits), "
              + "\(reps) queries per step, " + runsPhrase(options.runs))
        print("")
        let header = ["step", "ops", "cellar ops/s", "hits/s", "ObjectBox", "ratio", "target", ""]
        var rows: [[String]] = []
        for step in Step.allCases {
            let r = rate(step)
            let hits = step == .a ? "" : formatRate(r * Double([.f, .fp].contains(step) ? n : expectedIds.count))
            var cells = [step.rawValue + "  " + step.title, grouped(ops(step, n, reps)), formatOps(r), hits]
            if let anchor = step.anchor(n) {
                let ratio = r / anchor
                cells += [formatOps(anchor), String(format: "%.2f×", ratio), String(format: "≥ %g×", step.target),
                          ratio >= step.target ? "met" : "NOT MET"]
            } else if step == .f || step == .fp {
                cells += ["–", "–", "–", ""]
            } else {
                cells += ["–", "–", String(format: "≥ %g×", step.target), ""]
            }
            rows.append(cells)
        }
        printTable(header: header, rows: rows)
        print("")
        print(String(format: "fp / f: the projection finds every object %.2f× as fast as full Notes (f and fp hits/s are objects/s).",
                     median(seconds[.f]!) / median(seconds[.fp]!)))
        print("")
        print("ObjectBox: the CRUD workload's anchors (C API 5.3.2, this machine; only at N = 100,000 and 1,000,000).")
        print("e2 has no anchor: it is compared to e's, since ObjectBox's count costs as much as visiting the hits.")
        print("a is the setup (durability .full, the author index maintained); its anchor is ObjectBox's step a.")
        print("Differences under ~20% between invocations are noise on this machine.")
    }

    /// Operations a step counts: N objects for a, the queries for the others.
    static func ops(_ step: Step, _ n: Int, _ reps: Int) -> Int {
        switch step {
        case .a: n
        case .f, .fp: scanReps
        default: reps
        }
    }

    /// Repetitions of f and fp, each of which reads every object.
    static let scanReps = 3

    static func formatOps(_ r: Double) -> String { r < 1_000 ? String(format: "%.1f", r) : formatRate(r) }

    static func check(_ what: String, _ got: Int, _ expected: Int) throws {
        guard got == expected else { throw BenchError("\(what): \(got), expected \(expected)") }
    }

    // The timed work of each step, one function each (never inlined), so that a profiler can
    // collect exactly it: `callgrind --toggle-collect='*timedVisit*'`.

    @inline(never)
    static func timedPut(_ box: Box<Note>, _ objects: inout [Note]) throws -> [EntityId<Note>] {
        try box.put(&objects)
    }

    @inline(never)
    static func timedCount(_ query: Query<Note>, _ reps: Int, into counts: inout [Int]) throws {
        for k in 0..<reps { counts[k] = try query.count() }
    }

    @inline(never)
    static func timedVisit(_ query: Query<Note>, _ reps: Int,
                           into visits: inout [(hits: Int, titleBytes: Int, wrongAuthor: Int)]) throws {
        for k in 0..<reps {
            let notes = try query.find()
            var titleBytes = 0
            var wrongAuthor = 0
            for note in notes {
                titleBytes += note.title.utf8.count
                if note.author != 42 { wrongAuthor += 1 }
            }
            visits[k] = (notes.count, titleBytes, wrongAuthor)
        }
    }

    @inline(never)
    static func timedRecordVisit(_ query: Query<Note>, _ reps: Int,
                                 into visits: inout [(hits: Int, titleBytes: Int, wrongAuthor: Int)]) throws {
        for k in 0..<reps {
            var (hits, titleBytes, wrongAuthor) = (0, 0, 0)
            try query.visit { note in
                hits += 1
                titleBytes += try note.utf8Count(Note.title) ?? 0
                if try note.integer(Note.author) != 42 { wrongAuthor += 1 }
                return true
            }
            visits[k] = (hits, titleBytes, wrongAuthor)
        }
    }

    @inline(never)
    static func timedFindAll(_ query: Query<Note>, into scans: inout [(count: Int, titleBytes: Int, authorSum: UInt64)]) throws {
        for k in scans.indices {
            let notes = try query.find()
            var (titleBytes, authorSum) = (0, UInt64(0))
            for note in notes {
                titleBytes += note.title.utf8.count
                authorSum += note.author
            }
            scans[k] = (notes.count, titleBytes, authorSum)
        }
    }

    @inline(never)
    static func timedFindAllProjected(_ query: Query<Note>, into scans: inout [(count: Int, titleBytes: Int, authorSum: UInt64)]) throws {
        for k in scans.indices {
            let rows = try query.find(as: NoteTitleRow.self)
            var (titleBytes, authorSum) = (0, UInt64(0))
            for row in rows {
                titleBytes += row.title.utf8.count
                authorSum += row.author
            }
            scans[k] = (rows.count, titleBytes, authorSum)
        }
    }

    @inline(never)
    static func timedIds(_ query: Query<Note>, _ reps: Int, into sums: inout [(count: Int, sum: Id)],
                         last: inout [EntityId<Note>]) throws {
        for k in 0..<reps {
            let ids = try query.findIds()
            var sum: Id = 0
            for id in ids { sum &+= id.value }
            sums[k] = (ids.count, sum)
            if k == reps - 1 { last = ids }
        }
    }
}
