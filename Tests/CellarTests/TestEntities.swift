@_spi(CellarGenerated) import Cellar
import Foundation

// Entities with hand-written bindings, written the way the generator will write them.

/// Builds model entities tersely: properties as (name, ID, type, flags); UIDs derived from the
/// entity UID so that every test model is stable.
func testEntity(_ name: String, id: UInt32, uid: UInt64, lastPropertyId: UInt32? = nil,
                _ properties: [(String, UInt32, PropertyType, PropertyFlags)]) -> ModelEntity {
    let props = properties.map { p in
        ModelProperty(name: p.0, id: IdUid(id: p.1, uid: uid + UInt64(p.1)), type: p.2, flags: p.3)
    }
    let last = lastPropertyId ?? props.map(\.id.id).max() ?? 0
    return ModelEntity(name: name, id: IdUid(id: id, uid: uid), lastPropertyId: IdUid(id: last, uid: uid + UInt64(last)),
                       properties: props)
}

func testModel(_ entities: [ModelEntity], lastEntity: IdUid? = nil) -> Cellar.Model {
    let last = lastEntity ?? entities.map(\.id).max { $0.id < $1.id } ?? .zero
    return Cellar.Model(entities: entities, lastEntityId: last)
}

// MARK: AllTypes: every property type, plain and optional

final class AllTypes: Entity, EntityInspectable, Equatable, CustomStringConvertible {
    var id: Id = 0
    var bool = false
    var int8: Int8 = 0
    var int16: Int16 = 0
    var int32: Int32 = 0
    var int64: Int64 = 0
    var int: Int = 0
    var uint8: UInt8 = 0
    var uint16: UInt16 = 0
    var uint32: UInt32 = 0
    var uint64: UInt64 = 0
    var uint: UInt = 0
    var float: Float = 0
    var double: Double = 0
    var string = ""
    var date = Date(timeIntervalSince1970: 0)
    var data = Data()
    var bytes: [UInt8] = []
    var optBool: Bool?
    var optInt8: Int8?
    var optInt16: Int16?
    var optInt32: Int32?
    var optInt64: Int64?
    var optInt: Int?
    var optUInt8: UInt8?
    var optUInt16: UInt16?
    var optUInt32: UInt32?
    var optUInt64: UInt64?
    var optUInt: UInt?
    var optFloat: Float?
    var optDouble: Double?
    var optString: String?
    var optDate: Date?
    var optData: Data?
    var optBytes: [UInt8]?
    var nanoDate = Date(timeIntervalSince1970: 0)

    init() {}

    static let entityBinding = AllTypesBinding()

    static let modelEntity = testEntity("AllTypes", id: 1, uid: 1_000_000, [
        ("id", 1, .long, [.id]), ("bool", 2, .bool, []), ("int8", 3, .byte, []), ("int16", 4, .short, []),
        ("int32", 5, .int, []), ("int64", 6, .long, []), ("int", 7, .long, []),
        ("uint8", 8, .byte, [.unsigned]), ("uint16", 9, .short, [.unsigned]), ("uint32", 10, .int, [.unsigned]),
        ("uint64", 11, .long, [.unsigned]), ("uint", 12, .long, [.unsigned]), ("float", 13, .float, []),
        ("double", 14, .double, []), ("string", 15, .string, []), ("date", 16, .date, []),
        ("data", 17, .byteVector, []), ("bytes", 18, .byteVector, []),
        ("optBool", 19, .bool, []), ("optInt8", 20, .byte, []), ("optInt16", 21, .short, []),
        ("optInt32", 22, .int, []), ("optInt64", 23, .long, []), ("optInt", 24, .long, []),
        ("optUInt8", 25, .byte, [.unsigned]), ("optUInt16", 26, .short, [.unsigned]),
        ("optUInt32", 27, .int, [.unsigned]), ("optUInt64", 28, .long, [.unsigned]),
        ("optUInt", 29, .long, [.unsigned]), ("optFloat", 30, .float, []), ("optDouble", 31, .double, []),
        ("optString", 32, .string, []), ("optDate", 33, .date, []), ("optData", 34, .byteVector, []),
        ("optBytes", 35, .byteVector, []), ("nanoDate", 36, .dateNano, []),
    ])

    static func == (a: AllTypes, b: AllTypes) -> Bool { a.description == b.description }

    /// Every field, with doubles as bit patterns so that NaN compares equal to itself.
    var description: String {
        let fields: [Any?] = [id, bool, int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint,
                              float.bitPattern, double.bitPattern, string, date.timeIntervalSince1970, data, bytes,
                              optBool, optInt8, optInt16, optInt32, optInt64, optInt, optUInt8, optUInt16, optUInt32,
                              optUInt64, optUInt, optFloat?.bitPattern, optDouble?.bitPattern, optString,
                              optDate?.timeIntervalSince1970, optData, optBytes, nanoDate.timeIntervalSince1970]
        let text = fields.map { $0.map { "\($0)" } ?? "nil" }.map { $0.count > 40 ? "\($0.prefix(20))…(\($0.count))" : $0 }
        return "AllTypes(\(text.joined(separator: ", ")))"
    }
}

struct AllTypesBinding: EntityBinding {
    typealias EntityType = AllTypes
    var entityName: String { "AllTypes" }
    var entityId: IdUid { AllTypes.modelEntity.id }
    var slotCount: Int { 36 }

    func id(of entity: AllTypes) -> Id { entity.id }
    func setId(_ id: Id, of entity: inout AllTypes) { entity.id = id }

    func write(_ e: AllTypes, to r: RecordBuilder) throws {
        r.add(e.bool, slot: 1); r.add(e.int8, slot: 2); r.add(e.int16, slot: 3); r.add(e.int32, slot: 4)
        r.add(e.int64, slot: 5); r.add(e.int, slot: 6); r.add(e.uint8, slot: 7); r.add(e.uint16, slot: 8)
        r.add(e.uint32, slot: 9); r.add(e.uint64, slot: 10); r.add(e.uint, slot: 11); r.add(e.float, slot: 12)
        r.add(e.double, slot: 13); r.add(e.string, slot: 14); try r.add(e.date, slot: 15); r.add(e.data, slot: 16)
        r.add(e.bytes, slot: 17)
        r.add(e.optBool, slot: 18); r.add(e.optInt8, slot: 19); r.add(e.optInt16, slot: 20); r.add(e.optInt32, slot: 21)
        r.add(e.optInt64, slot: 22); r.add(e.optInt, slot: 23); r.add(e.optUInt8, slot: 24); r.add(e.optUInt16, slot: 25)
        r.add(e.optUInt32, slot: 26); r.add(e.optUInt64, slot: 27); r.add(e.optUInt, slot: 28); r.add(e.optFloat, slot: 29)
        r.add(e.optDouble, slot: 30); r.add(e.optString, slot: 31); try r.add(e.optDate, slot: 32); r.add(e.optData, slot: 33)
        r.add(e.optBytes, slot: 34); try r.addNanoseconds(e.nanoDate, slot: 35)
    }

    func read(id: Id, from r: RecordReader) throws -> AllTypes {
        let e = AllTypes()
        e.id = id
        e.bool = try r.bool(slot: 1) ?? false
        e.int8 = try r.read(Int8.self, slot: 2) ?? 0
        e.int16 = try r.read(Int16.self, slot: 3) ?? 0
        e.int32 = try r.read(Int32.self, slot: 4) ?? 0
        e.int64 = try r.read(Int64.self, slot: 5) ?? 0
        e.int = try r.read(Int.self, slot: 6) ?? 0
        e.uint8 = try r.read(UInt8.self, slot: 7) ?? 0
        e.uint16 = try r.read(UInt16.self, slot: 8) ?? 0
        e.uint32 = try r.read(UInt32.self, slot: 9) ?? 0
        e.uint64 = try r.read(UInt64.self, slot: 10) ?? 0
        e.uint = try r.read(UInt.self, slot: 11) ?? 0
        e.float = try r.float(slot: 12) ?? 0
        e.double = try r.double(slot: 13) ?? 0
        e.string = try r.string(slot: 14) ?? ""
        e.date = try r.date(slot: 15) ?? Date(timeIntervalSince1970: 0)
        e.data = try r.data(slot: 16) ?? Data()
        e.bytes = try r.byteArray(slot: 17) ?? []
        e.optBool = try r.bool(slot: 18)
        e.optInt8 = try r.read(Int8.self, slot: 19)
        e.optInt16 = try r.read(Int16.self, slot: 20)
        e.optInt32 = try r.read(Int32.self, slot: 21)
        e.optInt64 = try r.read(Int64.self, slot: 22)
        e.optInt = try r.read(Int.self, slot: 23)
        e.optUInt8 = try r.read(UInt8.self, slot: 24)
        e.optUInt16 = try r.read(UInt16.self, slot: 25)
        e.optUInt32 = try r.read(UInt32.self, slot: 26)
        e.optUInt64 = try r.read(UInt64.self, slot: 27)
        e.optUInt = try r.read(UInt.self, slot: 28)
        e.optFloat = try r.float(slot: 29)
        e.optDouble = try r.double(slot: 30)
        e.optString = try r.string(slot: 31)
        e.optDate = try r.date(slot: 32)
        e.optData = try r.data(slot: 33)
        e.optBytes = try r.byteArray(slot: 34)
        e.nanoDate = try r.dateNanoseconds(slot: 35) ?? Date(timeIntervalSince1970: 0)
        return e
    }
}

// MARK: Note: a struct entity

struct Note: Entity, EntityInspectable, Equatable {
    var id: EntityId<Note> = 0
    var title = ""
    var text: String?

    static let entityBinding = NoteBinding()
    static let modelEntity = testEntity("Note", id: 2, uid: 2_000_000, [
        ("id", 1, .long, [.id]), ("title", 2, .string, []), ("text", 3, .string, []),
    ])
}

struct NoteBinding: EntityBinding {
    typealias EntityType = Note
    var entityName: String { "Note" }
    var entityId: IdUid { Note.modelEntity.id }
    var slotCount: Int { 3 }
    func id(of entity: Note) -> Id { entity.id.value }
    func setId(_ id: Id, of entity: inout Note) { entity.id = EntityId(id) }
    func write(_ e: Note, to r: RecordBuilder) throws {
        r.add(e.title, slot: 1)
        r.add(e.text, slot: 2)
    }
    func read(id: Id, from r: RecordReader) throws -> Note {
        Note(id: EntityId(id), title: try r.string(slot: 1) ?? "", text: try r.string(slot: 2))
    }
}

// MARK: Tagged: assignable ids

final class Tagged: Entity, EntityInspectable {
    var id: Id = 0
    var tag = ""
    init(id: Id = 0, tag: String = "") { self.id = id; self.tag = tag }

    static let entityBinding = TaggedBinding()
    static let modelEntity = testEntity("Tagged", id: 3, uid: 3_000_000, [
        ("id", 1, .long, [.id, .idSelfAssignable]), ("tag", 2, .string, []),
    ])
}

struct TaggedBinding: EntityBinding {
    typealias EntityType = Tagged
    var entityName: String { "Tagged" }
    var entityId: IdUid { Tagged.modelEntity.id }
    var slotCount: Int { 2 }
    func id(of entity: Tagged) -> Id { entity.id }
    func setId(_ id: Id, of entity: inout Tagged) { entity.id = id }
    func write(_ e: Tagged, to r: RecordBuilder) throws { r.add(e.tag, slot: 1) }
    func read(id: Id, from r: RecordReader) throws -> Tagged { Tagged(id: id, tag: try r.string(slot: 1) ?? "") }
}

/// The model with all three test entities.
let standardModel = testModel([AllTypes.modelEntity, Note.modelEntity, Tagged.modelEntity])
