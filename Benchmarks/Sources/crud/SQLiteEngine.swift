import BenchGRDB
import BenchSupport
import Foundation
import GRDB

/// A row of the CRUD workload's `notes` table as a GRDB user writes a record: dates as integer
/// milliseconds, decoded by column index (GRDB's fast path for a fixed `SELECT *`).
struct SQLNote: FetchableRecord, TableRecord {
    static let databaseTableName = "notes"

    var id: Int64
    var title: String
    var text: String
    var creationDate: Int64
    var modificationDate: Int64
    var author: Int64

    init(id: Int64, title: String, text: String, creationDate: Int64, modificationDate: Int64, author: Int64) {
        self.id = id
        self.title = title
        self.text = text
        self.creationDate = creationDate
        self.modificationDate = modificationDate
        self.author = author
    }

    init(row: Row) throws {
        id = row[0]
        title = row[1]
        text = row[2]
        creationDate = row[3]
        modificationDate = row[4]
        author = row[5]
    }
}

/// The steps on SQLite through GRDB 7.10.0: one `DatabaseQueue` (one connection), `journal_mode=WAL`,
/// `synchronous=NORMAL` (FULL during step f), the CRUD workload's table and index, statements prepared
/// once per connection (`cachedStatement`), values bound as statement arguments.
enum SQLiteEngine {
    static let insertSQL = "INSERT INTO notes (id, title, text, creationDate, modificationDate, author) VALUES (?, ?, ?, ?, ?, ?)"
    static let updateSQL = "UPDATE notes SET title = ?, text = ?, creationDate = ?, modificationDate = ?, author = ? WHERE id = ?"
    static let getSQL = "SELECT id, title, text, creationDate, modificationDate, author FROM notes WHERE id = ?"
    static let scanSQL = "SELECT id, title, text, creationDate, modificationDate, author FROM notes ORDER BY id"
    static let countSQL = "SELECT COUNT(*) FROM notes WHERE author = ?"
    static let findSQL = "SELECT id, title, text, creationDate, modificationDate, author FROM notes WHERE author = ?"
    static let idsSQL = "SELECT id FROM notes WHERE author = ?"

    static func run(_ w: Workload, folder: String) throws -> RunResult {
        let n = w.n
        let path = folder + "/notes.sqlite"
        var result = RunResult()
        let queue = try openBenchQueue(path)
        defer { try? queue.close() }
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, text TEXT, creationDate INTEGER,
                                   modificationDate INTEGER, author INTEGER);
                CREATE INDEX notes_author ON notes(author);
                """)
        }
        let mode = try queue.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }
        try check("sqlite: journal_mode wal", mode == "wal", mode ?? "nil")
        // Statements compiled once, outside the timers (the cache keeps them for the connection).
        try queue.inDatabase { db in
            for sql in [insertSQL, updateSQL, getSQL, scanSQL, countSQL, findSQL, idsSQL] { _ = try db.cachedStatement(sql: sql) }
        }
        func sizes() -> Int { fileBytes(path) + fileBytes(path + "-wal") }

        // a: INSERT N rows with explicit ids 1...N in one write transaction.
        var start = now()
        try queue.write { db in
            let insert = try db.cachedStatement(sql: insertSQL)
            for (k, note) in w.notes.enumerated() {
                let i = Int64(k + 1)
                let created = Workload.creationMs(k + 1)
                try insert.execute(arguments: [i, note.title, note.text, created, created, Int64(note.author)])
            }
        }
        result.seconds[.a] = now() - start
        let (count, minId, maxId) = try queue.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT COUNT(*), MIN(id), MAX(id) FROM notes")!
            return (row[0] as Int, row[1] as Int64, row[2] as Int64)
        }
        try check("a: ids 1...N", count == n && minId == 1 && maxId == Int64(n), "\(count) rows, \(minId)...\(maxId)")
        result.sizeAfterA = sizes()

        // b and bget: one read transaction, every row by id in the CRUD workload's random order, title length.
        func titleLengths(_ titleLength: (Statement, Int64) throws -> Int?) throws -> (found: Int, titleBytes: Int) {
            try queue.read { db in
                let get = try db.cachedStatement(sql: getSQL)
                var found = 0
                var titleBytes = 0
                for id in w.permutation {
                    if let count = try titleLength(get, Int64(id)) {
                        found += 1
                        titleBytes += count
                    }
                }
                return (found, titleBytes)
            }
        }
        // b: the title read from the Row (no record built).
        start = now()
        let (visited, visitedTitleBytes) = try titleLengths { get, id in
            try Row.fetchOne(get, arguments: [id]).map { ($0[1] as String).utf8.count }
        }
        result.seconds[.b] = now() - start
        try w.checkGets("sqlite b", found: visited, titleBytes: visitedTitleBytes)

        // bget: each row decoded into a Note record.
        start = now()
        let (found, titleBytes) = try titleLengths { get, id in
            try SQLNote.fetchOne(get, arguments: [id])?.title.utf8.count
        }
        result.seconds[.bget] = now() - start
        try w.checkGets("sqlite bget", found: found, titleBytes: titleBytes)

        // c: scan in id order, Σ creationDate.
        start = now()
        let (scanned, creationSum, ordered) = try queue.read { db in
            let cursor = try SQLNote.fetchCursor(db.cachedStatement(sql: scanSQL))
            var (scanned, sum, ordered) = (0, Int64(0), true)
            while let note = try cursor.next() {
                scanned += 1
                sum &+= note.creationDate
                if note.id != Int64(scanned) { ordered = false }
            }
            return (scanned, sum, ordered)
        }
        result.seconds[.c] = now() - start
        try w.checkScan("sqlite c", scanned: scanned, ordered: ordered, creationSum: creationSum)

        // d: one write transaction, every row rewritten with modificationDate = creationDate + 60 s.
        start = now()
        try queue.write { db in
            let update = try db.cachedStatement(sql: updateSQL)
            for (k, note) in w.notes.enumerated() {
                let created = Workload.creationMs(k + 1)
                try update.execute(arguments: [note.title, note.text, created, created + 60_000, Int64(note.author), Int64(k + 1)])
            }
        }
        result.seconds[.d] = now() - start
        try checkModificationDates("d", queue, w, afterF: false)
        result.sizeAfterD = sizes()

        // e: COUNT(*) WHERE author = 42, 100 times, each in its own read transaction.
        let hits = w.authorIds.count
        var counts = [Int](repeating: -1, count: Workload.queries)
        start = now()
        for k in counts.indices {
            counts[k] = try queue.read { db in try Int.fetchOne(db.cachedStatement(sql: countSQL), arguments: [42]) ?? -1 }
        }
        result.seconds[.e] = now() - start
        for c in counts { try check("e: count == \(hits)", c == hits, "\(c)") }

        // e2: SELECT every column of the hits, read the title through a Row cursor (no record built).
        var visits = [(hits: Int, titleBytes: Int)](repeating: (-1, -1), count: Workload.queries)
        start = now()
        for k in visits.indices {
            visits[k] = try queue.read { db in
                let rows = try Row.fetchCursor(db.cachedStatement(sql: findSQL), arguments: [42])
                var (hits, titleBytes) = (0, 0)
                while let row = try rows.next() {
                    hits += 1
                    titleBytes += (row[1] as String).utf8.count
                }
                return (hits, titleBytes)
            }
        }
        result.seconds[.e2] = now() - start
        for v in visits {
            try check("e2: \(hits) hits", v.hits == hits, "\(v.hits)")
            try check("e2: Σ title length == 20 × hits", v.titleBytes == 20 * hits, "\(v.titleBytes)")
        }

        // e2find: the hits as records (fetchAll), title length.
        var finds = [(hits: Int, titleBytes: Int, wrongAuthor: Int)](repeating: (-1, -1, -1), count: Workload.queries)
        start = now()
        for k in finds.indices {
            finds[k] = try queue.read { db in
                let notes = try SQLNote.fetchAll(db.cachedStatement(sql: findSQL), arguments: [42])
                var (titleBytes, wrongAuthor) = (0, 0)
                for note in notes {
                    titleBytes += note.title.utf8.count
                    if note.author != 42 { wrongAuthor += 1 }
                }
                return (notes.count, titleBytes, wrongAuthor)
            }
        }
        result.seconds[.e2find] = now() - start
        for v in finds {
            try check("e2find: \(hits) hits", v.hits == hits, "\(v.hits)")
            try check("e2find: Σ title length == 20 × hits", v.titleBytes == 20 * hits, "\(v.titleBytes)")
            try check("e2find: every hit has author 42", v.wrongAuthor == 0, "\(v.wrongAuthor) others")
        }

        // e3: the ids of the hits.
        var idLists = [[Int64]](repeating: [], count: Workload.queries)
        start = now()
        for k in idLists.indices {
            idLists[k] = try queue.read { db in try Int64.fetchAll(db.cachedStatement(sql: idsSQL), arguments: [42]) }
        }
        result.seconds[.e3] = now() - start
        for list in idLists {
            try check("e3: ids == 42, 142, 242, …", list == w.authorIds, "\(list.prefix(3))… (\(list.count))")
        }

        // f: synchronous=FULL, 1,000 write transactions each updating one row; then NORMAL again.
        try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
        let commits = Workload.commits(n)
        start = now()
        for k in 0..<commits {
            let note = w.notes[k]
            let created = Workload.creationMs(k + 1)
            try queue.write { db in
                try db.cachedStatement(sql: updateSQL).execute(
                    arguments: [note.title, note.text, created, created + 120_000, Int64(note.author), Int64(k + 1)])
            }
        }
        result.seconds[.f] = now() - start
        try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = NORMAL") }
        try checkModificationDates("f", queue, w, afterF: true)

        // g: DELETE FROM notes (SQLite's truncate optimisation) in one write transaction.
        start = now()
        try queue.write { try $0.execute(sql: "DELETE FROM notes") }
        result.seconds[.g] = now() - start
        let left = try queue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM notes") }
        try check("g: table empty", left == 0, "\(left ?? -1) rows")
        let indexed = try queue.read { try Int.fetchOne($0.cachedStatement(sql: countSQL), arguments: [42]) }
        try check("g: author == 42 finds nothing", indexed == 0, "\(indexed ?? -1) rows")
        return result
    }

    static func checkModificationDates(_ step: String, _ queue: DatabaseQueue, _ w: Workload, afterF: Bool) throws {
        let rows = try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT id, modificationDate FROM notes ORDER BY id").map { ($0[0] as Int64, $0[1] as Int64) }
        }
        try check("\(step): N rows read back", rows.count == w.n, "\(rows.count)")
        for (k, (id, modified)) in rows.enumerated() {
            let expected = w.modificationMs(k + 1, afterF: afterF)
            guard id == Int64(k + 1), modified == expected else {
                throw BenchError("check failed: \(step): row \(id) modificationDate \(modified), expected \(expected) (row \(k + 1))")
            }
        }
    }
}

/// st_size of `path`; 0 if it does not exist.
func fileBytes(_ path: String) -> Int {
    var st = stat()
    return stat(path, &st) == 0 ? Int(st.st_size) : 0
}
