@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import CellarStorage
import Foundation
import Testing

/// Embedded objects (hand-written bindings of `EmbeddedEntities.swift`): round trips, conditions
/// through single embedded objects and lists of them, ordering and property queries by an
/// embedded property, indexes on embedded properties (used by the planner, kept up to date on
/// put, update and remove, built at open), all compared with the same filter in memory.
@Suite struct EmbeddedQueryTests {
    static let cities = ["Berlin", "Paris", "Rome", "berlin", "Oslo"]

    static func address(_ random: inout SplitMix64) -> EAddress? {
        guard random.next() % 4 != 0 else { return nil }
        let city = cities[Int(random.next() % UInt64(cities.count))]
        let tags = (0..<Int(random.next() % 3)).map { _ in ["a", "b", "c"][Int(random.next() % 3)] }
        let geo = random.next() % 2 == 0 ? EGeo(lat: Double(random.next() % 90), lon: Double(random.next() % 180)) : nil
        return EAddress(city: city, zip: "\(10_000 + random.next() % 20)", tags: tags, geo: geo)
    }

    static func lines(_ random: inout SplitMix64) -> [ELine] {
        (0..<Int(random.next() % 5)).map { _ in
            ELine(sku: "A-\(random.next() % 6)", quantity: Int(random.next() % 5), shipTo: random.next() % 3 == 0 ? address(&random) : nil)
        }
    }

    @Test func objectsRoundTripWithTheirEmbeddedObjects() throws {
        let store = try Store(directoryPath: "memory:embedded-roundtrip", model: embeddedModel())
        let contacts = store.box(for: EContact.self)
        let full = EContact("Ada", home: EAddress(city: "London", zip: "N1", tags: ["x", "y"], geo: EGeo(lat: 51.5, lon: -0.1)),
                            work: EAddress(city: "", zip: "", tags: [], geo: nil))
        let bare = EContact("Bob")
        try contacts.put([full, bare])
        let readFull = try #require(try contacts.get(full.id))
        #expect(readFull.home == full.home && readFull.work == full.work)
        let readBare = try #require(try contacts.get(bare.id))
        #expect(readBare.home == nil && readBare.work == nil)

        let orders = store.box(for: EOrder.self)
        var random = SplitMix64(seed: 7)
        let many = (0..<100).map { ELine(sku: "S\($0)", quantity: $0, shipTo: $0 % 10 == 0 ? Self.address(&random) : nil) }
        let order = EOrder(1, many), empty = EOrder(2, [])
        try orders.put([order, empty])
        #expect(try orders.get(order.id)?.lines == many)
        #expect(try orders.get(empty.id)?.lines == [])
        #expect(try RecordCheck.verify(store.engine).objects == 4)
    }

    /// A random data set, the same in a store with indexes on `zip` and `sku` and one without,
    /// and conditions compared with the filter in memory.
    @Test(arguments: [true, false]) func conditionsMatchTheFilterInMemory(indexed: Bool) throws {
        let store = try Store(directoryPath: "memory:embedded-query-\(indexed)", model: embeddedModel(indexes: indexed))
        let contacts = store.box(for: EContact.self), orders = store.box(for: EOrder.self)
        var random = SplitMix64(seed: 42)
        let allContacts = (0..<300).map { EContact("c\($0)", home: Self.address(&random), work: Self.address(&random)) }
        let allOrders = (0..<300).map { EOrder($0, Self.lines(&random)) }
        try contacts.put(allContacts)
        try orders.put(allOrders)

        func check(_ name: String, _ condition: QueryCondition<EContact>, _ filter: (EContact) -> Bool) throws {
            let found = try contacts.query { condition }.build().findIds().map(\.value)
            #expect(found == allContacts.filter(filter).map(\.id), "\(name)")
        }
        func check(_ name: String, _ condition: QueryCondition<EOrder>, _ filter: (EOrder) -> Bool) throws {
            let query = try orders.query { condition }.build()
            #expect(try query.findIds().map(\.value) == allOrders.filter(filter).map(\.id), "\(name)")
            #expect(try query.count() == allOrders.filter(filter).count, "\(name) count")
        }
        try check("home.city ==", EContact.home.city == "Berlin") { $0.home?.city == "Berlin" }
        try check("work.city ==", EContact.work.city == "Berlin") { $0.work?.city == "Berlin" }
        try check("home.city caseless", EContact.home.city.isEqual(to: "berlin", caseSensitive: false)) { $0.home?.city.lowercased() == "berlin" }
        try check("home.zip ==", EContact.home.zip == "10003") { $0.home?.zip == "10003" }
        try check("home.zip >=", EContact.home.zip >= "10015") { ($0.home?.zip ?? "") >= "10015" && $0.home != nil }
        try check("home.zip startsWith", EContact.home.zip.startsWith("1001")) { $0.home?.zip.hasPrefix("1001") ?? false }
        try check("work.zip isIn", EContact.work.zip.isIn(["10001", "10002"])) { ["10001", "10002"].contains($0.work?.zip ?? "") }
        try check("home.geo.lat >", EContact.home.geo.lat > 45) { ($0.home?.geo?.lat ?? -1) > 45 }
        try check("home.tags contains", EContact.home.tags.contains("a")) { $0.home?.tags.contains("a") ?? false }
        try check("home isNil", EContact.home.isNil()) { $0.home == nil }
        try check("home.geo isNil", EContact.home.geo.isNil()) { $0.home?.geo == nil }
        try check("home.city isNil", EContact.home.city.isNil()) { $0.home == nil }
        try check("work isNotNil && name", EContact.work.isNotNil() && EContact.name.startsWith("c1")) { $0.work != nil && $0.name.hasPrefix("c1") }
        try check("any on one", EContact.home.any { EAddress.city == "Rome" && EAddress.zip < "10010" }) {
            $0.home.map { $0.city == "Rome" && $0.zip < "10010" } ?? false
        }
        try check("home or work", EContact.home.zip == "10004" || EContact.work.zip == "10004") { $0.home?.zip == "10004" || $0.work?.zip == "10004" }

        try check("lines.sku ==", EOrder.lines.sku == "A-1") { $0.lines.contains { $0.sku == "A-1" } }
        try check("lines.sku isIn", EOrder.lines.sku.isIn(["A-1", "A-2"])) { $0.lines.contains { ["A-1", "A-2"].contains($0.sku) } }
        try check("lines.any both", EOrder.lines.any { ELine.sku == "A-1" && ELine.quantity > 2 }) {
            $0.lines.contains { $0.sku == "A-1" && $0.quantity > 2 }
        }
        try check("lines each", EOrder.lines.sku == "A-1" && EOrder.lines.quantity > 2) {
            $0.lines.contains { $0.sku == "A-1" } && $0.lines.contains { $0.quantity > 2 }
        }
        try check("lines.count", EOrder.lines.count >= 3) { $0.lines.count >= 3 }
        try check("lines isEmpty", EOrder.lines.isEmpty()) { $0.lines.isEmpty }
        try check("lines.shipTo.city", EOrder.lines.shipTo.city == "Paris") { $0.lines.contains { $0.shipTo?.city == "Paris" } }
        try check("lines.shipTo.zip", EOrder.lines.shipTo.zip == "10007") { $0.lines.contains { $0.shipTo?.zip == "10007" } }
        try check("nested any", EOrder.lines.any { ELine.shipTo.any { EAddress.city == "Oslo" } && ELine.quantity == 0 }) {
            $0.lines.contains { $0.shipTo?.city == "Oslo" && $0.quantity == 0 }
        }

        // The index serves conditions on indexed embedded properties (its candidates are checked).
        let zipQuery = try contacts.query { EContact.work.zip == "10003" }.build()
        let skuQuery = try orders.query { EOrder.lines.sku == "A-3" && EOrder.number < 100 }.build()
        for plan in [try zipQuery.compiled.plan, try skuQuery.compiled.plan] {
            if indexed {
                guard case .index = plan.source else { Issue.record("no index used: \(plan.source)"); continue }
                #expect(!plan.exact)
            } else if case .index = plan.source {
                Issue.record("an index used without one in the model")
            }
        }
        // One path from Order to a line's sku (and to a ship-to's zip): the index alone answers a
        // condition that is the whole query. Two paths from Contact to an address's zip (home,
        // work), or a second condition on the line, and the candidates are checked.
        if indexed {
            for (query, exact) in [(try orders.query { EOrder.lines.sku == "A-3" }.build(), true),
                                   (try orders.query { EOrder.lines.sku.isIn(["A-1", "A-4"]) }.build(), true),
                                   (try orders.query { EOrder.lines.shipTo.zip == "10007" }.build(), true),
                                   (try orders.query { EOrder.lines.any { ELine.sku == "A-1" && ELine.quantity > 2 } }.build(), false)] {
                #expect(try query.compiled.plan.exact == exact)
            }
            #expect(try !contacts.query { EContact.home.zip == "10003" }.build().compiled.plan.exact)
        }
        #expect(try RecordCheck.verify(store.engine).indexEntries > (indexed ? 0 : -1))
    }

    @Test func orderingAndPropertyQueriesReadThroughEmbeddedObjects() throws {
        let store = try Store(directoryPath: "memory:embedded-order", model: embeddedModel())
        let contacts = store.box(for: EContact.self)
        try contacts.put([EContact("a", home: EAddress(city: "Rome")), EContact("b"), EContact("c", home: EAddress(city: "Berlin")),
                          EContact("d", home: EAddress(city: "Oslo", geo: EGeo(lat: 59.9, lon: 10.7)))])
        let ordered = try contacts.query().ordered(by: EContact.home.city).build().find().map(\.name)
        #expect(ordered == ["b", "c", "d", "a"])   // no home first, then by city
        let descending = try contacts.query().ordered(by: EContact.home.city, flags: [.descending, .nullsLast]).build().find().map(\.name)
        #expect(descending == ["a", "d", "c", "b"])
        let cities = try contacts.query().build().property(EContact.home.city).find(String.self)
        #expect(cities.sorted() == ["Berlin", "Oslo", "Rome"])
        #expect(try contacts.query().build().property(EContact.home.geo.lat).max(Double.self) == 59.9)

        // A view reads the object's own properties; a path is refused with what to do instead.
        try contacts.query().build().visit { view in
            let name = try view.string(EContact.name)
            #expect(name != nil)
            #expect { try view.string(EContact.home.city) } throws: { error in
                guard let error = error as? CellarError, error.code == .illegalArgument else { return false }
                let message = error.message
                return message.contains("from = \"home.city\"")
            }
            return true
        }

        let orders = store.box(for: EOrder.self)
        #expect(throws: CellarError.self) { try orders.query().ordered(by: EOrder.lines.sku).build() }
        #expect(throws: CellarError.self) { try orders.query().build().property(EOrder.lines.sku).find(String.self) }
        #expect(throws: CellarError.self) { try contacts.query { EContact.home.count > 1 }.build() }
    }

    /// Index entries follow puts, updates and removes; an index added to a model is built from
    /// the stored objects at open; nothing is left behind when the objects go.
    @Test func embeddedIndexesFollowWritesAndAreBuiltAtOpen() throws {
        let directory = TestDirectory("embedded-index-upkeep")
        defer { directory.remove() }
        var random = SplitMix64(seed: 9)
        do {
            let store = try Store(directoryPath: directory.path, model: embeddedModel(indexes: false))
            try store.box(for: EOrder.self).put((0..<50).map { EOrder($0, Self.lines(&random)) })
            try store.box(for: EContact.self).put((0..<50).map { EContact("c\($0)", home: Self.address(&random)) })
        }
        let store = try Store(directoryPath: directory.path, model: embeddedModel())
        let orders = store.box(for: EOrder.self), contacts = store.box(for: EContact.self)
        #expect(try RecordCheck.verify(store.engine).indexEntries > 0)
        func skuMatches() throws -> [Id] { try orders.query { EOrder.lines.sku == "A-2" }.build().findIds().map(\.value) }
        func filtered() throws -> [Id] { try orders.all().filter { $0.lines.contains { $0.sku == "A-2" } }.map { $0.id } }
        #expect(try skuMatches() == filtered())

        // Updates: lines change, move between orders, go.
        for order in try orders.all() where order.id % 3 == 0 {
            order.lines = order.lines.isEmpty ? [ELine(sku: "A-2", quantity: 1)] : Array(order.lines.dropFirst())
            try orders.put(order)
        }
        #expect(try skuMatches() == filtered())
        _ = try orders.remove(Array(try orders.all().map { $0.id }.prefix(10)))
        #expect(try skuMatches() == filtered())
        #expect(try RecordCheck.verify(store.engine).objects == 90)

        // Both trees empty once every owner is gone.
        try orders.removeAll()
        try contacts.removeAll()
        let left = try store.engine.read { txn in
            try [1, 2].map { id -> Int in
                guard let tree = try txn.tree(StorageLayout.indexTree(UInt32(id))) else { return 0 }
                var count = 0
                try txn.cursor(tree).scan { _, _ in count += 1; return true }
                return count
            }
        }
        #expect(left == [0, 0])
    }

    /// Records nest at most `Model.maxEmbeddingDepth` levels: the deepest allowed writes and
    /// reads back, one more is refused on write, and is corrupt to a reader.
    @Test func nestingIsLimited() throws {
        let limit = Model.maxEmbeddingDepth
        let builder = RecordBuilder()
        builder.begin(slotCount: 1)
        try builder.add(embedded: ENode.chain(limit), slot: 0)
        let read = try RecordReader(builder.bytes).embedded(ENode.self, slot: 0)
        #expect(read?.depth == limit)

        let deeper = RecordBuilder()
        deeper.begin(slotCount: 1)
        #expect { try deeper.add(embedded: ENode.chain(limit + 1), slot: 0) } throws: { error in
            guard let error = error as? CellarError, error.code == .illegalArgument else { return false }
            let message = error.message
            return message.contains("nest more than \(limit) levels")
        }

        // A node record holding the deepest allowed chain, put one level down by hand: corrupt.
        let node = RecordBuilder()
        node.begin(slotCount: 3)
        node.add("outer", slot: 0)
        try node.add(embedded: ENode.chain(limit), slot: 1)
        let outer = RecordBuilder()
        outer.begin(slotCount: 1)
        outer.add(bytes: node.bytes, slot: 0)
        #expect { try RecordReader(outer.bytes).embedded(ENode.self, slot: 0) } throws: { error in
            guard let error = error as? CellarError, error.code == .fileCorrupt else { return false }
            let message = error.message
            return message.contains("more than \(limit) levels")
        }
    }

    /// Writers updating orders' lines and readers querying them through the index at the same
    /// time: every reader sees a committed state, and the index matches the records after.
    @Test func concurrentWritersAndReadersKeepTheIndexInStep() async throws {
        let directory = TestDirectory("embedded-concurrent")
        defer { directory.remove() }
        let store = try Store(directoryPath: directory.path, model: embeddedModel())
        try store.box(for: EOrder.self).put((0..<40).map { EOrder($0, [ELine(sku: "A-0", quantity: 1)]) })
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<3 {
                group.addTask {
                    let orders = store.box(for: EOrder.self)
                    var random = SplitMix64(seed: UInt64(worker))
                    for _ in 0..<60 {
                        let order = try #require(try orders.get(Id(1 + random.next() % 40)))
                        order.lines = Self.lines(&random)
                        try orders.put(order)
                    }
                }
            }
            group.addTask {
                let orders = store.box(for: EOrder.self)
                for _ in 0..<60 {
                    // One read transaction: the query and the objects it names agree.
                    try store.runInReadOnlyTransaction {
                        let ids = try orders.query { EOrder.lines.sku == "A-1" }.build().findIds()
                        for id in ids { #expect(try orders.get(id)?.lines.contains { $0.sku == "A-1" } == true) }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try RecordCheck.verify(store.engine).objects == 40)
    }

    @Test func aCorruptNestedRecordIsReportedNotTrusted() throws {
        let store = try Store(directoryPath: "memory:embedded-corrupt", model: embeddedModel())
        let contacts = store.box(for: EContact.self)
        let contact = EContact("x", home: EAddress(city: "Rome", zip: "1", tags: ["t"], geo: EGeo(lat: 1, lon: 2)))
        try contacts.put(contact)
        let builder = RecordBuilder()
        builder.begin(slotCount: 4)
        try EContact.entityBinding.write(contact, to: builder)
        let record = Array(builder.bytes)
        // Every single-byte change inside the nested records either reads or throws fileCorrupt.
        let nestedStart = record.count - 60
        for at in max(nestedStart, 0)..<record.count {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var bytes = record
                bytes[at] ^= flip
                do {
                    _ = try bytes.withUnsafeBytes { try EContact.entityBinding.read(id: 1, from: RecordReader($0)) }
                    try bytes.withUnsafeBytes { try RecordReader($0).verify(embeddedModel().entities[0], in: embeddedModel()) }
                } catch CellarError.Code.fileCorrupt {
                } catch CellarError.Code.illegalArgument {
                }
            }
        }
    }
}
