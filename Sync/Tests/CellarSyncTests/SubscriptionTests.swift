@_spi(Sync) import Cellar
@testable import CellarSync
import Foundation
import PostgresNIO
import Testing

/// Subscriptions: a device holds the objects its queries match. The server's SQL agrees with the
/// store's own query evaluation; objects enter and leave as they and the subscriptions change;
/// writes outside the subscriptions are pushed, then leave; three devices changing subscriptions
/// amid random edits each end with exactly the server's rows their subscriptions match.
@Suite(.serialized, .enabled(if: TestServer.enabled, TestServer.skipped))
struct SubscriptionTests {
    typealias Generator = ConvergenceTests.Generator

    static func options() -> SyncOptions {
        var options = SyncOptions()
        options.bySubscription = true
        return options
    }

    /// The Item table as the server names its columns (property names).
    static func itemTable(_ store: Store, schema: String) throws -> ServerSchema.Table {
        let entity = try #require(try store.replicaSchema().entities.first { $0.name == "Item" })
        var columns: [UInt64: String] = [:]
        for property in entity.properties { columns[property.uid] = SQL.quote(property.name) }
        for relation in entity.relations { columns[relation.uid] = SQL.quote(relation.name) }
        // (Slots as a new server numbers them: in the order of the properties, then relations.)
        let uids = entity.properties.map(\.uid) + entity.relations.map(\.uid)
        return ServerSchema.Table(entity: entity, qualified: SQL.quote(schema) + ".\"Item\"", asymmetric: false, columns: columns,
                                  slots: Dictionary(uniqueKeysWithValues: uids.enumerated().map { ($0.element, $0.offset + 1) }))
    }

    /// The global ids of the server's live Item rows that meet `condition` (or, `negated`, that
    /// do not).
    static func serverIds(_ condition: String, negated: Bool = false, table: ServerSchema.Table,
                          on connection: PostgresConnection) async throws -> Set<String> {
        let rows = try await connection.rows("""
            SELECT cellar_row.cellar_id::text FROM \(table.qualified) AS cellar_row
            WHERE cellar_row.cellar_removed IS NULL AND \(negated ? "NOT " : "")\(condition)
            """, logger: TestServer.logger)
        return Set(rows.compactMap { $0[0] })
    }

    static func gids(_ items: [Item], in store: Store) throws -> Set<String> {
        let uid = store.model.entity(named: "Item")!.id.uid
        return Set(try items.map { try #require(try store.globalId(entityUid: uid, id: $0.id)).uuidString.lowercased() })
    }

    /// Random conditions of every kind a subscription translates, on values chosen to catch
    /// the differences between SQL and the store: strings whose byte order differs from a
    /// locale's, quotes, braces and non-ASCII text; negative and large numbers; -0; nil.
    @Test(arguments: [0x5EED_0101, UInt64.random(in: 1...UInt64.max)])
    func theServersSQLAgreesWithTheStoresQueries(seed: UInt64) async throws {
        try await TestServer.freshSchema { connection, schema in
            var random = Generator(state: seed)
            let harness = try SyncHarness(schema: schema)
            defer { Task { await harness.close() } }
            let (store, client) = try harness.addStore()
            let titles = ["", "a", "Ab", "ab", "abc", "b", "é", "e\u{301}", "z", "Z", "ß", "日本", "Shop'; DROP TABLE x; --", "a\"b", "{12}", "x\\y", "%_"]
            let items = store.box(for: Item.self)
            for _ in 0..<200 {
                let item = Item(title: titles.randomElement(using: &random)!, count: [-5, -1, 0, 1, 2, 3, 7, Int.max, Int.min].randomElement(using: &random)!)
                item.score = [-1.5, -0.0, 0.0, 0.5, 2.25, 1e300].randomElement(using: &random)!
                item.done = Bool.random(using: &random)
                item.due = Bool.random(using: &random) ? Date(timeIntervalSince1970: Double(Int.random(in: -3...3, using: &random)) * 1000) : nil
                item.data = Bool.random(using: &random) ? Data([UInt8.random(in: 0...2, using: &random), 0xFF]) : nil
                try items.put(item)
            }
            try await client.sync()
            let table = try Self.itemTable(store, schema: schema)
            let all = try Self.gids(try items.all(), in: store)

            func leaf() -> QueryCondition<Item> {
                let title = titles.randomElement(using: &random)!
                let count = [-5, 0, 2, 7].randomElement(using: &random)!
                switch Int.random(in: 0..<17, using: &random) {
                case 0: return Item.title == title
                case 1: return Item.title != title
                case 2: return Item.title < title
                case 3: return Item.title >= title
                case 4: return Item.title.isIn([title, titles.randomElement(using: &random)!])
                case 5: return Item.title.isNotIn([title])
                case 6: return Item.title.startsWith(title)
                case 7: return Item.title.endsWith(title)
                case 8: return Item.title.contains(title)
                case 9: return Item.count < count
                case 10: return Item.count.isBetween(-1, and: count)
                case 11: return Item.count.isIn([count, Int.max])
                case 12: return Item.score > [-0.0, 0.5, -2.0].randomElement(using: &random)!
                case 13: return Item.done == Bool.random(using: &random)
                case 14: return Bool.random(using: &random) ? Item.due.isNil() : Item.due > Date(timeIntervalSince1970: 0)
                case 15: return Item.data == Data([1, 0xFF])
                default: return Item.data.isNotNil() && Item.count != count
                }
            }
            for _ in 0..<80 {
                var condition = leaf()
                for _ in 0..<Int.random(in: 0...2, using: &random) {
                    condition = Bool.random(using: &random) ? (condition && leaf()) : (condition || leaf())
                }
                let query = try items.query { condition }.build()
                let (_, filter) = try query.replicaFilter()
                let template = try SubscriptionSQL.template(filter, entity: table.entity)
                let sql = try SubscriptionSQL.condition(template, in: table)
                let expected = try Self.gids(try query.find(), in: store)
                #expect(try await Self.serverIds(sql, table: table, on: connection) == expected, "seed \(seed): \(template)")
                #expect(try await Self.serverIds(sql, negated: true, table: table, on: connection) == all.subtracting(expected), "seed \(seed): NOT \(template)")
            }
        }
    }

    @Test func objectsEnterAndLeaveAsTheyAndTheSubscriptionsChange() async throws {
        try await TestServer.freshSchema { connection, schema in
            let harness = try SyncHarness(schema: schema)
            defer { Task { await harness.close() } }
            let (a, clientA) = try harness.addStore()
            harness.options.bySubscription = true
            let (b, clientB) = try harness.addStore()
            let itemsA = a.box(for: Item.self), itemsB = b.box(for: Item.self)
            let ada = Person(name: "ada")
            try a.box(for: Person.self).put(ada)
            for count in 0..<20 {
                let item = Item(title: "item \(count)", count: count)
                item.owner.target = ada
                try itemsA.put(item)
            }
            try await clientA.sync()

            // Nothing is subscribed: B holds nothing.
            try await clientB.sync()
            #expect(try itemsB.count() == 0)
            try await clientB.subscribe(try itemsB.query { Item.count < 10 }.build(), name: "small")
            var report = try await clientB.sync()
            #expect(try itemsB.all().map(\.count).sorted() == Array(0..<10))
            // The owner is outside B's subscriptions: the relation points at an object not held.
            let held = try #require(try itemsB.all().first)
            #expect(held.owner.targetId != 0)
            #expect(held.owner.target == nil)
            #expect(try b.box(for: Person.self).count() == 0)

            // Objects change on A: one leaves B's subscription, one enters it.
            let five = try #require(try itemsA.query { Item.count == 5 }.build().findFirst())
            let fifteen = try #require(try itemsA.query { Item.count == 15 }.build().findFirst())
            five.count = 105
            fifteen.count = 3
            try itemsA.put([five, fifteen])
            try await clientA.sync()
            report = try await clientB.sync()
            #expect(report.left == 1)
            #expect(try itemsB.all().map(\.count).sorted() == [0, 1, 2, 3, 3, 4, 6, 7, 8, 9])

            // The subscription changes: what matched before leaves, what matches now arrives.
            try await clientB.subscribe(try itemsB.query { Item.count >= 16 || Item.title == "item 5" }.build(), name: "small")
            report = try await clientB.sync()
            #expect(report.left == 10)
            #expect(try itemsB.all().map(\.count).sorted() == [16, 17, 18, 19, 105])

            // A write outside the subscriptions is pushed, then leaves B.
            try itemsB.put(Item(title: "made on b", count: 1))
            let seventeen = try #require(try itemsB.query { Item.count == 17 }.build().findFirst())
            seventeen.count = 2
            try itemsB.put(seventeen)
            report = try await clientB.sync()
            #expect(try itemsB.all().map(\.count).sorted() == [16, 18, 19, 105])
            try await clientA.sync()
            #expect(try itemsA.query { Item.title == "made on b" }.build().count() == 1)
            #expect(try itemsA.query { Item.title == "item 17" }.build().findFirst()?.count == 2)

            // The subscriptions last: a new client on the store has them, and ending them lets
            // every object go (from B only).
            await clientB.close()
            var options = Self.options()
            options.schema = schema
            let again = SyncClient(store: b, server: try TestServer.server(), options: options, logger: TestServer.logger)
            #expect(try again.subscriptions().map(\.name) == ["small"])
            #expect(try await again.unsubscribe(named: "small"))
            report = try await again.sync()
            #expect(try itemsB.count() == 0)
            #expect(try itemsA.count() == 21)
            let live = try await connection.rows("SELECT count(*)::text FROM \(SQL.quote(schema)).\"Item\" WHERE cellar_removed IS NULL", logger: TestServer.logger)
            #expect(live.first?[0] == "21")
            await again.close()
        }
    }

    /// An object whose local changes are not on the server yet stays when its row stops
    /// matching; once pushed, the server keeps those changes and the object leaves.
    @Test func anObjectWithUnsentChangesLeavesOnlyOnceTheyArePushed() async throws {
        try await TestServer.freshSchema { _, schema in
            let harness = try SyncHarness(schema: schema, options: Self.options())
            defer { Task { await harness.close() } }
            let (a, clientA) = try harness.addStore()
            let (b, clientB) = try harness.addStore()
            try await clientA.subscribe(try a.box(for: Item.self).query().build())
            try await clientB.subscribe(try b.box(for: Item.self).query { Item.count < 10 }.build())
            try a.box(for: Item.self).put(Item(title: "x", count: 1))
            try await clientA.sync()
            try await clientB.sync()
            let item = try #require(try b.box(for: Item.self).all().first)
            let uid = b.model.entity(named: "Item")!.id.uid
            let gid = try #require(try b.globalId(entityUid: uid, id: item.id))
            item.title = "changed on b"
            try b.box(for: Item.self).put(item)
            // The row left B's subscription meanwhile: a pull that finds that keeps the object.
            let report = try b.applyIncoming([], leaving: [uid: [gid]], through: try b.replicaState().pulled)
            #expect(report.left == 0)
            #expect(try b.box(for: Item.self).get(item.id)?.title == "changed on b")
            // Once pushed and found outside the subscription, it leaves; the server has the change.
            let edited = try #require(try a.box(for: Item.self).all().first)
            edited.count = 50
            try a.box(for: Item.self).put(edited)
            try await clientA.sync()
            try await clientB.sync()
            try await clientA.sync()
            #expect(try b.box(for: Item.self).count() == 0)
            let onA = try #require(try a.box(for: Item.self).all().first)
            #expect(onA.title == "changed on b")
            #expect(onA.count == 50)
        }
    }

    /// A to-many relation keeps a target that left the device: a later change of the
    /// relation there sends it with the rest, and the server loses no link.
    @Test func aRelationKeepsATargetThatLeft() async throws {
        try await TestServer.freshSchema { _, schema in
            let harness = try SyncHarness(schema: schema, options: Self.options())
            defer { Task { await harness.close() } }
            let (a, clientA) = try harness.addStore()
            let (b, clientB) = try harness.addStore()
            for (client, store) in [(clientA, a), (clientB, b)] {
                try await client.subscribe(try store.box(for: Item.self).query().build())
            }
            try await clientA.subscribe(try a.box(for: Person.self).query().build())
            try await clientB.subscribe(try b.box(for: Person.self).query { Person.age < 50 }.build())
            let (ada, bob, cy) = (Person(name: "ada", age: 30), Person(name: "bob", age: 40), Person(name: "cy", age: 20))
            try a.box(for: Person.self).put([ada, bob, cy])
            let item = Item(title: "team")
            item.helpers.append(contentsOf: [ada, bob])
            try a.box(for: Item.self).put(item)
            try await clientA.sync()
            try await clientB.sync()
            // Bob grows out of B's subscription; B then adds Cy to the item's helpers.
            bob.age = 60
            try a.box(for: Person.self).put(bob)
            try await clientA.sync()
            let report = try await clientB.sync()
            #expect(report.left == 1)
            #expect(try b.box(for: Person.self).all().map(\.name).sorted() == ["ada", "cy"])
            let onB = try #require(try b.box(for: Item.self).all().first)
            let cyOnB = try #require(try b.box(for: Person.self).all().first { $0.name == "cy" })
            onB.helpers.append(cyOnB)
            try b.box(for: Item.self).put(onB)
            try await clientB.sync()
            try await clientA.sync()
            let onA = try #require(try a.box(for: Item.self).get(item.id))
            #expect(onA.helpers.map(\.name).sorted() == ["ada", "bob", "cy"])
        }
    }

    @Test func conditionsTheServerCannotEvaluateAreRefused() async throws {
        try await TestServer.freshSchema { _, schema in
            let harness = try SyncHarness(schema: schema)
            defer { Task { await harness.close() } }
            let (store, everything) = try harness.addStore()
            let items = store.box(for: Item.self)
            await #expect(throws: SyncError.self) { try await everything.subscribe(try items.query { Item.count > 1 }.build()) }
            harness.options.bySubscription = true
            let (_, client) = try harness.addStore()
            let refused: [QueryBuilder<Item>] = [
                items.query { Item.title.contains("a", caseSensitive: false) },
                items.query { Item.title.like("a*") },
                items.query { Item.tags.contains("x") },
                items.query { Item.price == Decimal(1) },
                items.query { Item.id > 3 },
                items.query().link(Item.owner) { Person.name == "ada" },
            ]
            for query in refused {
                do {
                    try await client.subscribe(try query.build())
                    Issue.record("a subscription the server cannot evaluate was taken")
                } catch let error as SyncError {
                    #expect(error.code == .invalidArgument)
                    #expect(error.message.contains("cannot use"))
                }
            }
            #expect(try client.subscriptions().isEmpty)
            await #expect(throws: SyncError.self) { try await client.subscribe(try store.box(for: LogLine.self).query().build()) }
        }
    }

    /// Three devices with changing subscriptions edit at random (each only what it holds), go
    /// offline (past the retention, now and then: they resync) and sync in a random order; at
    /// the end each holds exactly the server's live rows its subscriptions match, with the
    /// server's values.
    @Test(arguments: [0x5EED_0201, UInt64.random(in: 1...UInt64.max)])
    func threeDevicesHoldWhatTheirSubscriptionsMatch(seed: UInt64) async throws {
        try await TestServer.freshSchema { connection, schema in
            var random = Generator(state: seed)
            var options = Self.options()
            options.changeRetention = .seconds(3_600)
            let harness = try SyncHarness(schema: schema, options: options)
            defer { Task { await harness.close() } }
            for _ in 0..<3 { try harness.addStore() }
            var online = [true, true, true]
            let choices: [(String, QueryCondition<Item>)] = [
                ("low", Item.count < 30), ("middle", Item.count >= 40 && Item.count < 70), ("s1", Item.title.startsWith("s1-")),
                ("picked", Item.count.isIn([3, 33, 63, 93])), ("done", Item.done == true), ("renamed", Item.title.endsWith("renamed")),
            ]
            for (which, client) in harness.clients.enumerated() {
                let (name, condition) = choices[which]
                try await client.subscribe(try harness.stores[which].box(for: Item.self).query { condition }.build(), name: name)
                try await client.subscribe(try harness.stores[which].box(for: Person.self).query().build(), name: "people")
            }
            for step in 0..<300 {
                let which = Int.random(in: 0..<3, using: &random)
                let (store, client) = (harness.stores[which], harness.clients[which])
                let items = store.box(for: Item.self)
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<20:
                    let item = Item(title: "s\(which)-\(step)", count: Int.random(in: 0..<100, using: &random))
                    item.done = Bool.random(using: &random)
                    try items.put(item)
                case 20..<45:
                    guard let item = try items.all().randomElement(using: &random) else { break }
                    item.count = Int.random(in: 0..<100, using: &random)
                    try items.put(item)
                case 45..<52:
                    guard let item = try items.all().randomElement(using: &random) else { break }
                    item.title += "-renamed"
                    item.done.toggle()
                    try items.put(item)
                case 52..<57:
                    guard let item = try items.all().randomElement(using: &random) else { break }
                    try items.remove(item.id)
                case 57..<60:
                    try store.box(for: Person.self).put(Person(name: "p\(which)-\(step)"))
                case 60..<68:
                    let (name, condition) = choices.randomElement(using: &random)!
                    if Bool.random(using: &random) {
                        try await client.subscribe(try items.query { condition }.build(), name: name)
                    } else {
                        try await client.unsubscribe(named: name)
                    }
                case 68..<74:
                    online[which].toggle()
                case 74..<76:
                    // The offline devices were seen long ago: the changes they miss are pruned,
                    // and they read the current rows their subscriptions match when back.
                    if online[which] { try await harness.prune(by: which, offline: online, on: connection) }
                default:
                    if online[which] { try await client.sync() }
                }
            }
            try await harness.syncAll()
            let table = try Self.itemTable(harness.stores[0], schema: schema)
            for (which, client) in harness.clients.enumerated() {
                let store = harness.stores[which]
                let conditions = try client.subscriptions().filter { $0.entity == "Item" }.map { try SubscriptionSQL.condition($0.condition, in: table) }
                let sql = conditions.isEmpty ? "false" : "(" + conditions.joined(separator: " OR ") + ")"
                let rows = try await connection.rows("""
                    SELECT cellar_row.cellar_id::text, cellar_row.title, cellar_row.count::text FROM \(table.qualified) AS cellar_row
                    WHERE cellar_row.cellar_removed IS NULL AND \(sql)
                    """, logger: TestServer.logger)
                let server = Set(rows.map { "\($0[0] ?? "") \($0[1] ?? "") \($0[2] ?? "")" })
                let uid = store.model.entity(named: "Item")!.id.uid
                let held = Set(try store.box(for: Item.self).all().map { item in
                    "\(try #require(try store.globalId(entityUid: uid, id: item.id)).uuidString.lowercased()) \(item.title) \(item.count)"
                })
                #expect(held == server, "seed \(seed), device \(which): held but not matched \(held.subtracting(server).sorted()), matched but not held \(server.subtracting(held).sorted())")
                #expect(try store.box(for: Person.self).count() == (try harness.stores[0].box(for: Person.self).count()), "seed \(seed)")
                #expect(try !client.hasPendingChanges(), "seed \(seed)")
            }
        }
    }
}
