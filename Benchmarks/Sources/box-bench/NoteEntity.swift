import BenchSupport
import Cellar
import Foundation

// WORKLOAD.md's `Note` as an app would declare it, with the binding written by hand the way the
// generator writes one (property ID k = record slot k − 1; dates through `add(_: Date, slot:)`).
// The author index is left out for now: neither way maintains one.

struct Note: Entity, EntityInspectable, Equatable {
    var id: Id = 0
    /// 20 ASCII characters: `Note title %09d`.
    var title = ""
    /// 100 ASCII characters: `Body %09d ` and the first 85 characters of the lorem ipsum.
    var text = ""
    /// Milliseconds since 1970: 1_700_000_000_000 + 1000 i.
    var creationDate = Date(timeIntervalSince1970: 0)
    var modificationDate = Date(timeIntervalSince1970: 0)
    /// ((i − 1) % 100) + 1.
    var author: UInt64 = 0

    static let entityBinding = NoteBinding()

    /// The model entity: ObjectBox property ids 1...6, as WORKLOAD.md numbers them.
    static let modelEntity: ModelEntity = {
        let uid: UInt64 = 7_245_113_000_000
        func property(_ name: String, _ id: UInt32, _ type: PropertyType, _ flags: PropertyFlags = []) -> ModelProperty {
            ModelProperty(name: name, id: IdUid(id: id, uid: uid + UInt64(id)), type: type, flags: flags)
        }
        return ModelEntity(
            name: "Note", id: IdUid(id: 1, uid: uid), lastPropertyId: IdUid(id: 6, uid: uid + 6),
            properties: [
                property("id", 1, .long, [.id]),
                property("title", 2, .string),
                property("text", 3, .string),
                property("creationDate", 4, .date),
                property("modificationDate", 5, .date),
                property("author", 6, .long, [.unsigned]),
            ])
    }()

    static let model = Model(entities: [modelEntity], lastEntityId: modelEntity.id)
}

struct NoteBinding: EntityBinding {
    typealias EntityType = Note
    var entityName: String { "Note" }
    var entityId: IdUid { Note.modelEntity.id }
    var slotCount: Int { Self.slots }

    static let slots = 6

    func id(of entity: Note) -> Id { entity.id }
    func setId(_ id: Id, of entity: inout Note) { entity.id = id }
    func write(_ entity: Note, to record: RecordBuilder) throws { try Self.encode(entity, to: record) }
    func read(id: Id, from record: RecordReader) throws -> Note { try Self.decode(id: id, from: record) }

    // The raw way calls these two directly: the same `RecordBuilder` / `RecordReader` calls.

    @inline(__always)
    static func encode(_ e: Note, to r: RecordBuilder) throws {
        r.add(e.title, slot: 1)
        r.add(e.text, slot: 2)
        try r.add(e.creationDate, slot: 3)
        try r.add(e.modificationDate, slot: 4)
        r.add(e.author, slot: 5)
    }

    @inline(__always)
    static func decode(id: Id, from r: RecordReader) throws -> Note {
        Note(id: id,
             title: try r.string(slot: 1) ?? "",
             text: try r.string(slot: 2) ?? "",
             creationDate: try r.date(slot: 3) ?? Date(timeIntervalSince1970: 0),
             modificationDate: try r.date(slot: 4) ?? Date(timeIntervalSince1970: 0),
             author: try r.read(UInt64.self, slot: 5) ?? 0)
    }
}

/// Everything the steps are given, built before any timer: the objects (as the app already holds
/// them), their updated versions, the random order of the gets and the ids to remove.
final class NoteWorkload {
    static let baseMs: Int64 = 1_700_000_000_000
    static let lorem = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua."

    let n: Int
    /// How many single-object write transactions step put1 makes (objects 1...singles).
    let singles: Int
    /// New objects (id 0); object i (1...n) at index i − 1.
    let fresh: [Note]
    /// Step update's objects: ids set, modificationDate = creationDate + 60 s.
    let updated: [Note]
    /// Step put1's objects (ids 1...singles): modificationDate = creationDate + 120 s.
    let single: [Note]
    /// 1...n in WORKLOAD.md's random order.
    let permutation: [Id]
    /// 1...n, for remove.
    let ids: [Id]
    /// Σ creationDate in ms over all objects.
    let creationSum: Int64

    init(n: Int, singles: Int) {
        precondition(n >= 1 && singles >= 1 && singles <= n)
        self.n = n
        self.singles = singles
        let loremPrefix = String(Self.lorem.prefix(85))
        var fresh: [Note] = []
        fresh.reserveCapacity(n)
        for i in 1...n {
            let ms = Self.baseMs + 1000 * Int64(i)
            let date = DateEncoding.date(milliseconds: ms)
            let digits = Self.nineDigits(i)
            fresh.append(Note(id: 0, title: "Note title " + digits, text: "Body " + digits + " " + loremPrefix,
                              creationDate: date, modificationDate: date, author: UInt64((i - 1) % 100 + 1)))
        }
        precondition(fresh[0].title.utf8.count == 20 && fresh[0].text.utf8.count == 100)
        self.fresh = fresh
        updated = fresh.indices.map { k in Self.modified(fresh[k], id: Id(k + 1), byMs: 60_000) }
        single = (0..<singles).map { k in Self.modified(fresh[k], id: Id(k + 1), byMs: 120_000) }
        permutation = randomOrder(n)
        ids = (1...n).map { Id($0) }
        creationSum = Int64(n) * Self.baseMs + 1000 * Int64(n) * Int64(n + 1) / 2
    }

    /// `%09d`.
    static func nineDigits(_ i: Int) -> String {
        let s = String(i)
        return String(repeating: "0", count: max(0, 9 - s.count)) + s
    }

    static func modified(_ note: Note, id: Id, byMs: Int64) -> Note {
        var copy = note
        copy.id = id
        copy.modificationDate = DateEncoding.date(milliseconds: milliseconds(note.creationDate) + byMs)
        return copy
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// Object `id` as step put stored it.
    func afterPut(_ id: Id) -> Note {
        var note = fresh[Int(id) - 1]
        note.id = id
        return note
    }

    /// Object `id` as it must read once update and put1 ran.
    func final(_ id: Id) -> Note {
        Int(id) <= singles ? single[Int(id) - 1] : updated[Int(id) - 1]
    }
}
