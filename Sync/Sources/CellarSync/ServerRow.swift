@_spi(Sync) import Cellar
import Foundation
import Logging
import PostgresNIO

/// One object's row on the server, as the sync engine reads and writes it: its removal clock,
/// and the clock and text of each column this model knows, in the order of the table's `uids`.
struct ServerRow {
    var id: UUID
    var removed: String?
    /// Each column's clock (nil: never written).
    var clocks: [String?]
    /// The newest clock in the row's `cellar_clocks` when it was read, of all its columns
    /// (also those this model does not have, whose clocks a write leaves as they are).
    var newestRead: String?
    /// Each column's text (nil: NULL).
    var values: [String?]

    /// A row not on the server yet: no clock, every column NULL.
    init(id: UUID, in table: ServerSchema.Table) {
        self.id = id
        clocks = Array(repeating: nil, count: table.uids.count)
        values = clocks
    }

    init(id: UUID, removed: String?, clocks: [String?], newestRead: String?, values: [String?]) {
        self.id = id
        self.removed = removed
        self.clocks = clocks
        self.newestRead = newestRead
        self.values = values
    }

    /// The newest clock of the row's values.
    var newestClock: String? { (clocks + [newestRead]).compactMap { $0 }.max() }

    /// The rows of `ids` in `table`, `locking` them for the transaction. (In no order: a push,
    /// the only writer that locks them, holds the schema's advisory lock, so pushes never wait
    /// for each other's rows, and sorting the rows would only cost.)
    ///
    /// The ids go as a binary `uuid[]` tested with `= ANY`: the server looks them up in the
    /// primary key's index (or, for a list as large as the table, hashes the list once), where a
    /// join with `unnest` of the list hashed the whole table for every push (10,000 ids against
    /// a table of 100,000 rows: 50 ms, against 10 ms).
    static func read(_ ids: [UUID], of table: ServerSchema.Table, locking: Bool, on connection: PostgresConnection,
                     logger: Logger) async throws -> [UUID: ServerRow] {
        guard !ids.isEmpty else { return [:] }
        let sql = select(table) + " WHERE cellar_row.cellar_id = ANY($1::uuid[])" + (locking ? " FOR UPDATE OF cellar_row" : "")
        var rows: [UUID: ServerRow] = [:]
        for row in try await parse(connection.rows(sql, binds: SQL.binds(one: UUIDArray(ids)), logger: logger), of: table) { rows[row.id] = row }
        return rows
    }

    /// The rows of `table` named by the changes numbered after `first` up to `last`
    /// (in `changes`, the qualified `cellar_changes`), each once; with `device`, only those
    /// changed by other devices.
    /// With `filter` (an SQL condition on `cellar_row`: the device's subscriptions), only the
    /// removed rows and those that meet it. The rows as `pullSelect(_:)` reads them (for
    /// `Pull.changes(of:)`).
    ///
    /// The changes' ids are gathered into an array first (`= ANY(ARRAY(…))`), so that the rows
    /// are looked up in the primary key's index; `IN (SELECT …)` let the planner hash the ids and
    /// scan the whole table for every batch (10,000 changes: 24 against 16 ms on a table of
    /// 100,000 rows, 106 against 30 ms on one of 1,000,000).
    static func read(changedBetween first: UInt64, and last: UInt64, in table: ServerSchema.Table, changes: String,
                     notBy device: UUID?, filter: String?, on connection: PostgresConnection, logger: Logger) async throws -> CellBuffer {
        let sql = pullSelect(table) + " WHERE " + changedIds(in: changes, notByDevice: "$4::uuid")
            + (filter.map { " AND (cellar_row.cellar_removed IS NOT NULL OR \($0))" } ?? "")
        let texts = [String(first), String(last), String(table.entity.uid), device.map(UUIDText.text)]
        return try await connection.cells(sql, texts, columns: pullColumns(table), logger: logger)
    }

    /// The ids of the rows of `table` named by the changes numbered after `first` up to `last`
    /// (by any device) that are not removed and do not meet `filter`: objects a device that
    /// holds them must let go. (The ids gathered first, as `read(changedBetween:…)` does.)
    static func notMeeting(_ filter: String, changedBetween first: UInt64, and last: UInt64, in table: ServerSchema.Table,
                           changes: String, on connection: PostgresConnection, logger: Logger) async throws -> [UUID] {
        let sql = "SELECT cellar_row.cellar_id::text FROM \(table.qualified) AS cellar_row WHERE "
            + changedIds(in: changes, notByDevice: nil) + " AND cellar_row.cellar_removed IS NULL AND NOT \(filter)"
        return try await ids(connection.rows(sql, [String(first), String(last), String(table.entity.uid)], logger: logger), of: table)
    }

    /// The condition that `cellar_row` is named by a change numbered after `$1` up to `$2` of
    /// the table whose UID is `$3` (in `changes`, the qualified `cellar_changes`); with
    /// `notByDevice` (a parameter), one not made by that device.
    private static func changedIds(in changes: String, notByDevice device: String?) -> String {
        "cellar_row.cellar_id = ANY(ARRAY(SELECT cellar_id FROM \(changes) WHERE seq > $1::bigint AND seq <= $2::bigint AND table_uid = $3::numeric"
            + (device.map { " AND device IS DISTINCT FROM \($0)" } ?? "") + "))"
    }

    /// Which of `ids` name rows of `table` that are not removed and do not meet `filter`.
    static func notMeeting(_ filter: String, among ids: [UUID], in table: ServerSchema.Table, on connection: PostgresConnection,
                           logger: Logger) async throws -> [UUID] {
        guard !ids.isEmpty else { return [] }
        let sql = """
            SELECT cellar_row.cellar_id::text FROM \(table.qualified) AS cellar_row
            WHERE cellar_row.cellar_id = ANY($1::uuid[]) AND cellar_row.cellar_removed IS NULL AND NOT \(filter)
            """
        return try await Self.ids(connection.rows(sql, binds: SQL.binds(one: UUIDArray(ids)), logger: logger), of: table)
    }

    private static func ids(_ cells: [[String?]], of table: ServerSchema.Table) throws -> [UUID] {
        try cells.map {
            guard let text = $0[0], let id = UUIDText.uuid(text) else { throw SyncError(.schema, "a row of \(table.qualified) has no cellar_id") }
            return id
        }
    }

    /// Up to `limit` rows of `table` in the order of their ids, after `last` (nil: from the
    /// first); with `filter`, only those that meet it, and the removed rows when `removals`.
    /// The rows as `pullSelect(_:)` reads them (for `Pull.changes(of:in:)`).
    static func read(after last: UUID?, limit: Int, in table: ServerSchema.Table, filter: String?, removals: Bool = true,
                     on connection: PostgresConnection, logger: Logger) async throws -> CellBuffer {
        let sql = pullSelect(table) + " WHERE ($1::uuid IS NULL OR cellar_row.cellar_id > $1::uuid)"
            + (filter.map { removals ? " AND (cellar_row.cellar_removed IS NOT NULL OR \($0))" : " AND cellar_row.cellar_removed IS NULL AND \($0)" } ?? "")
            + " ORDER BY cellar_row.cellar_id LIMIT $2::integer"
        return try await connection.cells(sql, [last.map(UUIDText.text), String(limit)], columns: pullColumns(table), logger: logger)
    }

    /// `SELECT` of a row's columns as text, `FROM` the table: `cellar_id`, `cellar_removed`, the
    /// newest of its clocks (`COLLATE "C"`: byte by byte, as clocks sort), each column's clock,
    /// each column's value.
    private static func select(_ table: ServerSchema.Table) -> String {
        "SELECT cellar_row.cellar_id::text, cellar_row.cellar_removed, (SELECT max(c COLLATE \"C\") FROM unnest(cellar_row.cellar_clocks) AS c)"
            + clockReads(table) + valueReads(table) + " FROM \(table.qualified) AS cellar_row"
    }

    /// `SELECT` of what a pull needs of a row, as text, `FROM` the table: `cellar_id`,
    /// `cellar_removed`, each column's clock (its slot's element of `cellar_clocks`: NULL for
    /// none), each column's value.
    private static func pullSelect(_ table: ServerSchema.Table) -> String {
        "SELECT cellar_row.cellar_id::text, cellar_row.cellar_removed" + clockReads(table) + valueReads(table)
            + " FROM \(table.qualified) AS cellar_row"
    }

    /// `, cellar_row.cellar_clocks[<slot>]` for each value column of `table`.
    private static func clockReads(_ table: ServerSchema.Table) -> String {
        table.uids.indices.map { ", " + table.clock(at: $0) }.joined()
    }

    /// The cells a row of `pullSelect(table)` has.
    private static func pullColumns(_ table: ServerSchema.Table) -> Int { 2 + 2 * table.uids.count }

    /// `, <value as text>` for each value column of `table`.
    private static func valueReads(_ table: ServerSchema.Table) -> String {
        zip(table.valueColumns, table.types).map { ", " + ColumnText.read("cellar_row." + $0, $1) }.joined()
    }

    /// The rows of `cells`, as a `SELECT` of `select(_:)` reads them.
    static func parse(_ cells: [[String?]], of table: ServerSchema.Table) throws -> [ServerRow] {
        let count = table.uids.count
        return try cells.map { cells in
            guard let text = cells[0], let id = UUIDText.uuid(text) else { throw SyncError(.schema, "a row of \(table.qualified) has no cellar_id") }
            return ServerRow(id: id, removed: cells[1], clocks: Array(cells[3..<(3 + count)]), newestRead: cells[2],
                             values: Array(cells[(3 + count)..<(3 + 2 * count)]))
        }
    }

    /// The row's clocks as a `text[]` literal, each in its slot (`{"<clock>",NULL,…}`, up to
    /// the last slot of the table's columns): every element quoted, a quote or backslash in it
    /// escaped.
    func clockArray(in table: ServerSchema.Table) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(2 + table.slotted.count * 56)
        for (index, position) in table.slotted.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            guard let position, var clock = clocks[position] else {
                bytes.append(contentsOf: "NULL".utf8)
                continue
            }
            bytes.append(UInt8(ascii: "\""))
            clock.withUTF8 { utf8 in
                for byte in utf8 {
                    if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { bytes.append(UInt8(ascii: "\\")) }
                    bytes.append(byte)
                }
            }
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }
}
