@_spi(Sync) import Cellar
import Foundation
import Logging
import PostgresNIO

/// Reads the server's changes after the last one applied to the store, and applies the rows they
/// name as the server holds them now (see `Store.applyIncoming`). Asymmetric tables have no
/// changes to read; tables of entities this model lacks are skipped.
struct Pull {
    let schema: ServerSchema
    let options: SyncOptions
    /// This store's device id: the changes it pushed itself are not read back (their rows hold
    /// nothing it does not have), unless a resolver may have kept the server's value under the
    /// pushed change's clock.
    let device: UUID
    /// By table UID: the SQL condition (on `cellar_row`) the device's subscriptions make; a
    /// table without one syncs every object.
    var filters: [UInt64: String] = [:]
    let logger: Logger

    struct Result {
        /// The last change number read (the one to go on from).
        var through: UInt64
        /// Change rows read.
        var changes = 0
        var report = IncomingReport()
    }

    /// A batch of the server's changes, read but not applied yet.
    struct Fetched: Sendable {
        /// The last change number read.
        var through: UInt64
        /// Change rows read.
        var count: Int
        /// The rows they name, as the server holds them now (with subscriptions: those that
        /// meet them, and removals), by table, as the server sent them: read into changes by
        /// `changes(of:)`.
        var rows: [(table: ServerSchema.Table, cells: CellBuffer)]
        /// By table UID: the objects they name that do not meet the device's subscriptions (a
        /// store holding one lets it go).
        var leaving: [UInt64: [UUID]] = [:]
    }

    /// What the server has after a change number.
    enum Batch: Sendable {
        /// No change after it.
        case none
        /// The changes after it (a batch of them).
        case changes(Fetched)
        /// Changes after it were pruned: the store must read the current rows instead.
        case resync
    }

    /// One batch after `sequence` (at most `options.pullChanges` changes). Two statements and
    /// one more per table: the batch's end, the tables it touches and how far changes were
    /// pruned, read in one snapshot; each table's rows that the batch's changes name, read
    /// through a join on the server; and the pruning horizon once more, since a prune that
    /// committed meanwhile may have taken change rows the reads needed.
    func fetch(after sequence: UInt64, on connection: PostgresConnection) async throws -> Batch {
        let ns = SQL.quote(schema.namespace)
        let tables = try await connection.rows("""
            SELECT (SELECT max(through) FROM \(ns).cellar_pruned)::text, b.table_uid::text, b.n::text, b.last::text
            FROM (SELECT 1) one LEFT JOIN (
                SELECT table_uid, count(*) AS n, max(seq) AS last FROM (
                    SELECT seq, table_uid FROM \(ns).cellar_changes WHERE seq > $1::bigint ORDER BY seq LIMIT $2::integer) batch
                GROUP BY table_uid) b ON true
            """, [String(sequence), String(options.pullChanges)], logger: logger)
        guard try horizon(tables.first?[0]) <= sequence else { return .resync }
        var fetched = Fetched(through: sequence, count: 0, rows: [])
        var uids: [UInt64] = []
        for row in tables where row[1] != nil {
            guard let uid = row[1].flatMap({ UInt64($0) }), let count = row[2].flatMap({ Int($0) }),
                  let last = row[3].flatMap({ UInt64($0) }) else { throw SyncError(.schema, "a malformed row in cellar_changes") }
            fetched.through = max(fetched.through, last)
            fetched.count += count
            uids.append(uid)
        }
        guard !uids.isEmpty else { return .none }
        for uid in uids.sorted() {
            guard let table = schema.tables[uid], !table.asymmetric else { continue }
            let filter = filters[uid]
            let cells = try await ServerRow.read(changedBetween: sequence, and: fetched.through, in: table, changes: ns + ".cellar_changes",
                                                 notBy: options.resolver == nil ? device : nil, filter: filter, on: connection, logger: logger)
            fetched.rows.append((table, cells))
            if let filter {
                // Also the device's own changes: a write outside its subscriptions leaves once pushed.
                let leaving = try await ServerRow.notMeeting(filter, changedBetween: sequence, and: fetched.through, in: table,
                                                            changes: ns + ".cellar_changes", on: connection, logger: logger)
                if !leaving.isEmpty { fetched.leaving[uid] = leaving }
            }
        }
        let after = try await connection.rows("SELECT max(through)::text FROM \(ns).cellar_pruned", logger: logger)
        guard try horizon(after.first?[0]) <= sequence else { return .resync }
        return .changes(fetched)
    }

    /// The pruning horizon of `cellar_pruned`'s text.
    private func horizon(_ text: String??) throws -> UInt64 {
        guard let text = text ?? nil, let horizon = UInt64(text) else { throw SyncError(.schema, "cellar_pruned holds no change number") }
        return horizon
    }

    /// The newest change number on the server (or the pruning horizon, when every change is
    /// pruned): a store that reads every row after this holds everything up to it.
    func newest(on connection: PostgresConnection) async throws -> UInt64 {
        let ns = SQL.quote(schema.namespace)
        let rows = try await connection.rows("""
            SELECT greatest((SELECT max(seq) FROM \(ns).cellar_changes), (SELECT max(through) FROM \(ns).cellar_pruned))::text
            """, logger: logger)
        return try horizon(rows.first?[0])
    }

    /// The store's view of a fetched batch's rows.
    func changes(of fetched: Fetched) throws -> [ReplicaChange] {
        var changes: [ReplicaChange] = []
        changes.reserveCapacity(fetched.rows.reduce(0) { $0 + $1.cells.count })
        for (table, cells) in fetched.rows { try self.changes(of: cells, in: table, into: &changes) }
        return changes
    }

    /// The store's view of rows of `table` as `ServerRow`'s reads for pulls send them.
    func changes(of rows: CellBuffer, in table: ServerSchema.Table) throws -> [ReplicaChange] {
        var changes: [ReplicaChange] = []
        changes.reserveCapacity(rows.count)
        try self.changes(of: rows, in: table, into: &changes)
        return changes
    }

    /// The store's view of each row (its cells as `ServerRow`'s reads for pulls send them: the
    /// id, the removal clock, each column's clock, each column's value), appended to `changes`:
    /// every value this model has, with its clock.
    private func changes(of rows: CellBuffer, in table: ServerSchema.Table, into changes: inout [ReplicaChange]) throws {
        let properties = table.entity.properties, relations = table.entity.relations
        let (clockCells, valueCells) = (2, 2 + table.uids.count)
        try rows.withCells { cell in
            for row in 0..<rows.count {
                guard let text = cell(row, 0), let id = UUIDText.uuid(text) else { throw SyncError(.schema, "a row of \(table.qualified) has no cellar_id") }
                if let removed = cell(row, 1) {
                    guard let clock = ReplicaClock.parse(removed) else { throw SyncError(.schema, "\(table.qualified) \(id): a malformed removal clock") }
                    changes.append(ReplicaChange(entityUid: table.entity.uid, globalId: id, removed: clock))
                    continue
                }
                var change = ReplicaChange(entityUid: table.entity.uid, globalId: id)
                change.values.reserveCapacity(properties.count)
                // A column without a clock was never written: not in the change. One whose clock
                // does not parse (which no device writes) is in it without a clock: the store
                // takes the server's value unless it has a change of its own not pushed yet.
                for (index, property) in properties.enumerated() {
                    guard let clock = cell(row, clockCells + index) else { continue }
                    change.values.append(ReplicaChange.Value(uid: property.uid, value: try ColumnText.value(cell(row, valueCells + index), of: property),
                                                             clock: ReplicaClock.parse(clock)))
                }
                for (index, relation) in relations.enumerated() {
                    let position = properties.count + index
                    guard let clock = cell(row, clockCells + position) else { continue }
                    change.relations.append(ReplicaChange.Links(uid: relation.uid, targets: try ColumnText.uuids(cell(row, valueCells + position)),
                                                                clock: ReplicaClock.parse(clock)))
                }
                changes.append(change)
            }
        }
    }

    /// Applies a fetched batch (its rows read into `changes`) to `store` in one transaction,
    /// which also records how far the store has pulled.
    func apply(_ fetched: Fetched, _ changes: [ReplicaChange], to store: Store) throws -> Result {
        let report = try store.applyIncoming(changes, leaving: fetched.leaving, through: fetched.through, removalsWin: options.removals == .win)
        return Result(through: fetched.through, changes: fetched.count, report: report)
    }
}
