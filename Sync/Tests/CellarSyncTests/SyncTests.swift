@_spi(Sync) import Cellar
@testable import CellarSync
import Foundation
import PostgresNIO
import Testing

/// Two and three stores syncing through the test server: values, relations, conflicts,
/// removals, insert-only entities, idempotent pushes.
@Suite(.serialized, .enabled(if: TestServer.enabled, TestServer.skipped))
struct SyncTests {
    @Test func valuesAndRelationsReachTheOtherStore() async throws {
        try await TestServer.freshSchema { connection, schema in
            let harness = try SyncHarness(schema: schema)
            defer { Task { await harness.close() } }
            let (a, clientA) = try harness.addStore()
            let (b, clientB) = try harness.addStore()
            let ada = Person(name: "Ada", age: 36), bob = Person(name: "Bob", age: 41)
            try a.box(for: Person.self).put([ada, bob])
            let item = Item(title: "Füße & \"quotes\"", count: -7)
            item.score = 1e300
            item.done = true
            item.due = Date(timeIntervalSince1970: 1_700_000_000.123)
            item.tags = ["a", "b,c", ""]
            item.attributes = ["k": "v", "$x": "y"]
            item.extra = ["n": 1.0, "big": 1e20, "list": [1, "two", nil, true]]
            item.data = Data([0, 1, 254, 255])
            item.price = Decimal(string: "-340282366920938463463374607431768211.455")!   // no Double holds it
            item.owner.target = ada
            item.helpers.append(contentsOf: [ada, bob])
            try a.box(for: Item.self).put(item)
            let empty = Item(title: "")
            try a.box(for: Item.self).put(empty)

            let pushed = try await clientA.sync()
            #expect(pushed.pushed == 4)
            let pulled = try await clientB.sync()
            #expect(pulled.applied == 4)
            #expect(try SyncHarness.picture(of: a) == SyncHarness.picture(of: b))
            let copy = try #require(try b.box(for: Item.self).query { Item.title == item.title }.build().findFirst())
            #expect(copy.score == 1e300)
            #expect(copy.owner.target?.name == "Ada")
            #expect(copy.helpers.map(\.name).sorted() == ["Ada", "Bob"])
            #expect(copy.extra == item.extra)
            #expect(copy.price == item.price)
            // The server's table: a column per property, JSONB for collections and flex values.
            let types = try await connection.rows("""
                SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'Item'
                """, [schema], logger: TestServer.logger)
            let byName = Dictionary(uniqueKeysWithValues: types.map { ($0[0]!, $0[1]!) })
            #expect(byName["title"] == "text")
            #expect(byName["count"] == "bigint")
            #expect(byName["tags"] == "jsonb")
            #expect(byName["extra"] == "jsonb")
            #expect(byName["owner"] == "uuid")
            #expect(byName["price"] == "numeric")
            #expect(byName["helpers"] == "ARRAY")

            // Back the other way, and an update of one property.
            copy.count = 99
            try b.box(for: Item.self).put(copy)
            try await clientB.sync()
            try await clientA.sync()
            #expect(try a.box(for: Item.self).get(item.id)?.count == 99)
            #expect(try SyncHarness.picture(of: a) == SyncHarness.picture(of: b))
        }
    }

    @Test func concurrentEditsMergePerPropertyAndTheLaterWriterWins() async throws {
        try await TestServer.freshSchema { _, schema in
            let harness = try SyncHarness(schema: schema)
            defer { Task { await harness.close() } }
            let (a, clientA) = try harness.addStore()
            let (b, clientB) = try harness.addStore()
            let item = Item(title: "first", count: 1)
            try a.box(for: Item.self).put(item)
            try await harness.syncAll()
            let itemB = try #require(try b.box(for: Item.self).all().first)
            // Different properties, both offline: both changes stay.
            item.title = "from A"
            try a.box(for: Item.self).put(item)
            itemB.count = 2
            try b.box(for: Item.self).put(itemB)
            try await harness.syncAll()
            for store in [a, b] {
                let now = try #require(try store.box(for: Item.self).all().first)
                #expect(now.title == "from A")
                #expect(now.count == 2)
            }
            // The same property: the later write wins everywhere, also when it is pushed first.
            item.title = "A, earlier"
            item.count = 2
            try a.box(for: Item.self).put(item)
            try await Task.sleep(for: .milliseconds(5))
            itemB.title = "B, later"
            try b.box(for: Item.self).put(itemB)
            try await clientB.sync()
            try await clientA.sync()
            try await clientB.sync()
            #expect(try a.box(for: Item.self).get(item.id)?.title == "B, later")
            #expect(try SyncHarness.picture(of: a) == SyncHarness.picture(of: b))
        }
    }

    @Test func aRemovalWinsOverConcurrentUpdates() async throws {
        try await TestServer.freshSchema { _, schema in
            let harness = try SyncHarness(schema: schema)
            defer { Task { await harness.close() } }
            let (a, _) = try harness.addStore()
            let (b, _) = try harness.addStore()
            let item = Item(title: "doomed")
            try a.box(for: Item.self).put(item)
            try await harness.syncAll()
            let itemB = try #require(try b.box(for: Item.self).all().first)
            try a.box(for: Item.self).remove(item.id)
            try await Task.sleep(for: .milliseconds(5))
            itemB.title = "updated after the removal"
            try b.box(for: Item.self).put(itemB)
            try await harness.syncAll()
            #expect(try a.box(for: Item.self).count() == 0)
            #expect(try b.box(for: Item.self).count() == 0)
        }
    }

    @Test func withLastWriterWinsANewerUpdateBringsARemovedObjectBack() async throws {
        try await TestServer.freshSchema { _, schema in
            var options = SyncOptions()
            options.removals = .lastWriterWins
            let harness = try SyncHarness(schema: schema, options: options)
            defer { Task { await harness.close() } }
            let (a, _) = try harness.addStore()
            let (b, _) = try harness.addStore()
            let item = Item(title: "kept")
            try a.box(for: Item.self).put(item)
            try await harness.syncAll()
            let itemB = try #require(try b.box(for: Item.self).all().first)
            try a.box(for: Item.self).remove(item.id)
            try await Task.sleep(for: .milliseconds(5))
            itemB.title = "updated after the removal"
            try b.box(for: Item.self).put(itemB)
            try await harness.syncAll()
            #expect(try b.box(for: Item.self).all().map(\.title) == ["updated after the removal"])
            #expect(try a.box(for: Item.self).all().map(\.title) == ["updated after the removal"])
        }
    }

    /// A resolver under which the larger count wins, whoever wrote last.
    static let largerCountWins: ConflictResolver = { conflict in
        guard conflict.property == "count" else { return .lastWriterWins }
        return (Int(conflict.incomingValue ?? "") ?? 0) > (Int(conflict.serverValue ?? "") ?? 0) ? .takeIncoming : .keepServer
    }

    @Test func aResolverDecidesConflicts() async throws {
        try await TestServer.freshSchema { _, schema in
            var options = SyncOptions()
            options.resolver = Self.largerCountWins
            let harness = try SyncHarness(schema: schema, options: options)
            defer { Task { await harness.close() } }
            let (a, clientA) = try harness.addStore()
            let (b, clientB) = try harness.addStore()
            let item = Item(title: "t", count: 1)
            try a.box(for: Item.self).put(item)
            try await harness.syncAll()
            let itemB = try #require(try b.box(for: Item.self).all().first)
            item.count = 50
            try a.box(for: Item.self).put(item)
            try await Task.sleep(for: .milliseconds(5))
            itemB.count = 7
            try b.box(for: Item.self).put(itemB)
            try await clientA.sync()
            try await clientB.sync()
            try await clientA.sync()
            #expect(try a.box(for: Item.self).get(item.id)?.count == 50)
            #expect(try b.box(for: Item.self).get(itemB.id)?.count == 50)
        }
    }

    /// A resolver that keeps the server's value under the pushed change's newer clock: the
    /// pushing device learns the kept value from its own change (it had pulled everything else).
    @Test func aDeviceLearnsThatTheResolverKeptTheServersValue() async throws {
        try await TestServer.freshSchema { _, schema in
            var options = SyncOptions()
            options.resolver = Self.largerCountWins
            let harness = try SyncHarness(schema: schema, options: options)
            defer { Task { await harness.close() } }
            let (a, _) = try harness.addStore()
            let (b, clientB) = try harness.addStore()
            let item = Item(title: "t", count: 50)
            try a.box(for: Item.self).put(item)
            try await harness.syncAll()
            let itemB = try #require(try b.box(for: Item.self).all().first)
            #expect(itemB.count == 50)
            itemB.count = 7
            try b.box(for: Item.self).put(itemB)
            try await clientB.sync()
            #expect(try b.box(for: Item.self).get(itemB.id)?.count == 50)
        }
    }

    @Test func insertOnlyObjectsArePushedThenDroppedLocally() async throws {
        try await TestServer.freshSchema { connection, schema in
            let harness = try SyncHarness(schema: schema)
            defer { Task { await harness.close() } }
            let (a, clientA) = try harness.addStore()
            let (b, clientB) = try harness.addStore()
            try a.box(for: LogLine.self).put((0..<25).map { LogLine(message: "line \($0)") })
            try await clientA.sync()
            try await clientB.sync()
            #expect(try a.box(for: LogLine.self).count() == 0)
            #expect(try b.box(for: LogLine.self).count() == 0)
            let rows = try await connection.rows("SELECT count(*)::text FROM \(SQL.quote(schema)).\"LogLine\"", logger: TestServer.logger)
            #expect(rows.first?[0] == "25")
            // Their removal here is not pushed: the server keeps them all.
            try await clientA.sync()
            let alive = try await connection.rows("SELECT count(*)::text FROM \(SQL.quote(schema)).\"LogLine\" WHERE cellar_removed IS NULL",
                                                  logger: TestServer.logger)
            #expect(alive.first?[0] == "25")
        }
    }

    /// Many small pushes and pulls: more than nine changes, read a few at a time, so that a batch
    /// that followed the changes' order as text ("10" before "9") would skip some.
    @Test func smallBatchesCarryEveryChange() async throws {
        try await TestServer.freshSchema { connection, schema in
            var options = SyncOptions()
            options.pushEntries = 2
            options.pullChanges = 3
            options.changeRetention = nil  // B, new, would read the rows of a pruned server
            let harness = try SyncHarness(schema: schema, options: options)
            defer { Task { await harness.close() } }
            let (a, clientA) = try harness.addStore()
            let (b, clientB) = try harness.addStore()
            for number in 0..<25 { try a.box(for: Item.self).put(Item(title: "item \(number)", count: number)) }
            let pushed = try await clientA.sync()
            let pulled = try await clientB.sync()
            #expect(pushed.pushed == 25)
            #expect(pulled.pulledChanges == 25)
            #expect(pulled.applied == 25)
            #expect(try SyncHarness.picture(of: b) == SyncHarness.picture(of: a))
            #expect(try b.box(for: Item.self).count() == 25)
        }
    }

    /// A store that held objects before it recorded history sends them all at its first sync,
    /// every property of each, even of an object changed since (whose history names only the
    /// change); objects the history shows being created go once.
    @Test func theFirstSyncSendsObjectsFromBeforeTheHistory() async throws {
        try await TestServer.freshSchema { _, schema in
            let harness = try SyncHarness(schema: schema)
            defer { Task { await harness.close() } }
            let (a, clientA) = try harness.addStore { path in
                let plain = try Store(directoryPath: path)
                let owner = Person(name: "before", age: 41)
                try plain.box(for: Person.self).put(owner)
                let items = (0..<5).map { Item(title: "old \($0)", count: $0) }
                for item in items { item.owner.target = owner; item.helpers.append(owner) }
                try plain.box(for: Item.self).put(items)
                plain.close()
            }
            let (b, clientB) = try harness.addStore()
            let renamed = try #require(try a.box(for: Item.self).all().first)
            renamed.title = "renamed"
            try a.box(for: Item.self).put(renamed)
            try a.box(for: Item.self).put(Item(title: "new", count: 9))
            let pushed = try await clientA.sync()
            #expect(pushed.pushed == 7, "5 old items, their owner, the new item, each once")
            try await clientB.sync()
            #expect(try SyncHarness.picture(of: b) == SyncHarness.picture(of: a))
            let first = try #require(try b.box(for: Item.self).all().first { $0.title == "renamed" })
            #expect(first.count == renamed.count && first.owner.target?.name == "before" && first.helpers.count == 1)
        }
    }

    @Test func aPushTheServerTookAlreadyChangesNothing() async throws {
        try await TestServer.freshSchema { connection, schema in
            var options = SyncOptions()
            options.changeRetention = nil  // the check counts the change log's rows
            let harness = try SyncHarness(schema: schema, options: options)
            defer { Task { await harness.close() } }
            let (a, clientA) = try harness.addStore()
            try a.box(for: Item.self).put((0..<10).map { Item(title: "item \($0)") })
            try await clientA.sync()  // connects and migrates
            try a.box(for: Item.self).put(Item(title: "one more"))
            // The same push twice, as after a reply lost before the store noted it.
            let replica = try await ServerSchema.migrate(try a.replicaSchema(), options: harness.options, on: connection, logger: TestServer.logger)
            let push = Push(schema: replica, options: harness.options, device: try a.replicaState().device, logger: TestServer.logger)
            let outgoing = try a.outgoingChanges(limit: 100)
            let first = try await push.run(outgoing, on: connection)
            let second = try await push.run(outgoing, on: connection)
            #expect(first.written == 1 && !first.alreadyTaken)
            #expect(second.alreadyTaken && second.written == 0)
            // The client, which did not see the first reply, connects again and pushes it once
            // more: nothing doubles, and the store is not taken for a restored one.
            let device = try a.replicaState().device
            await clientA.close()
            try await clientA.sync()
            #expect(try a.replicaState().device == device)
            let changes = try await connection.rows("SELECT count(*)::text, count(DISTINCT cellar_id)::text FROM \(SQL.quote(schema)).cellar_changes",
                                                    logger: TestServer.logger)
            #expect(changes.first?[0] == "11")
            #expect(changes.first?[1] == "11")
        }
    }

    /// A store restored from a copy made before its last pushes: its new changes (numbered as
    /// ones the server already took from the original) reach the server, and it gets back what
    /// the original pushed after the copy.
    @Test func aStoreRestoredFromAnOlderCopyLosesNothing() async throws {
        try await TestServer.freshSchema { _, schema in
            let harness = try SyncHarness(schema: schema)
            defer { Task { await harness.close() } }
            let (a, clientA) = try harness.addStore()
            let first = Item(title: "first")
            try a.box(for: Item.self).put(first)
            try await clientA.sync()
            let copy = harness.directory + "/copy"
            try a.copy(to: copy)
            // After the copy, the original pushes two more entries, then is lost.
            try a.box(for: Item.self).put(Item(title: "after the copy"))
            first.title = "first, renamed after the copy"
            try a.box(for: Item.self).put(first)
            try await clientA.sync()
            await clientA.close()

            var storeOptions = StoreOptions()
            storeOptions.changeHistory = true
            let restored = try Store(directoryPath: copy, options: storeOptions)
            defer { restored.close() }
            let device = try restored.replicaState().device
            try restored.box(for: Item.self).put(Item(title: "made on the restored store"))
            let client = SyncClient(store: restored, server: try TestServer.server(), options: harness.options, logger: TestServer.logger)
            try await client.sync()
            try await client.sync()
            await client.close()
            #expect(try restored.replicaState().device != device)
            #expect(try restored.box(for: Item.self).all().map(\.title).sorted()
                    == ["after the copy", "first, renamed after the copy", "made on the restored store"])
            let (b, clientB) = try harness.addStore()
            try await clientB.sync()
            #expect(try SyncHarness.picture(of: b) == SyncHarness.picture(of: restored))
        }
    }

    /// An undo is an ordinary change: the other store receives it as such.
    @Test func anUndoReachesTheOtherStore() async throws {
        try await TestServer.freshSchema { _, schema in
            let harness = try SyncHarness(schema: schema)
            defer { Task { await harness.close() } }
            let (a, clientA) = try harness.addStore()
            let (b, clientB) = try harness.addStore()
            let item = Item(title: "draft", count: 1)
            try a.box(for: Item.self).put(item)
            try a.write(actionName: "Edit") {
                item.title = "final"
                item.count = 2
                try a.box(for: Item.self).put(item)
            }
            try await clientA.sync()
            try await clientB.sync()
            #expect(try b.box(for: Item.self).all().first?.title == "final")
            #expect(try a.undo() == "Edit")
            try await clientA.sync()
            try await clientB.sync()
            let onB = try #require(try b.box(for: Item.self).all().first)
            #expect(onB.title == "draft" && onB.count == 1)
        }
    }
}
