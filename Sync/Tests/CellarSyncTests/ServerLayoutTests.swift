@_spi(Sync) import Cellar
@testable import CellarSync
import Foundation
import PostgresNIO
import Testing

/// A server made by earlier builds, whose rows kept their clocks in a `jsonb` document by UID
/// (`cellar_clock`) as the clocks' descriptions (hexadecimal and a UUID), and whose columns had
/// no slots, is moved to the slots by the next device that syncs with it: every clock kept, in
/// its column's slot, as `ReplicaClock.text`; the removals' clocks too; nothing else changed.
/// Where row-level security would hide rows from the move, it moves nothing. A server keeps its
/// format, and one in a later build's format is refused, untouched.
struct ServerLayoutTests {
    @Test(.enabled(if: TestServer.enabled, TestServer.skipped))
    func aServerWithClockDocumentsMovesToSlotsLosingNothing() async throws {
        try await TestServer.freshSchema { connection, schema in
            let logger = TestServer.logger
            let harness = try SyncHarness(schema: schema)
            defer { Task { await harness.close() } }
            let (a, items, old) = try await Self.olderServer(harness, on: connection)
            let clientA = harness.clients[0]
            let table = old.table

            // A new device syncs: the server moves to the slots, and the device receives
            // everything as it was.
            let (b, clientB) = try harness.addStore()
            try await clientB.sync()
            #expect(try SyncHarness.picture(of: a) == SyncHarness.picture(of: b))
            #expect(try await Self.clocks(in: table, schema: schema, on: connection) == old.clocks)
            #expect(try await Self.removals(in: table, on: connection) == old.removals)
            #expect(try await Self.hasClockDocument(table, on: connection) == false)
            let slots = try await connection.rows("SELECT count(DISTINCT (table_uid, slot))::text, count(slot)::text, count(*)::text FROM \(SQL.quote(schema)).cellar_columns",
                                                  logger: logger)
            #expect(slots.first?[0] == slots.first?[2] && slots.first?[1] == slots.first?[2], "every column has a slot of its own")
            #expect(try await Self.format(schema, on: connection) == String(ServerSchema.format))

            // The moved clocks decide merges: B's later edit wins on A, A's later edit on B.
            let copy = try #require(try b.box(for: Item.self).query { Item.title == "item 3" }.build().findFirst())
            #expect(copy.count == 300)
            copy.count = 301
            try b.box(for: Item.self).put(copy)
            try await clientB.sync()
            try await clientA.sync()
            #expect(try a.box(for: Item.self).get(items[3].id)?.count == 301)
            items[5].title = "item 5, edited"
            try a.box(for: Item.self).put(items[5])
            try await harness.syncAll()
            #expect(try SyncHarness.picture(of: a) == SyncHarness.picture(of: b))
        }
    }

    /// Row-level security forced on the tables' owner, with a policy that lets half of the rows
    /// through: a device connecting as the owner cannot move the clocks (a `schema` error that
    /// says why), and the server stays as it was; without the policy forced, the same device
    /// moves every row.
    @Test(.enabled(if: TestServer.enabled, TestServer.skipped))
    func theMoveRefusesToLeaveRowsBehind() async throws {
        let owner = "cellar_layout_owner_" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        defer { Task { await TestServer.dropRoles([owner]) } }
        try await TestServer.freshSchema { connection, schema in
            let logger = TestServer.logger
            let harness = try SyncHarness(schema: schema)
            defer { Task { await harness.close() } }
            let (a, _, old) = try await Self.olderServer(harness, on: connection)
            let ns = SQL.quote(schema), table = old.table
            try await connection.execute("CREATE ROLE \(owner) LOGIN", logger: logger)
            try await connection.execute("ALTER SCHEMA \(ns) OWNER TO \(owner)", logger: logger)
            for name in try await connection.rows("SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = $1", [schema], logger: logger) {
                try await connection.execute("ALTER TABLE \(ns).\(name[0]!) OWNER TO \(owner)", logger: logger)
            }
            for statement in ["ENABLE ROW LEVEL SECURITY", "FORCE ROW LEVEL SECURITY"] {
                try await connection.execute("ALTER TABLE \(table) \(statement)", logger: logger)
            }
            try await connection.execute("CREATE POLICY half ON \(table) USING (count % 2 = 0)", logger: logger)
            harness.server = try TestServer.server(as: owner)
            let (b, clientB) = try harness.addStore()
            do {
                try await clientB.sync()
                Issue.record("the move went through with rows hidden from it")
            } catch let error as SyncError {
                #expect("\(error)".contains("row-level security"), "\(error)")
            }
            #expect(try await Self.hasClockDocument(table, on: connection) == true)
            #expect(try await Self.columnsHaveSlots(schema, on: connection) == false, "the columns' slots were rolled back with the rest")

            try await connection.execute("ALTER TABLE \(table) NO FORCE ROW LEVEL SECURITY", logger: logger)
            try await clientB.sync()
            #expect(try SyncHarness.picture(of: a) == SyncHarness.picture(of: b))
            #expect(try await Self.clocks(in: table, schema: schema, on: connection) == old.clocks)
            #expect(try await Self.removals(in: table, on: connection) == old.removals)
            #expect(try await Self.hasClockDocument(table, on: connection) == false)
        }
    }

    /// A server in a later build's format is refused by a device that connects, with a `schema`
    /// error that says so, and left as it was; back in this build's format, the same device syncs.
    @Test(.enabled(if: TestServer.enabled, TestServer.skipped))
    func aServerOfALaterFormatIsRefusedUntouched() async throws {
        try await TestServer.freshSchema { connection, schema in
            let logger = TestServer.logger
            let harness = try SyncHarness(schema: schema)
            defer { Task { await harness.close() } }
            let (a, clientA) = try harness.addStore()
            try a.box(for: Item.self).put((0..<5).map { Item(title: "item \($0)", count: $0) })
            try await clientA.sync()
            #expect(try await Self.format(schema, on: connection) == String(ServerSchema.format))

            let ns = SQL.quote(schema)
            let later = ServerSchema.format + 1
            try await connection.execute("UPDATE \(ns).cellar_pruned SET format = $1::integer", [String(later)], logger: logger)
            // What a later build might have changed: this build's move would undo it.
            try await connection.execute("ALTER TABLE \(ns).cellar_columns DROP COLUMN slot", logger: logger)
            let devices = try await connection.rows("SELECT count(*)::text FROM \(ns).cellar_devices", logger: logger)
            let (b, clientB) = try harness.addStore()
            // (The format is read when a device connects: A, connected already, is not asked.)
            for _ in 0..<2 {
                do {
                    try await clientB.sync()
                    Issue.record("a device synced with a server in format \(later)")
                } catch let error as SyncError {
                    #expect(error.code == .schema && "\(error)".contains("format \(later)"), "\(error)")
                }
            }
            #expect(try await Self.format(schema, on: connection) == String(later))
            #expect(try await connection.rows("SELECT count(*)::text FROM \(ns).cellar_devices", logger: logger) == devices)
            #expect(try await Self.columnsHaveSlots(schema, on: connection) == false, "the refused device changed nothing")

            try await connection.execute("UPDATE \(ns).cellar_pruned SET format = NULL", logger: logger)
            try await clientB.sync()
            #expect(try SyncHarness.picture(of: a) == SyncHarness.picture(of: b))
            #expect(try await Self.format(schema, on: connection) == String(ServerSchema.format))
        }
    }

    /// Whether `cellar_columns` has the columns' slots.
    static func columnsHaveSlots(_ schema: String, on connection: PostgresConnection) async throws -> Bool {
        try await connection.rows("""
            SELECT count(*)::text FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = 'slot' AND NOT attisdropped
            """, [SQL.quote(schema) + ".cellar_columns"], logger: TestServer.logger) != [["0"]]
    }

    /// The server's format as `cellar_pruned` holds it (nil: none).
    static func format(_ schema: String, on connection: PostgresConnection) async throws -> String? {
        try await connection.rows("SELECT format::text FROM \(SQL.quote(schema)).cellar_pruned", logger: TestServer.logger).first?[0] ?? nil
    }

    /// A server as earlier builds left it, made from this build's: a store (the harness's first)
    /// syncs 20 items, an edit and a removal; then each row's clocks go into a document by UID
    /// in their older text, with one member of a UID without a column and one that is no
    /// string, the removal's clock into its older text, and the slots and the format are dropped. Returns the
    /// store, its items, the qualified table, and the clocks and removals as this build wrote
    /// them (what the move must give back).
    static func olderServer(_ harness: SyncHarness, on connection: PostgresConnection) async throws
        -> (Store, [Item], (table: String, clocks: [[String?]], removals: [[String?]])) {
        let logger = TestServer.logger
        let (a, clientA) = try harness.addStore()
        let items = (0..<20).map { Item(title: "item \($0)", count: $0) }
        try a.box(for: Item.self).put(items)
        items[3].count = 300
        try a.box(for: Item.self).put(items[3])
        try await clientA.sync()
        try a.box(for: Item.self).remove(items[7].id)
        try await clientA.sync()
        let ns = SQL.quote(harness.schema), table = ns + ".\"Item\""

        let clocks = try await Self.clocks(in: table, schema: harness.schema, on: connection)
        #expect(clocks.count > 19 * 3)
        var documents: [String: [String]] = [:]
        for row in clocks {
            let text = try #require(row[2])
            let clock = try #require(ReplicaClock(text: text))
            documents[row[0]!, default: []].append("\"\(row[1]!)\": \"\(clock.description)\"")
        }
        try await connection.execute("ALTER TABLE \(table) ADD COLUMN cellar_clock jsonb NOT NULL DEFAULT '{}'", logger: logger)
        for (id, members) in documents {
            try await connection.execute("UPDATE \(table) SET cellar_clock = $2::jsonb WHERE cellar_id = $1::uuid",
                                         [id, "{" + (members + [#""999": "x", "998": 5"#]).joined(separator: ", ") + "}"], logger: logger)
        }
        let removals = try await Self.removals(in: table, on: connection)
        #expect(removals.count == 1)
        for row in removals {
            let text = try #require(row[1])
            let clock = try #require(ReplicaClock(text: text))
            try await connection.execute("UPDATE \(table) SET cellar_removed = $2 WHERE cellar_id = $1::uuid", [row[0], clock.description],
                                         logger: logger)
        }
        try await connection.execute("ALTER TABLE \(table) DROP COLUMN cellar_clocks", logger: logger)
        try await connection.execute("ALTER TABLE \(ns).cellar_columns DROP COLUMN slot", logger: logger)
        try await connection.execute("ALTER TABLE \(ns).cellar_pruned DROP COLUMN format", logger: logger)
        return (a, items, (table, clocks, removals))
    }

    /// Each row's clocks in `cellar_clocks` by column UID: (id, UID, clock), in order.
    static func clocks(in table: String, schema: String, on connection: PostgresConnection) async throws -> [[String?]] {
        let ns = SQL.quote(schema)
        return try await connection.rows("""
            SELECT r.cellar_id::text, c.uid::text, r.cellar_clocks[c.slot] FROM \(table) AS r, \(ns).cellar_columns AS c
            WHERE c.table_uid = (SELECT uid FROM \(ns).cellar_tables WHERE name = 'Item') AND r.cellar_clocks[c.slot] IS NOT NULL ORDER BY 1, 2
            """, logger: TestServer.logger)
    }

    /// The removed rows: (id, removal clock).
    static func removals(in table: String, on connection: PostgresConnection) async throws -> [[String?]] {
        try await connection.rows("SELECT cellar_id::text, cellar_removed FROM \(table) WHERE cellar_removed IS NOT NULL ORDER BY 1",
                                  logger: TestServer.logger)
    }

    /// Whether `table` still has the older builds' `cellar_clock`.
    static func hasClockDocument(_ table: String, on connection: PostgresConnection) async throws -> Bool {
        let rows = try await connection.rows("""
            SELECT count(*)::text FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = 'cellar_clock' AND NOT attisdropped
            """, [table], logger: TestServer.logger)
        return rows == [["1"]]
    }
}
