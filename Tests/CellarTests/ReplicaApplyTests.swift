@_spi(Sync) @_spi(CellarGenerated) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

/// A store's changes applied to another store (what a sync package does with a replica in
/// between): every scalar type arrives exactly, edits of some properties leave the others alone,
/// and a value the property cannot hold is refused.
@Suite struct ReplicaApplyTests {
    static func open(_ name: String) throws -> Store {
        var options = StoreOptions(durability: .none)
        options.changeHistory = true
        let store = try Store(directoryPath: "memory:replica-\(name)-\(UUID().uuidString)", model: standardModel, options: options)
        _ = try store.replicaState()
        return store
    }

    /// An object with random values, extremes and nils in every field.
    static func random(_ rng: inout SplitMix64) -> AllTypes {
        if rng.next() % 8 == 0 { return BoxTests.extremes() }
        let e = AllTypes()
        func maybe<T>(_ value: T) -> T? { rng.next() % 3 == 0 ? nil : value }
        let bits = rng.next()
        e.bool = bits & 1 == 1
        e.int8 = Int8(truncatingIfNeeded: bits); e.int16 = Int16(truncatingIfNeeded: bits >> 8)
        e.int32 = Int32(truncatingIfNeeded: bits >> 16); e.int64 = Int64(bitPattern: rng.next()); e.int = Int(bitPattern: UInt(rng.next()))
        e.uint8 = UInt8(truncatingIfNeeded: bits >> 3); e.uint16 = UInt16(truncatingIfNeeded: bits >> 5)
        e.uint32 = UInt32(truncatingIfNeeded: bits >> 7); e.uint64 = rng.next(); e.uint = UInt(rng.next())
        e.float = Float(bitPattern: UInt32(truncatingIfNeeded: rng.next())); e.double = Double(bitPattern: rng.next())
        e.string = String(repeating: "é🧀x", count: Int(bits % 7))
        e.date = Date(timeIntervalSince1970: Double(Int64(bits % 4_000_000_000_000)) / 1000)
        e.data = Data((0..<Int(bits % 5)).map { UInt8($0) })
        e.bytes = (0..<Int(bits % 9)).map { UInt8(truncatingIfNeeded: $0 * 37) }
        e.optBool = maybe(bits & 2 == 2); e.optInt8 = maybe(-3); e.optInt16 = maybe(Int16.min); e.optInt32 = maybe(7)
        e.optInt64 = maybe(Int64(bitPattern: rng.next())); e.optInt = maybe(-1)
        e.optUInt8 = maybe(UInt8.max); e.optUInt16 = maybe(9); e.optUInt32 = maybe(UInt32.max); e.optUInt64 = maybe(rng.next())
        e.optUInt = maybe(3); e.optFloat = maybe(.infinity); e.optDouble = maybe(.nan)
        e.optString = maybe("ünïcode \(bits)"); e.optDate = maybe(Date(timeIntervalSince1970: 12.345))
        e.optData = maybe(Data([1, 2, 3])); e.optBytes = maybe([])
        e.nanoDate = Date(timeIntervalSince1970: Double(bits % 2_000_000_000))
        return e
    }

    /// `b`'s copy of each of `a`'s objects equals it (but for the local id).
    static func expectSame(_ a: Store, _ b: Store, _ ids: [Id]) throws {
        let uid = AllTypes.modelEntity.id.uid
        for id in ids {
            let original = try #require(try a.box(for: AllTypes.self).get(id))
            let globalId = try #require(try a.globalId(entityUid: uid, id: id))
            let local = try #require(try b.localId(entityUid: uid, globalId: globalId))
            let copy = try #require(try b.box(for: AllTypes.self).get(local))
            copy.id = original.id
            #expect(copy == original)
        }
    }

    @Test func everyScalarTypeArrivesExactlyAndEditsLeaveTheRestAlone() throws {
        var rng = SplitMix64(seed: SplitMix64.testSeed())
        let a = try Self.open("a"), b = try Self.open("b")
        defer { a.close(); b.close() }
        let box = a.box(for: AllTypes.self)
        let objects = (0..<200).map { _ in Self.random(&rng) }
        let ids = try box.put(objects).map(\.value)

        var outgoing = try a.outgoingChanges(limit: 100)
        var report = try b.applyIncoming(outgoing.changes, through: 1)
        #expect(report.applied == objects.count && report.unchanged == 0)
        try a.acknowledge(through: outgoing.through, pruning: true)
        try Self.expectSame(a, b, ids)

        // Some properties of some objects change: only those travel, and the rest of each copy stays.
        for (index, object) in objects.enumerated() where index % 3 == 0 {
            object.string = "edited \(index)"
            object.optInt8 = index % 2 == 0 ? nil : Int8(index % 100)
            object.optDouble = Double(index) / 7
            object.uint16 = UInt16(index)
        }
        try box.put(objects.enumerated().filter { $0.offset % 3 == 0 }.map(\.element))
        outgoing = try a.outgoingChanges(limit: 100)
        #expect(outgoing.changes.allSatisfy { $0.values.count <= 4 })
        report = try b.applyIncoming(outgoing.changes, through: 2)
        #expect(report.applied == outgoing.changes.count)
        try Self.expectSame(a, b, ids)

        // The same changes again: nothing differs, nothing is written.
        report = try b.applyIncoming(outgoing.changes, through: 3)
        #expect(report.applied == 0 && report.unchanged == outgoing.changes.count)
        try Self.expectSame(a, b, ids)
    }

    @Test func aValueThePropertyCannotHoldIsRefused() throws {
        let b = try Self.open("refuse")
        defer { b.close() }
        let entity = AllTypes.modelEntity
        func property(_ name: String) -> UInt64 { entity.properties.first { $0.name == name }!.id.uid }
        let cases: [(String, ReplicaValue)] = [("int8", .integer(128)), ("uint16", .integer(-1)), ("uint32", .integer(1 << 32)),
                                               ("string", .integer(1)), ("uint64", .integer(1)), ("date", .double(1))]
        for (name, value) in cases {
            let change = ReplicaChange(entityUid: entity.id.uid, globalId: UUID(),
                                       values: [ReplicaChange.Value(uid: property(name), value: value, clock: nil)])
            #expect(throws: CellarError.self, "\(name) takes \(value)") { try b.applyIncoming([change], through: 1) }
        }
        #expect(try b.box(for: AllTypes.self).count() == 0)
    }

    /// A property the store changed itself and has not pushed yet keeps its value against a
    /// pulled one with an earlier clock or none; a later clock wins. Other properties are taken.
    @Test func thePendingChangeOfTheStoresOwnStandsUntilALaterOneComes() throws {
        let b = try Self.open("pending")
        defer { b.close() }
        let entity = AllTypes.modelEntity, box = b.box(for: AllTypes.self)
        func uid(_ name: String) -> UInt64 { entity.properties.first { $0.name == name }!.id.uid }
        let globalId = UUID(), device = UUID()
        func change(_ string: String, _ number: Int64, at timestamp: UInt64?) -> ReplicaChange {
            let clock = timestamp.map { ReplicaClock(timestamp: HybridTimestamp(rawValue: $0), device: device) }
            return ReplicaChange(entityUid: entity.id.uid, globalId: globalId,
                                 values: [ReplicaChange.Value(uid: uid("string"), value: .string(string), clock: clock),
                                          ReplicaChange.Value(uid: uid("int32"), value: .integer(number), clock: clock)])
        }
        _ = try b.applyIncoming([change("pulled", 1, at: 1)], through: 1)
        let id = try #require(try b.localId(entityUid: entity.id.uid, globalId: globalId))
        let object = try #require(try box.get(id))
        object.string = "mine"
        try box.put(object)
        for (step, timestamp) in [(2, UInt64(2)), (3, nil)] as [(Int64, UInt64?)] {
            _ = try b.applyIncoming([change("older \(step)", step, at: timestamp)], through: UInt64(step))
            let now = try #require(try box.get(id))
            #expect(now.string == "mine" && now.int32 == Int32(step), "clock \(String(describing: timestamp))")
        }
        _ = try b.applyIncoming([change("later", 4, at: UInt64.max >> 1)], through: 4)
        let now = try #require(try box.get(id))
        #expect(now.string == "later" && now.int32 == 4)
    }
}

/// Outgoing changes in batches: by entries and by objects, and after a batch not acknowledged yet.
@Suite struct OutgoingBatchTests {
    @Test func batchesStopAtTheirObjectsAndGoOnAfterASequence() throws {
        let a = try ReplicaApplyTests.open("batches")
        defer { a.close() }
        let box = a.box(for: AllTypes.self)
        for size in [4, 3, 5, 9, 1] { try box.put((0..<size).map { _ in AllTypes() }) }  // one history entry each

        var batches: [[Int]] = []  // the objects' ids of each batch
        var after: UInt64? = nil
        while true {
            let batch = try a.outgoingChanges(limit: 10, objects: 8, after: after)
            guard batch.entries > 0 else { break }
            let ids = try batch.changes.map { try #require(try a.localId(entityUid: $0.entityUid, globalId: $0.globalId)) }
            batches.append(ids.map { Int($0) })
            after = batch.through
        }
        // 4 + 3 fit in 8; 5 alone (5 + 9 would not); 9 alone though larger; then 1.
        #expect(batches == [Array(1...7), Array(8...12), Array(13...21), [22]])
        // Nothing was acknowledged: from the start again, the same first batch.
        #expect(try a.outgoingChanges(limit: 10, objects: 8).changes.count == 7)
        #expect(try a.outgoingChanges(limit: 1).changes.count == 4)
        #expect(throws: CellarError.self) { try a.outgoingChanges(limit: 10, objects: 0) }
        try a.acknowledge(through: 2, pruning: false)
        #expect(throws: CellarError.self) { try a.outgoingChanges(limit: 10, after: 1) }  // before what was acknowledged
    }
}
