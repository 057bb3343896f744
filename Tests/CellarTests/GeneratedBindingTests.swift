@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

/// The generator's bindings (Generated/EntityInfo-CellarTests.generated.swift) at work: every
/// conversion, structs and classes, and records written by older and newer models.
@Suite struct GeneratedBindingTests {
    /// Stores `record` as Ticket `id`, bypassing the binding (as an older or newer app would
    /// have written it).
    private func storeRawTicket(_ store: Store, id: Id, slots: Int, _ fill: (RecordBuilder) -> Void) throws {
        let record = RecordBuilder()
        record.begin(slotCount: slots)
        fill(record)
        let schema = try store.box(for: Ticket.self).schema.get()
        try store.engine.write { txn in
            try StorageLayout.withObjectKey(id) { try txn.put(txn.tree(schema.treeName)!, key: $0, value: record.bytes) }
        }
    }

    @Test func roundTripThroughTheGeneratedStoreInit() throws {
        let dir = TestDirectory("generated-bindings")
        defer { dir.remove() }
        let ticket = Ticket()
        ticket.title = "Fix the roof"
        ticket.priority = .high
        ticket.mood = .busy
        ticket.temperature = Temperature(celsius: -4.5)
        ticket.strictTemperature = Temperature(celsius: 37)
        ticket.precise = Date(timeIntervalSince1970: 1_700_000_000.123456789)
        ticket.due = Date(timeIntervalSince1970: 1_800_000_000.5)
        ticket.count = .max
        ticket.tiny = .min
        ticket.scratch = "changed"
        var reading = Reading(value: .pi, label: "π", bytes: [1, 2, 3], blob: Data([0xFF]), flag: true)
        do {
            let store = try Store(directoryPath: dir.sub("db"))   // the generated convenience init
            try store.box(for: Ticket.self).put(ticket)
            try store.box(for: Reading.self).put(&reading)
            #expect(ticket.id == 1 && reading.id == 1)
        }
        let store = try Store(directoryPath: dir.sub("db"))
        #expect(store.modelChanges.isEmpty)
        let back = try #require(try store.box(for: Ticket.self).get(ticket.id))
        #expect(back.title == "Fix the roof" && back.priority == .high && back.mood == .busy)
        #expect(back.temperature == Temperature(celsius: -4.5) && back.strictTemperature == Temperature(celsius: 37))
        #expect(abs(back.precise.timeIntervalSince1970 - 1_700_000_000.123456789) < 1e-6)
        #expect(back.due == Date(timeIntervalSince1970: 1_800_000_000.5) && back.count == .max && back.tiny == .min)
        #expect(back.scratch == "not stored")
        #expect(try store.box(for: Reading.self).get(reading.id) == reading)
        // The model of the store is the generated one; the renamed property keeps its model name.
        #expect(store.model.entity(named: "Ticket")?.property(named: "headline") != nil)
        #expect(Ticket.title.name == "headline" && Ticket.priority.type == .int && Reading.flag.type == .bool)
    }

    @Test func missingValuesFromAnOlderModel() throws {
        let store = try Store(directoryPath: "memory:generated-older", model: cellarModel())
        // A record written when Ticket had only its title (one slot past the id).
        try storeRawTicket(store, id: 1, slots: 2) { $0.add("old", slot: 1) }
        let ticket = try #require(try store.box(for: Ticket.self).get(1 as Id))
        #expect(ticket.title == "old")
        #expect(ticket.priority == .unknown)                          // the enum's default
        #expect(ticket.mood == nil)                                   // optional enum: nil
        #expect(ticket.temperature == .unknown)                       // converter got nil
        #expect(ticket.strictTemperature == Temperature(celsius: 0))  // converter got the zero value
        #expect(ticket.count == 0 && ticket.tiny == nil && ticket.due == nil)
    }

    @Test func unknownValuesFromANewerModel() throws {
        let store = try Store(directoryPath: "memory:generated-newer", model: cellarModel())
        // A newer app added enum cases (and properties this build does not know: slot 12).
        try storeRawTicket(store, id: 1, slots: 12) { record in
            record.add("new", slot: 1)
            record.add(Int32(99), slot: 2)
            record.add("angry", slot: 3)
            record.add(Int64(12345), slot: 11)
        }
        let ticket = try #require(try store.box(for: Ticket.self).get(1 as Id))
        #expect(ticket.title == "new" && ticket.priority == .unknown && ticket.mood == nil)
        // A value of the wrong width for its property is a corrupt record, not a wrong value.
        try storeRawTicket(store, id: 2, slots: 3) { $0.add(UInt8(1), slot: 2) }
        #expect(throws: CellarError.self) { try store.box(for: Ticket.self).get(2 as Id) }
    }

    @Test func uuidPropertiesThroughTheGeneratedBinding() throws {
        let store = try Store(directoryPath: "memory:generated-uuid", model: cellarModel())
        let devices = store.box(for: Device.self)
        let a = Device()
        a.name = "a"
        let b = Device()
        b.name = "b"
        b.ref = a.id2
        try devices.put([a, b])
        let back = try #require(try devices.get(b.id))
        #expect(back.id2 == b.id2 && back.ref == a.id2 && back.name == "b")
        #expect(try devices.get(a.id)?.ref == nil)
        #expect(try devices.query { Device.ref == a.id2 }.build().find().map(\.id) == [b.id])
        #expect(try devices.query { Device.ref.isNil() }.build().find().map(\.id) == [a.id])
        let sorted = [a, b].sorted { UUIDEncoding.bytes($0.id2).lexicographicallyPrecedes(UUIDEncoding.bytes($1.id2)) }
        #expect(try devices.query().ordered(by: Device.id2).build().find().map(\.id) == sorted.map(\.id))
        let duplicate = Device()
        duplicate.id2 = a.id2
        #expect(throws: CellarError.self) { try devices.put(duplicate) }
        // A record without the UUIDs (an object put before they were added) reads the nil UUID.
        let schema = try devices.schema.get()
        let record = RecordBuilder()
        record.begin(slotCount: 1)
        try store.engine.write { txn in
            try StorageLayout.withObjectKey(99) { try txn.put(txn.tree(schema.treeName)!, key: $0, value: record.bytes) }
        }
        let old = try #require(try devices.get(99 as Id))
        #expect(old.id2 == UUIDEncoding.zero && old.id2.uuidString == "00000000-0000-0000-0000-000000000000" && old.ref == nil)
    }
}
