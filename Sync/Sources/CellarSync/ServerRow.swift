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

    /// The rows of `ids` in `table`, `locking` them for the transaction.
    static func read(_ ids: [UUID], of table: ServerSchema.Table, locking: Bool, on connection: PostgresConnection,
                     logger: Logger) async throws -> [UUID: ServerRow] {
        guard !ids.isEmpty else { return [:] }
        let uids = table.entity.properties.map(\.uid) + table.entity.relations.map(\.uid)
        let reads = table.entity.properties.map { ColumnText.read(table.columns[$0.uid]!, $0.column) }
            + table.entity.relations.map { ColumnText.read(table.columns[$0.uid]!, .uuidArray) }
        let sql = "SELECT cellar_id::text, cellar_removed, cellar_clock::text"
            + reads.map { ", " + $0 }.joined()
            + " FROM \(table.qualified) WHERE cellar_id = ANY($1::uuid[])" + (locking ? " ORDER BY cellar_id FOR UPDATE" : "")
        var rows: [UUID: ServerRow] = [:]
        for cells in try await connection.rows(sql, [ColumnText.uuidArray(ids)], logger: logger) {
            guard let text = cells[0], let id = UUID(uuidString: text) else { throw SyncError(.schema, "a row of \(table.qualified) has no cellar_id") }
            var values: [UInt64: String?] = [:]
            for (index, uid) in uids.enumerated() { values.updateValue(cells[3 + index], forKey: uid) }
            rows[id] = ServerRow(id: id, removed: cells[1], clocks: try clocks(cells[2] ?? "{}"), values: values)
        }
        return rows
    }

    /// The clocks of a `cellar_clock` document: `{"<uid>": "<clock>", …}`.
    static func clocks(_ text: String) throws -> [String: String] {
        guard case .object(let members) = try JSONParser.parse(Array(text.utf8), source: "cellar_clock") else {
            throw SyncError(.schema, "a cellar_clock is not a JSON object")
        }
        var clocks: [String: String] = [:]
        for member in members {
            if case .string(let clock) = member.value { clocks[member.name] = clock }
        }
        return clocks
    }

    /// The `cellar_clock` document of `clocks`.
    static func clockText(_ clocks: [String: String]) -> String {
        JSONWriter.string(.object(clocks.keys.sorted().map { JSONMember($0, .string(clocks[$0]!)) }))
    }
}
