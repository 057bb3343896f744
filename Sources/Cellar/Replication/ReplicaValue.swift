import CellarStorage
import Foundation

/// One property's value as it travels to and from a replica (see ``ReplicaSchema``), in the
/// form of its column type. For sync packages built on Cellar (`@_spi(Sync)`).
@_spi(Sync)
public enum ReplicaValue: Sendable, Hashable {
    /// No value (an optional's nil, or a property added after the object was written).
    case null
    case bool(Bool)
    /// Integers of every width, and dates as their stored milliseconds or nanoseconds since 1970.
    case integer(Int64)
    /// Unsigned 64-bit integers.
    case unsigned(UInt64)
    case float(Float)
    case double(Double)
    case decimal(Decimal)
    case string(String)
    case bytes([UInt8])
    case uuid(UUID)
    /// A to-one relation: its target's global id.
    case reference(UUID)
    /// Collections, vectors, flex values, geo points and embedded objects: their JSON text.
    case json(String)

    /// Whether this is a `.json` value (written into a record through its JSON form).
    var isJSON: Bool {
        if case .json = self { return true }
        return false
    }
}

/// Reads values out of records and writes them back, resolving relation targets between local
/// ids and global ids through `resolve`. A class: the applier of pulled changes hands it to a
/// call per value, where a struct holding the model would be copied (and its references
/// retained) each time.
final class ReplicaValueCoding: Sendable {
    let model: Model

    init(model: Model) {
        self.model = model
    }

    /// The value of `property` (of the entity `reader`'s record belongs to). `globalId` gives a
    /// to-one relation target's global id (its target entity's property, the target id).
    func value(of property: ModelProperty, in reader: RecordReader,
               globalId: (_ target: ModelProperty, _ id: Id) throws -> UUID) throws -> ReplicaValue {
        let slot = Int(property.id.id) - 1
        let unsigned = property.flags.contains(.unsigned)
        switch property.type.known {
        case .bool: return try reader.bool(slot: slot).map(ReplicaValue.bool) ?? .null
        case .byte: return try (unsigned ? reader.read(UInt8.self, slot: slot).map(Int64.init) : reader.read(Int8.self, slot: slot).map(Int64.init)).map(ReplicaValue.integer) ?? .null
        case .short: return try (unsigned ? reader.read(UInt16.self, slot: slot).map(Int64.init) : reader.read(Int16.self, slot: slot).map(Int64.init)).map(ReplicaValue.integer) ?? .null
        case .char: return try reader.read(UInt16.self, slot: slot).map { .integer(Int64($0)) } ?? .null
        case .int: return try (unsigned ? reader.read(UInt32.self, slot: slot).map(Int64.init) : reader.read(Int32.self, slot: slot).map(Int64.init)).map(ReplicaValue.integer) ?? .null
        case .long:
            if unsigned { return try reader.read(UInt64.self, slot: slot).map(ReplicaValue.unsigned) ?? .null }
            return try reader.read(Int64.self, slot: slot).map(ReplicaValue.integer) ?? .null
        case .date, .dateNano: return try reader.read(Int64.self, slot: slot).map(ReplicaValue.integer) ?? .null
        case .float: return try reader.float(slot: slot).map(ReplicaValue.float) ?? .null
        case .double: return try reader.double(slot: slot).map(ReplicaValue.double) ?? .null
        case .decimal: return try reader.decimal(slot: slot).map(ReplicaValue.decimal) ?? .null
        case .string: return try reader.string(slot: slot).map(ReplicaValue.string) ?? .null
        case .byteVector: return try reader.data(slot: slot).map { .bytes(Array($0)) } ?? .null
        case .uuid: return try reader.uuid(slot: slot).map(ReplicaValue.uuid) ?? .null
        case .relation:
            guard let id = try reader.read(UInt64.self, slot: slot), id != 0 else { return .null }
            return .reference(try globalId(property, id))
        case .collection, .flex, .geoPoint, .embedded, .embeddedList, nil:
            let json = try ObjectDump.value(of: property, slot: slot, in: reader, model: model, style: .exact)
            return json == .null ? .null : .json(JSONWriter.string(json))
        }
    }

    /// Writes `value` (not a `.json` one: see `json(_:of:localId:)`) into `builder` as the
    /// field of `property`; `.null` writes none. Throws `illegalArgument` for a value of another
    /// kind than the property's column, or an integer out of the property's range. `localId`
    /// gives the local id of a to-one relation's target from its global id.
    func write(_ value: ReplicaValue, of property: ModelProperty, into builder: RecordBuilder,
               localId: (_ target: ModelProperty, _ globalId: UUID) throws -> Id) throws {
        let slot = Int(property.id.id) - 1
        let unsigned = property.flags.contains(.unsigned)
        func integer<T: FixedWidthInteger>(_ number: Int64, _ type: T.Type) throws -> T {
            guard let integer = T(exactly: number) else {
                throw CellarError.illegalArgument("\(property.name) (\(property.type)) cannot take the integer \(number)")
            }
            return integer
        }
        switch (value, property.type.known) {
        case (.null, _): return
        case (.bool(let flag), .bool): builder.add(flag, slot: slot)
        case (.integer(let number), .byte): unsigned ? builder.add(try integer(number, UInt8.self), slot: slot) : builder.add(try integer(number, Int8.self), slot: slot)
        case (.integer(let number), .short): unsigned ? builder.add(try integer(number, UInt16.self), slot: slot) : builder.add(try integer(number, Int16.self), slot: slot)
        case (.integer(let number), .char): builder.add(try integer(number, UInt16.self), slot: slot)
        case (.integer(let number), .int): unsigned ? builder.add(try integer(number, UInt32.self), slot: slot) : builder.add(try integer(number, Int32.self), slot: slot)
        case (.integer(let number), .long) where !unsigned, (.integer(let number), .date), (.integer(let number), .dateNano):
            builder.add(number, slot: slot)
        case (.unsigned(let number), .long) where unsigned: builder.add(number, slot: slot)
        case (.float(let number), .float): builder.add(number, slot: slot)
        case (.double(let number), .double): builder.add(number, slot: slot)
        case (.decimal(let number), .decimal): builder.add(number, slot: slot)
        case (.string(let text), .string): builder.add(text, slot: slot)
        case (.bytes(let bytes), .byteVector): builder.add(bytes, slot: slot)
        case (.uuid(let uuid), .uuid): builder.add(uuid, slot: slot)
        case (.reference(let target), .relation): builder.add(UInt64(try localId(property, target)), slot: slot)
        default:
            throw CellarError.illegalArgument("\(property.name) (\(property.type)) cannot take the value \(value)")
        }
    }

    /// `value` as the JSON `ObjectRecordEncoder` reads for `property`; throws `illegalArgument`
    /// for a value of another kind than the property's column. `localId` gives the local id of
    /// a to-one relation's target from its global id.
    func json(_ value: ReplicaValue, of property: ModelProperty,
              localId: (_ target: ModelProperty, _ globalId: UUID) throws -> Id) throws -> JSONValue {
        let column = ReplicaSchema.column(of: property)
        switch (value, column) {
        case (.null, _): return .null
        case (.bool(let flag), .boolean): return .bool(flag)
        case (.integer(let number), .bigint):
            if property.type == .date { return .string(ObjectDump.iso8601(number, perSecond: 1_000)) }
            if property.type == .dateNano { return .string(ObjectDump.iso8601(number, perSecond: 1_000_000_000)) }
            return .number(String(number))
        case (.unsigned(let number), .numeric): return .number(String(number))
        case (.float(let number), .real): return ObjectDump.number(number)
        case (.double(let number), .doublePrecision): return ObjectDump.number(number)
        case (.decimal(let number), .decimal): return ObjectDump.decimal(number)
        case (.string(let text), .text): return .string(text)
        case (.bytes(let bytes), .bytea): return .string(Data(bytes).base64EncodedString())
        case (.uuid(let uuid), .uuid) where property.type == .uuid: return .string(uuid.uuidString)
        case (.reference(let target), .uuid) where property.type == .relation: return .number(String(try localId(property, target)))
        case (.json(let text), .jsonb): return try JSONParser.parse(Array(text.utf8), source: property.name)
        default:
            throw CellarError.illegalArgument("\(property.name) (\(property.type)) cannot take the value \(value)")
        }
    }
}

/// An entity and its record layout, as sync reads and writes its objects: a class, so that a
/// change's look-ups borrow the entity and its properties instead of copying them (and retaining
/// every reference they hold) object by object.
final class ReplicaLayout {
    let entity: ModelEntity
    /// The type of each slot's property (nil: none, or retired).
    let types: [PropertyType?]
    /// The positions in `entity.properties` of the properties but the id, by UID.
    let properties: [UInt64: Int]
    /// The id property's slot (its field is not stored).
    let idSlot: Int?

    init(_ entity: ModelEntity) {
        self.entity = entity
        types = entity.typesBySlot
        var properties: [UInt64: Int] = [:]
        for (index, property) in entity.properties.enumerated() where !property.flags.contains(.id) {
            if properties[property.id.uid] == nil { properties[property.id.uid] = index }
        }
        self.properties = properties
        idSlot = entity.properties.first { $0.flags.contains(.id) }.map { Int($0.id.id) - 1 }
    }
}
