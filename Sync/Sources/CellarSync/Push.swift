@_spi(Sync) import Cellar
import Foundation
import Logging
import NIOConcurrencyHelpers
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
    let way = Way()

    struct Result {
        /// Whether the server had taken this push already.
        var alreadyTaken = false
        /// Rows written.
        var written = 0
        /// Of those, the rows merged by the server's statements (`MergingWrite`).
        var mergedInSQL = 0
        /// Of those, the rows inserted without a read (the server lacked them).
        var insertedUnread = 0
        /// The global ids of asymmetric objects the server now holds, by entity UID.
        var asymmetric: [UInt64: [UUID]] = [:]
    }

    func run(_ outgoing: OutgoingChanges, on connection: PostgresConnection) async throws -> Result {
        let ns = SQL.quote(schema.namespace)
        return try await connection.withTransaction(logger: logger) { connection in
            var result = Result()
            try await connection.execute("SELECT pg_advisory_xact_lock(hashtext($1))", ["cellar-push:" + schema.namespace], logger: logger)
            let deviceText = UUIDText.text(device)
            // The device's row, made when missing, locked either way (ON CONFLICT DO UPDATE locks it).
            let acknowledged = try await connection.rows("""
                INSERT INTO \(ns).cellar_devices (device) VALUES ($1::uuid)
                ON CONFLICT (device) DO UPDATE SET device = EXCLUDED.device RETURNING acknowledged::text
                """, [deviceText], logger: logger)
            if let text = acknowledged.first?[0] ?? nil, let sequence = UInt64(text), sequence >= outgoing.through {
                result.alreadyTaken = true
                return result
            }
            var byTable: [UInt64: [ReplicaChange]] = [:]
            for change in outgoing.changes { byTable[change.entityUid, default: []].append(change) }
            for (uid, changes) in byTable.sorted(by: { $0.key < $1.key }) {
                guard let table = schema.tables[uid] else { continue }
                if table.asymmetric { result.asymmetric[uid] = changes.filter { $0.removed == nil }.map(\.globalId) }
                let numbering = table.asymmetric ? nil : ChangeNumbering(in: schema, of: table, by: deviceText)
                let counts = try await write(changes, to: table, numbering: numbering, on: connection)
                result.written += counts.written
                result.mergedInSQL += counts.inSQL
                result.insertedUnread += counts.unread
            }
            let acknowledge = """
                UPDATE \(ns).cellar_devices SET acknowledged = $2::bigint, acknowledged_at = $3::bigint, seen = now() WHERE device = $1::uuid
                """
            let texts = [deviceText, String(outgoing.through), outgoing.throughTimestamp.map { String(Int64(bitPattern: $0.rawValue)) }]
            if result.written > 0 {
                try await connection.execute("WITH noted AS (\(acknowledge) RETURNING 1) SELECT pg_notify($4, '') FROM noted",
                                             texts + [schema.channel], logger: logger)
            } else {
                try await connection.execute(acknowledge, texts, logger: logger)
            }
            return result
        }
    }

    /// `row` (nil: none on the server yet) with `change` merged in; nil when nothing changes.
    /// (`clockTexts` makes the clocks' texts, kept from one change to the next.)
    func merge(_ change: ReplicaChange, into existing: ServerRow?, table: ServerSchema.Table,
               clockTexts: inout ClockTexts) -> ServerRow? {
        if let removal = change.removed {
            guard var row = existing, row.removed == nil else { return nil }
            let clock = removal.text
            if options.removals == .lastWriterWins, let newest = row.newestClock, newest > clock { return nil }
            row.removed = clock
            return row
        }
        var row = existing ?? ServerRow(id: change.globalId, in: table)
        var changed = existing == nil
        if let removed = row.removed {
            // Removed on the server: the removal wins, or, by the last writer, newer values bring
            // the object back.
            guard options.removals == .lastWriterWins else { return nil }
            let newer = change.values.contains { ($0.clock?.text ?? "") > removed }
                || change.relations.contains { ($0.clock?.text ?? "") > removed }
            guard newer else { return nil }
            row.removed = nil
            changed = true
        }
        func take(_ position: Int, text: String?, clock: ReplicaClock?, name: String) {
            let incoming = clockTexts.text(of: clock)
            let current = row.clocks[position]
            let differs = row.values[position] != text
            var takeValue = current == nil || incoming > current!
            if let resolver = options.resolver, let current, differs, let clock, let theirs = ReplicaClock(text: current), theirs.device != clock.device {
                let conflict = SyncConflict(entity: table.entity.name, property: name, objectId: row.id,
                                            serverValue: row.values[position], serverMilliseconds: theirs.timestamp.milliseconds,
                                            incomingValue: text, incomingMilliseconds: clock.timestamp.milliseconds)
                switch resolver(conflict) {
                case .keepServer: takeValue = false
                case .takeIncoming: takeValue = true
                case .lastWriterWins: break
                }
                // The newer clock stays either way, so that the result reaches every device.
                if incoming > current, row.clocks[position] != incoming { row.clocks[position] = incoming; changed = true }
            } else if takeValue {
                row.clocks[position] = incoming
                changed = true
            }
            if takeValue, differs {
                row.values[position] = text
                changed = true
            }
        }
        let properties = table.entity.properties
        for value in change.values {
            guard let index = properties.firstIndex(where: { $0.uid == value.uid }) else { continue }
            take(index, text: ColumnText.text(value.value), clock: value.clock, name: properties[index].name)
        }
        for links in change.relations {
            guard let index = table.entity.relations.firstIndex(where: { $0.uid == links.uid }) else { continue }
            take(properties.count + index, text: ColumnText.uuidArray(links.targets), clock: links.clock, name: table.entity.relations[index].name)
        }
        return changed ? row : nil
    }

    /// Merges `changes` into their rows of `table` and writes the rows that change, numbering a
    /// change row for each by `numbering` (nil for an asymmetric table: no device pulls those);
    /// returns how many rows were written, how many of those the server merged, and how many it
    /// inserted unread.
    ///
    /// Without a conflict resolver, the changes that are not removals go first through
    /// statements that write without a read, one a chunk, the next chunk's built while the
    /// server runs one: merged in SQL (`MergingWrite`), or, while the table's chunks have been
    /// rows the server lacks, inserted unless there (`Write` with `insertUnlessThere`: a
    /// chunk of new rows took about 1.5 times as long merged in SQL as inserted plainly). What
    /// those leave (removed rows, nothing newer, rows already there) and the removals are read
    /// and merged here (`readAndMerge`). Each statement's outcome picks the next one's way:
    /// once one inserted most of its rows, the chunks after it are inserted first (across the
    /// batches of one sync), until one finds most of its rows there.
    private func write(_ changes: [ReplicaChange], to table: ServerSchema.Table, numbering: ChangeNumbering?,
                       on connection: PostgresConnection) async throws -> (written: Int, inSQL: Int, unread: Int) {
        guard options.resolver == nil, options.mergesInSQL else {
            return (try await readAndMerge(changes, to: table, numbering: numbering, on: connection), 0, 0)
        }
        let logger = self.logger
        var left = changes.filter { $0.removed != nil }
        let merging = changes.filter { $0.removed == nil }
        let size = max(1, options.rowsPerStatement)
        typealias Done = (left: [ReplicaChange], inserted: Int, count: Int, merged: Bool)
        var running: Task<Done, any Error>?
        var written = 0, inSQL = 0, unread = 0
        /// Counts what a statement did, and learns from it which way the next one goes.
        func took(_ done: Done) {
            let wrote = done.count - done.left.count
            written += wrote
            if done.merged { inSQL += wrote } else { unread += wrote }
            left += done.left
            way.set(table, insertsFirst: done.inserted * 2 > done.count)
        }
        do {
            for start in stride(from: 0, to: merging.count, by: size) {
                let chunk = merging[start..<min(merging.count, start + size)]
                let before = running
                if way.insertsFirst(table) {
                    var clockTexts = ClockTexts()
                    let rows = chunk.compactMap { merge($0, into: nil, table: table, clockTexts: &clockTexts) }
                    running = Write(rows, .insertUnlessThere, to: table, numbering: numbering).map { statement in
                        Task {
                            // (Usually none: the chunk's changes are looked through only for rows that were there.)
                            let there = Set(try await statement.run(on: connection, logger: logger))
                            let left = there.isEmpty ? [] : chunk.filter { there.contains($0.globalId) }
                            guard left.count == there.count else { throw SyncError(.server, "the server named an object this push did not carry") }
                            return (left, statement.count - left.count, statement.count, false)
                        }
                    }
                } else {
                    running = MergingWrite(chunk, into: table, numbering: numbering, passing: &left).map { statement in
                        Task {
                            let (left, inserted) = try await statement.run(on: connection, logger: logger)
                            return (left, inserted, statement.changes.count, true)
                        }
                    }
                }
                // Lets the statement's task send it before this one builds the next (else on
                // a busy pool it waited for that, the server idle meanwhile).
                await Task.yield()
                if let done = try await before?.value { took(done) }
            }
            if let done = try await running?.value { took(done) }
        } catch {
            // Nothing is left running on the connection when the transaction rolls back.
            _ = await running?.result
            throw error
        }
        return (try await written + readAndMerge(left, to: table, numbering: numbering, on: connection), inSQL, unread)
    }

    /// Reads `changes`' rows of `table` (locking them), merges the changes in (`merge`) and
    /// writes the rows that change, numbering a change row for each by `numbering`; returns
    /// how many rows were written.
    ///
    /// In chunks of `options.rowsPerStatement` changes (large enough that each statement's
    /// round trip and planning are a small part of it, small enough that its parameters stay
    /// small), pipelined so that the server and this process work at the same time: the server
    /// reads (and locks) the next chunk's rows and writes this one's while this process merges
    /// the next. Each push holds distinct objects, so no chunk reads a row another writes.
    private func readAndMerge(_ changes: [ReplicaChange], to table: ServerSchema.Table, numbering: ChangeNumbering?,
                              on connection: PostgresConnection) async throws -> Int {
        guard !changes.isEmpty else { return 0 }
        let logger = self.logger
        let size = max(1, options.rowsPerStatement)
        let chunks = stride(from: 0, to: changes.count, by: size).map { changes[$0..<min(changes.count, $0 + size)] }
        func read(_ chunk: ArraySlice<ReplicaChange>) -> Task<[UUID: ServerRow], any Error> {
            let ids = chunk.map(\.globalId)
            return Task { try await ServerRow.read(ids, of: table, locking: true, on: connection, logger: logger) }
        }
        var reading = chunks.first.map(read)
        var writing: Task<Void, any Error>?
        var written = 0
        var clockTexts = ClockTexts()
        do {
            for (index, chunk) in chunks.enumerated() {
                let rows = try await reading!.value
                reading = index + 1 < chunks.count ? read(chunks[index + 1]) : nil
                await Task.yield()  // (the read sent before this merge, as in `write`)
                var created: [ServerRow] = [], updated: [ServerRow] = []
                for change in chunk {
                    let existing = rows[change.globalId]
                    if let row = merge(change, into: existing, table: table, clockTexts: &clockTexts) {
                        if existing == nil { created.append(row) } else { updated.append(row) }
                    }
                }
                written += created.count + updated.count
                let statements = [Write(created, .insert, to: table, numbering: numbering),
                                  Write(updated, .update, to: table, numbering: numbering)].compactMap { $0 }
                let before = writing
                writing = Task { for statement in statements { try await statement.run(on: connection, logger: logger) } }
                try await before?.value
            }
            try await writing?.value
        } catch {
            // Nothing is left running on the connection when the transaction rolls back.
            let read = await reading?.result, wrote = await writing?.result
            // A statement the server received after one that failed fails only with "current
            // transaction is aborted" (25P02). The next chunk's read and this chunk's write are
            // sent from two tasks, in either order, so the read may be the one that failed that
            // way: report the failure that aborted the transaction.
            if SQL.state(of: error) == "25P02" {
                var causes: [any Error] = []
                if case .failure(let cause)? = wrote { causes.append(cause) }
                if case .failure(let cause)? = read { causes.append(cause) }
                if let cause = causes.first(where: { SQL.state(of: $0) != "25P02" }) { throw cause }
            }
            throw error
        }
        return written
    }

    /// Which way a push's chunks go in each table, learnt from the ones before (across the
    /// batches of one sync): merged in SQL, or inserted unless there (`write(_:to:numbering:on:)`).
    final class Way: Sendable {
        /// The UIDs of the tables whose chunks are inserted first.
        private let inserting = NIOLockedValueBox<Set<UInt64>>([])

        func insertsFirst(_ table: ServerSchema.Table) -> Bool {
            inserting.withLockedValue { $0.contains(table.entity.uid) }
        }

        func set(_ table: ServerSchema.Table, insertsFirst: Bool) {
            inserting.withLockedValue {
                if insertsFirst { $0.insert(table.entity.uid) } else { $0.remove(table.entity.uid) }
            }
        }
    }
}

/// Where a push numbers the rows it writes: a change row each in the namespace's
/// `cellar_changes`, with the table's UID and the pushing device.
struct ChangeNumbering: Sendable {
    /// The qualified `cellar_changes`.
    let changes: String
    let tableUid: UInt64
    /// The device's id, as text.
    let device: String

    init(in schema: ServerSchema, of table: ServerSchema.Table, by device: String) {
        (changes, tableUid, self.device) = (SQL.quote(schema.namespace) + ".cellar_changes", table.entity.uid, device)
    }

    /// The `WITH` member (`logged AS (…)`) that numbers a change row for each row of the member
    /// `written` (which returns `cellar_id`); appends the two parameters it refers to.
    func clause(binding binds: inout PostgresBindings) -> String {
        let first = binds.count + 1
        binds.append(texts: [String(tableUid), device])
        return "logged AS (INSERT INTO \(changes) (table_uid, cellar_id, device) SELECT $\(first)::numeric, cellar_id, $\(first + 1)::uuid FROM written)"
    }
}

/// The clock arrays (`ServerRow.clockArray`) of a statement's rows: each distinct one once, and
/// each row's number among them (from 1). The objects of one bulk commit share one array (every
/// property stamped with the commit's clock); the server then reads it once instead of once a
/// row, which in psql took a third of a plain insert's time (when they were `jsonb` documents).
private struct ClockArrays {
    /// The distinct arrays, in the order of their first rows.
    private(set) var texts: [String?] = []
    /// Each row's array's number in `texts`, from 1.
    private(set) var numbers: [Int32] = []

    init(_ rows: [ServerRow], in table: ServerSchema.Table) {
        numbers.reserveCapacity(rows.count)
        var numbered: [String: Int32] = [:]
        for (index, row) in rows.enumerated() {
            // (Runs of equal clocks, as a commit's objects come, are found without the text.)
            if index > 0, rows[index - 1].clocks == row.clocks {
                numbers.append(numbers[index - 1])
                continue
            }
            let text = row.clockArray(in: table)
            if let number = numbered[text] {
                numbers.append(number)
            } else {
                texts.append(text)
                numbers.append(Int32(texts.count))
                numbered[text] = Int32(texts.count)
            }
        }
    }

    /// Whether the rows share their arrays enough to send each once: joining them back by
    /// number cost 7 % more (in psql) than reading each row's own when every row's differs.
    var shared: Bool { texts.count * 2 <= numbers.count }

    /// Each row's array.
    var eachRow: [String?] { numbers.map { texts[Int($0) - 1] } }
}

/// One statement that writes rows: each column's values are one binary array parameter (the
/// ids a `uuid[]`, every other column a `text[]`) that `unnest` turns back into rows. A
/// statement of a few parameters whatever the number of rows is parsed and planned in
/// microseconds, where a `VALUES` list of thousands of tuples took longer than writing them.
///
/// With a `numbering`, the same statement numbers a change row for each row written.
private struct Write: Sendable {
    enum Kind {
        /// Inserts rows none of which is on the server. The push's advisory lock and its row
        /// locks keep anyone else from inserting or changing these rows meanwhile, so no
        /// `ON CONFLICT` is needed.
        case insert
        /// Updates rows each of which is there (read and locked before).
        case update
        /// Inserts the rows that are not there yet (`ON CONFLICT DO NOTHING`), unread: the
        /// statement returns the ids of the rows that were, for the push to read and merge.
        case insertUnlessThere
    }

    let sql: String
    let binds: PostgresBindings
    let count: Int
    let kind: Kind
    let table: String

    /// Nil for no rows.
    init?(_ rows: [ServerRow], _ kind: Kind, to table: ServerSchema.Table, numbering: ChangeNumbering?) {
        guard !rows.isEmpty else { return nil }
        let names = table.rowColumns
        let arrays = ClockArrays(rows, in: table)
        let shared = arrays.shared
        // Shared clock arrays are read once each, from their own parameter (after the
        // columns'), and joined to the rows by number.
        let clocks = shared ? "docs.doc" : "u.c2::text[]"
        let casts = [ColumnText.cast("u.c0", .uuid), "u.c1", clocks]
            + table.types.enumerated().map { ColumnText.cast("u.c\($0.offset + 3)", $0.element) }
        // The ids go as a `uuid[]`, every other column as a `text[]` cast to its type (a row's
        // clock array as the text of one, the shared arrays' numbers as an `int4[]`).
        let types = names.indices.map { $0 == 0 ? "uuid" : $0 == 2 && shared ? "int4" : "text" }
        let rowsOf = "unnest(" + types.enumerated().map { "$\($0.offset + 1)::\($0.element)[]" }.joined(separator: ", ") + ") AS u("
            + names.indices.map { "c\($0)" }.joined(separator: ", ") + ")"
            + (shared ? " JOIN docs ON docs.n = u.c2" : "")
        let insert = "INSERT INTO \(table.qualified) (\(names.joined(separator: ", "))) SELECT \(casts.joined(separator: ", ")) FROM " + rowsOf
        let statement = switch kind {
        case .insert: insert + " RETURNING cellar_id"
        case .insertUnlessThere: insert + " ON CONFLICT (cellar_id) DO NOTHING RETURNING cellar_id"
        case .update:
            // Each column's clock goes to its slot, and the slots of columns this model lacks
            // keep theirs.
            "UPDATE \(table.qualified) AS t SET "
                + (["cellar_removed = u.c1"] + table.slots.map { "cellar_clocks[\($0)] = (\(clocks))[\($0)]" }
                    + zip(names, casts).dropFirst(3).map { "\($0) = \($1)" }).joined(separator: ", ")
                // (The ids once more as a list: the rows to change are found in the primary key's index, not by hashing the table.)
                + " FROM " + rowsOf + " WHERE t.cellar_id = " + casts[0] + " AND t.cellar_id = ANY($1::uuid[]) RETURNING t.cellar_id"
        }
        var binds = PostgresBindings(capacity: names.count + 3)
        binds.append(UUIDArray(rows.map(\.id)))
        binds.append(TextArray(rows.map(\.removed)))
        if shared { binds.append(Int32Array(arrays.numbers)) } else { binds.append(TextArray(arrays.eachRow)) }
        for position in table.uids.indices { binds.append(TextArray(rows.map { $0.values[position] })) }
        var sql = "WITH "
        if shared {
            sql += "docs AS MATERIALIZED (SELECT d.doc::text[] AS doc, d.n::int4 AS n FROM unnest($\(binds.count + 1)::text[]) WITH ORDINALITY AS d(doc, n)), "
            binds.append(TextArray(arrays.texts))
        }
        sql += "written AS (\(statement))"
        if let numbering { sql += ", " + numbering.clause(binding: &binds) }
        sql += kind == .insertUnlessThere
            ? " SELECT u.id::text FROM unnest($1::uuid[]) AS u(id) WHERE NOT EXISTS (SELECT 1 FROM written WHERE written.cellar_id = u.id)"
            : " SELECT count(*)::text FROM written"
        (self.sql, self.binds, count, self.kind, self.table) = (sql, binds, rows.count, kind, table.qualified)
    }

    /// Runs the statement; returns the ids of the rows that were there already
    /// (`insertUnlessThere`; none for the others, which fail unless they write every row).
    @discardableResult
    func run(on connection: PostgresConnection, logger: Logger) async throws -> [UUID] {
        let returned: [[String?]]
        do {
            returned = try await connection.rows(sql, binds: binds, logger: logger)
        } catch let error as PSQLError where kind == .insert && error.serverInfo?[.sqlState] == "23505" {
            // A row this role's locking read could not see (a row-level-security policy lets
            // it read the row but not change it) is there after all.
            throw SyncError(.server, "row-level security (or another policy) keeps this role from changing rows of \(table) that this push changes: nothing of it is applied (\(SyncError.describe(error)))")
        }
        if kind == .insertUnlessThere {
            return try returned.map { cells in
                guard let id = cells[0].flatMap(UUIDText.uuid) else { throw SyncError(.server, "the server returned no id for a row already there") }
                return id
            }
        }
        // Each row was read and locked above, so the update must change each: one left
        // unchanged (by a policy that hides it from UPDATE alone) must not pass for an
        // acknowledged push.
        if let text = returned.first?[0] ?? nil, let written = Int(text), written != count {
            throw SyncError(.server, "row-level security (or another policy) left \(count - written) of \(count) rows of \(table) unchanged: nothing of this push is applied")
        }
        return []
    }
}
