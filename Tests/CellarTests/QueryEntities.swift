@_spi(CellarGenerated) import Cellar
import Foundation

// Entities for the query, index, unique and relation tests, with hand-written bindings written
// the way the generator writes them (see Tests/CellarTests/Generated for generated ones).

/// An author: `name` unique (hash index), `email` unique with replace on conflict (value index).
final class QAuthor: Entity, EntityInspectable {
    var id: Id = 0
    var name = ""
    var email: String?
    var notes: ToMany<QItem> = nil
    init() {}
    init(_ name: String, email: String? = nil) { self.name = name; self.email = email }
    static let entityBinding = QAuthorBinding()

    static let name = Property<QAuthor>(name: "name", id: 2, type: .string)
    static let email = Property<QAuthor>(name: "email", id: 3, type: .string)
}

struct QAuthorBinding: EntityBinding {
    typealias EntityType = QAuthor
    var entityName: String { "QAuthor" }
    var entityId: IdUid { IdUid(id: 2, uid: 9_200) }
    var slotCount: Int { 3 }
    func id(of entity: QAuthor) -> Id { entity.id }
    func setId(_ id: Id, of entity: inout QAuthor) { entity.id = id }
    func write(_ entity: QAuthor, to record: RecordBuilder) throws {
        record.add(entity.name, slot: 1)
        record.add(entity.email, slot: 2)
    }
    func read(id: Id, from record: RecordReader) throws -> QAuthor {
        let author = QAuthor()
        author.id = id
        author.name = try record.string(slot: 1) ?? ""
        author.email = try record.string(slot: 2)
        return author
    }
    var hasRelations: Bool { true }
    func attach(_ entity: QAuthor, id: Id, store: Store) {
        entity.notes.attach(store, owner: id, link: .backlinkOfToOne(property: 9))
    }
    func writeRelations(of entity: QAuthor, id: Id, in writer: RelationWriter) throws {
        try entity.notes.write(owner: id, link: .backlinkOfToOne(property: 9), in: writer)
    }
}

/// A tag, linked to items through the standalone relation `QItem.tags` (relation ID 1).
final class QTag: Entity, EntityInspectable {
    var id: Id = 0
    var label = ""
    var items: ToMany<QItem> = nil
    init() {}
    init(_ label: String) { self.label = label }
    static let entityBinding = QTagBinding()
    static let label = Property<QTag>(name: "label", id: 2, type: .string)
}

struct QTagBinding: EntityBinding {
    typealias EntityType = QTag
    var entityName: String { "QTag" }
    var entityId: IdUid { IdUid(id: 3, uid: 9_300) }
    var slotCount: Int { 2 }
    func id(of entity: QTag) -> Id { entity.id }
    func setId(_ id: Id, of entity: inout QTag) { entity.id = id }
    func write(_ entity: QTag, to record: RecordBuilder) throws { record.add(entity.label, slot: 1) }
    func read(id: Id, from record: RecordReader) throws -> QTag {
        let tag = QTag()
        tag.id = id
        tag.label = try record.string(slot: 1) ?? ""
        return tag
    }
    var hasRelations: Bool { true }
    func attach(_ entity: QTag, id: Id, store: Store) {
        entity.items.attach(store, owner: id, link: .backlinkOfRelation(1))
    }
    func writeRelations(of entity: QTag, id: Id, in writer: RelationWriter) throws {
        try entity.items.write(owner: id, link: .backlinkOfRelation(1), in: writer)
    }
}

/// An item with a property of every kind queries compare, most of them optional, some indexed.
final class QItem: Entity, EntityInspectable, CustomStringConvertible {
    var id: Id = 0
    var title = ""                 // 2, value index
    var text: String?              // 3, hash index
    var score: Int32?              // 4, value index
    var amount: Double?            // 5
    var flag = false               // 6
    var created = Date(timeIntervalSince1970: 0)   // 7, Date (ms)
    var blob: [UInt8]?             // 8
    var author: ToOne<QAuthor> = nil   // 9, relation, indexed
    var rank: UInt64 = 0           // 10, unsigned, value index
    var tags: ToMany<QTag> = nil   // relation 1
    init() {}
    static let entityBinding = QItemBinding()

    static let id = Property<QItem>(name: "id", id: 1, type: .long)
    static let title = Property<QItem>(name: "title", id: 2, type: .string)
    static let text = Property<QItem>(name: "text", id: 3, type: .string)
    static let score = Property<QItem>(name: "score", id: 4, type: .int)
    static let amount = Property<QItem>(name: "amount", id: 5, type: .double)
    static let flag = Property<QItem>(name: "flag", id: 6, type: .bool)
    static let created = Property<QItem>(name: "created", id: 7, type: .date)
    static let blob = Property<QItem>(name: "blob", id: 8, type: .byteVector)
    static let author = Property<QItem>(name: "author", id: 9, type: .relation)
    static let rank = Property<QItem>(name: "rank", id: 10, type: .long)
    static let tags = RelationProperty<QItem>(name: "tags", relationId: 1, targetEntityId: 3)

    var description: String { "QItem(\(id) \(title) \(text ?? "nil") \(score.map(String.init) ?? "nil"))" }
}

struct QItemBinding: EntityBinding {
    typealias EntityType = QItem
    var entityName: String { "QItem" }
    var entityId: IdUid { IdUid(id: 1, uid: 9_100) }
    var slotCount: Int { 10 }
    func id(of entity: QItem) -> Id { entity.id }
    func setId(_ id: Id, of entity: inout QItem) { entity.id = id }
    func write(_ entity: QItem, to record: RecordBuilder) throws {
        record.add(entity.title, slot: 1)
        record.add(entity.text, slot: 2)
        record.add(entity.score, slot: 3)
        record.add(entity.amount, slot: 4)
        record.add(entity.flag, slot: 5)
        try record.add(entity.created, slot: 6)
        record.add(entity.blob, slot: 7)
        record.add(try entity.author.targetIdForPut(), slot: 8)
        record.add(entity.rank, slot: 9)
    }
    func read(id: Id, from record: RecordReader) throws -> QItem {
        let item = QItem()
        item.id = id
        item.title = try record.string(slot: 1) ?? ""
        item.text = try record.string(slot: 2)
        item.score = try record.read(Int32.self, slot: 3)
        item.amount = try record.double(slot: 4)
        item.flag = try record.bool(slot: 5) ?? false
        item.created = try record.date(slot: 6) ?? Date(timeIntervalSince1970: 0)
        item.blob = try record.byteArray(slot: 7)
        item.author = ToOne(targetId: try record.read(Id.self, slot: 8) ?? 0)
        item.rank = try record.read(UInt64.self, slot: 9) ?? 0
        return item
    }
    var hasRelations: Bool { true }
    func attach(_ entity: QItem, id: Id, store: Store) {
        entity.author.attach(store)
        entity.tags.attach(store, owner: id, link: .relation(1))
    }
    func writeRelations(of entity: QItem, id: Id, in writer: RelationWriter) throws {
        try entity.tags.write(owner: id, link: .relation(1), in: writer)
    }
}

/// The model of QItem, QAuthor and QTag; `indexes: false` leaves every index out (to test
/// adding and dropping them on a store with data). Indexes removed and added again need new IDs
/// and UIDs: `generation` n gives index IDs 10n + 1…10n + 7.
/// `stringIndexes: false` leaves QItem's two string indexes out: its indexes are then all on
/// numbers and not unique, and new items take the index path that works on record bytes.
func queryModel(indexes: Bool = true, uniqueName: Bool = true, generation: UInt32 = 0, tags: Bool = true,
                stringIndexes: Bool = true) -> Cellar.Model {
    func p(_ name: String, _ id: UInt32, _ uid: UInt64, _ type: PropertyType, _ flags: PropertyFlags = [],
           index: UInt32? = nil, target: String? = nil) -> ModelProperty {
        let indexed = indexes && index != nil
        return ModelProperty(name: name, id: IdUid(id: id, uid: uid), type: type,
                             flags: indexed ? flags : flags.subtracting([.indexed, .indexHash, .indexHash64, .unique, .uniqueOnConflictReplace]),
                             indexId: indexed ? IdUid(id: 10 * generation + index!, uid: 9_900 + UInt64(10 * generation + index!)) : nil,
                             relationTarget: target)
    }
    let item = ModelEntity(name: "QItem", id: IdUid(id: 1, uid: 9_100), lastPropertyId: IdUid(id: 10, uid: 9_110), properties: [
        p("id", 1, 9_101, .long, .id),
        p("title", 2, 9_102, .string, stringIndexes ? .indexed : [], index: stringIndexes ? 1 : nil),
        p("text", 3, 9_103, .string, stringIndexes ? [.indexed, .indexHash] : [], index: stringIndexes ? 2 : nil),
        p("score", 4, 9_104, .int, .indexed, index: 3),
        p("amount", 5, 9_105, .double),
        p("flag", 6, 9_106, .bool),
        p("created", 7, 9_107, .date),
        p("blob", 8, 9_108, .byteVector),
        p("author", 9, 9_109, .relation, [.indexed, .indexPartialSkipZero], index: 4, target: "QAuthor"),
        p("rank", 10, 9_110, .long, [.indexed, .unsigned], index: 5),
    ], relations: tags ? [ModelRelation(name: "tags", id: IdUid(id: 1, uid: 9_801), targetId: IdUid(id: 3, uid: 9_300))] : [])
    let author = ModelEntity(name: "QAuthor", id: IdUid(id: 2, uid: 9_200), lastPropertyId: IdUid(id: 3, uid: 9_203), properties: [
        p("id", 1, 9_201, .long, .id),
        p("name", 2, 9_202, .string, uniqueName ? [.indexed, .indexHash, .unique] : [.indexed, .indexHash], index: 6),
        p("email", 3, 9_203, .string, [.indexed, .unique, .uniqueOnConflictReplace], index: 7),
    ])
    let tag = ModelEntity(name: "QTag", id: IdUid(id: 3, uid: 9_300), lastPropertyId: IdUid(id: 2, uid: 9_302), properties: [
        p("id", 1, 9_301, .long, .id),
        p("label", 2, 9_302, .string),
    ])
    return Cellar.Model(entities: [item, author, tag], lastEntityId: IdUid(id: 3, uid: 9_300),
                        lastIndexId: IdUid(id: 10 * generation + 7, uid: 9_907 + 10 * UInt64(generation)), lastRelationId: IdUid(id: 1, uid: 9_801))
}
