import CellarStorage
import Foundation

/// How a migration sees a stored property's value: as a `FlexValue`, whatever the property's
/// type (the generated classes of the old model are gone, so the values are dynamic). One case
/// per kind of type:
///
/// | property type | `FlexValue` |
/// | --- | --- |
/// | Bool | `.bool` |
/// | Byte, Short, Char, Int, Long, a relation (`ToOne`, the target's id) | `.integer` (an unsigned Long above `Int64.max` as its bit pattern) |
/// | Float, Double | `.double` |
/// | String | `.string` |
/// | Date, DateNano | `.date` |
/// | UUID | `.uuid` |
/// | Decimal | `.string`, its exact text (written: a `.string` or an `.integer`) |
/// | byte vector | `.bytes` |
/// | GeoPoint | `.map(["latitude": .double, "longitude": .double])` |
/// | Flex | the value |
/// | list, set, vector | `.list` of elements; map | `.map` |
/// | embedded object | `.map` of its properties; list of them | `.list` of such maps |
///
/// An absent value (a nil optional, a property added later) is `.null`; setting `.null` leaves
/// it absent.
enum MigrationValues {
    /// The value of `property` (of `model`) in `reader`; `.null` when absent.
    static func read(_ property: ModelProperty, in reader: RecordReader, model: Model) throws -> FlexValue {
        let slot = Int(property.id.id) - 1
        let unsigned = property.flags.contains(.unsigned)
        func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> FlexValue {
            try reader.read(type, slot: slot).map { .integer(Int64(truncatingIfNeeded: $0)) } ?? .null
        }
        switch property.type.known {
        case .bool: return try reader.bool(slot: slot).map(FlexValue.bool) ?? .null
        case .byte: return unsigned ? try integer(UInt8.self) : try integer(Int8.self)
        case .short: return unsigned ? try integer(UInt16.self) : try integer(Int16.self)
        case .char: return try integer(UInt16.self)
        case .int: return unsigned ? try integer(UInt32.self) : try integer(Int32.self)
        case .long, .relation: return try integer(Int64.self)
        case .float: return try reader.float(slot: slot).map { .double(Double($0)) } ?? .null
        case .double: return try reader.double(slot: slot).map(FlexValue.double) ?? .null
        case .string: return try reader.string(slot: slot).map(FlexValue.string) ?? .null
        case .date: return try reader.date(slot: slot).map(FlexValue.date) ?? .null
        case .dateNano: return try reader.dateNanoseconds(slot: slot).map(FlexValue.date) ?? .null
        case .uuid: return try reader.uuid(slot: slot).map(FlexValue.uuid) ?? .null
        case .decimal: return try reader.decimal(slot: slot).map { .string(DecimalText.text($0)) } ?? .null
        case .byteVector: return try reader.data(slot: slot).map(FlexValue.bytes) ?? .null
        case .geoPoint:
            guard let point = try reader.geoPoint(slot: slot) else { return .null }
            return .map(["latitude": .double(point.latitude), "longitude": .double(point.longitude)])
        case .flex: return try reader.flex(slot: slot) ?? .null
        case .collection(let shape): return try collection(shape, slot: slot, in: reader, unsigned: unsigned)
        case .embedded:
            guard let type = property.embeddedType.flatMap(model.entity(named:)),
                  let nested = try reader.nested(slot: slot) else { return .null }
            return try object(nested, type, model: model)
        case .embeddedList:
            guard let type = property.embeddedType.flatMap(model.entity(named:)),
                  let payload = try reader.bytes(slot: slot) else { return .null }
            var objects: [FlexValue] = []
            try reader.forEachNested(payload) { objects.append(try object($0, type, model: model)) }
            return .list(objects)
        case nil:
            throw CellarError.schema("\(property.name) has a type (\(property.type)) this version of Cellar cannot read")
        }
    }

    private static func object(_ reader: RecordReader, _ type: ModelEntity, model: Model) throws -> FlexValue {
        var members: [String: FlexValue] = [:]
        for property in type.properties where !property.flags.contains(.id) {
            let value = try read(property, in: reader, model: model)
            if value != .null { members[property.name] = value }
        }
        return .map(members)
    }

    private static func collection(_ shape: CollectionShape, slot: Int, in reader: RecordReader, unsigned: Bool) throws -> FlexValue {
        func elements<T: CollectionElement>(_ type: T.Type, _ convert: (T) -> FlexValue) throws -> FlexValue {
            if shape.kind == .map {
                return try reader.map(type, slot: slot).map { .map($0.mapValues(convert)) } ?? .null
            }
            return try reader.list(type, slot: slot).map { .list($0.map(convert)) } ?? .null
        }
        func integers<T: CollectionElement & FixedWidthInteger>(_ type: T.Type) throws -> FlexValue {
            try elements(type) { .integer(Int64(truncatingIfNeeded: $0)) }
        }
        switch shape.element.known {
        case .bool: return try elements(Bool.self, FlexValue.bool)
        case .byte: return unsigned ? try integers(UInt8.self) : try integers(Int8.self)
        case .short: return unsigned ? try integers(UInt16.self) : try integers(Int16.self)
        case .int: return unsigned ? try integers(UInt32.self) : try integers(Int32.self)
        case .long: return try integers(Int64.self)
        case .float: return try elements(Float.self) { .double(Double($0)) }
        case .double: return try elements(Double.self, FlexValue.double)
        case .string: return try elements(String.self, FlexValue.string)
        case .date: return try elements(Date.self, FlexValue.date)
        case .dateNano: return try elements(Int64.self) { .date(DateStorage.date(nanoseconds: $0)) }
        case .byteVector: return try elements(Data.self, FlexValue.bytes)
        case .uuid: return try elements(UUID.self, FlexValue.uuid)
        case .char, .relation, .decimal, .flex, .geoPoint, .embedded, .embeddedList, .collection, nil:
            throw CellarError.schema("a collection of \(shape.element) cannot be read by this version of Cellar")
        }
    }

    // MARK: Writing

    /// Adds `value` as `property`'s field (slot = ID − 1) to `builder`; `.null` adds nothing.
    /// Throws `illegalArgument` naming what the property's type takes.
    static func write(_ value: FlexValue, of property: ModelProperty, model: Model, into builder: RecordBuilder) throws {
        if value == .null { return }
        let slot = Int(property.id.id) - 1
        let unsigned = property.flags.contains(.unsigned)
        switch property.type.known {
        case .bool: builder.add(try bool(value), slot: slot)
        case .byte: unsigned ? builder.add(try integer(value, UInt8.self), slot: slot) : builder.add(try integer(value, Int8.self), slot: slot)
        case .short: unsigned ? builder.add(try integer(value, UInt16.self), slot: slot) : builder.add(try integer(value, Int16.self), slot: slot)
        case .char: builder.add(try integer(value, UInt16.self), slot: slot)
        case .int: unsigned ? builder.add(try integer(value, UInt32.self), slot: slot) : builder.add(try integer(value, Int32.self), slot: slot)
        case .long: builder.add(try integer(value, Int64.self), slot: slot)
        case .relation:
            let id = try integer(value, Int64.self)
            guard id >= 0 else { throw expected("an object id (0 or more)", value) }
            builder.add(id, slot: slot)
        case .float: builder.add(Float(try double(value)), slot: slot)
        case .double: builder.add(try double(value), slot: slot)
        case .string: builder.add(try string(value), slot: slot)
        case .date: try builder.add(try date(value), slot: slot)
        case .dateNano: try builder.addNanoseconds(try date(value), slot: slot)
        case .uuid: builder.add(try uuid(value), slot: slot)
        case .decimal: builder.add(try decimal(value), slot: slot)
        case .byteVector: builder.add(try bytes(value), slot: slot)
        case .geoPoint:
            guard case .map(let members) = value, members.count == 2,
                  let latitude = members["latitude"], let longitude = members["longitude"] else {
                throw expected("[\"latitude\": …, \"longitude\": …]", value)
            }
            builder.add(try GeoPoint(latitude: double(latitude), longitude: double(longitude)), slot: slot)
        case .flex: try builder.add(value, slot: slot)
        case .collection(let shape): try writeCollection(value, shape, slot: slot, unsigned: unsigned, into: builder)
        case .embedded:
            let type = try embeddedType(of: property, in: model)
            try builder.addNested(slot: slot) { try writeObject(value, type, model: model, into: $0) }
        case .embeddedList:
            let type = try embeddedType(of: property, in: model)
            guard case .list(let objects) = value else { throw expected("a list of maps", value) }
            try builder.addNestedList(count: objects.count, slot: slot) { index, nested in
                try writeObject(objects[index], type, model: model, into: nested)
            }
        case nil:
            throw CellarError.illegalArgument("its type (\(property.type)) cannot be written by this version of Cellar")
        }
    }

    private static func embeddedType(of property: ModelProperty, in model: Model) throws -> ModelEntity {
        guard let type = property.embeddedType.flatMap(model.entity(named:)) else {
            throw CellarError.schema("the embedded type of \(property.name) is missing from the model")
        }
        return type
    }

    private static func writeObject(_ value: FlexValue, _ type: ModelEntity, model: Model, into builder: RecordBuilder) throws {
        guard case .map(let members) = value else { throw expected("a map of \(type.name)'s properties", value) }
        builder.start(slotCount: Int(type.lastPropertyId.id))
        let properties = Dictionary(type.properties.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        for (name, member) in members.sorted(by: { $0.key < $1.key }) {
            guard let property = properties[name], !property.flags.contains(.id) else {
                throw CellarError.illegalArgument("\(type.name) has no property \(name)")
            }
            try write(member, of: property, model: model, into: builder)
        }
    }

    private static func writeCollection(_ value: FlexValue, _ shape: CollectionShape, slot: Int, unsigned: Bool,
                                        into builder: RecordBuilder) throws {
        func elements<T: CollectionElement>(_ convert: (FlexValue) throws -> T) throws {
            switch shape.kind {
            case .list, .set:
                guard case .list(let values) = value else { throw expected("a list", value) }
                let converted = try values.map(convert)
                if shape.kind == .list { try builder.add(converted, slot: slot) } else { try builder.add(Set(converted), slot: slot) }
            case .map:
                guard case .map(let members) = value else { throw expected("a map", value) }
                try builder.add(try members.mapValues(convert), slot: slot)
            }
        }
        switch shape.element.known {
        case .bool: try elements(bool)
        case .byte: unsigned ? try elements { try integer($0, UInt8.self) } : try elements { try integer($0, Int8.self) }
        case .short: unsigned ? try elements { try integer($0, UInt16.self) } : try elements { try integer($0, Int16.self) }
        case .int: unsigned ? try elements { try integer($0, UInt32.self) } : try elements { try integer($0, Int32.self) }
        case .long: try elements { try integer($0, Int64.self) }
        case .float: try elements { Float(try double($0)) }
        case .double: try elements(double)
        case .string: try elements(string)
        case .date: try elements(date)
        case .dateNano: try elements { try DateStorage.nanoseconds(try date($0)) }
        case .byteVector: try elements(bytes)
        case .uuid: try elements(uuid)
        case .char, .relation, .decimal, .flex, .geoPoint, .embedded, .embeddedList, .collection, nil:
            throw CellarError.illegalArgument("a collection of \(shape.element) cannot be written by this version of Cellar")
        }
    }

    private static func expected(_ what: String, _ value: FlexValue) -> CellarError {
        var found = "\(value)"
        if found.count > 40 { found = String(found.prefix(39)) + "…" }
        return CellarError.illegalArgument("expected \(what), found \(found)")
    }

    private static func bool(_ value: FlexValue) throws -> Bool {
        guard case .bool(let bool) = value else { throw expected("a Bool", value) }
        return bool
    }

    /// An integer of `T`; an unsigned 64-bit one may come as its bit pattern (as it is read).
    private static func integer<T: FixedWidthInteger>(_ value: FlexValue, _ type: T.Type) throws -> T {
        guard case .integer(let integer) = value else { throw expected("an integer", value) }
        if T.self == UInt64.self { return T(truncatingIfNeeded: integer) }
        guard let exact = T(exactly: integer) else { throw expected("an integer that fits \(T.self)", value) }
        return exact
    }

    private static func double(_ value: FlexValue) throws -> Double {
        switch value {
        case .double(let double): return double
        case .integer(let integer): return Double(integer)
        default: throw expected("a number", value)
        }
    }

    private static func string(_ value: FlexValue) throws -> String {
        guard case .string(let string) = value else { throw expected("a String", value) }
        return string
    }

    private static func date(_ value: FlexValue) throws -> Date {
        guard case .date(let date) = value else { throw expected("a Date", value) }
        return date
    }

    private static func uuid(_ value: FlexValue) throws -> UUID {
        switch value {
        case .uuid(let uuid): return uuid
        case .string(let text): if let uuid = UUID(uuidString: text) { return uuid }
        default: break
        }
        throw expected("a UUID", value)
    }

    /// A decimal from its text or an integer; a Double is refused (it is not exact).
    private static func decimal(_ value: FlexValue) throws -> Decimal {
        switch value {
        case .integer(let integer): return Decimal(integer)
        case .string(let text): if let decimal = DecimalText.parse(text) { return decimal }
        default: break
        }
        throw expected("a Decimal as its exact text or an integer", value)
    }

    private static func bytes(_ value: FlexValue) throws -> Data {
        guard case .bytes(let data) = value else { throw expected("bytes", value) }
        return data
    }
}
