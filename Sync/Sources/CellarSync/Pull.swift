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
        /// The rows they name, as the server holds them now.
        var changes: [ReplicaChange]
    }

    /// One batch after `sequence` (at most `options.pullChanges` changes); nil when there are none.
    /// Two statements and one more per table: the batch's end and the tables it touches, then
    /// each table's rows that the batch's changes name, read through a join on the server.
    func fetch(after sequence: UInt64, on connection: PostgresConnection) async throws -> Fetched? {
        let ns = SQL.quote(schema.namespace)
        let tables = try await connection.rows("""
            SELECT table_uid::text, count(*)::text, max(seq)::text FROM (
                SELECT seq, table_uid FROM \(ns).cellar_changes WHERE seq > $1::bigint ORDER BY seq LIMIT $2::integer) batch
            GROUP BY table_uid
            """, [String(sequence), String(options.pullChanges)], logger: logger)
        guard !tables.isEmpty else { return nil }
        var fetched = Fetched(through: sequence, count: 0, changes: [])
        var uids: [UInt64] = []
        for row in tables {
            guard let uid = row[0].flatMap({ UInt64($0) }), let count = row[1].flatMap({ Int($0) }),
                  let last = row[2].flatMap({ UInt64($0) }) else { throw SyncError(.schema, "a malformed row in cellar_changes") }
            fetched.through = max(fetched.through, last)
            fetched.count += count
            uids.append(uid)
        }
        for uid in uids.sorted() {
            guard let table = schema.tables[uid], !table.asymmetric else { continue }
            let rows = try await ServerRow.read(changedBetween: sequence, and: fetched.through, in: table, changes: ns + ".cellar_changes",
                                                notBy: options.resolver == nil ? device : nil, on: connection, logger: logger)
            for row in rows { fetched.changes.append(try change(of: row, in: table)) }
        }
        return fetched
    }

    /// Applies a fetched batch to `store` in one transaction, which also records how far the
    /// store has pulled.
    func apply(_ fetched: Fetched, to store: Store) throws -> Result {
        let report = try store.applyIncoming(fetched.changes, through: fetched.through, removalsWin: options.removals == .win)
        return Result(through: fetched.through, changes: fetched.count, report: report)
    }

    /// The store's view of `row`: every value this model has, with its clock.
    func change(of row: ServerRow, in table: ServerSchema.Table) throws -> ReplicaChange {
        if let removed = row.removed {
            guard let clock = ReplicaClock(text: removed) else { throw SyncError(.schema, "\(table.qualified) \(row.id): a malformed removal clock") }
            return ReplicaChange(entityUid: table.entity.uid, globalId: row.id, removed: clock)
        }
        var change = ReplicaChange(entityUid: table.entity.uid, globalId: row.id)
        for property in table.entity.properties {
            guard let clock = row.clocks[String(property.uid)] else { continue }  // never written
            change.values.append(ReplicaChange.Value(uid: property.uid, value: try ColumnText.value(row.values[property.uid] ?? nil, of: property),
                                                     clock: ReplicaClock(text: clock)))
        }
        for relation in table.entity.relations {
            guard let clock = row.clocks[String(relation.uid)] else { continue }
            change.relations.append(ReplicaChange.Links(uid: relation.uid, targets: try ColumnText.uuids(row.values[relation.uid] ?? nil),
                                                        clock: ReplicaClock(text: clock)))
        }
        return change
    }
}
