@_spi(Sync) import Cellar
import Foundation
import Logging
import PostgresNIO

/// One object's row on the server, as the sync engine reads and writes it: its removal clock,
/// each property's and relation's clock by UID, and the text of each column this model knows.
struct ServerRow {
    var id: UUID
    var removed: String?
    /// Every clock of the row, also those of properties this model does not have.
    var clocks: [String: String]
    /// Column texts by property or relation UID (nil: NULL).
    var values: [UInt64: String?]

    /// The newest clock of the row's values.
    var newestClock: String? { clocks.values.max() }

    /// The rows of `ids` in `table`, `locking` them for the transaction. (In no order: a push,
    /// the only writer that locks them, holds the schema's advisory lock, so pushes never wait
    /// for each other's rows, and sorting the rows would only cost.)
    ///
    /// The ids are joined as a set (`unnest`), not tested with `= ANY($1::uuid[])`: that cast
    /// from text is not folded into a constant when the statement is planned, and a plan that
    /// scans the table evaluates it again for every row, parsing the whole array each time
    /// (100,000 ids against 100,000 rows took minutes).
    static func read(_ ids: [UUID], of table: ServerSchema.Table, locking: Bool, on connection: PostgresConnection,
                     logger: Logger) async throws -> [UUID: ServerRow] {
        guard !ids.isEmpty else { return [:] }
        let sql = select(table) + " JOIN unnest($1::uuid[]) AS cellar_wanted(cellar_wanted_id) ON cellar_row.cellar_id = cellar_wanted.cellar_wanted_id"
            + (locking ? " FOR UPDATE OF cellar_row" : "")
        var rows: [UUID: ServerRow] = [:]
        for row in try await parse(connection.rows(sql, binds: SQL.binds(ids: ids), logger: logger), of: table) { rows[row.id] = row }
        return rows
    }

    /// The rows of `table` named by the changes numbered after `first` up to `last`
    /// (in `changes`, the qualified `cellar_changes`), each once; with `device`, only those
    /// changed by other devices.
    /// With `filter` (an SQL condition on `cellar_row`: the device's subscriptions), only the
    /// removed rows and those that meet it.
    static func read(changedBetween first: UInt64, and last: UInt64, in table: ServerSchema.Table, changes: String,
                     notBy device: UUID?, filter: String?, on connection: PostgresConnection, logger: Logger) async throws -> [ServerRow] {
        let sql = select(table) + """
             WHERE cellar_id IN (SELECT cellar_id FROM \(changes)
                WHERE seq > $1::bigint AND seq <= $2::bigint AND table_uid = $3::numeric AND device IS DISTINCT FROM $4::uuid)
            """ + (filter.map { " AND (cellar_row.cellar_removed IS NOT NULL OR \($0))" } ?? "")
        let texts = [String(first), String(last), String(table.entity.uid), device.map(UUIDText.text)]
        return try await parse(connection.rows(sql, texts, logger: logger), of: table)
    }

    /// The ids of the rows of `table` named by the changes numbered after `first` up to `last`
    /// (by any device) that are not removed and do not meet `filter`: objects a device that
    /// holds them must let go.
    static func notMeeting(_ filter: String, changedBetween first: UInt64, and last: UInt64, in table: ServerSchema.Table,
                           changes: String, on connection: PostgresConnection, logger: Logger) async throws -> [UUID] {
        let sql = """
            SELECT cellar_row.cellar_id::text FROM \(table.qualified) AS cellar_row WHERE cellar_row.cellar_id IN (
                SELECT cellar_id FROM \(changes) WHERE seq > $1::bigint AND seq <= $2::bigint AND table_uid = $3::numeric)
            AND cellar_row.cellar_removed IS NULL AND NOT \(filter)
            """
        return try await ids(connection.rows(sql, [String(first), String(last), String(table.entity.uid)], logger: logger), of: table)
    }

    /// Which of `ids` name rows of `table` that are not removed and do not meet `filter`.
    static func notMeeting(_ filter: String, among ids: [UUID], in table: ServerSchema.Table, on connection: PostgresConnection,
                           logger: Logger) async throws -> [UUID] {
        guard !ids.isEmpty else { return [] }
        let sql = """
            SELECT cellar_row.cellar_id::text FROM \(table.qualified) AS cellar_row
            JOIN unnest($1::uuid[]) AS cellar_wanted(cellar_wanted_id) ON cellar_row.cellar_id = cellar_wanted.cellar_wanted_id
            WHERE cellar_row.cellar_removed IS NULL AND NOT \(filter)
            """
        return try await Self.ids(connection.rows(sql, binds: SQL.binds(ids: ids), logger: logger), of: table)
    }

    private static func ids(_ cells: [[String?]], of table: ServerSchema.Table) throws -> [UUID] {
        try cells.map {
            guard let text = $0[0], let id = UUIDText.uuid(text) else { throw SyncError(.schema, "a row of \(table.qualified) has no cellar_id") }
            return id
        }
    }

    /// Up to `limit` rows of `table` in the order of their ids, after `last` (nil: from the
    /// first); with `filter`, only those that meet it, and the removed rows when `removals`.
    static func read(after last: UUID?, limit: Int, in table: ServerSchema.Table, filter: String?, removals: Bool = true,
                     on connection: PostgresConnection, logger: Logger) async throws -> [ServerRow] {
        let sql = select(table) + " WHERE ($1::uuid IS NULL OR cellar_row.cellar_id > $1::uuid)"
            + (filter.map { removals ? " AND (cellar_row.cellar_removed IS NOT NULL OR \($0))" : " AND cellar_row.cellar_removed IS NULL AND \($0)" } ?? "")
            + " ORDER BY cellar_row.cellar_id LIMIT $2::integer"
        return try await parse(connection.rows(sql, [last.map(UUIDText.text), String(limit)], logger: logger), of: table)
    }

    /// `SELECT` of a row's columns as text, `FROM` the table.
    private static func select(_ table: ServerSchema.Table) -> String {
        let reads = table.entity.properties.map { ColumnText.read("cellar_row." + table.columns[$0.uid]!, $0.column) }
            + table.entity.relations.map { ColumnText.read("cellar_row." + table.columns[$0.uid]!, .uuidArray) }
        return "SELECT cellar_row.cellar_id::text, cellar_row.cellar_removed, cellar_row.cellar_clock::text"
            + reads.map { ", " + $0 }.joined() + " FROM \(table.qualified) AS cellar_row"
    }

    private static func parse(_ cells: [[String?]], of table: ServerSchema.Table) throws -> [ServerRow] {
        let uids = table.entity.properties.map(\.uid) + table.entity.relations.map(\.uid)
        return try cells.map { cells in
            guard let text = cells[0], let id = UUIDText.uuid(text) else { throw SyncError(.schema, "a row of \(table.qualified) has no cellar_id") }
            var values: [UInt64: String?] = [:]
            values.reserveCapacity(uids.count)
            for (index, uid) in uids.enumerated() { values.updateValue(cells[3 + index], forKey: uid) }
            return ServerRow(id: id, removed: cells[1], clocks: try clocks(cells[2] ?? "{}"), values: values)
        }
    }

    /// The clocks of a `cellar_clock` document: `{"<uid>": "<clock>", …}`.
    static func clocks(_ text: String) throws -> [String: String] {
        var text = text
        if let clocks = text.withUTF8({ plainClocks($0) }) { return clocks }
        guard case .object(let members) = try JSONParser.parse(Array(text.utf8), source: "cellar_clock") else {
            throw SyncError(.schema, "a cellar_clock is not a JSON object")
        }
        var clocks: [String: String] = [:]
        for member in members {
            if case .string(let clock) = member.value { clocks[member.name] = clock }
        }
        return clocks
    }

    /// The clocks of a `cellar_clock` document as `jsonb` prints it, `{"12": "…", "34": "…"}`,
    /// read without a JSON parser; nil for anything else (an escape, other spacing), which the
    /// parser then reads.
    private static func plainClocks(_ utf8: UnsafeBufferPointer<UInt8>) -> [String: String]? {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        var index = 0
        func expect(_ byte: UInt8) -> Bool {
            guard index < utf8.count, utf8[index] == byte else { return false }
            index += 1
            return true
        }
        /// The text between two quotes, which holds no escape.
        func string() -> String? {
            guard expect(quote) else { return nil }
            let start = index
            while index < utf8.count, utf8[index] != quote {
                if utf8[index] == backslash { return nil }
                index += 1
            }
            guard index < utf8.count else { return nil }
            let text = String(decoding: UnsafeBufferPointer(rebasing: utf8[start..<index]), as: UTF8.self)
            index += 1
            return text
        }
        guard expect(UInt8(ascii: "{")) else { return nil }
        var clocks: [String: String] = [:]
        if expect(UInt8(ascii: "}")) { return index == utf8.count ? clocks : nil }
        while true {
            guard let key = string(), expect(UInt8(ascii: ":")), expect(UInt8(ascii: " ")), let value = string() else { return nil }
            clocks[key] = value
            if expect(UInt8(ascii: "}")) { return index == utf8.count ? clocks : nil }
            guard expect(UInt8(ascii: ",")), expect(UInt8(ascii: " ")) else { return nil }
        }
    }

    /// Whether `utf8` is JSON string content as it stands: no quote, backslash or control character.
    private static func plain(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        utf8.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
    }

    /// The `cellar_clock` document of `clocks`, its members in the order of their keys.
    static func clockText(_ clocks: [String: String]) -> String {
        let members = clocks.sorted { $0.key < $1.key }
        // Clocks and UIDs need no escape: written directly, as JSON, into one buffer.
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(2 + members.count * 48)
        func append(_ text: String) -> Bool {
            var text = text
            return text.withUTF8 { utf8 in
                guard plain(utf8) else { return false }
                bytes.append(UInt8(ascii: "\""))
                bytes.append(contentsOf: utf8)
                bytes.append(UInt8(ascii: "\""))
                return true
            }
        }
        for (index, member) in members.enumerated() {
            if index > 0 {
                bytes.append(UInt8(ascii: ","))
                bytes.append(UInt8(ascii: " "))
            }
            guard append(member.key) else { return escaped(members) }
            bytes.append(UInt8(ascii: ":"))
            bytes.append(UInt8(ascii: " "))
            guard append(member.value) else { return escaped(members) }
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The `cellar_clock` document of `members` through the JSON writer, which escapes.
    private static func escaped(_ members: [(key: String, value: String)]) -> String {
        JSONWriter.string(.object(members.map { JSONMember($0.key, .string($0.value)) }))
    }
}
