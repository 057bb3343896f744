import CellarStorage

/// What a store knows of one property of an entity: where its value is in a record, how to read
/// and compare it, and its index. Built from the store's model at open.
///
/// A class: the put path hands properties around per object, and copying a struct of several
/// strings cost more than the rest of index maintenance (profile of crud's step a).
@usableFromInline
final class PropertySchema: Sendable {
    /// How values of the property are read and compared.
    enum Kind: Sendable {
        /// Integers, Bools, dates and relation ids, widened to 64 bits (sign-extended unless unsigned).
        case integer(width: Int, signed: Bool)
        /// Float or Double, widened to Double.
        case floating(width: Int)
        /// UTF-8 bytes.
        case string
        /// Raw bytes (`Data`, `[UInt8]`).
        case bytes
        /// A UUID: 16 bytes inline, compared as bytes (memcmp order).
        case uuid
        /// A `Decimal`: `DecimalEncoding.width` bytes inline, whose memcmp order is the numbers'.
        case decimal
        /// A GeoPoint: 16 bytes inline (latitude, longitude), compared by position.
        case geoPoint
        /// A list, set or map (`collection` says of what): its payload's bytes.
        case collection
        /// A `FlexValue`: its encoding's bytes (`FlexEncoding`).
        case flex
        /// One embedded object (a nested record), or a list of them (`list`): the field's bytes.
        case embedded(list: Bool)
    }

    /// "Entity.property", for messages.
    let qualifiedName: String
    let name: String
    let id: UInt32
    let type: PropertyType
    let flags: PropertyFlags
    let kind: Kind
    /// The object id (kept in the key, not in the record).
    let isId: Bool
    let index: IndexSchema?
    /// For a list, set or map: its shape and how one element is read and compared.
    let collection: CollectionSchema?
    /// What queries read for a record without the property's field (`ModelProperty.defaultValue`).
    let defaultValue: StoredDefault?
    /// The embedded type's name, for a property holding embedded objects.
    let embeddedType: String?

    var slot: Int { Int(id) - 1 }

    init(_ property: ModelProperty, entity: String, indexOrdinal: Int?) {
        qualifiedName = "\(entity).\(property.name)"
        name = property.name
        id = property.id.id
        type = property.type
        flags = property.flags
        isId = property.flags.contains(.id)
        collection = property.type.collection.map { CollectionSchema($0, property: property, entity: entity, indexOrdinal: indexOrdinal) }
        defaultValue = property.defaultValue.flatMap { StoredDefault($0, for: property) }
        embeddedType = property.type.isEmbedded ? property.embeddedType : nil
        let unsigned = property.flags.contains(.unsigned) || isId
        switch property.type.known {
        case .bool, .relation: kind = .integer(width: property.type.fixedWidth!, signed: false)
        case .byte, .short, .char, .int, .long, .date, .dateNano:
            kind = .integer(width: property.type.fixedWidth!, signed: !unsigned)
        case .float: kind = .floating(width: 4)
        case .double: kind = .floating(width: 8)
        case .string: kind = .string
        case .byteVector: kind = .bytes
        case .uuid: kind = .uuid
        case .decimal: kind = .decimal
        case .geoPoint: kind = .geoPoint
        case .collection: kind = .collection
        case .flex: kind = .flex
        case .embedded: kind = .embedded(list: false)
        case .embeddedList: kind = .embedded(list: true)
        // A type from a newer version: its field is a length and bytes, which is all this
        // version can say of it.
        case nil: kind = .bytes
        }
        if let ordinal = indexOrdinal, let indexId = property.indexId, !indexId.isZero, !isId {
            index = IndexSchema(property: property, kind: collection?.element.kind ?? kind, ordinal: ordinal)
        } else {
            index = nil
        }
        hasKeyPerElement = index?.upkeep.changesAsAWhole(isCollection: collection != nil) ?? false
    }

    /// Whether a put's change to the property's index is worked out from the whole old and new
    /// value (a list's or set's elements, a text's words, a vector: `IndexUpkeep.changesAsAWhole`).
    let hasKeyPerElement: Bool

    /// Whether values are strings or byte vectors.
    var isBytes: Bool {
        switch kind {
        case .string, .bytes: true
        default: false
        }
    }
}

extension PropertySchema {
    /// A schema for the number of elements of this list, set or map (or list of embedded
    /// objects): a 64-bit integer, for `count` conditions.
    var counter: PropertySchema {
        let entity = String(qualifiedName.prefix { $0 != "." })
        return PropertySchema(ModelProperty(name: "\(name).count", id: IdUid(id: id, uid: 0), type: .long),
                              entity: entity, indexOrdinal: nil)
    }
}

extension PropertySchema.Kind {
    var isString: Bool {
        if case .string = self { return true }
        return false
    }

    var isUUID: Bool {
        if case .uuid = self { return true }
        return false
    }

    var isDecimal: Bool {
        if case .decimal = self { return true }
        return false
    }

    /// Whether the property holds embedded objects (one, or a list).
    var isEmbedded: Bool {
        if case .embedded = self { return true }
        return false
    }
}

extension PropertySchema {
    /// Bytes of the property's stored value when every value has the same size (integers, Bools,
    /// dates, Float, Double, UUIDs); nil for a u32 length and then the bytes.
    var storedWidth: Int? {
        switch kind {
        case .integer(let width, _), .floating(let width): width
        case .uuid, .geoPoint: 16
        case .decimal: DecimalEncoding.width
        case .string, .bytes, .collection, .flex, .embedded: nil
        }
    }

    /// The value held in `bytes`: a field's bytes (exactly `storedWidth`, or the bytes after the
    /// length), or one element of a collection whose element schema this is. Integers come as
    /// their 64-bit pattern, sign-extended when signed, so comparing them as `Int64` orders them.
    @inline(__always)
    func value(stored bytes: UnsafeRawBufferPointer) throws -> FieldValue {
        switch kind {
        case .integer(let width, let signed):
            switch width {
            case 1:
                let v = bytes.load(as: UInt8.self)
                if type == .bool, v > 1 { throw CellarError.fileCorrupt("\(qualifiedName) is a Bool holding \(v)") }
                return .integer(signed ? UInt64(bitPattern: Int64(Int8(bitPattern: v))) : UInt64(v))
            case 2:
                let v = bytes.loadLE(UInt16.self, at: 0)
                return .integer(signed ? UInt64(bitPattern: Int64(Int16(bitPattern: v))) : UInt64(v))
            case 4:
                let v = bytes.loadLE(UInt32.self, at: 0)
                return .integer(signed ? UInt64(bitPattern: Int64(Int32(bitPattern: v))) : UInt64(v))
            default:
                return .integer(bytes.loadLE(UInt64.self, at: 0))
            }
        case .floating(let width):
            if width == 4 { return .floating(Double(try Float.decode(bytes))) }
            return .floating(try Double.decode(bytes))
        case .string:
            guard RecordReader.isValidUTF8(bytes) else {
                throw CellarError.fileCorrupt("\(qualifiedName) holds a string that is not valid UTF-8")
            }
            return .bytes(bytes)
        case .geoPoint:
            _ = try GeoPoint.decode(bytes)   // a stored point out of range is a corrupt record
            return .bytes(bytes)
        case .decimal:
            _ = try DecimalEncoding.decimal(bytes)   // so are bytes no decimal encodes to
            return .bytes(bytes)
        case .bytes, .uuid, .collection, .flex, .embedded:
            return .bytes(bytes)
        }
    }
}

extension RecordReader {
    /// The value of `property` in this record (of object `id`); nil when absent. Integers come as
    /// their 64-bit pattern: sign-extended when signed, so comparing them as `Int64` orders them.
    func value(of property: PropertySchema, id: Id) throws -> FieldValue? {
        if property.isId { return .integer(id) }
        let bytes: UnsafeRawBufferPointer
        if let width = property.storedWidth {
            guard let at = try offset(property.slot, size: width) else { return nil }
            bytes = UnsafeRawBufferPointer(start: base + at, count: width)
        } else {
            guard let field = try self.bytes(slot: property.slot) else { return nil }
            bytes = field
        }
        return try property.value(stored: bytes)
    }
}

