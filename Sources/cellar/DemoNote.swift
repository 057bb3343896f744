@_spi(CellarGenerated) import Cellar
import Foundation

/// The demo's entity. Its binding is written by hand here, the way the generator writes bindings.
final class DemoNote: Entity, EntityInspectable {
    var id: Id = 0
    var title = ""
    var text: String?
    var creationDate = Date()
    var stars: Int32 = 0

    init() {}
    init(title: String, text: String?, stars: Int32) {
        self.title = title
        self.text = text
        self.stars = stars
    }

    static let entityBinding = DemoNoteBinding()

    /// The demo's model, as the generator would keep it in `model-cellar.json`.
    static let model = Model(
        entities: [ModelEntity(
            name: "Note", id: IdUid(id: 1, uid: 4_216_803_557_012_301_001),
            lastPropertyId: IdUid(id: 5, uid: 4_216_803_557_012_301_006),
            properties: [
                ModelProperty(name: "id", id: IdUid(id: 1, uid: 4_216_803_557_012_301_002), type: .long, flags: [.id]),
                ModelProperty(name: "title", id: IdUid(id: 2, uid: 4_216_803_557_012_301_003), type: .string),
                ModelProperty(name: "text", id: IdUid(id: 3, uid: 4_216_803_557_012_301_004), type: .string),
                ModelProperty(name: "creationDate", id: IdUid(id: 4, uid: 4_216_803_557_012_301_005), type: .date),
                ModelProperty(name: "stars", id: IdUid(id: 5, uid: 4_216_803_557_012_301_006), type: .int),
            ])],
        lastEntityId: IdUid(id: 1, uid: 4_216_803_557_012_301_001))
}

struct DemoNoteBinding: EntityBinding {
    typealias EntityType = DemoNote
    var entityName: String { "Note" }
    var entityId: IdUid { IdUid(id: 1, uid: 4_216_803_557_012_301_001) }
    var slotCount: Int { 5 }

    func id(of entity: DemoNote) -> Id { entity.id }
    func setId(_ id: Id, of entity: inout DemoNote) { entity.id = id }

    func write(_ note: DemoNote, to record: RecordBuilder) throws {
        record.add(note.title, slot: 1)
        record.add(note.text, slot: 2)
        try record.add(note.creationDate, slot: 3)
        record.add(note.stars, slot: 4)
    }

    func read(id: Id, from record: RecordReader) throws -> DemoNote {
        let note = DemoNote()
        note.id = id
        note.title = try record.string(slot: 1) ?? ""
        note.text = try record.string(slot: 2)
        note.creationDate = try record.date(slot: 3) ?? Date(timeIntervalSince1970: 0)
        note.stars = try record.read(Int32.self, slot: 4) ?? 0
        return note
    }
}
