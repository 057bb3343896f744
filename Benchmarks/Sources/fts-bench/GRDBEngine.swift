import BenchGRDB
import BenchSupport
import Foundation
import GRDB

/// The steps on SQLite's FTS5 through GRDB 7.10.0, in plain SQL (GRDB's Swift FTS5 API need not
/// be compiled in):
///
/// ```sql
/// CREATE VIRTUAL TABLE docs USING fts5(text, tokenize='unicode61 remove_diacritics 2');
/// ```
///
/// A regular FTS5 table (it keeps the texts in its `docs_content` table, as Cellar keeps them in
/// its records), rowid = Cellar's id, no prefix index (FTS5's default). One `DatabaseQueue`, WAL,
/// `synchronous=NORMAL` (crud's settings), statements prepared once (`cachedStatement`), query
/// strings bound as arguments, each query its own read transaction. And the settings a user after
/// speed gives the connection right after opening it, checked to have taken:
///
/// ```sql
/// PRAGMA mmap_size = 268435456;  -- reads through a memory map of up to 256 MiB
/// PRAGMA cache_size = -262144;   -- a page cache of 256 MiB (SQLite's default: 2 MiB)
/// ```
enum GRDBEngine {
    static let schema = "CREATE VIRTUAL TABLE docs USING fts5(text, tokenize='unicode61 remove_diacritics 2')"
    static let insertSQL = "INSERT INTO docs(rowid, text) VALUES (?, ?)"
    static let matchSQL = "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rowid"
    static let rankedSQL = "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT 10"
    /// The ranked step's check reads this many best rowids of each query with their scores, untimed.
    static let scoredLimit = 1_000
    static let scoredSQL = "SELECT rowid, bm25(docs) FROM docs WHERE docs MATCH ? ORDER BY bm25(docs), rowid LIMIT \(scoredLimit)"

    static let mmapBytes = 268_435_456
    static let cacheKiB = 262_144

    /// The connection as crud's (`openBenchQueue`), with `mmapBytes` of memory map and a page
    /// cache of `cacheKiB`.
    static func openQueue(_ path: String) throws -> DatabaseQueue {
        let queue = try openBenchQueue(path)
        try queue.inDatabase { db in
            try db.execute(sql: "PRAGMA mmap_size = \(mmapBytes)")
            try db.execute(sql: "PRAGMA cache_size = -\(cacheKiB)")
            let mmap = try Int.fetchOne(db, sql: "PRAGMA mmap_size")
            try check("grdb: mmap_size \(mmapBytes)", mmap == mmapBytes, "\(mmap ?? -1)")
            let cache = try Int.fetchOne(db, sql: "PRAGMA cache_size")
            try check("grdb: cache_size -\(cacheKiB)", cache == -cacheKiB, "\(cache ?? 0)")
        }
        return queue
    }

    static func run(_ w: Workload, folder: String) throws -> RunResult {
        let path = folder + "/docs.sqlite"
        var result = RunResult()
        let queue = try openQueue(path)
        defer { try? queue.close() }
        try queue.write { db in try db.execute(sql: schema) }
        let mode = try queue.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        try check("grdb: journal_mode wal", mode == "wal", mode ?? "nil")
        try queue.inDatabase { db in
            for sql in [insertSQL, matchSQL, rankedSQL] { _ = try db.cachedStatement(sql: sql) }
        }

        // index: document i as rowid i, all in one write transaction.
        var start = now()
        try timedInsert(queue, w.texts)
        result.seconds[.index] = now() - start
        let count = try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM docs") }
        try check("grdb index: COUNT(*) == N", count == w.n, "\(count ?? -1)")

        for step in Step.queries {
            let queries = w.queries(step)
            var lists = [[Int64]](repeating: [], count: queries.count)
            var each = [Double](repeating: 0, count: queries.count)
            start = now()
            try timedQueries(queue, matchSQL, queries, into: &lists, seconds: &each)
            result.seconds[step] = now() - start
            result.perQuery[step] = each
            result.answers[step] = lists
        }

        if !w.ranked.isEmpty {
            var lists = [[Int64]](repeating: [], count: w.ranked.count)
            var each = [Double](repeating: 0, count: w.ranked.count)
            start = now()
            try timedQueries(queue, rankedSQL, w.ranked, into: &lists, seconds: &each)
            result.seconds[.ranked] = now() - start
            result.perQuery[.ranked] = each
            result.top10 = lists
            result.scored = try queue.read { db in
                try w.ranked.map { q in
                    try Row.fetchAll(db.cachedStatement(sql: scoredSQL), arguments: [q.fts5]).map { (id: $0[0] as Int64, score: $0[1] as Double) }
                }
            }
        }

        // The index's size: this database after VACUUM, against a database holding the same texts
        // in a plain table `plain(id INTEGER PRIMARY KEY, text TEXT)` after VACUUM; each as
        // page_count × page_size (the database as its readers see it, whatever is still in the WAL).
        result.indexedBytes = try vacuumedBytes(queue)
        if let tables = try? queue.read({ db in
            try Row.fetchAll(db, sql: "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC")
                .map { "\($0[0] as String) \(grouped($0[1] as Int))" }
        }) {
            result.sizeNote = "sqlite after VACUUM by table (dbstat): " + tables.joined(separator: ", ")
        }
        try queue.close()
        let plain = try openQueue(folder + "/plain.sqlite")
        defer { try? plain.close() }
        try plain.write { db in
            try db.execute(sql: "CREATE TABLE plain(id INTEGER PRIMARY KEY, text TEXT)")
            let insert = try db.makeStatement(sql: "INSERT INTO plain(id, text) VALUES (?, ?)")
            for (k, text) in w.texts.enumerated() { try insert.execute(arguments: [Int64(k + 1), text]) }
        }
        result.plainBytes = try vacuumedBytes(plain)
        return result
    }

    /// VACUUM, then the database's pages in bytes.
    static func vacuumedBytes(_ queue: DatabaseQueue) throws -> Int {
        try queue.inDatabase { db in
            try db.execute(sql: "VACUUM")
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            let size = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0
            return pages * size
        }
    }

    @inline(never)
    static func timedInsert(_ queue: DatabaseQueue, _ texts: [String]) throws {
        try queue.write { db in
            let insert = try db.cachedStatement(sql: insertSQL)
            for (k, text) in texts.enumerated() {
                try insert.execute(arguments: [Int64(k + 1), text])
            }
        }
    }

    @inline(never)
    static func timedQueries(_ queue: DatabaseQueue, _ sql: String, _ queries: [SearchQuery], into lists: inout [[Int64]],
                             seconds: inout [Double]) throws {
        for k in lists.indices {
            let start = now()
            lists[k] = try queue.read { db in try Int64.fetchAll(db.cachedStatement(sql: sql), arguments: [queries[k].fts5]) }
            seconds[k] = now() - start
        }
    }
}
