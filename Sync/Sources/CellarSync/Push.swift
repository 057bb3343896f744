@_spi(Sync) import Cellar
import Foundation
import Logging
import PostgresNIO

/// Sends a store's changes to the server in one transaction, merged into the rows there by the
/// conflict rules (see the sync documentation), and numbers them in `cellar_changes`.
///
/// Pushes of all devices are serialised by an advisory lock held to the commit, so that change
/// numbers commit in their order: a pull that has read up to number n never misses one below it
/// that commits later. A push the server has already taken (the device's acknowledged sequence is
/// at or past it, after a reply that was lost) changes nothing; re-applying changes the server
/// holds changes nothing either (equal clocks do not replace).
struct Push {
    let schema: ServerSchema
    let options: SyncOptions
    let device: UUID
    let logger: Logger

    struct Result {
        /// Whether the server had taken this push already.
        var alreadyTaken = false
        /// Rows written.
        var written = 0
        /// The global ids of asymmetric objects the server now holds, by entity UID.
        var asymmetric: [UInt64: [UUID]] = [:]
    }

    func run(_ outgoing: OutgoingChanges, on connection: PostgresConnection) async throws -> Result {
        let ns = SQL.quote(schema.namespace)
        return try await connection.withTransaction(logger: logger) { connection in
            var result = Result()
            try await connection.execute("SELECT pg_advisory_xact_lock(hashtext($1))", ["cellar-push:" + schema.namespace], logger: logger)
            let deviceText = device.uuidString.lowercased()
            try await connection.execute("INSERT INTO \(ns).cellar_devices (device) VALUES ($1::uuid) ON CONFLICT (device) DO NOTHING", [deviceText], logger: logger)
            let acknowledged = try await connection.rows("SELECT acknowledged::text FROM \(ns).cellar_devices WHERE device = $1::uuid FOR UPDATE",
                                                         [deviceText], logger: logger)
            if let text = acknowledged.first?[0] ?? nil, let sequence = UInt64(text), sequence >= outgoing.through {
                result.alreadyTaken = true
                return result
            }
            var byTable: [UInt64: [ReplicaChange]] = [:]
            for change in outgoing.changes { byTable[change.entityUid, default: []].append(change) }
            for (uid, changes) in byTable.sorted(by: { $0.key < $1.key }) {
                guard let table = schema.tables[uid] else { continue }
                let rows = try await ServerRow.read(changes.map(\.globalId), of: table, locking: true, on: connection, logger: logger)
                var changed: [ServerRow] = []
                for change in changes {
                    if table.asymmetric, change.removed == nil { result.asymmetric[uid, default: []].append(change.globalId) }
                    if let row = merge(change, into: rows[change.globalId], table: table) { changed.append(row) }
                }
                try await write(changed, to: table, on: connection)
                result.written += changed.count
                if !table.asymmetric, !changed.isEmpty {
                    try await connection.execute("""
                        INSERT INTO \(ns).cellar_changes (table_uid, cellar_id, device)
                        SELECT $1::numeric, unnest($2::uuid[]), $3::uuid
                        """, [String(uid), ColumnText.uuidArray(changed.map(\.id)), deviceText], logger: logger)
                }
            }
            try await connection.execute("UPDATE \(ns).cellar_devices SET acknowledged = $2::bigint, seen = now() WHERE device = $1::uuid",
                                         [deviceText, String(outgoing.through)], logger: logger)
            if result.written > 0 { try await connection.execute("SELECT pg_notify($1, '')", [schema.channel], logger: logger) }
            return result
        }
    }

    /// `row` (nil: none on the server yet) with `change` merged in; nil when nothing changes.
    func merge(_ change: ReplicaChange, into existing: ServerRow?, table: ServerSchema.Table) -> ServerRow? {
        if let removal = change.removed {
            guard var row = existing, row.removed == nil else { return nil }
            let clock = removal.description
            if options.removals == .lastWriterWins, let newest = row.newestClock, newest > clock { return nil }
            row.removed = clock
            return row
        }
        var row = existing ?? ServerRow(id: change.globalId, removed: nil, clocks: [:], values: [:])
        var changed = existing == nil
        if let removed = row.removed {
            // Removed on the server: the removal wins, or, by the last writer, newer values bring
            // the object back.
            guard options.removals == .lastWriterWins else { return nil }
            let newer = change.values.contains { ($0.clock?.description ?? "") > removed }
                || change.relations.contains { ($0.clock?.description ?? "") > removed }
            guard newer else { return nil }
            row.removed = nil
            changed = true
        }
        func take(uid: UInt64, text: String?, clock: ReplicaClock?, name: String) {
            let key = String(uid)
            let incoming = clock?.description ?? ""
            let current = row.clocks[key]
            let differs = !(row.values[uid].map { $0 == text } ?? (text == nil))
            var takeValue = current == nil || incoming > current!
            if let resolver = options.resolver, let current, differs, let clock, let theirs = ReplicaClock(text: current), theirs.device != clock.device {
                let conflict = SyncConflict(entity: table.entity.name, property: name, objectId: row.id,
                                            serverValue: row.values[uid] ?? nil, serverMilliseconds: theirs.timestamp.milliseconds,
                                            incomingValue: text, incomingMilliseconds: clock.timestamp.milliseconds)
                switch resolver(conflict) {
                case .keepServer: takeValue = false
                case .takeIncoming: takeValue = true
                case .lastWriterWins: break
                }
                // The newer clock stays either way, so that the result reaches every device.
                if incoming > current, row.clocks[key] != incoming { row.clocks[key] = incoming; changed = true }
            } else if takeValue {
                row.clocks[key] = incoming
                changed = true
            }
            if takeValue, differs {
                row.values.updateValue(text, forKey: uid)
                changed = true
            }
        }
        for value in change.values {
            guard let property = table.entity.properties.first(where: { $0.uid == value.uid }) else { continue }
            take(uid: value.uid, text: ColumnText.text(value.value), clock: value.clock, name: property.name)
        }
        for links in change.relations {
            guard let relation = table.entity.relations.first(where: { $0.uid == links.uid }) else { continue }
            take(uid: links.uid, text: ColumnText.uuidArray(links.targets), clock: links.clock, name: relation.name)
        }
        return changed ? row : nil
    }

    /// Inserts or updates `rows`, as many per statement as PostgreSQL's parameter limit allows.
    private func write(_ rows: [ServerRow], to table: ServerSchema.Table, on connection: PostgresConnection) async throws {
        guard !rows.isEmpty else { return }
        let uids = table.entity.properties.map(\.uid) + table.entity.relations.map(\.uid)
        let types = table.entity.properties.map(\.column) + table.entity.relations.map { _ in .uuidArray }
        let names = ["cellar_id", "cellar_removed", "cellar_clock"] + uids.map { table.columns[$0]! }
        let perRow = names.count
        let rowsPerStatement = max(1, 30_000 / perRow)
        var start = 0
        while start < rows.count {
            let chunk = rows[start..<min(rows.count, start + rowsPerStatement)]
            var texts: [String?] = []
            texts.reserveCapacity(chunk.count * perRow)
            var tuples: [String] = []
            for row in chunk {
                let base = texts.count
                var exprs = ["$\(base + 1)::uuid", "$\(base + 2)", "$\(base + 3)::jsonb"]
                for (index, type) in types.enumerated() { exprs.append(ColumnText.bind(base + 4 + index, type)) }
                tuples.append("(" + exprs.joined(separator: ", ") + ")")
                texts.append(row.id.uuidString.lowercased())
                texts.append(row.removed)
                texts.append(ServerRow.clockText(row.clocks))
                for uid in uids { texts.append(row.values[uid] ?? nil) }
            }
            let updates = names.dropFirst().map { "\($0) = EXCLUDED.\($0)" }.joined(separator: ", ")
            let sql = "INSERT INTO \(table.qualified) (\(names.joined(separator: ", "))) VALUES "
                + tuples.joined(separator: ", ") + " ON CONFLICT (cellar_id) DO UPDATE SET " + updates
            try await connection.execute(sql, texts, logger: logger)
            start += chunk.count
        }
    }
}
