@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

// The differential query test's random conditions, asked of items embedded in holders: the same
// `QItem` fields stored as a nested record (embedded type `QItemE`, with indexes of its own), one
// per holder and a list of them, compared with the same predicates in memory.

extension QItem: EmbeddedInspectable {
    static let embeddedBinding = QItemEmbeddedBinding()
}

/// `QItem`'s fields as an embedded object: its entity binding's slots, and `id` in slot 0 (an
/// embedded object has no id of its own, so here it is a plain number).
struct QItemEmbeddedBinding: EmbeddedBinding {
    typealias EmbeddedType = QItem
    var typeName: String { "QItemE" }
    var typeId: IdUid { IdUid(id: 4, uid: 9_400) }
    var slotCount: Int { 10 }
    func write(_ value: QItem, to record: RecordBuilder) throws {
        record.add(value.id, slot: 0)
        try QItemBinding().write(value, to: record)
    }
    func read(from record: RecordReader) throws -> QItem {
        try QItemBinding().read(id: record.read(Id.self, slot: 0) ?? 0, from: record)
    }
}

/// A holder of one embedded item and a list of them.
final class QHolder: Entity, EntityInspectable {
    var id: Id = 0
    var item = QItem()
    var items: [QItem] = []
    init() {}
    static let entityBinding = QHolderBinding()
    static let item = EmbeddedProperty<QHolder, QItem>(name: "item", id: 2, type: .embedded)
    static let items = EmbeddedProperty<QHolder, QItem>(name: "items", id: 3, type: .embeddedList)
}

struct QHolderBinding: EntityBinding {
    typealias EntityType = QHolder
    var entityName: String { "QHolder" }
    var entityId: IdUid { IdUid(id: 5, uid: 9_500) }
    var slotCount: Int { 3 }
    func id(of entity: QHolder) -> Id { entity.id }
    func setId(_ id: Id, of entity: inout QHolder) { entity.id = id }
    func write(_ entity: QHolder, to record: RecordBuilder) throws {
        try record.add(embedded: entity.item, slot: 1)
        try record.add(embeddedList: entity.items, slot: 2)
    }
    func read(id: Id, from record: RecordReader) throws -> QHolder {
        let holder = QHolder()
        holder.id = id
        holder.item = try record.embedded(QItem.self, slot: 1) ?? QItem()
        holder.items = try record.embeddedList(QItem.self, slot: 2) ?? []
        return holder
    }
}

@Suite struct EmbeddedDifferentialTests {
    /// `queryModel()` with the embedded type QItemE (QItem's properties; `title` and `score`
    /// indexed when `indexes`) and the entity QHolder.
    static func model(indexes: Bool) -> Cellar.Model {
        var model = queryModel()
        let item = model.entity(named: "QItem")!
        var embedded = ModelEntity(name: "QItemE", id: IdUid(id: 4, uid: 9_400), lastPropertyId: IdUid(id: 10, uid: 9_410), properties: [],
                                   flags: ModelEntity.embeddedFlag)
        for property in item.properties {
            var copy = ModelProperty(name: property.name, id: IdUid(id: property.id.id, uid: 9_400 + UInt64(property.id.id)), type: property.type)
            if property.type == .relation || property.flags.contains(.id) {
                copy.type = .long
                copy.flags = .unsigned
            }
            if property.flags.contains(.unsigned) { copy.flags = .unsigned }
            if indexes && (property.name == "title" || property.name == "score") {
                copy.flags.insert(.indexed)
                copy.indexId = IdUid(id: property.name == "title" ? 20 : 21, uid: 9_920 + UInt64(property.id.id))
            }
            embedded.properties.append(copy)
        }
        let holder = ModelEntity(name: "QHolder", id: IdUid(id: 5, uid: 9_500), lastPropertyId: IdUid(id: 3, uid: 9_503), properties: [
            ModelProperty(name: "id", id: IdUid(id: 1, uid: 9_501), type: .long, flags: .id),
            ModelProperty(name: "item", id: IdUid(id: 2, uid: 9_502), type: .embedded, embeddedType: "QItemE"),
            ModelProperty(name: "items", id: IdUid(id: 3, uid: 9_503), type: .embeddedList, embeddedType: "QItemE"),
        ])
        model.entities += [embedded, holder]
        model.lastEntityId = holder.id
        model.lastIndexId = IdUid(id: 21, uid: 9_999)
        return model
    }

    static func randomItem(_ rng: inout SplitMix64, authors: [Id]) -> QItem {
        let item = QItem()
        QueryDifferentialTests.randomItem(&rng, into: item, authors: authors)
        item.id = Id.random(in: 0...12, using: &rng)
        return item
    }

    @Test(arguments: [true, false]) func randomConditionsOnEmbeddedItemsMatchFilteringInMemory(indexes: Bool) throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let dir = TestDirectory("embedded-differential-\(indexes)")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.path, model: Self.model(indexes: indexes), options: StoreOptions(durability: .none))
        let authors: [Id] = [1, 2, 3]
        let box = store.box(for: QHolder.self)
        var model: [Id: QHolder] = [:]
        var queries = 0
        for round in 0..<6 {
            try store.runInTransaction {
                for _ in 0..<Int.random(in: 30...90, using: &rng) {
                    let choice = Int.random(in: 0..<10, using: &rng)
                    let holder: QHolder
                    if choice < 6 || model.isEmpty {
                        holder = QHolder()
                    } else if choice < 9 {
                        holder = try #require(try box.get(model.keys.sorted().randomElement(using: &rng)!))
                    } else {
                        let id = model.keys.sorted().randomElement(using: &rng)!
                        try box.remove(id)
                        model[id] = nil
                        continue
                    }
                    holder.item = Self.randomItem(&rng, authors: authors)
                    holder.items = (0..<Int.random(in: 0...3, using: &rng)).map { _ in Self.randomItem(&rng, authors: authors) }
                    try box.put(holder)
                    model[holder.id] = holder
                }
            }
            let ids = model.keys.sorted()
            for _ in 0..<40 {
                queries += 1
                let random = QueryDifferentialTests.randomCondition(&rng, depth: 2, authors: authors)
                let context = "seed \(seed), round \(round), query \(queries): \(random.text)"
                let one = try box.query { QHolder.item.any { random.condition } }.build()
                #expect(try one.findIds().map(\.value) == ids.filter { random.matches(.init(model[$0]!.item)) }, "item: \(context)")
                let some = try box.query { QHolder.items.any { random.condition } }.build()
                #expect(try some.findIds().map(\.value) == ids.filter { model[$0]!.items.contains { random.matches(.init($0)) } },
                        "items: \(context)")
                #expect(try some.count() == ids.filter { model[$0]!.items.contains { random.matches(.init($0)) } }.count, "count: \(context)")
            }
        }
        // The index on QItemE's properties matches the records of every holder.
        let summary = try RecordCheck.verify(store.engine)
        #expect(summary.objects == model.count)
        if indexes { #expect(summary.indexEntries > 0) }
    }

    /// A condition on an indexed embedded property takes its candidates from the index.
    @Test func theIndexServesEmbeddedConditions() throws {
        let store = try Store(directoryPath: "memory:embedded-differential-plan", model: Self.model(indexes: true))
        let box = store.box(for: QHolder.self)
        for (query, indexed) in [(box.query { QHolder.item[QItem.title] == "apple" }, true),
                                 (box.query { QHolder.items.any { QItem.score > 3 && QItem.flag == true } }, true),
                                 (box.query { QHolder.items[QItem.amount] > 3 }, false)] {
            let plan = try query.build().compiled.plan
            if case .index = plan.source { #expect(indexed) } else { #expect(!indexed) }
        }
    }
}
