@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

/// Embedded objects through the generated bindings (Generated/GeneratedEntities.swift): put and
/// get of every shape — nil, an always-present object, empty and long lists, objects nested in
/// objects and in list elements, enums and converters inside embedded objects.
@Suite struct EmbeddedRoundTripTests {
    /// Opens a fresh store with the generated model in `dir`.
    private func store(_ dir: TestDirectory) throws -> Store {
        try Store(directoryPath: dir.sub("db"))
    }

    @Test func absentOptionalsAndEmptyLists() throws {
        let dir = TestDirectory("embedded-empty")
        defer { dir.remove() }
        let store = try store(dir)
        let contact = Contact()
        contact.name = "Nobody"
        try store.box(for: Contact.self).put(contact)
        let back = try #require(try store.box(for: Contact.self).get(contact.id))
        #expect(back.name == "Nobody" && back.address == nil && back.previous == nil)
        #expect(back.billing == Address())

        // An empty optional list stays empty (not nil).
        contact.previous = []
        try store.box(for: Contact.self).put(contact)
        #expect(try store.box(for: Contact.self).get(contact.id)?.previous == [])

        var order = Order(number: "O-0")
        try store.box(for: Order.self).put(&order)
        let orderBack = try #require(try store.box(for: Order.self).get(order.id))
        #expect(orderBack.number == "O-0" && orderBack.lines.isEmpty)
    }

    @Test func singleNestedAndListedObjects() throws {
        let dir = TestDirectory("embedded-nested")
        defer { dir.remove() }
        let contact = Contact()
        contact.name = "Ada"
        contact.address = Address(city: "London", zip: "NW1", geo: Geo(lat: 51.5, lon: -0.12))
        contact.billing = Address(city: "Paris", zip: "75001", geo: nil)
        contact.previous = [Address(city: "Bath", zip: "BA1", geo: nil), Address(city: "", zip: "", geo: Geo(lat: -1, lon: 1))]
        do {
            let store = try store(dir)
            try store.box(for: Contact.self).put(contact)
        }
        // Read back by a store opened anew: the records, not a cache.
        let store = try store(dir)
        #expect(store.modelChanges.isEmpty)
        let back = try #require(try store.box(for: Contact.self).get(contact.id))
        #expect(back.name == "Ada")
        #expect(back.address == Address(city: "London", zip: "NW1", geo: Geo(lat: 51.5, lon: -0.12)))
        #expect(back.billing == Address(city: "Paris", zip: "75001", geo: nil))
        #expect(back.previous == contact.previous)

        // Replacing and clearing: the old nested objects are gone.
        back.address = nil
        back.billing.geo = Geo(lat: 2, lon: 3)
        back.previous = nil
        try store.box(for: Contact.self).put(back)
        let again = try #require(try store.box(for: Contact.self).get(contact.id))
        #expect(again.address == nil && again.billing.geo == Geo(lat: 2, lon: 3) && again.previous == nil)
    }

    @Test func listElementsWithEnumsConvertersListsAndNestedObjects() throws {
        let dir = TestDirectory("embedded-lines")
        defer { dir.remove() }
        let store = try store(dir)
        let first = OrderLine(sku: "A-1", quantity: 3)
        first.priority = .high
        first.temperature = Temperature(celsius: -4.5)
        first.tags = ["fragile", "gift", ""]
        first.shipped = Date(timeIntervalSince1970: 1_700_000_000.25)
        first.origin = Geo(lat: 48.8, lon: 2.35)
        let second = OrderLine(sku: "B-2", quantity: 0)   // every other property at its initial value
        var order = Order(number: "O-1", lines: [first, second])
        try store.box(for: Order.self).put(&order)

        let back = try #require(try store.box(for: Order.self).get(order.id))
        #expect(back.lines.count == 2)
        let a = back.lines[0]
        #expect(a.sku == "A-1" && a.quantity == 3 && a.priority == .high && a.temperature == Temperature(celsius: -4.5))
        #expect(a.tags == ["fragile", "gift", ""] && a.shipped == Date(timeIntervalSince1970: 1_700_000_000.25))
        #expect(a.origin == Geo(lat: 48.8, lon: 2.35))
        let b = back.lines[1]
        #expect(b.sku == "B-2" && b.quantity == 0 && b.priority == .unknown && b.temperature == Temperature(celsius: 20))
        #expect(b.tags.isEmpty && b.shipped == nil && b.origin == nil)
    }

    @Test func aHundredLines() throws {
        let dir = TestDirectory("embedded-hundred")
        defer { dir.remove() }
        let store = try store(dir)
        let lines = (0..<100).map { index -> OrderLine in
            let line = OrderLine(sku: "SKU-\(index)", quantity: index * 7 - 300)
            line.priority = index.isMultiple(of: 3) ? .low : .high
            line.tags = (0..<(index % 4)).map { "t\($0)" }
            if index.isMultiple(of: 10) { line.origin = Geo(lat: Double(index), lon: -Double(index)) }
            return line
        }
        var orders = [Order(number: "big", lines: lines), Order(number: "small", lines: [OrderLine(sku: "only", quantity: 1)])]
        try store.box(for: Order.self).put(&orders)

        let back = try #require(try store.box(for: Order.self).get(orders[0].id))
        #expect(back.lines.count == 100)
        for (index, line) in back.lines.enumerated() {
            #expect(line.sku == "SKU-\(index)" && line.quantity == index * 7 - 300)
            #expect(line.priority == (index.isMultiple(of: 3) ? .low : .high))
            #expect(line.tags == (0..<(index % 4)).map { "t\($0)" })
            #expect(line.origin == (index.isMultiple(of: 10) ? Geo(lat: Double(index), lon: -Double(index)) : nil))
        }
        #expect(try store.box(for: Order.self).get(orders[1].id)?.lines.map(\.sku) == ["only"])
        #expect(try store.box(for: Order.self).all().count == 2)
    }

    @Test func recordsWrittenBeforeTheEmbeddedPropertiesExisted() throws {
        // A Contact record with only its name (slot 1): the optional object and list read nil,
        // the non-optional one its initial value `Address()`.
        let dir = TestDirectory("embedded-old-records")
        defer { dir.remove() }
        let store = try store(dir)
        let record = RecordBuilder()
        record.begin(slotCount: 2)
        record.add("Old", slot: 1)
        let schema = try store.box(for: Contact.self).schema.get()
        try store.engine.write { txn in
            try StorageLayout.withObjectKey(7) { try txn.put(txn.tree(schema.treeName)!, key: $0, value: record.bytes) }
        }
        let back = try #require(try store.box(for: Contact.self).get(7))
        #expect(back.name == "Old" && back.address == nil && back.billing == Address() && back.previous == nil)
    }

    @Test func projectionsReadPathsIntoEmbeddedObjects() throws {
        let dir = TestDirectory("embedded-projection")
        defer { dir.remove() }
        let store = try store(dir)
        let box = store.box(for: Contact.self)
        let full = Contact()
        full.name = "Full"
        full.address = Address(city: "Oslo", zip: "0150", geo: Geo(lat: 59.9, lon: 10.7))
        full.billing = Address(city: "Bergen", zip: "5003", geo: Geo(lat: 60.4, lon: 5.3))
        let bare = Contact()
        bare.name = "Bare"
        bare.address = Address(city: "Nowhere", zip: "", geo: nil)
        try box.put([full, bare])
        #expect(try box.get(full.id, as: ContactRow.self)
            == ContactRow(name: "Full", city: "Oslo", billingZip: "5003", lat: 59.9, billingGeo: Geo(lat: 60.4, lon: 5.3)))
        #expect(try box.get(bare.id, as: ContactRow.self)
            == ContactRow(name: "Bare", city: "Nowhere", billingZip: "", lat: nil, billingGeo: nil))

        // A record without the embedded objects: nil through the optional one, the initial
        // value's property through the non-optional one.
        let record = RecordBuilder()
        record.begin(slotCount: 2)
        record.add("Old", slot: 1)
        let schema = try box.schema.get()
        try store.engine.write { txn in
            try StorageLayout.withObjectKey(9) { try txn.put(txn.tree(schema.treeName)!, key: $0, value: record.bytes) }
        }
        #expect(try box.get(9, as: ContactRow.self) == ContactRow(name: "Old", city: nil, billingZip: "", lat: nil, billingGeo: nil))
    }
}

extension Order {
    init(number: String, lines: [OrderLine] = []) {
        self.init(id: 0, number: number, lines: lines)
    }
}
