@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

/// An entity with a UUID and an optional UUID, with bindings written the way the generator writes
/// them: `key` unique (value index), `ref` indexed or not (`uuidModel(indexes:)`).
final class UToken: Entity, EntityInspectable {
    var id: Id = 0
    var key: UUID = UUID()
    var ref: UUID?
    var label = ""
    init() {}
    init(key: UUID, ref: UUID?, label: String = "") { self.key = key; self.ref = ref; self.label = label }
    static let entityBinding = UTokenBinding()

    static let key = Property<UToken>(name: "key", id: 2, type: .uuid)
    static let ref = Property<UToken>(name: "ref", id: 3, type: .uuid)
    static let label = Property<UToken>(name: "label", id: 4, type: .string)
}

struct UTokenBinding: EntityBinding {
    typealias EntityType = UToken
    var entityName: String { "UToken" }
    var entityId: IdUid { IdUid(id: 1, uid: 7_100) }
    var slotCount: Int { 4 }
    func id(of entity: UToken) -> Id { entity.id }
    func setId(_ id: Id, of entity: inout UToken) { entity.id = id }
    func write(_ entity: UToken, to record: RecordBuilder) throws {
        record.add(entity.key, slot: 1)
        record.add(entity.ref, slot: 2)
        record.add(entity.label, slot: 3)
    }
    func read(id: Id, from record: RecordReader) throws -> UToken {
        let token = UToken()
        token.id = id
        token.key = try record.uuid(slot: 1) ?? UUIDEncoding.zero
        token.ref = try record.uuid(slot: 2)
        token.label = try record.string(slot: 3) ?? ""
        return token
    }
}

/// UToken's model; `indexes: false` leaves both indexes (and the unique constraint) out,
/// `keyIndex: false` only `key`'s (`ref`'s index alone takes the put path that makes keys from
/// record bytes, which must leave a UUID to the general one).
func uuidModel(indexes: Bool = true, keyIndex: Bool = true) -> Cellar.Model {
    let keyIndexed = indexes && keyIndex
    let token = ModelEntity(name: "UToken", id: IdUid(id: 1, uid: 7_100), lastPropertyId: IdUid(id: 4, uid: 7_104), properties: [
        ModelProperty(name: "id", id: IdUid(id: 1, uid: 7_101), type: .long, flags: .id),
        ModelProperty(name: "key", id: IdUid(id: 2, uid: 7_102), type: .uuid,
                      flags: keyIndexed ? [.notNull, .indexed, .unique] : .notNull,
                      indexId: keyIndexed ? IdUid(id: 1, uid: 7_901) : nil),
        ModelProperty(name: "ref", id: IdUid(id: 3, uid: 7_103), type: .uuid, flags: indexes ? .indexed : [],
                      indexId: indexes ? IdUid(id: 2, uid: 7_902) : nil),
        ModelProperty(name: "label", id: IdUid(id: 4, uid: 7_104), type: .string),
    ])
    return Cellar.Model(entities: [token], lastEntityId: IdUid(id: 1, uid: 7_100),
                        lastIndexId: indexes ? IdUid(id: 2, uid: 7_902) : .zero)
}

/// UUID properties: the type code, the record encoding, corrupt records, indexes and unique
/// constraints, every query condition and order against filtering in memory, property queries.
@Suite struct UUIDPropertyTests {
    /// UUIDs that differ in their first, middle and last bytes, with the nil and the all-ones UUID.
    static let pool: [UUID] = [
        UUIDEncoding.zero,
        UUID(uuidString: "00000000-0000-0000-0000-000000000001")!,
        UUID(uuidString: "00000000-0000-0000-0000-000000000100")!,
        UUID(uuidString: "0F000000-0000-4000-8000-000000000000")!,
        UUID(uuidString: "7FFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF")!,
        UUID(uuidString: "80000000-0000-4000-8000-000000000000")!,
        UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
        UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!,
    ]

    static func bytes(_ uuid: UUID) -> [UInt8] { withUnsafeBytes(of: uuid.uuid) { Array($0) } }
    static func order(_ a: UUID, _ b: UUID) -> Int {
        let (x, y) = (bytes(a), bytes(b))
        return x == y ? 0 : x.lexicographicallyPrecedes(y) ? -1 : 1
    }

    @Test func theTypeCodeIsOutsideObjectBoxsAndTheModelFileCarriesIt() throws {
        #expect(PropertyType.uuid.rawValue == 100 && !(1...32).contains(PropertyType.uuid.rawValue))
        #expect(PropertyType.uuid.isSupported && PropertyType.uuid.description == "UUID" && PropertyType.uuid.fixedWidth == 16)
        let json = uuidModel().jsonBytes()
        #expect(String(decoding: json, as: UTF8.self).contains("\"type\": 100"))
        let again = try Cellar.Model(json: json)
        #expect(again.entities[0].properties[1].type == .uuid && again.jsonBytes() == json)
    }

    @Test func aRecordHoldsTheSixteenBytesInRFC4122Order() throws {
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        let builder = RecordBuilder()
        builder.begin(slotCount: 3)
        builder.add(uuid, slot: 0)
        builder.add(nil as UUID?, slot: 1)
        builder.add(Optional(uuid), slot: 2)
        let bytes = Array(builder.bytes)
        #expect(bytes.count == 4 + 2 * 3 + 16 + 16, "two fields of 16 bytes inline, the nil one absent")
        #expect(Array(bytes[10..<26]) == [0xE6, 0x21, 0xE1, 0xF8, 0xC3, 0x6C, 0x49, 0x5A, 0x93, 0xFC, 0x0C, 0x24, 0x7A, 0x3E, 0x6E, 0x5F])
        try bytes.withUnsafeBytes { raw in
            let reader = try RecordReader(raw)
            #expect(try reader.uuid(slot: 0) == uuid && reader.uuid(slot: 1) == nil && reader.uuid(slot: 2) == uuid)
            #expect(try reader.uuid(slot: 7) == nil, "a slot past the record's is absent")
            try reader.verify(types: [.uuid, .uuid, .uuid])
        }
    }

    @Test func aUUIDFieldShorterThanSixteenBytesIsFileCorrupt() throws {
        let builder = RecordBuilder()
        builder.begin(slotCount: 1)
        builder.add(UUID(), slot: 0)
        let whole = Array(builder.bytes)
        // Every cut that leaves the slot table but not the 16 bytes: thrown, never a trap.
        for length in (4 + 2)..<whole.count {
            try Array(whole.prefix(length)).withUnsafeBytes { raw in
                let reader = try RecordReader(raw)
                #expect(throws: CellarError.self) { try reader.uuid(slot: 0) }
                #expect(throws: CellarError.self) { try reader.verify(types: [.uuid]) }
                do { _ = try reader.uuid(slot: 0) } catch CellarError.Code.fileCorrupt {} catch { Issue.record("\(error)") }
            }
        }
        // The same through a store: the record cut in the middle of its UUID.
        let store = try Store(directoryPath: "memory:uuid-corrupt", model: uuidModel(indexes: false))
        let box = store.box(for: UToken.self)
        let id = try box.put(UToken(key: Self.pool[6], ref: Self.pool[2]))
        let key = withUnsafeBytes(of: id.value.bigEndian) { Array($0) }
        let good = try store.engine.read { txn in Array(try txn.get(txn.tree("e1")!, key: key)!) }
        for length in [good.count - 5, good.count - 19] {   // the label (4 bytes) gone, then 1 or 15 of ref's 16
            try store.engine.write { txn in try txn.put(txn.tree("e1")!, key: key, value: Array(good.prefix(length))) }
            do { _ = try box.get(id); Issue.record("a short UUID read") } catch CellarError.Code.fileCorrupt {}
            do { _ = try box.query { UToken.ref == Self.pool[2] }.build().find(); Issue.record("a short UUID matched") } catch CellarError.Code.fileCorrupt {}
        }
    }
}

extension UUIDPropertyTests {
    /// One random condition on `key` or `ref` and the predicate it stands for.
    static func randomCondition(_ rng: inout SplitMix64) -> RandomConditions.Drawn<UToken> {
        let onKey = Bool.random(using: &rng)
        let property = onKey ? UToken.key : UToken.ref
        let value: (UToken) -> UUID? = onKey ? { $0.key } : { $0.ref }
        let o = pool.randomElement(using: &rng)!
        let set = [o, pool.randomElement(using: &rng)!, pool.randomElement(using: &rng)!]
        let ops: [(String, QueryCondition<UToken>, (UUID) -> Bool)] = [
            ("==", property == o, { $0 == o }), ("!=", property != o, { $0 != o }),
            ("<", property < o, { order($0, o) < 0 }), ("<=", property <= o, { order($0, o) <= 0 }),
            (">", property > o, { order($0, o) > 0 }), (">=", property >= o, { order($0, o) >= 0 }),
            ("isIn", property.isIn(set), { set.contains($0) }), ("isNotIn", property.isNotIn(set), { !set.contains($0) }),
            ("isIn case-insensitive", property.isIn(set, caseSensitive: false), { set.contains($0) }),
        ]
        let pick = Int.random(in: 0..<(ops.count + 2), using: &rng)
        if pick >= ops.count {
            let isNil = pick == ops.count
            return (isNil ? property.isNil() : property.isNotNil(), { (value($0) == nil) == isNil }, "\(property) \(isNil ? "isNil" : "isNotNil")")
        }
        let (name, condition, test) = ops[pick]
        return (condition, { value($0).map(test) ?? false }, "\(property) \(name) \(o) \(set)")
    }

    @Test(arguments: [(true, true), (true, false), (false, false)])
    func randomQueriesMatchFilteringInMemory(indexes: Bool, keyIndex: Bool) throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let store = try Store(directoryPath: "memory:uuid-queries-\(indexes)-\(keyIndex)", model: uuidModel(indexes: indexes, keyIndex: keyIndex))
        let box = store.box(for: UToken.self)
        var model: [Id: UToken] = [:]
        // `key` is unique when indexed: each object takes a fresh one, or one of the pool not yet taken.
        func freshKey(_ rng: inout SplitMix64, _ model: [Id: UToken]) -> UUID {
            let free = Self.pool.filter { key in !model.values.contains { $0.key == key } }
            return Bool.random(using: &rng) || free.isEmpty ? UUID() : free.randomElement(using: &rng)!
        }
        for round in 0..<6 {
            try RandomConditions.randomWrites(store, box, model: &model, rng: &rng, make: { rng, model in
                UToken(key: freshKey(&rng, model), ref: Bool.random(using: &rng) ? nil : Self.pool.randomElement(using: &rng)!)
            }, change: { token, rng, model in
                token.ref = Bool.random(using: &rng) ? nil : Self.pool.randomElement(using: &rng)!
                if Bool.random(using: &rng) { token.key = freshKey(&rng, model) }
            })
            for query in 0..<40 {
                let (condition, matches, text) = RandomConditions.oneOrTwo(&rng, Self.randomCondition)
                let context = "seed \(seed), indexes \(indexes) \(keyIndex), round \(round), query \(query): \(text)"
                let expected = model.values.filter(matches).map(\.id).sorted()
                let built = try box.query { condition }.build()
                #expect(try built.findIds().map(\.value) == expected, "\(context)")
                #expect(try built.count() == expected.count, "\(context)")
                let descending = Bool.random(using: &rng)
                let ordered = try box.query { condition }.ordered(by: UToken.ref, flags: descending ? .descending : []).build().find()
                let sorted = RandomConditions.sorted(model.values.filter(matches), by: \.ref, id: \.id, descending: descending,
                                                     order: Self.order)
                #expect(ordered.map(\.id) == sorted.map(\.id), "\(context) ordered by ref, descending \(descending)")
            }
        }
        // Property queries: the values, distinct, the extremes in byte order.
        let all = try box.query().build()
        let refs = model.values.sorted { $0.id < $1.id }.compactMap(\.ref)
        #expect(try all.property(UToken.ref).find(UUID.self) == refs)
        #expect(try Set(all.property(UToken.ref).distinct().find(UUID.self)) == Set(refs))
        #expect(try all.property(UToken.ref).distinct().count() == Set(refs).count)
        #expect(try all.property(UToken.ref).min(UUID.self) == refs.min { Self.order($0, $1) < 0 })
        #expect(try all.property(UToken.ref).max(UUID.self) == refs.max { Self.order($0, $1) < 0 })
        #expect(try all.property(UToken.key).find() == model.values.sorted { $0.id < $1.id }.map { QueryValue.uuid($0.key) })
    }

    @Test func theIndexServesEqualityAndIsInAndUniqueHolds() throws {
        let store = try Store(directoryPath: "memory:uuid-index", model: uuidModel())
        let box = store.box(for: UToken.self)
        let tokens = (0..<50).map { UToken(key: UUID(), ref: Self.pool[$0 % Self.pool.count]) }
        try box.put(tokens)
        let equal = try box.query { UToken.ref == Self.pool[3] }.build()
        let plan = try equal.compiled.plan
        guard case .index = plan.source else { Issue.record("== on an indexed UUID scans"); return }
        #expect(plan.exact)
        #expect(try equal.findIds().map(\.value) == tokens.filter { $0.ref == Self.pool[3] }.map(\.id))
        let within = try box.query { UToken.key.isIn([tokens[7].key, tokens[3].key, UUID()]) }.build()
        guard case .index = try within.compiled.plan.source else { Issue.record("isIn on an indexed UUID scans"); return }
        #expect(try within.find().map(\.id) == [tokens[3].id, tokens[7].id])

        // Unique: a second object with a stored key is refused, and nothing is written.
        #expect(throws: CellarError.uniqueViolation(property: "UToken.key", value: tokens[0].key.uuidString)) {
            try box.put(UToken(key: tokens[0].key, ref: nil))
        }
        #expect(try box.count() == 50)
        // An update keeping its own key is no conflict; moving to a new key frees the old one.
        let first = tokens[0]
        first.label = "changed"
        try box.put(first)
        let old = first.key
        first.key = UUID()
        try box.put(first)
        try box.put(UToken(key: old, ref: nil))
        #expect(try box.query { UToken.key == old }.build().count() == 1)

        // Conditions a UUID has no meaning for are refused when built.
        #expect(throws: CellarError.self) { try box.query { UToken.ref == "E621E1F8-C36C-495A-93FC-0C247A3E6E5F" }.build() }
        #expect(throws: CellarError.self) { try box.query { UToken.ref.isBetween(Self.pool[0], and: Self.pool[1]) }.build() }
    }

    @Test func anIndexAddedLaterIsBuiltFromTheStoredBytes() throws {
        let dir = TestDirectory("uuid-index-later")
        defer { dir.remove() }
        var store = try Store(directoryPath: dir.path, model: uuidModel(indexes: false), options: StoreOptions(durability: .none))
        let tokens = (0..<20).map { UToken(key: UUID(), ref: Self.pool[$0 % 4]) }
        try store.box(for: UToken.self).put(tokens)
        store.close()
        store = try Store(directoryPath: dir.path, model: uuidModel(), options: StoreOptions(durability: .none))
        let query = try store.box(for: UToken.self).query { UToken.ref.isIn([Self.pool[1], Self.pool[2]]) }.build()
        guard case .index = try query.compiled.plan.source else { Issue.record("the new index is not used"); return }
        #expect(try query.findIds().map(\.value) == tokens.filter { [Self.pool[1], Self.pool[2]].contains($0.ref) }.map(\.id))
        store.close()
    }
}

extension UUIDPropertyTests {
    @Test func compactionKeepsTheUUIDWhenItDropsARetiredField() throws {
        let uuid = Self.pool[6]
        let builder = RecordBuilder()
        builder.begin(slotCount: 3)
        builder.add(Int64(7), slot: 0)           // retired
        builder.add(uuid, slot: 1)
        builder.add(Optional(Self.pool[1]), slot: 2)
        let bytes = Array(builder.bytes)
        let rewritten = try bytes.withUnsafeBytes { raw in
            try RecordReader(raw).withoutRetiredFields([nil, .uuid, .uuid], into: RecordBuilder())
        }
        let kept = try #require(rewritten)
        #expect(kept.count == bytes.count - 8)
        try kept.withUnsafeBytes { raw in
            let reader = try RecordReader(raw)
            #expect(try reader.read(Int64.self, slot: 0) == nil && reader.uuid(slot: 1) == uuid && reader.uuid(slot: 2) == Self.pool[1])
        }
    }
}
