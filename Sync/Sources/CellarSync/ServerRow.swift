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
    /// The clocks of properties this model does not have, by their keys: kept as they are.
    var otherClocks: [String: String] = [:]
    /// Each column's text (nil: NULL).
    var values: [String?]

    /// A row not on the server yet: no clock, every column NULL.
    init(id: UUID, in table: ServerSchema.Table) {
        self.id = id
        clocks = Array(repeating: nil, count: table.uids.count)
        values = clocks
    }

    init(id: UUID, removed: String?, clocks: [String?], otherClocks: [String: String], values: [String?]) {
        self.id = id
        self.removed = removed
        self.clocks = clocks
        self.otherClocks = otherClocks
        self.values = values
    }

    /// The newest clock of the row's values.
    var newestClock: String? { (clocks.compactMap { $0 } + otherClocks.values).max() }

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

    /// `SELECT` of a row's columns as text, `FROM` the table.
    private static func select(_ table: ServerSchema.Table) -> String {
        "SELECT cellar_row.cellar_id::text, cellar_row.cellar_removed, cellar_row.cellar_clock::text" + valueReads(table)
            + " FROM \(table.qualified) AS cellar_row"
    }

    /// `SELECT` of what a pull needs of a row, as text, `FROM` the table: `cellar_id`,
    /// `cellar_removed`, the kind of JSON value `cellar_clock` is (`jsonb_typeof`: a pull takes
    /// an object alone); then each column's clock, the document's member for its UID (`->>`:
    /// a string's text, NULL for no member or JSON null, any other value's JSON text, which
    /// then does not parse as a clock); then each column's value. The server picks the members
    /// out of the document rather than print it whole, escaping every character, for this
    /// process to parse again: in `psql`, 10,000 rows of five columns took 65 ms so, 75 ms with
    /// the whole document, 54 ms with no clocks at all (medians of 11). Testing each member's
    /// type first, to read one that is not a string as no member, took the 75 ms again.
    private static func pullSelect(_ table: ServerSchema.Table) -> String {
        let clocks = table.uids.map { ", cellar_row.cellar_clock->>'\($0)'" }
        return "SELECT cellar_row.cellar_id::text, cellar_row.cellar_removed, jsonb_typeof(cellar_row.cellar_clock)" + clocks.joined()
            + valueReads(table) + " FROM \(table.qualified) AS cellar_row"
    }

    /// The cells a row of `pullSelect(table)` has.
    private static func pullColumns(_ table: ServerSchema.Table) -> Int { 3 + 2 * table.uids.count }

    /// `, <value as text>` for each value column of `table`.
    private static func valueReads(_ table: ServerSchema.Table) -> String {
        zip(table.valueColumns, table.types).map { ", " + ColumnText.read("cellar_row." + $0, $1) }.joined()
    }

    /// The rows of `cells`, as a `SELECT` of `select(_:)` reads them.
    static func parse(_ cells: [[String?]], of table: ServerSchema.Table) throws -> [ServerRow] {
        let count = table.uids.count
        return try cells.map { cells in
            guard let text = cells[0], let id = UUIDText.uuid(text) else { throw SyncError(.schema, "a row of \(table.qualified) has no cellar_id") }
            let (clocks, others) = try Self.clocks(cells[2] ?? "{}", of: table)
            return ServerRow(id: id, removed: cells[1], clocks: clocks, otherClocks: others, values: Array(cells[3..<(3 + count)]))
        }
    }

    /// The clocks of a `cellar_clock` document, `{"<uid>": "<clock>", …}`: by column of
    /// `table`, and those of UIDs it does not have.
    static func clocks(_ text: String, of table: ServerSchema.Table) throws -> (clocks: [String?], others: [String: String]) {
        var text = text
        if let clocks = text.withUTF8({ plainClocks($0, of: table) }) { return clocks }
        guard case .object(let members) = try JSONParser.parse(Array(text.utf8), source: "cellar_clock") else {
            throw SyncError(.schema, "a cellar_clock is not a JSON object")
        }
        var clocks = [String?](repeating: nil, count: table.uids.count), others: [String: String] = [:]
        for member in members {
            guard case .string(let clock) = member.value else { continue }
            if let index = table.clockKeyIndex(of: member.name.utf8) {
                clocks[table.clockKeys[index].position] = clock
            } else {
                others[member.name] = clock
            }
        }
        return (clocks, others)
    }

    /// The clocks of a `cellar_clock` document as `jsonb` prints it, `{"12": "…", "34": "…"}`,
    /// read without a JSON parser; nil for anything else (an escape, other spacing), which the
    /// parser then reads. `jsonb` orders the keys as `table.clockKeys` does, so each key is
    /// looked for from where the one before was found.
    private static func plainClocks(_ utf8: UnsafeBufferPointer<UInt8>, of table: ServerSchema.Table) -> (clocks: [String?], others: [String: String])? {
        var clocks = [String?](repeating: nil, count: table.uids.count), others: [String: String] = [:]
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        var index = 0
        func expect(_ byte: UInt8) -> Bool {
            guard index < utf8.count, utf8[index] == byte else { return false }
            index += 1
            return true
        }
        /// The bytes between two quotes, which hold no escape.
        func string() -> UnsafeBufferPointer<UInt8>? {
            guard expect(quote) else { return nil }
            let start = index
            while index < utf8.count, utf8[index] != quote {
                if utf8[index] == backslash { return nil }
                index += 1
            }
            guard index < utf8.count else { return nil }
            index += 1
            return UnsafeBufferPointer(rebasing: utf8[start..<(index - 1)])
        }
        var next = 0
        /// The position of the column whose clock key is `key`; nil for a UID the table lacks.
        func position(of key: UnsafeBufferPointer<UInt8>) -> Int? {
            guard let index = table.clockKeyIndex(of: key, from: next) else { return nil }
            next = index + 1
            return table.clockKeys[index].position
        }
        guard expect(UInt8(ascii: "{")) else { return nil }
        if expect(UInt8(ascii: "}")) { return index == utf8.count ? (clocks, others) : nil }
        while true {
            guard let key = string(), expect(UInt8(ascii: ":")), expect(UInt8(ascii: " ")), let value = string() else { return nil }
            let clock = String(decoding: value, as: UTF8.self)
            if let position = position(of: key) { clocks[position] = clock } else { others[String(decoding: key, as: UTF8.self)] = clock }
            if expect(UInt8(ascii: "}")) { return index == utf8.count ? (clocks, others) : nil }
            guard expect(UInt8(ascii: ",")), expect(UInt8(ascii: " ")) else { return nil }
        }
    }

    /// Whether `utf8` is JSON string content as it stands: no quote, backslash or control character.
    private static func plain(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        utf8.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
    }

    /// The row's `cellar_clock` document: its columns' clocks in the order of `table.clockKeys`,
    /// then the others in the order of their keys.
    func clockText(in table: ServerSchema.Table) -> String {
        // Clocks and UIDs need no escape: written directly, as JSON, into one buffer.
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(2 + (clocks.count + otherClocks.count) * 48)
        /// Appends the member; false when `clock` (or a `key` not known to be plain) needs escapes.
        func member(_ key: UnsafeBufferPointer<UInt8>, plainKey: Bool, _ clock: String) -> Bool {
            var clock = clock
            return clock.withUTF8 { clock in
                guard plainKey || Self.plain(key), Self.plain(clock) else { return false }
                if bytes.count > 1 { bytes.append(contentsOf: [UInt8(ascii: ","), UInt8(ascii: " ")]) }
                bytes.append(UInt8(ascii: "\""))
                bytes.append(contentsOf: key)
                bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":"), UInt8(ascii: " "), UInt8(ascii: "\"")])
                bytes.append(contentsOf: clock)
                bytes.append(UInt8(ascii: "\""))
                return true
            }
        }
        for (key, position) in table.clockKeys {
            guard let clock = clocks[position] else { continue }
            // A known key is a UID's decimal digits.
            guard key.withUnsafeBufferPointer({ member($0, plainKey: true, clock) }) else { return escaped(in: table) }
        }
        for (key, clock) in otherClocks.sorted(by: { $0.key < $1.key }) {
            var key = key
            guard key.withUTF8({ member($0, plainKey: false, clock) }) else { return escaped(in: table) }
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The `cellar_clock` document through the JSON writer, which escapes.
    private func escaped(in table: ServerSchema.Table) -> String {
        var members: [JSONMember] = []
        for (key, position) in table.clockKeys {
            if let clock = clocks[position] { members.append(JSONMember(String(decoding: key, as: UTF8.self), .string(clock))) }
        }
        for (key, clock) in otherClocks.sorted(by: { $0.key < $1.key }) { members.append(JSONMember(key, .string(clock))) }
        return JSONWriter.string(.object(members))
    }
}
