@_spi(CellarGenerated) @_spi(Testing) import Cellar
import Foundation

// The CRUD workload's `Note` as an app would declare it, shared by box-bench and query-bench, with the
// binding written by hand the way the generator writes one (property ID k = record slot k − 1;
// dates through `add(_: Date, slot:)`). Two models: `Note.model` without the author index
// (box-bench: neither of its ways maintains one) and `Note.indexedModel` with it (query-bench:
// The CRUD workload's `author` flagged INDEXED|UNSIGNED, index id 1). The binding is the same for both:
// the store maintains the index from the model.
// Public and `@inlinable` so that the benchmarks call it as if it were in their own module.

public struct Note: Entity, EntityInspectable, Equatable, Sendable {
    public var id: Id
    /// 20 ASCII characters: `Note title %09d`.
    public var title: String
    /// 100 ASCII characters: `Body %09d ` and the first 85 characters of the lorem ipsum.
    public var text: String
    /// Milliseconds since 1970: 1_700_000_000_000 + 1000 i.
    public var creationDate: Date
    public var modificationDate: Date
    /// ((i − 1) % 100) + 1.
    public var author: UInt64

    @inlinable
    public init(id: Id = 0, title: String = "", text: String = "", creationDate: Date = Date(timeIntervalSince1970: 0),
                modificationDate: Date = Date(timeIntervalSince1970: 0), author: UInt64 = 0) {
        self.id = id
        self.title = title
        self.text = text
        self.creationDate = creationDate
        self.modificationDate = modificationDate
        self.author = author
    }

    public static let entityBinding = NoteBinding()

    /// For query conditions: `Note.author == 42`.
    public static let author = Property<Note>(name: "author", id: 6, type: .long)
    /// `title` in queries and `Query.visit`.
    public static let title = Property<Note>(name: "title", id: 2, type: .string)

    static let uid: UInt64 = 7_245_113_000_000

    /// The model entity: ObjectBox property ids 1...6, as docs/crud-workload.md numbers them; `author`
    /// indexed (INDEXED|UNSIGNED, index id 1) when `indexed`.
    public static func makeModelEntity(indexed: Bool) -> ModelEntity {
        func property(_ name: String, _ id: UInt32, _ type: PropertyType, _ flags: PropertyFlags = [],
                      indexId: IdUid? = nil) -> ModelProperty {
            ModelProperty(name: name, id: IdUid(id: id, uid: uid + UInt64(id)), type: type, flags: flags, indexId: indexId)
        }
        return ModelEntity(
            name: "Note", id: IdUid(id: 1, uid: uid), lastPropertyId: IdUid(id: 6, uid: uid + 6),
            properties: [
                property("id", 1, .long, [.id]),
                property("title", 2, .string),
                property("text", 3, .string),
                property("creationDate", 4, .date),
                property("modificationDate", 5, .date),
                indexed ? property("author", 6, .long, [.indexed, .unsigned], indexId: authorIndex)
                        : property("author", 6, .long, [.unsigned]),
            ])
    }

    static let authorIndex = IdUid(id: 1, uid: uid + 101)

    /// Without an index (box-bench).
    public static let modelEntity = makeModelEntity(indexed: false)
    public static let model = Model(entities: [modelEntity], lastEntityId: modelEntity.id)

    /// With the author index (query-bench).
    public static let indexedModel = Model(entities: [makeModelEntity(indexed: true)], lastEntityId: modelEntity.id,
                                           lastIndexId: authorIndex)

    // MARK: the CRUD workload's objects

    public static let baseMs: Int64 = 1_700_000_000_000
    public static let lorem = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua."

    /// Objects 1...n as docs/crud-workload.md builds them (id 0, not stored yet); object i at index i − 1.
    public static func fresh(_ n: Int) -> [Note] {
        let loremPrefix = String(lorem.prefix(85))
        var notes: [Note] = []
        notes.reserveCapacity(n)
        for i in 1...n {
            let date = DateEncoding.date(milliseconds: baseMs + 1000 * Int64(i))
            let digits = nineDigits(i)
            notes.append(Note(id: 0, title: "Note title " + digits, text: "Body " + digits + " " + loremPrefix,
                              creationDate: date, modificationDate: date, author: UInt64((i - 1) % 100 + 1)))
        }
        precondition(notes[0].title.utf8.count == 20 && notes[0].text.utf8.count == 100)
        return notes
    }

    /// `%09d`.
    public static func nineDigits(_ i: Int) -> String {
        let s = String(i)
        return String(repeating: "0", count: max(0, 9 - s.count)) + s
    }
}

public struct NoteBinding: EntityBinding {
    public typealias EntityType = Note

    public init() {}

    public var entityName: String { "Note" }
    public var entityId: IdUid { Note.modelEntity.id }
    public var slotCount: Int { Self.slots }

    public static let slots = 6

    @inlinable public func id(of entity: Note) -> Id { entity.id }
    @inlinable public func setId(_ id: Id, of entity: inout Note) { entity.id = id }
    @_spi(CellarGenerated) @inlinable public func write(_ entity: Note, to record: RecordBuilder) throws { try Self.encode(entity, to: record) }
    @_spi(CellarGenerated) @inlinable public func read(id: Id, from record: RecordReader) throws -> Note { try Self.decode(id: id, from: record) }

    // box-bench's raw way calls these two directly: the same `RecordBuilder` / `RecordReader` calls.
    // Like those calls, behind `@_spi(CellarGenerated)`: inlinable code may use SPI only as SPI.

    @inlinable @inline(__always)
    @_spi(CellarGenerated) public static func encode(_ e: Note, to r: RecordBuilder) throws {
        r.add(e.title, slot: 1)
        r.add(e.text, slot: 2)
        try r.add(e.creationDate, slot: 3)
        try r.add(e.modificationDate, slot: 4)
        r.add(e.author, slot: 5)
    }

    @inlinable @inline(__always)
    @_spi(CellarGenerated) public static func decode(id: Id, from r: RecordReader) throws -> Note {
        Note(id: id,
             title: try r.string(slot: 1) ?? "",
             text: try r.string(slot: 2) ?? "",
             creationDate: try r.date(slot: 3) ?? Date(timeIntervalSince1970: 0),
             modificationDate: try r.date(slot: 4) ?? Date(timeIntervalSince1970: 0),
             author: try r.read(UInt64.self, slot: 5) ?? 0)
    }
}
