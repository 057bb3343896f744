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
    @Test func aDeviceChangesOnlyTheRowsItsRoleInserted() async throws {
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let roles = ["cellar_a_" + suffix, "cellar_b_" + suffix]
        defer {
            // The roles outlive the schema: dropped after it, whatever happened.
            Task {
                guard let connection = try? await TestServer.server().connect(logger: TestServer.logger) else { return }
                for role in roles { _ = try? await connection.query("DROP ROLE IF EXISTS \(unescaped: role)", logger: TestServer.logger) }
                try? await connection.close()
            }
        }
        try await TestServer.freshSchema { connection, schema in
            let harness = try SyncHarness(schema: schema)
            defer { Task { await harness.close() } }
            // The privileged client makes the tables.
            let (_, admin) = try harness.addStore()
            try await admin.sync()
            let ns = SQL.quote(schema)
            for role in roles { try await connection.execute("CREATE ROLE \(role) LOGIN", logger: TestServer.logger) }
            let grantees = roles.joined(separator: ", ")
            for statement in [
                "ALTER TABLE \(ns).\"Item\" ENABLE ROW LEVEL SECURITY",
                "CREATE POLICY read_all ON \(ns).\"Item\" FOR SELECT USING (true)",
                "CREATE POLICY write_own ON \(ns).\"Item\" FOR INSERT WITH CHECK (cellar_owner = current_user)",
                "CREATE POLICY update_own ON \(ns).\"Item\" FOR UPDATE USING (cellar_owner = current_user) WITH CHECK (cellar_owner = current_user)",
                "GRANT USAGE ON SCHEMA \(ns) TO \(grantees)",
                "GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA \(ns) TO \(grantees)",
                "GRANT USAGE ON ALL SEQUENCES IN SCHEMA \(ns) TO \(grantees)",
            ] {
                try await connection.execute(statement, logger: TestServer.logger)
            }
            let url = try #require(TestServer.url)
            func server(as role: String) throws -> SyncServer {
                var components = try #require(URLComponents(string: url))
                components.user = role
                components.password = nil
                return try SyncServer(url: try #require(components.string))
            }
            harness.server = try server(as: roles[0])
            let (a, clientA) = try harness.addStore()
            harness.server = try server(as: roles[1])
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
}
