@_spi(Sync) import Cellar
@testable import CellarSync
import Foundation
import PostgresNIO
import Testing

/// A server made by earlier builds, whose rows kept their clocks in a `jsonb` document by UID
/// (`cellar_clock`) as the clocks' descriptions (hexadecimal and a UUID), and whose columns had
/// no slots, is moved to the slots by the next device that syncs with it: every clock kept, in
/// its column's slot, as `ReplicaClock.text`; the removals' clocks too; nothing else changed.
struct ServerLayoutTests {
    @Test(.enabled(if: TestServer.enabled, TestServer.skipped))
    func aServerWithClockDocumentsMovesToSlotsLosingNothing() async throws {
        try await TestServer.freshSchema { connection, schema in
            let logger = TestServer.logger
            let harness = try SyncHarness(schema: schema)
            defer { Task { await harness.close() } }
            let (a, clientA) = try harness.addStore()
            let items = (0..<20).map { Item(title: "item \($0)", count: $0) }
            try a.box(for: Item.self).put(items)
            items[3].count = 300
            try a.box(for: Item.self).put(items[3])
            try await clientA.sync()
            try a.box(for: Item.self).remove(items[7].id)
            try await clientA.sync()
            let ns = SQL.quote(schema), table = ns + ".\"Item\""

            // The layout of the earlier builds, made from this one's: the document of each row's
            // clocks by UID in their older text, one member of a UID without a column and one
            // that is no string; the removal's clock in the older text.
            let before = try await connection.rows("""
                SELECT r.cellar_id::text, c.uid::text, r.cellar_clocks[c.slot] FROM \(table) AS r, \(ns).cellar_columns AS c
                WHERE c.table_uid = (SELECT uid FROM \(ns).cellar_tables WHERE name = 'Item') AND r.cellar_clocks[c.slot] IS NOT NULL ORDER BY 1, 2
                """, logger: logger)
            #expect(before.count > 19 * 3)
            var documents: [String: [String]] = [:]
            for row in before {
                let text = try #require(row[2])
                let clock = try #require(ReplicaClock(text: text))
                documents[row[0]!, default: []].append("\"\(row[1]!)\": \"\(clock.description)\"")
            }
            try await connection.execute("ALTER TABLE \(table) ADD COLUMN cellar_clock jsonb NOT NULL DEFAULT '{}'", logger: logger)
            for (id, members) in documents {
                try await connection.execute("UPDATE \(table) SET cellar_clock = $2::jsonb WHERE cellar_id = $1::uuid",
                                             [id, "{" + (members + [#""999": "x", "998": 5"#]).joined(separator: ", ") + "}"], logger: logger)
            }
            let removals = try await connection.rows("SELECT cellar_id::text, cellar_removed FROM \(table) WHERE cellar_removed IS NOT NULL",
                                                     logger: logger)
            #expect(removals.count == 1)
            for row in removals {
                let text = try #require(row[1])
                let clock = try #require(ReplicaClock(text: text))
                try await connection.execute("UPDATE \(table) SET cellar_removed = $2 WHERE cellar_id = $1::uuid", [row[0], clock.description],
                                             logger: logger)
            }
            try await connection.execute("ALTER TABLE \(table) DROP COLUMN cellar_clocks", logger: logger)
            try await connection.execute("ALTER TABLE \(ns).cellar_columns DROP COLUMN slot", logger: logger)

            // A new device syncs: the server moves to the slots, and the device receives
            // everything as it was.
            let (b, clientB) = try harness.addStore()
            try await clientB.sync()
            #expect(try SyncHarness.picture(of: a) == SyncHarness.picture(of: b))
            let after = try await connection.rows("""
                SELECT r.cellar_id::text, c.uid::text, r.cellar_clocks[c.slot] FROM \(table) AS r, \(ns).cellar_columns AS c
                WHERE c.table_uid = (SELECT uid FROM \(ns).cellar_tables WHERE name = 'Item') AND r.cellar_clocks[c.slot] IS NOT NULL ORDER BY 1, 2
                """, logger: logger)
            #expect(after == before)
            let removed = try await connection.rows("SELECT cellar_id::text, cellar_removed FROM \(table) WHERE cellar_removed IS NOT NULL",
                                                    logger: logger)
            #expect(removed == removals)
            let old = try await connection.rows("""
                SELECT count(*)::text FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = 'cellar_clock' AND NOT attisdropped
                """, [table], logger: logger)
            #expect(old == [["0"]])
            let slots = try await connection.rows("SELECT count(DISTINCT (table_uid, slot))::text, count(slot)::text, count(*)::text FROM \(ns).cellar_columns",
                                                  logger: logger)
            #expect(slots.first?[0] == slots.first?[2] && slots.first?[1] == slots.first?[2], "every column has a slot of its own")

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
}
