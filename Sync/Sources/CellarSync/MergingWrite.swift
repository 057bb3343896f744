@_spi(Sync) import Cellar
import Foundation
import Logging
import PostgresNIO

/// One statement that merges a chunk of changes into their rows on the server without reading
/// them first: the update compares each incoming clock with the row's own in SQL, and the
/// rows that are not on the server are inserted. It returns the ids of the changes it left
/// alone, which the push then reads and merges in Swift (`Push.merge`), as before:
///
/// - rows the update does not change: removed on the server, or with no column whose incoming
///   clock is newer, or a row this role may not update;
/// - rows whose insert met one already there (one the update did not change).
///
/// For the rows it does write, it does what `Push.merge` does without a conflict resolver: a
/// column takes the incoming value and clock when the row has no clock for it (NULL in its slot
/// of `cellar_clocks`), or when the incoming clock sorts after the row's (byte by byte,
/// `COLLATE "C"`: clocks are ASCII); a value without a clock counts as the empty clock, older
/// than any other. The other slots of `cellar_clocks` stay as they are. A change row is
/// numbered for each row written. It also returns how many rows it inserted.
///
/// Not for removals, nor for pushes with a conflict resolver (which must see the server's
/// value): those go through the read and `Push.merge` whole.
struct MergingWrite: Sendable {
    let sql: String
    let binds: PostgresBindings
    /// The changes this statement carries, by id (for the ones it leaves).
    let changes: [UUID: ReplicaChange]

    /// The statement for `chunk` (changes to distinct objects, none a removal) into `table`;
    /// nil when none of it can go this way. `passed` receives the changes that cannot: one that
    /// names one column twice (which the merge takes in order), one that carries no column of
    /// the table (the merge inserts such an object empty, and leaves a row it finds alone).
    init?(_ chunk: some Collection<ReplicaChange>, into table: ServerSchema.Table, numbering: ChangeNumbering?,
          passing passed: inout [ReplicaChange]) {
        let width = table.uids.count
        // By column position: each row's clock (nil: the change does not carry the column) and text.
        var clocks = [[String?]](repeating: [], count: width), texts = clocks
        var carried = [Bool](repeating: false, count: width)
        var ids: [UUID] = [], kept: [UUID: ReplicaChange] = [:]
        ids.reserveCapacity(chunk.count)
        kept.reserveCapacity(chunk.count)
        for position in 0..<width {
            clocks[position].reserveCapacity(chunk.count)
            texts[position].reserveCapacity(chunk.count)
        }
        var rowClocks = [String?](repeating: nil, count: width), rowTexts = rowClocks
        var clockTexts = ClockTexts()
        for change in chunk {
            var twice = false, any = false
            for position in 0..<width { rowClocks[position] = nil; rowTexts[position] = nil }
            func carry(_ uid: UInt64, _ text: String?, _ clock: ReplicaClock?) {
                guard let position = table.positions[uid] else { return }
                if rowClocks[position] != nil { twice = true }
                any = true
                rowClocks[position] = clockTexts.text(of: clock)
                rowTexts[position] = text
            }
            for value in change.values { carry(value.uid, ColumnText.text(value.value), value.clock) }
            for links in change.relations { carry(links.uid, ColumnText.uuidArray(links.targets), links.clock) }
            if twice || !any {
                passed.append(change)
                continue
            }
            ids.append(change.globalId)
            kept[change.globalId] = change
            for position in 0..<width {
                clocks[position].append(rowClocks[position])
                texts[position].append(rowTexts[position])
                if rowClocks[position] != nil { carried[position] = true }
            }
        }
        guard !ids.isEmpty else { return nil }

        let types = table.types
        let columns = carried.indices.filter { carried[$0] }
        var binds = PostgresBindings(capacity: 3 + 2 * columns.count)
        binds.append(UUIDArray(ids))
        // u(id, k<position>, v<position>, …): the clock and the text of each carried column.
        var names = ["id"], arrays = ["$1::uuid[]"]
        for position in columns {
            names += ["k\(position)", "v\(position)"]
            arrays += ["$\(binds.count + 1)::text[]", "$\(binds.count + 2)::text[]"]
            binds.append(TextArray(clocks[position]))
            binds.append(TextArray(texts[position]))
        }
        func column(_ position: Int) -> String { table.valueColumns[position] }
        func value(_ position: Int) -> String { ColumnText.cast("u.v\(position)", types[position]) }
        /// Whether the row's column at `position` takes the incoming value: the change carries
        /// it, and the row has no clock for it or one that sorts before the incoming one.
        func newer(_ position: Int) -> String {
            let current = table.clock(at: position, of: "t")
            return "(u.k\(position) IS NOT NULL AND (\(current) IS NULL OR u.k\(position) COLLATE \"C\" > \(current) COLLATE \"C\"))"
        }
        let update = "UPDATE \(table.qualified) AS t SET "
            + columns.map { "\(column($0)) = CASE WHEN \(newer($0)) THEN \(value($0)) ELSE t.\(column($0)) END" }.joined(separator: ", ")
            + ", " + columns.map { "cellar_clocks[\(table.slots[$0])] = CASE WHEN \(newer($0)) THEN u.k\($0) ELSE \(table.clock(at: $0, of: "t")) END" }
                .joined(separator: ", ")
            // (The ids once more as a list: the rows to change are found in the primary key's index.)
            + " FROM u WHERE t.cellar_id = u.id AND t.cellar_id = ANY($1::uuid[])"
            // One condition on both tables, which the planner cannot split: conditions on `t`
            // alone (one for removed rows) would shrink its estimate of `t`'s rows to a few, and
            // a nested loop over `u` for each of them took seconds.
            + " AND CASE WHEN t.cellar_removed IS NULL THEN "
            + columns.map(newer).joined(separator: " OR ") + " ELSE false END RETURNING t.cellar_id"
        // A new row's clocks: each carried column's in its slot, up to the last of those.
        let lastSlot = columns.map { table.slots[$0] }.max()!
        let newClocks = "ARRAY[" + table.slotted.prefix(lastSlot).map { position in
            position.map { carried[$0] ? "u.k\($0)" : "NULL" } ?? "NULL"
        }.joined(separator: ", ") + "]::text[]"
        let insert = "INSERT INTO \(table.qualified) (\(table.rowColumns.joined(separator: ", "))) SELECT u.id, NULL, "
            + newClocks + ", "
            + table.uids.indices.map { carried[$0] ? value($0) : "NULL::\(types[$0].rawValue)" }.joined(separator: ", ")
            + " FROM u WHERE NOT EXISTS (SELECT 1 FROM updated WHERE updated.cellar_id = u.id)"
            + " ON CONFLICT (cellar_id) DO NOTHING RETURNING cellar_id"
        var sql = "WITH u AS (SELECT * FROM unnest(\(arrays.joined(separator: ", "))) AS u(\(names.joined(separator: ", ")))), "
            + "updated AS (\(update)), inserted AS (\(insert)), "
            + "written AS (SELECT cellar_id FROM updated UNION ALL SELECT cellar_id FROM inserted)"
        if let numbering { sql += ", " + numbering.clause(binding: &binds) }
        // The ids left alone, then the number of rows inserted (with no id).
        sql += " SELECT u.id::text, NULL FROM u WHERE NOT EXISTS (SELECT 1 FROM written WHERE written.cellar_id = u.id)"
            + " UNION ALL SELECT NULL, count(*)::text FROM inserted"
        (self.sql, self.binds, changes) = (sql, binds, kept)
    }

    /// Runs the statement: the changes it left for the read and the merge, and how many rows
    /// it inserted.
    func run(on connection: PostgresConnection, logger: Logger) async throws -> (left: [ReplicaChange], inserted: Int) {
        var left: [ReplicaChange] = [], inserted = 0
        for cells in try await connection.rows(sql, binds: binds, logger: logger) {
            if let text = cells[0] {
                guard let id = UUIDText.uuid(text), let change = changes[id] else {
                    throw SyncError(.server, "the server named an object this push did not carry")
                }
                left.append(change)
            } else {
                inserted = cells[1].flatMap { Int($0) } ?? 0
            }
        }
        return (left, inserted)
    }
}
