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
    func fetch(after sequence: UInt64, on connection: PostgresConnection) async throws -> Fetched? {
        let ns = SQL.quote(schema.namespace)
        // `c.seq`, qualified: a bare `seq` in ORDER BY would name the output column, the text.
        let rows = try await connection.rows("""
            SELECT c.seq::text, c.table_uid::text, c.cellar_id::text FROM \(ns).cellar_changes c
            WHERE c.seq > $1::bigint ORDER BY c.seq LIMIT $2::integer
            """, [String(sequence), String(options.pullChanges)], logger: logger)
        guard !rows.isEmpty else { return nil }
        var fetched = Fetched(through: sequence, count: 0, changes: [])
        var order: [UInt64] = []
        var ids: [UInt64: [UUID]] = [:]
        var seen: Set<UUID> = []
        for row in rows {
            guard let seq = row[0].flatMap({ UInt64($0) }), let uid = row[1].flatMap({ UInt64($0) }),
                  let id = row[2].flatMap({ UUID(uuidString: $0) }) else { throw SyncError(.schema, "a malformed row in cellar_changes") }
            fetched.through = seq
            fetched.count += 1
            guard seen.insert(id).inserted else { continue }
            if ids[uid] == nil { order.append(uid) }
            ids[uid, default: []].append(id)
        }
        for uid in order {
            guard let table = schema.tables[uid], !table.asymmetric else { continue }
            let found = try await ServerRow.read(ids[uid]!, of: table, locking: false, on: connection, logger: logger)
            for id in ids[uid]! {
                guard let row = found[id] else { continue }
                fetched.changes.append(try change(of: row, in: table))
            }
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
