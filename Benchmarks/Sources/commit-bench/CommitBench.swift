// commit-bench: one-object durable write transactions from 1, 2, 4, 8 and 16 threads at once, the
// commit rate of each, for Cellar (through its public API, `.full` durability: group commit),
// SQLite through GRDB (WAL, synchronous=FULL, one connection whose writes the threads share) and
// LMDB (env flags 0: every commit synced; writers serialized by its lock).
//
//   commit-bench [--n N] [--runs R] [--threads 1,2,4,8,16] [--engines cellar,sqlite,lmdb]
//                [--format human|tsv] [--dir PARENT]
//
// Per run, engine and thread count: a fresh store on disk (not tmpfs), N commits in all (`--n`,
// default 4,000), thread t making commits t, t + T, t + 2T, … (object i is the CRUD workload's
// object i, `Note.fresh`), each one transaction of one object; the clock runs from the moment every
// thread is released to the moment the last one's last commit returned; the engines take turns,
// which one goes first rotating from one thread count and run to the next. Then the store is closed,
// opened again, and every object must be there with its content (a failed check exits 1).
// The tables and tsv lines give the median commits/s over the runs.
import BenchGRDB
import BenchLMDB
import BenchNote
import BenchSupport
import Cellar
import Dispatch
import Foundation
import GRDB

struct Options: BenchOptions {
    var common = CommonOptions()
    var threads = [1, 2, 4, 8, 16]
    var engines = ["cellar", "sqlite", "lmdb"]

    init() { common.n = 4_000 }

    static let usage = "usage: commit-bench [--n N] [--runs R] [--threads 1,2,4,8,16] [--engines cellar,sqlite,lmdb] [--format human|tsv] [--dir PARENT]"

    mutating func parseOwn(_ arg: String, _ arguments: inout Arguments) throws -> Bool {
        switch arg {
        case "--threads":
            threads = try arguments.integers(arg, in: 1...256, what: "counts from 1 to 256")
        case "--engines":
            engines = try arguments.list(arg, of: ["cellar", "sqlite", "lmdb"])
        default:
            return false
        }
        return true
    }
}

/// Runs `commit(i)` for i in 0..<n on `threads` threads of their own (thread t: i ≡ t mod threads),
/// all released at once; returns the seconds from the release to the last commit's return.
/// Throws the first error a thread met.
func timeCommits(n: Int, threads: Int, _ commit: @escaping @Sendable (Int) throws -> Void) throws -> Double {
    let ready = DispatchGroup(), done = DispatchGroup()
    let go = DispatchSemaphore(value: 0)
    let failure = NSLock()
    nonisolated(unsafe) var firstError: (any Error)?
    for t in 0..<threads {
        ready.enter()
        done.enter()
        let thread = Thread {
            defer { done.leave() }
            ready.leave()
            go.wait()
            var i = t
            while i < n {
                do {
                    try commit(i)
                } catch {
                    failure.lock()
                    if firstError == nil { firstError = error }
                    failure.unlock()
                    return
                }
                i += threads
            }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    ready.wait()
    let start = now()
    for _ in 0..<threads { go.signal() }
    done.wait()
    let seconds = now() - start
    if let firstError { throw firstError }
    return seconds
}

/// One engine's side: opens a fresh store in `folder`, makes the commits, checks after a reopen.
protocol CommitEngine {
    static var name: String { get }
    /// The seconds the `n` commits took on `threads` threads, once they all checked out.
    static func run(n: Int, threads: Int, fresh: [Note], folder: String) throws -> Double
}

enum CellarSide: CommitEngine {
    static let name = "cellar"

    static func run(n: Int, threads: Int, fresh: [Note], folder: String) throws -> Double {
        let path = folder + "/cellar"
        let ids = UnsafeMutableBufferPointer<Id>.allocate(capacity: n)
        defer { ids.deallocate() }
        ids.initialize(repeating: 0)
        nonisolated(unsafe) let shared = ids
        let seconds: Double
        do {
            let store = try Store(directoryPath: path, model: Note.model)  // durability .full
            defer { store.close() }
            let box = store.box(for: Note.self)
            seconds = try timeCommits(n: n, threads: threads) { i in
                shared[i] = try box.put(fresh[i]).value
            }
        }
        let store = try Store(directoryPath: path, model: Note.model)
        defer { store.close() }
        let box = store.box(for: Note.self)
        guard try box.count() == n else { throw BenchError("cellar, \(threads) threads: \(try box.count()) objects after reopen, \(n) committed") }
        for i in 0..<n {
            var expected = fresh[i]
            expected.id = ids[i]
            guard try box.get(ids[i]) == expected else { throw BenchError("cellar, \(threads) threads: object \(i + 1) (id \(ids[i])) missing or different after reopen") }
        }
        return seconds
    }
}

enum SQLiteSide: CommitEngine {
    static let name = "sqlite"
    static let insertSQL = "INSERT INTO notes (id, title, text, creationDate, modificationDate, author) VALUES (?, ?, ?, ?, ?, ?)"

    static func run(n: Int, threads: Int, fresh: [Note], folder: String) throws -> Double {
        let path = folder + "/sqlite.db"
        let seconds: Double
        do {
            let queue = try openBenchQueue(path)
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
                try db.execute(sql: """
                    CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, text TEXT NOT NULL,
                                        creationDate INTEGER NOT NULL, modificationDate INTEGER NOT NULL, author INTEGER NOT NULL)
                    """)
            }
            seconds = try timeCommits(n: n, threads: threads) { i in
                let note = fresh[i]
                let ms = Int64((note.creationDate.timeIntervalSince1970 * 1000).rounded())
                try queue.write { db in
                    try db.cachedStatement(sql: insertSQL).execute(arguments: [i + 1, note.title, note.text, ms, ms, Int64(note.author)])
                }
            }
            try queue.close()
        }
        let queue = try openBenchQueue(path)
        try queue.read { db in
            let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM notes") ?? 0
            guard count == n else { throw BenchError("sqlite, \(threads) threads: \(count) rows after reopen, \(n) committed") }
            let rows = try Row.fetchAll(db, sql: "SELECT id, title, text, author FROM notes ORDER BY id")
            for (i, row) in rows.enumerated() {
                let note = fresh[i]
                guard row[0] as Int == i + 1, row[1] as String == note.title, row[2] as String == note.text,
                      row[3] as Int64 == Int64(note.author) else {
                    throw BenchError("sqlite, \(threads) threads: row \(i + 1) different after reopen")
                }
            }
        }
        try queue.close()
        return seconds
    }
}

enum LMDBSide: CommitEngine {
    static let name = "lmdb"

    static func value(_ note: Note) -> [UInt8] { Array(note.title.utf8) + Array(note.text.utf8) }

    static func key(_ i: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(i + 1).bigEndian) { Array($0) } }

    static func run(n: Int, threads: Int, fresh: [Note], folder: String) throws -> Double {
        let path = try makeFolder(folder + "/lmdb")
        var seconds = 0.0
        do {
            let env = try openLMDBEnvironment(directory: path)
            defer { mdb_env_close(env) }
            var txn: OpaquePointer?
            var dbi: MDB_dbi = 0
            try lmdbCheck(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
            try lmdbCheck(mdb_dbi_open(txn, "notes", UInt32(MDB_CREATE), &dbi), "mdb_dbi_open")
            try lmdbCheck(mdb_txn_commit(txn), "mdb_txn_commit")
            nonisolated(unsafe) let shared = env
            seconds = try timeCommits(n: n, threads: threads) { [dbi] i in
                var txn: OpaquePointer?
                try lmdbCheck(mdb_txn_begin(shared, nil, 0, &txn), "mdb_txn_begin")
                var k = key(i), v = value(fresh[i])
                let rc = k.withUnsafeMutableBytes { kb in
                    v.withUnsafeMutableBytes { vb in
                        var mk = MDB_val(mv_size: kb.count, mv_data: kb.baseAddress)
                        var mv = MDB_val(mv_size: vb.count, mv_data: vb.baseAddress)
                        return mdb_put(txn, dbi, &mk, &mv, 0)
                    }
                }
                guard rc == 0 else {
                    mdb_txn_abort(txn)
                    try lmdbCheck(rc, "mdb_put")
                    return
                }
                try lmdbCheck(mdb_txn_commit(txn), "mdb_txn_commit")
            }
        }
        let env = try openLMDBEnvironment(directory: path)
        defer { mdb_env_close(env) }
        var txn: OpaquePointer?
        var dbi: MDB_dbi = 0
        try lmdbCheck(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        defer { mdb_txn_abort(txn) }
        try lmdbCheck(mdb_dbi_open(txn, "notes", 0, &dbi), "mdb_dbi_open")
        var stat = MDB_stat()
        try lmdbCheck(mdb_stat(txn, dbi, &stat), "mdb_stat")
        guard stat.ms_entries == n else { throw BenchError("lmdb, \(threads) threads: \(stat.ms_entries) entries after reopen, \(n) committed") }
        for i in 0..<n {
            var k = key(i)
            let found: [UInt8]? = try k.withUnsafeMutableBytes { kb in
                var mk = MDB_val(mv_size: kb.count, mv_data: kb.baseAddress)
                var mv = MDB_val()
                let rc = mdb_get(txn, dbi, &mk, &mv)
                if rc == MDB_NOTFOUND { return nil }
                try lmdbCheck(rc, "mdb_get")
                return Array(UnsafeRawBufferPointer(start: mv.mv_data, count: mv.mv_size))
            }
            guard found == value(fresh[i]) else { throw BenchError("lmdb, \(threads) threads: entry \(i + 1) missing or different after reopen") }
        }
        return seconds
    }
}

@main
struct CommitBench {
    static func main() {
        runMain("commit-bench") { try run(Options.parseCommandLine()) }
    }

    static func run(_ options: Options) throws {
        let n = options.n
        let parent = try scratchParent(options.directory, tool: "commit-bench", reason: "durable commits need a real disk")
        log("commit-bench: N=\(n) one-object durable commits per engine and thread count, threads \(options.threads.map(String.init).joined(separator: ",")), "
            + "runs=\(options.runs), stores under \(parent.path) (\(parent.fs))")
        let fresh = Note.fresh(n)
        let sides: [any CommitEngine.Type] = [CellarSide.self, SQLiteSide.self, LMDBSide.self].filter { options.engines.contains($0.name) }
        // engine → threads → seconds per run
        var seconds: [String: [Int: [Double]]] = [:]
        for run in 0..<options.runs {
            for (t, threads) in options.threads.enumerated() {
                // Side by side, rotating which engine goes first.
                for k in 0..<sides.count {
                    let side = sides[(k + run + t) % sides.count]
                    let folder = try makeTemporaryFolder(in: parent.path, prefix: "commit-bench")
                    defer { removeTree(folder) }
                    let s = try side.run(n: n, threads: threads, fresh: fresh, folder: folder)
                    seconds[side.name, default: [:]][threads, default: []].append(s)
                    log("run \(run + 1)/\(options.runs) \(side.name), \(threads) threads: \(formatRate(Double(n) / s)) commits/s  (checks passed)")
                }
            }
        }
        func rate(_ name: String, _ threads: Int) -> Double? {
            seconds[name]?[threads].map { Double(n) / median($0) }
        }
        if options.tsv {
            for side in sides {
                for threads in options.threads {
                    let s = median(seconds[side.name]![threads]!)
                    print(tsvLine(side.name, "threads-\(threads)", n, opsPerSecond: Double(n) / s, seconds: s))
                }
            }
            if let one = rate("cellar", options.threads[0]) {
                for threads in options.threads { print(tsvRatioLine("cellar/cellar-\(options.threads[0])", "threads-\(threads)", n, rate("cellar", threads)! / one)) }
            }
            if sides.contains(where: { $0.name == "cellar" }) && sides.contains(where: { $0.name == "sqlite" }) {
                for threads in options.threads { print(tsvRatioLine("cellar/sqlite", "threads-\(threads)", n, rate("cellar", threads)! / rate("sqlite", threads)!)) }
            }
            return
        }
        print("commit-bench: \(grouped(n)) one-object durable commits per engine and thread count, commits/s, \(runsPhrase(options.runs)) (\(parent.fs))")
        var header = ["threads"]
        for side in sides { header.append(side.name) }
        if sides.contains(where: { $0.name == "cellar" }) { header.append("cellar ×\(options.threads[0]) thr") }
        if sides.contains(where: { $0.name == "cellar" }) && sides.contains(where: { $0.name == "sqlite" }) { header.append("cellar/sqlite") }
        var rows: [[String]] = []
        for threads in options.threads {
            var row = [String(threads)]
            for side in sides { row.append(grouped(Int(rate(side.name, threads)!.rounded()))) }
            if let c = rate("cellar", threads) {
                row.append(String(format: "%.2f", c / rate("cellar", options.threads[0])!))
                if let s = rate("sqlite", threads) { row.append(String(format: "%.2f", c / s)) }
            }
            rows.append(row)
        }
        printTable(header: header, rows: rows)
    }
}
