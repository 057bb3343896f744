@_spi(Sync) import Cellar
@testable import CellarSync
import Foundation
import PostgresNIO
import Testing

/// The row-level-security setup of the sync documentation, on the tests' server: two devices
/// connect as roles of their own, created for the test, after a privileged client made the
/// tables. Each may read every row but change only the rows its role inserted.
@Suite(.serialized, .enabled(if: TestServer.enabled, TestServer.skipped))
struct SecurityTests {
    /// Runs `body` with a harness whose privileged store made the tables (`harness.stores[0]`,
    /// `harness.clients[0]`), two login roles created for the test with the grants a device
    /// needs and `policies` on the `Item` table (row-level security on), and a way to name the
    /// server as either role. The roles are dropped afterwards, whatever happened.
    static func withTwoRoles(policies: [String], options: SyncOptions = SyncOptions(),
                             _ body: (SyncHarness, PostgresConnection, [String], (String) throws -> SyncServer) async throws -> Void) async throws {
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let roles = ["cellar_a_" + suffix, "cellar_b_" + suffix]
        defer { Task { await TestServer.dropRoles(roles) } }
        try await TestServer.freshSchema { connection, schema in
            let harness = try SyncHarness(schema: schema, options: options)
            defer { Task { await harness.close() } }
            // The privileged client makes the tables.
            let (_, admin) = try harness.addStore()
            try await admin.sync()
            let ns = SQL.quote(schema)
            for role in roles { try await connection.execute("CREATE ROLE \(role) LOGIN", logger: TestServer.logger) }
            let grantees = roles.joined(separator: ", ")
            let table = "\(ns).\"Item\""
            for statement in ["ALTER TABLE \(table) ENABLE ROW LEVEL SECURITY"] + policies.map({ $0.replacingOccurrences(of: "$TABLE", with: table) }) + [
                "GRANT USAGE ON SCHEMA \(ns) TO \(grantees)",
                "GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA \(ns) TO \(grantees)",
                "GRANT USAGE ON ALL SEQUENCES IN SCHEMA \(ns) TO \(grantees)",
            ] {
                try await connection.execute(statement, logger: TestServer.logger)
            }
            try await body(harness, connection, roles, TestServer.server(as:))
        }
    }

    static let writeOwn = [
        "CREATE POLICY write_own ON $TABLE FOR INSERT WITH CHECK (cellar_owner = current_user)",
        "CREATE POLICY update_own ON $TABLE FOR UPDATE USING (cellar_owner = current_user) WITH CHECK (cellar_owner = current_user)",
    ]

    @Test func aDeviceChangesOnlyTheRowsItsRoleInserted() async throws {
        try await Self.withTwoRoles(policies: ["CREATE POLICY read_all ON $TABLE FOR SELECT USING (true)"] + Self.writeOwn) { harness, connection, roles, server in
            let ns = SQL.quote(harness.schema)
            // One row per statement: the refused update fails while the next statement is on its way.
            harness.options.rowsPerStatement = 1
            harness.server = try server(roles[0])
            let (a, clientA) = try harness.addStore()
            harness.server = try server(roles[1])
            let (b, clientB) = try harness.addStore()

            try a.box(for: Item.self).put(Item(title: "a's item"))
            try await clientA.sync()
            try await clientB.sync()
            let item = try #require(try b.box(for: Item.self).all().first { $0.title == "a's item" })
            // B changes A's row: the push fails as a whole, its history stays to push again.
            item.title = "b was here"
            try b.box(for: Item.self).put(item)
            try b.box(for: Item.self).put(Item(title: "b's item"))
            let refused = await #expect(throws: SyncError.self) { try await clientB.sync() }
            #expect(refused?.message.contains("row-level security") == true, "\(String(describing: refused))")
            #expect(try clientB.hasPendingChanges())
            let titles = try await connection.rows("SELECT title, cellar_owner FROM \(ns).\"Item\" ORDER BY title", logger: TestServer.logger)
            #expect(titles == [["a's item", roles[0]]])
            // A still changes its own row.
            let own = try #require(try a.box(for: Item.self).all().first)
            own.count = 7
            try a.box(for: Item.self).put(own)
            try await clientA.sync()
            let counts = try await connection.rows("SELECT count::text FROM \(ns).\"Item\" WHERE title = 'a''s item'", logger: TestServer.logger)
            #expect(counts == [["7"]])
        }
    }

    /// A device syncing by subscription holds the rows its role may read and its subscriptions
    /// match, both.
    @Test func subscriptionsApplyOnTopOfRowLevelSecurity() async throws {
        // A role reads its own rows and the public ones (count 100 and up).
        let readOwnOrPublic = "CREATE POLICY read_own_or_public ON $TABLE FOR SELECT USING (cellar_owner = current_user OR count >= 100)"
        try await Self.withTwoRoles(policies: [readOwnOrPublic] + Self.writeOwn) { harness, _, roles, server in
            let (admin, adminClient) = (harness.stores[0], harness.clients[0])
            try admin.box(for: Item.self).put([Item(title: "admin 2", count: 2), Item(title: "admin 120", count: 120)])
            try await adminClient.sync()
            harness.server = try server(roles[0])
            let (a, clientA) = try harness.addStore()
            try a.box(for: Item.self).put([1, 150, 5, 200].map { Item(title: "a \($0)", count: $0) })
            try await clientA.sync()
            harness.server = try server(roles[1])
            harness.options.bySubscription = true
            let (b, clientB) = try harness.addStore()
            try await clientB.subscribe(try b.box(for: Item.self).query { Item.count < 180 }.build())
            try await clientB.sync()
            #expect(try b.box(for: Item.self).all().map(\.title).sorted() == ["a 150", "admin 120"])
            // A's own store holds all of its rows and the public ones.
            try await clientA.sync()
            #expect(try a.box(for: Item.self).all().map(\.title).sorted() == ["a 1", "a 150", "a 200", "a 5", "admin 120"])
        }
    }
}
