import BenchGRDB
import BenchSupport
import Foundation
import GRDB

/// The steps on SQLite through GRDB 7.10.0, with the schema an app would write for orders and
/// their lines: the lines in a table of their own, their optional ship-to address as two nullable
/// columns of the line (one to one, so no table of its own):
///
/// ```sql
/// CREATE TABLE orders(id INTEGER PRIMARY KEY, customer TEXT NOT NULL, created INTEGER NOT NULL);
/// CREATE TABLE order_lines(id INTEGER PRIMARY KEY,
///     order_id INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
///     sku TEXT NOT NULL, quantity INTEGER NOT NULL, price REAL NOT NULL, ship_city TEXT, ship_zip TEXT);
/// CREATE INDEX order_lines_by_order ON order_lines(order_id);
/// CREATE INDEX order_lines_by_sku ON order_lines(sku);
/// ```
///
/// `created` is milliseconds since 1970 (GRDB's default for a `Date` is text, slower to write and
/// read). A line's rowid keeps the lines' order: the order_id index holds (order_id, rowid), so an
/// order's lines come back in the order they were inserted without a sort. GRDB turns foreign key
/// checks on: each line's insert looks its order up, and removing an order removes its lines
/// (the cascade, through the order_id index). One `DatabaseQueue`, WAL, `synchronous=NORMAL`
/// (crud's settings), statements prepared once (`cachedStatement`), values bound as arguments,
/// rows decoded by column index (GRDB's fast path).
enum GRDBEngine {
    static let schema = """
        CREATE TABLE orders(id INTEGER PRIMARY KEY, customer TEXT NOT NULL, created INTEGER NOT NULL);
        CREATE TABLE order_lines(id INTEGER PRIMARY KEY,
            order_id INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
            sku TEXT NOT NULL, quantity INTEGER NOT NULL, price REAL NOT NULL, ship_city TEXT, ship_zip TEXT);
        CREATE INDEX order_lines_by_order ON order_lines(order_id);
        CREATE INDEX order_lines_by_sku ON order_lines(sku);
        """
    static let insertOrderSQL = "INSERT INTO orders (id, customer, created) VALUES (?, ?, ?)"
    static let insertLineSQL = "INSERT INTO order_lines (order_id, sku, quantity, price, ship_city, ship_zip) VALUES (?, ?, ?, ?, ?, ?)"
    static let getOrderSQL = "SELECT id, customer, created FROM orders WHERE id = ?"
    static let getLinesSQL = "SELECT sku, quantity, price, ship_city, ship_zip FROM order_lines WHERE order_id = ? ORDER BY id"
    static let skuSQL = "SELECT DISTINCT order_id FROM order_lines WHERE sku = ?"
    static let skuQuantitySQL = "SELECT DISTINCT order_id FROM order_lines WHERE sku = ? AND quantity >= ?"
    static let deleteLinesSQL = "DELETE FROM order_lines WHERE order_id = ?"
    static let deleteOrderSQL = "DELETE FROM orders WHERE id = ?"

    static func run(_ w: Workload, folder: String) throws -> RunResult {
        let path = folder + "/orders.sqlite"
        var result = RunResult()
        let queue = try openBenchQueue(path)
        defer { try? queue.close() }
        try queue.write { db in try db.execute(sql: schema) }
        let (mode, foreignKeys) = try queue.read { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA foreign_keys"))
        }
        try check("grdb: journal_mode wal", mode == "wal", mode ?? "nil")
        try check("grdb: foreign keys on (the cascade removes the lines)", foreignKeys == 1, "\(foreignKeys ?? -1)")
        try checkPlans(queue)
        try queue.inDatabase { db in
            for sql in [insertOrderSQL, insertLineSQL, getOrderSQL, getLinesSQL, skuSQL, skuQuantitySQL, deleteLinesSQL, deleteOrderSQL] {
                _ = try db.cachedStatement(sql: sql)
            }
        }

        // insert: each order (explicit id i) and its lines, all in one write transaction.
        var start = now()
        try timedInsert(queue, w.orders)
        result.seconds[.insert] = now() - start
        let expected = w.inserted
        let stored = try totals(queue)
        try check("grdb insert: totals", stored == Workload.totals(expected), "\(stored)")
        result.bytes = fileBytes(path) + fileBytes(path + "-wal")

        // get: one read transaction, each order in the random order: its row, then its lines.
        start = now()
        result.answers.got = try timedGets(queue, w.permutation)
        result.seconds[.get] = now() - start
        try check("grdb get: totals", result.answers.got == Workload.totals(expected), "\(result.answers.got)")
        try queue.read { db in
            for order in expected where try get(db, Int64(order.id)) != order {
                throw BenchError("check failed: grdb get: order \(order.id) reads back as \(String(describing: try get(db, Int64(order.id)))), expected \(order)")
            }
        }

        // sku, sku-qty: 100 lookups each, each its own read transaction (as each Cellar query runs in its own).
        var lists = [[Int64]](repeating: [], count: Workload.lookups)
        start = now()
        try timedLookups(queue, skuSQL, w.lookupSkus.map { [$0] }, into: &lists)
        result.seconds[.sku] = now() - start
        result.answers.sku = lists.map { $0.sorted() }
        try check("grdb sku: the orders of each sku", result.answers.sku == w.expectedIds(expected, Workload.hasSku))

        start = now()
        try timedLookups(queue, skuQuantitySQL, w.lookupSkus.map { [$0, Workload.minQuantity] }, into: &lists)
        result.seconds[.skuQuantity] = now() - start
        result.answers.skuQuantity = lists.map { $0.sorted() }
        try check("grdb sku-qty: the orders of each sku with quantity >= \(Workload.minQuantity)",
                  result.answers.skuQuantity == w.expectedIds(expected, Workload.hasSkuAndQuantity))

        // update: the lines of a tenth of the orders deleted and inserted again, one write transaction
        // (the order rows are unchanged).
        start = now()
        try timedUpdate(queue, w.updates)
        result.seconds[.update] = now() - start

        // remove: another tenth: each order's row, its lines by the cascade, one write transaction.
        start = now()
        let removed = try timedRemove(queue, w.removals)
        result.seconds[.remove] = now() - start
        try check("grdb remove: \(w.removals.count) removed", removed == w.removals.count, "\(removed)")

        // After the timers: every stored order is the expected one, the sku index answers as before.
        let all: [Order] = try queue.read { db in
            try Int64.fetchAll(db, sql: "SELECT id FROM orders ORDER BY id").map { try get(db, $0)! }
        }
        try check("grdb final: the stored orders", all == w.final, "\(all.count) orders, expected \(w.final.count)")
        result.answers.final = try totals(queue)
        try check("grdb final: totals", result.answers.final == Workload.totals(w.final), "\(result.answers.final)")
        let orphans = try queue.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM order_lines WHERE order_id NOT IN (SELECT id FROM orders)") ?? -1
        }
        try check("grdb final: no line without its order", orphans == 0, "\(orphans)")
        var finalLists = [[Int64]](repeating: [], count: Workload.lookups)
        try timedLookups(queue, skuSQL, w.lookupSkus.map { [$0] }, into: &finalLists)
        result.answers.finalSku = finalLists.map { $0.sorted() }
        try check("grdb final: the orders of each sku", result.answers.finalSku == w.expectedIds(w.final, Workload.hasSku))
        return result
    }

    /// The plans the steps rely on: the lines of an order by the order_id index without a sort,
    /// the lookups by the sku index.
    static func checkPlans(_ queue: DatabaseQueue) throws {
        try queue.read { db in
            for (sql, arguments, want) in [
                (getLinesSQL, [1] as StatementArguments, "SEARCH order_lines USING INDEX order_lines_by_order (order_id=?)"),
                (skuSQL, ["SKU-0000"], "SEARCH order_lines USING INDEX order_lines_by_sku (sku=?)"),
                (skuQuantitySQL, ["SKU-0000", 3], "SEARCH order_lines USING INDEX order_lines_by_sku (sku=?)"),
            ] {
                let plan = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }
                try check("grdb plan of `\(sql)`", plan.first == want && !plan.contains { $0.contains("TEMP B-TREE") && !$0.contains("DISTINCT") },
                          plan.joined(separator: "; "))
            }
        }
    }

    /// Every stored order and line, summed by SQL.
    static func totals(_ queue: DatabaseQueue) throws -> Totals {
        try queue.read { db in
            let row = try Row.fetchOne(db, sql: """
                SELECT (SELECT COUNT(*) FROM orders), COUNT(*), COALESCE(SUM(quantity), 0),
                       COALESCE(SUM(CAST(ROUND(price * 100) AS INTEGER)), 0), COUNT(ship_city) FROM order_lines
                """)!
            return Totals(orders: row[0], lines: row[1], quantity: row[2], cents: row[3], shipTos: row[4])
        }
    }

    @inline(__always)
    static func insertLines(_ statement: Statement, _ id: Int64, _ lines: [OrderLine]) throws {
        for line in lines {
            try statement.execute(arguments: [id, line.sku, line.quantity, line.price, line.shipTo?.city, line.shipTo?.zip])
        }
    }

    @inline(never)
    static func timedInsert(_ queue: DatabaseQueue, _ orders: [Order]) throws {
        try queue.write { db in
            let insertOrder = try db.cachedStatement(sql: insertOrderSQL)
            let insertLine = try db.cachedStatement(sql: insertLineSQL)
            for (k, order) in orders.enumerated() {
                let id = Int64(k + 1)
                try insertOrder.execute(arguments: [id, order.customer, milliseconds(order.created)])
                try insertLines(insertLine, id, order.lines)
            }
        }
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1_000).rounded()) }

    /// One order: its row and its lines (the two queries GRDB's `including(all:)` would run), nil when absent.
    @inline(__always)
    static func get(_ db: Database, _ id: Int64) throws -> Order? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: getOrderSQL), arguments: [id]) else { return nil }
        let rows = try Row.fetchCursor(db.cachedStatement(sql: getLinesSQL), arguments: [id])
        var lines: [OrderLine] = []
        while let line = try rows.next() {
            let city: String? = line[3]
            lines.append(OrderLine(sku: line[0], quantity: line[1], price: line[2], shipTo: city.map { ShipTo(city: $0, zip: line[4]) }))
        }
        return Order(id: UInt64(row[0] as Int64), customer: row[1],
                     created: Date(timeIntervalSince1970: Double(row[2] as Int64) / 1_000), lines: lines)
    }

    @inline(never)
    static func timedGets(_ queue: DatabaseQueue, _ order: [UInt64]) throws -> Totals {
        try queue.read { db in
            var totals = Totals()
            for id in order {
                if let found = try get(db, Int64(id)) { totals.add(found) }
            }
            return totals
        }
    }

    @inline(never)
    static func timedLookups(_ queue: DatabaseQueue, _ sql: String, _ arguments: [StatementArguments], into lists: inout [[Int64]]) throws {
        for k in lists.indices {
            lists[k] = try queue.read { db in try Int64.fetchAll(db.cachedStatement(sql: sql), arguments: arguments[k]) }
        }
    }

    @inline(never)
    static func timedUpdate(_ queue: DatabaseQueue, _ orders: [Order]) throws {
        try queue.write { db in
            let deleteLines = try db.cachedStatement(sql: deleteLinesSQL)
            let insertLine = try db.cachedStatement(sql: insertLineSQL)
            for order in orders {
                let id = Int64(order.id)
                try deleteLines.execute(arguments: [id])
                try insertLines(insertLine, id, order.lines)
            }
        }
    }

    /// The orders removed (their lines go by the cascade).
    @inline(never)
    static func timedRemove(_ queue: DatabaseQueue, _ ids: [UInt64]) throws -> Int {
        try queue.write { db in
            let deleteOrder = try db.cachedStatement(sql: deleteOrderSQL)
            var removed = 0
            for id in ids {
                try deleteOrder.execute(arguments: [Int64(id)])
                removed += db.changesCount
            }
            return removed
        }
    }
}
