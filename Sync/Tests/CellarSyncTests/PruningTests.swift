@_spi(Sync) import Cellar
@testable import CellarSync
import Foundation
import PostgresNIO
import Testing

/// A server that stays small: changes every recently seen device has pulled are dropped, and a
/// device away longer than the retention, or a new one, reads the current rows instead of the
/// changes and converges.
@Suite(.serialized, .enabled(if: TestServer.enabled, TestServer.skipped))
struct PruningTests {
    static func options() -> SyncOptions {
        var options = SyncOptions()
        options.changeRetention = .seconds(3_600)
        return options
    }

    static func changeCount(_ connection: PostgresConnection, _ schema: String) async throws -> Int {
        let rows = try await connection.rows("SELECT count(*)::text FROM \(SQL.quote(schema)).cellar_changes", logger: TestServer.logger)
        return Int(rows.first?[0] ?? "") ?? -1
    }

    /// Puts, updates and removes of people and items with relations between them.
    static func edit(_ store: Store, round: Int) throws {
        let people = store.box(for: Person.self), items = store.box(for: Item.self)
        let ada = Person(name: "ada \(round)", age: round)
        try people.put(ada)
        for (index, person) in try people.all().enumerated() where index % 2 == 0 {
            person.age += 100
            try people.put(person)
        }
        let item = Item(title: "item \(round)", count: round)
        item.owner.target = ada
        item.helpers.append(contentsOf: try people.all().prefix(2))
        try items.put(item)
        if let old = try items.all().first(where: { $0.title != item.title }) { try items.remove(old.id) }
    }

    /// Pruning before any device has synced finds no tables: nothing to drop, no error.
    @Test func pruningAServerNoDeviceSyncedWithDropsNothing() async throws {
        try await TestServer.freshSchema { _, schema in
            let harness = try SyncHarness(schema: schema, options: Self.options())
            defer { Task { await harness.close() } }
            let (a, clientA) = try harness.addStore()
            try a.box(for: Item.self).put(Item(title: "not synced yet"))
            #expect(try await clientA.pruneServer() == 0)
            try await clientA.sync()
            #expect(try await clientA.pruneServer() == 0)
        }
    }

    @Test func aDeviceAwayLongerThanTheRetentionReadsTheCurrentRows() async throws {
        try await TestServer.freshSchema { connection, schema in
            let harness = try SyncHarness(schema: schema, options: Self.options())
            defer { Task { await harness.close() } }
            let (a, clientA) = try harness.addStore()
            let (b, clientB) = try harness.addStore()
            for round in 0..<3 { try Self.edit(a, round: round) }
            try await harness.syncAll()
            #expect(try SyncHarness.picture(of: a) == SyncHarness.picture(of: b))

            // B goes away; A goes on, and B changes an object of its own meanwhile.
            for round in 3..<6 { try Self.edit(a, round: round) }
            try await clientA.sync()
            let away = try #require(try b.box(for: Person.self).all().first)
            away.name = "changed while away"
            try b.box(for: Person.self).put(away)
            let device = UUIDText.text(try b.replicaState().device)
            try await connection.execute("UPDATE \(SQL.quote(schema)).cellar_devices SET seen = now() - interval '2 hours' WHERE device = $1::uuid",
                                         [device], logger: TestServer.logger)
            let dropped = try await clientA.pruneServer()
            #expect(dropped > 0)
            #expect(try await Self.changeCount(connection, schema) == 0)

            let report = try await clientB.sync()
            #expect(report.resynced)
            try await clientA.sync()
            #expect(try SyncHarness.picture(of: a) == SyncHarness.picture(of: b))
            #expect(try a.box(for: Person.self).all().contains { $0.name == "changed while away" })

            // A new store on a server that pruned reads the rows too.
            let (c, clientC) = try harness.addStore()
            #expect(try await clientC.sync().resynced)
            #expect(try SyncHarness.picture(of: c) == SyncHarness.picture(of: a))
            // And goes on with changes from then on.
            try Self.edit(a, round: 6)
            try await harness.syncAll()
            #expect(try SyncHarness.picture(of: c) == SyncHarness.picture(of: a))
            #expect(try SyncHarness.picture(of: b) == SyncHarness.picture(of: a))
        }
    }

    @Test func pruningKeepsWhatARecentlySeenDeviceHasNotPulled() async throws {
        try await TestServer.freshSchema { connection, schema in
            let harness = try SyncHarness(schema: schema, options: Self.options())
            defer { Task { await harness.close() } }
            let (a, clientA) = try harness.addStore()
            let (b, clientB) = try harness.addStore()
            try Self.edit(a, round: 0)
            try await harness.syncAll()
            let before = try await Self.changeCount(connection, schema)
            try await clientA.pruneServer()
            // Both pulled everything: all of it goes.
            #expect(try await Self.changeCount(connection, schema) == 0, "\(before) changes before")

            for round in 1..<4 { try Self.edit(a, round: round) }
            try await clientA.sync()
            let pending = try await Self.changeCount(connection, schema)
            #expect(pending > 0)
            #expect(try await clientA.pruneServer() == 0)
            #expect(try await Self.changeCount(connection, schema) == pending)
            let report = try await clientB.sync()
            #expect(!report.resynced)
            #expect(try SyncHarness.picture(of: a) == SyncHarness.picture(of: b))
        }
    }
}
