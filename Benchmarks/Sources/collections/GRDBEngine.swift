import BenchGRDB
import BenchSupport
import Foundation
import GRDB

/// The steps on SQLite through GRDB 7.10.0, with the schema an app would write for `Item`: the tag
/// list in a table of its own (so that "items with tag X" can use an index), the number list and the
/// map as JSON text (as GRDB's Codable records store nested collections):
///
/// ```sql
/// CREATE TABLE item(id INTEGER PRIMARY KEY, title TEXT NOT NULL, scores TEXT NOT NULL, attributes TEXT NOT NULL);
/// CREATE TABLE item_tag(item_id INTEGER NOT NULL, tag TEXT NOT NULL, PRIMARY KEY(item_id, tag)) WITHOUT ROWID;
/// CREATE INDEX item_tag_by_tag ON item_tag(tag);
/// ```
///
/// The primary key gives an item's tags (get), the index the items of a tag (tag; it holds
/// (tag, item_id), so the lookup reads the index alone, ids ascending). No foreign key (GRDB
/// turns their checks on): SQLite does less work than with one. One `DatabaseQueue`, WAL,
/// `synchronous=NORMAL` (crud's settings), statements prepared once (`cachedStatement`), values bound
/// as arguments, JSON through one shared `JSONEncoder` / `JSONDecoder` (what GRDB's Codable records
/// use for such columns), rows decoded by column index (GRDB's fast path).
enum GRDBEngine {
    static let insertItemSQL = "INSERT INTO item (id, title, scores, attributes) VALUES (?, ?, ?, ?)"
    static let insertTagSQL = "INSERT INTO item_tag (item_id, tag) VALUES (?, ?)"
    static let getItemSQL = "SELECT id, title, scores, attributes FROM item WHERE id = ?"
    static let getTagsSQL = "SELECT tag FROM item_tag WHERE item_id = ? ORDER BY tag"
    /// "Items with tag X": each (item, tag) pair is stored once, so no DISTINCT is needed.
    static let tagSQL = "SELECT item_id FROM item_tag WHERE tag = ?"
    /// The same as a schema without the tag index runs it: a scan of the table (its primary-key
    /// B-tree, named by `INDEXED BY`). `NOT INDEXED` would not do: on a WITHOUT ROWID table SQLite
    /// 3.40 still searches the tag index, and `+tag` scans that index (a covering scan).
    static let tagScanSQL = "SELECT item_id FROM item_tag INDEXED BY sqlite_autoindex_item_tag_1 WHERE tag = ?"
    static let mapSQL = "SELECT COUNT(*) FROM item WHERE json_extract(attributes, '$.color') = ?"

    static func run(_ w: Workload, folder: String) throws -> RunResult {
        let n = w.n
        let path = folder + "/items.sqlite"
        var result = RunResult()
        let queue = try openBenchQueue(path)
        defer { try? queue.close() }
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE item(id INTEGER PRIMARY KEY, title TEXT NOT NULL, scores TEXT NOT NULL, attributes TEXT NOT NULL);
                CREATE TABLE item_tag(item_id INTEGER NOT NULL, tag TEXT NOT NULL, PRIMARY KEY(item_id, tag)) WITHOUT ROWID;
                CREATE INDEX item_tag_by_tag ON item_tag(tag);
                """)
        }
        let mode = try queue.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }
        try check("grdb: journal_mode wal", mode == "wal", mode ?? "nil")
        try queue.inDatabase { db in
            for sql in [insertItemSQL, insertTagSQL, getItemSQL, getTagsSQL, tagSQL, tagScanSQL, mapSQL] { _ = try db.cachedStatement(sql: sql) }
        }
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()

        // put: INSERT each item (explicit id i) and its 5 tag rows, all in one write transaction.
        var start = now()
        try timedPut(queue, w.items, encoder)
        result.seconds[.put] = now() - start
        let (count, minId, maxId, tagRows) = try queue.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT COUNT(*), MIN(id), MAX(id), (SELECT COUNT(*) FROM item_tag) FROM item")!
            return (row[0] as Int, row[1] as Int64, row[2] as Int64, row[3] as Int)
        }
        try check("grdb put: ids 1...N", count == n && minId == 1 && maxId == Int64(n), "\(count) rows, \(minId)...\(maxId)")
        try check("grdb put: 5 N tag rows", tagRows == Workload.tagsPerItem * n, "\(tagRows)")
        result.logBytes = fileBytes(path) + fileBytes(path + "-wal")

        // get: one read transaction, each item in the random order: its row, its tags, the JSON decoded.
        start = now()
        let found = try timedGets(queue, w.permutation, decoder)
        result.seconds[.get] = now() - start
        try w.checkGet("grdb", found: found)
        try queue.read { db in
            for k in 0..<n {
                let item = try get(db, Int64(k + 1), decoder)
                var expected = w.items[k]
                expected.id = UInt64(k + 1)
                guard item == expected else {
                    throw BenchError("check failed: grdb get: item \(k + 1) reads back as \(item.map { "\($0)" } ?? "nil"), expected \(expected)")
                }
            }
        }

        // tag: 100 lookups, each its own read transaction (as each Cellar query runs in its own).
        var lists = [[Int64]](repeating: [], count: Workload.tagLookups)
        start = now()
        try timedTagLookups(queue, tagSQL, w.lookupTags, into: &lists)
        result.seconds[.tag] = now() - start
        try w.checkIds("grdb tag", lists, lookups: Workload.tagLookups)

        // map: COUNT(*) with json_extract, one read transaction each.
        var counts = [Int](repeating: -1, count: w.lookupColors.count)
        start = now()
        try timedCounts(queue, w.lookupColors, into: &counts)
        result.seconds[.map] = now() - start
        try w.checkMapCounts("grdb map", counts)

        // tag-scan: the tag lookups with the index not used.
        var scanLists = [[Int64]](repeating: [], count: Workload.scanLookups)
        start = now()
        try timedTagLookups(queue, tagScanSQL, Array(w.lookupTags.prefix(Workload.scanLookups)), into: &scanLists)
        result.seconds[.tagScan] = now() - start
        try w.checkIds("grdb tag-scan", scanLists, lookups: Workload.scanLookups)
        let plan = try queue.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + tagScanSQL, arguments: ["tag0000"]).map { $0["detail"] as String }
        }
        try check("grdb tag-scan: the plan scans the table", plan == ["SCAN item_tag"],
                  plan.joined(separator: "; "))
        return result
    }

    @inline(never)
    static func timedPut(_ queue: DatabaseQueue, _ items: [Item], _ encoder: JSONEncoder) throws {
        try queue.write { db in
            let insertItem = try db.cachedStatement(sql: insertItemSQL)
            let insertTag = try db.cachedStatement(sql: insertTagSQL)
            for (k, item) in items.enumerated() {
                let id = Int64(k + 1)
                let scores = String(decoding: try encoder.encode(item.scores), as: UTF8.self)
                let attributes = String(decoding: try encoder.encode(item.attributes), as: UTF8.self)
                try insertItem.execute(arguments: [id, item.title, scores, attributes])
                for tag in item.tags { try insertTag.execute(arguments: [id, tag]) }
            }
        }
    }

    /// One item: its row and its tags (the two queries GRDB's `including(all:)` would run), nil when absent.
    @inline(__always)
    static func get(_ db: Database, _ id: Int64, _ decoder: JSONDecoder) throws -> Item? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: getItemSQL), arguments: [id]) else { return nil }
        let tags = try String.fetchAll(db.cachedStatement(sql: getTagsSQL), arguments: [id])
        let scores: String = row[2]
        let attributes: String = row[3]
        return Item(id: UInt64(row[0] as Int64), title: row[1], tags: tags,
                    scores: try decoder.decode([Int].self, from: Data(scores.utf8)),
                    attributes: try decoder.decode([String: String].self, from: Data(attributes.utf8)))
    }

    @inline(never)
    static func timedGets(_ queue: DatabaseQueue, _ order: [UInt64], _ decoder: JSONDecoder) throws -> Int {
        try queue.read { db in
            var found = 0
            var elements = 0
            for id in order {
                if let item = try get(db, Int64(id), decoder) {
                    found += 1
                    elements &+= item.tags.count + item.scores.count + item.attributes.count
                }
            }
            return elements >= 0 ? found : -1
        }
    }

    @inline(never)
    static func timedTagLookups(_ queue: DatabaseQueue, _ sql: String, _ tags: [String], into lists: inout [[Int64]]) throws {
        for k in lists.indices {
            lists[k] = try queue.read { db in try Int64.fetchAll(db.cachedStatement(sql: sql), arguments: [tags[k]]) }
        }
    }

    @inline(never)
    static func timedCounts(_ queue: DatabaseQueue, _ colors: [String], into counts: inout [Int]) throws {
        for k in counts.indices {
            counts[k] = try queue.read { db in try Int.fetchOne(db.cachedStatement(sql: mapSQL), arguments: [colors[k]]) ?? -1 }
        }
    }
}
