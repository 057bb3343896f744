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
        switch property.type {
        case _ where collection != nil: kind = .collection
        case .embedded: kind = .embedded(list: false)
        case .embeddedList: kind = .embedded(list: true)
        case .flex: kind = .flex
        case .float: kind = .floating(width: 4)
        case .double: kind = .floating(width: 8)
        case .string: kind = .string
        case .byteVector: kind = .bytes
        case .uuid: kind = .uuid
        case .geoPoint: kind = .geoPoint
        default:
            let unsigned = property.flags.contains(.unsigned) || property.type == .relation || property.type == .bool || isId
            kind = .integer(width: property.type.fixedWidth ?? 8, signed: !unsigned)
        }
        if let ordinal = indexOrdinal, let indexId = property.indexId, !indexId.isZero, !isId {
            index = IndexSchema(property: property, kind: collection?.element.kind ?? kind, ordinal: ordinal)
        } else {
            index = nil
        }
    }

    /// Whether the property's index has a key per element (a list's or set's) or per word (a
    /// full-text index), kept up to date by comparing the old and new sets of keys.
    var hasKeyPerElement: Bool { collection != nil || index?.kind == .fullText }

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

    /// Whether the property holds embedded objects (one, or a list).
    var isEmbedded: Bool {
        if case .embedded = self { return true }
        return false
    }
}

/// What a list, set or map property holds.
struct CollectionSchema: Sendable {
    let shape: CollectionShape
    /// One element (of a map: one value) as if it were a property of its own: its kind, type and
    /// flags, for reading, comparing and indexing it. It has the property's name, ID and index
    /// (an index on a list or set has a key per distinct element; see `IndexKey`).
    let element: PropertySchema
    /// Bytes of one element when fixed; nil for strings and `Data`.
    let width: Int?

    init(_ shape: CollectionShape, property: ModelProperty, entity: String, indexOrdinal: Int?) {
        self.shape = shape
        width = shape.elementWidth
        let scalar = ModelProperty(name: property.name, id: property.id, type: shape.element,
                                   flags: property.flags, indexId: property.indexId)
        element = PropertySchema(scalar, entity: entity, indexOrdinal: indexOrdinal)
    }

    /// The keys of object `id` in the element index `element.index` for a list or set payload
    /// (nil: absent): one per distinct element, in ascending order.
    func indexKeys(_ payload: FieldValue?, id: Id) throws -> [[UInt8]] {
        guard case .bytes(let bytes)? = payload, let index = element.index else { return [] }
        var keys: [[UInt8]] = []
        try forEachElement(bytes) { value in
            if let part = try IndexKey.part(value, index: index, property: element) {
                var key: [UInt8] = []
                part.append(to: &key)
                IndexKey.appendBigEndian(id, to: &key)
                keys.append(key)
            }
            return true
        }
        keys.sort { $0.lexicographicallyPrecedes($1) }
        return keys.uniqued()
    }

    /// The elements of a list or set payload, or the values of a map payload, as values (see
    /// `RecordReader.value(of:id:)`), in stored order, until `body` returns false.
    func forEachElement(_ payload: UnsafeRawBufferPointer, _ body: (FieldValue) throws -> Bool) throws {
        if shape.kind == .map {
            var entries = MapEntries(payload, width: width)
            while let (_, value) = try entries.next() {
                guard try body(element.value(stored: value)) else { return }
            }
            return
        }
        var elements = CollectionElements(payload, width: width)
        while let bytes = try elements.next() {
            guard try body(element.value(stored: bytes)) else { return }
        }
    }

    /// The number of elements (or entries) of a payload.
    func count(_ payload: UnsafeRawBufferPointer) throws -> Int {
        if shape.kind == .map {
            var entries = MapEntries(payload, width: width)
            return try entries.count()
        }
        var elements = CollectionElements(payload, width: width)
        return try elements.count()
    }

    /// The value stored under `key` in a map payload; nil when the map has no such key.
    func value(forKey key: [UInt8], in payload: UnsafeRawBufferPointer) throws -> FieldValue? {
        var entries = MapEntries(payload, width: width)
        while let (stored, value) = try entries.next() {
            if stored.elementsEqual(key) { return try element.value(stored: value) }
            if key.lexicographicallyPrecedes(stored) { return nil }   // keys are in ascending order
        }
        return nil
    }
}

/// One index of a property: a tree `i<index ID>` whose keys are the property's value followed by
/// the object id (see `IndexKey`), with empty values.
struct IndexSchema: Sendable {
    enum Kind: UInt8, Sendable {
        /// Keys hold the value itself: serves equality, ranges and prefixes, in value order.
        case value = 1
        /// Keys hold a 32-bit hash of a string or byte vector: serves equality only.
        case hash32 = 2
        /// Keys hold a 64-bit hash: fewer collisions for many distinct values.
        case hash64 = 3
        /// Keys hold the words of a text, each with an object that has it (see `FullTextIndex`):
        /// serves `matches` and ranking by relevance.
        case fullText = 4
        /// Keys hold the cell of a GeoPoint on a space-filling curve (`GeoCells`): serves
        /// `isWithin`, as candidates checked exactly.
        case geo = 5
        /// An HNSW graph over `[Float]` vectors (`VectorIndex`): serves `nearestNeighbors`.
        case hnsw = 6
    }

    let id: UInt32
    let kind: Kind
    /// The index's place among the store's indexes (0, 1, 2, …): where per-index state is kept.
    let ordinal: Int
    let unique: Bool
    /// `unique = { "onConflict": "replace" }`: a put replaces the object that held the value.
    let replaceOnConflict: Bool
    /// A zero value is not indexed (to-one relations: no target).
    let skipZero: Bool
    /// For an HNSW index: its parameters (checked when the model was validated).
    let hnsw: HNSWParameters?

    init(property: ModelProperty, kind: PropertySchema.Kind, ordinal: Int) {
        id = property.indexId!.id
        self.ordinal = ordinal
        let flags = property.flags
        // Numbers and UUIDs have a value index only: their keys are short and fixed in size.
        switch kind {
        case _ where property.hnswParams != nil:
            self.kind = .hnsw
        case .string where flags.contains(.fullTextIndex):
            self.kind = .fullText
        case .geoPoint:
            self.kind = .geo
        case .string, .bytes:
            self.kind = flags.contains(.indexHash64) ? .hash64 : flags.contains(.indexHash) ? .hash32 : .value
        default:
            self.kind = .value
        }
        hnsw = property.hnswParams.flatMap { try? HNSWParameters(json: $0) }
        unique = flags.contains(.unique)
        replaceOnConflict = flags.contains(.uniqueOnConflictReplace)
        skipZero = flags.contains(.indexPartialSkipZero) || property.type == .relation
    }

    /// The name of the index's tree (made when asked: the schema stays free of references).
    var treeName: String { StorageLayout.indexTree(id) }
}

/// A property's value as read from a record.
enum FieldValue: Equatable {
    case integer(UInt64)
    case floating(Double)
    /// A string's or byte vector's bytes, or a UUID's 16.
    case bytes(UnsafeRawBufferPointer)

    static func == (a: FieldValue, b: FieldValue) -> Bool {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return x == y
        case (.floating(let x), .floating(let y)): return x == y
        case (.bytes(let x), .bytes(let y)): return x.elementsEqual(y)
        default: return false
        }
    }
}

extension PropertySchema {
    /// Bytes of the property's stored value when every value has the same size (integers, Bools,
    /// dates, Float, Double, UUIDs); nil for a u32 length and then the bytes.
    var storedWidth: Int? {
        switch kind {
        case .integer(let width, _), .floating(let width): width
        case .uuid, .geoPoint: 16
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
                let v = UInt16(littleEndian: bytes.loadUnaligned(as: UInt16.self))
                return .integer(signed ? UInt64(bitPattern: Int64(Int16(bitPattern: v))) : UInt64(v))
            case 4:
                let v = UInt32(littleEndian: bytes.loadUnaligned(as: UInt32.self))
                return .integer(signed ? UInt64(bitPattern: Int64(Int32(bitPattern: v))) : UInt64(v))
            default:
                return .integer(UInt64(littleEndian: bytes.loadUnaligned(as: UInt64.self)))
            }
        case .floating(let width):
            if width == 4 { return .floating(Double(try Float.decode(bytes))) }
            return .floating(try Double.decode(bytes))
        case .string:
            guard RecordReader.isASCII(bytes) || String(decoding: bytes, as: UTF8.self).utf8.elementsEqual(bytes) else {
                throw CellarError.fileCorrupt("\(qualifiedName) holds a string that is not valid UTF-8")
            }
            return .bytes(bytes)
        case .geoPoint:
            _ = try GeoPoint.decode(bytes)   // a stored point out of range is a corrupt record
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

