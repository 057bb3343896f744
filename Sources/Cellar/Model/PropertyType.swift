/// A property's type in the meta model, with ObjectBox's type codes, so a model JSON file from an
/// ObjectBox project reads unchanged. Codes Cellar does not know are kept as they are.
public struct PropertyType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The type code, as the model file writes it.
    public var rawValue: Int
    /// The type with this code; a code Cellar does not know is kept as it is.
    @inlinable public init(rawValue: Int) { self.rawValue = rawValue }
    /// Whether both are the same type code.
    @inlinable public static func == (a: PropertyType, b: PropertyType) -> Bool { a.rawValue == b.rawValue }

    // The types are computed and inlinable, not stored `static let`s: a stored one is reached
    // through an addressor call from other modules, on every comparison in a hot switch.

    /// `Bool`, one byte, 0 or 1.
    @inlinable public static var bool: PropertyType { PropertyType(rawValue: 1) }
    /// 8-bit integer (`Int8`, or `UInt8` with the `unsigned` flag).
    @inlinable public static var byte: PropertyType { PropertyType(rawValue: 2) }
    /// 16-bit integer.
    @inlinable public static var short: PropertyType { PropertyType(rawValue: 3) }
    /// ObjectBox's 16-bit character: read as a 16-bit integer.
    @inlinable public static var char: PropertyType { PropertyType(rawValue: 4) }
    /// 32-bit integer.
    @inlinable public static var int: PropertyType { PropertyType(rawValue: 5) }
    /// 64-bit integer (`Int`, `Int64`, `Id`, `UInt64` with the `unsigned` flag).
    @inlinable public static var long: PropertyType { PropertyType(rawValue: 6) }
    /// `Float`, its 32-bit pattern.
    @inlinable public static var float: PropertyType { PropertyType(rawValue: 7) }
    /// `Double`, its 64-bit pattern.
    @inlinable public static var double: PropertyType { PropertyType(rawValue: 8) }
    /// `String`, its UTF-8 bytes.
    @inlinable public static var string: PropertyType { PropertyType(rawValue: 9) }
    /// A `Date` stored as milliseconds since 1970 (64-bit).
    @inlinable public static var date: PropertyType { PropertyType(rawValue: 10) }
    /// A to-one relation: the target's object id (64-bit), always indexed.
    @inlinable public static var relation: PropertyType { PropertyType(rawValue: 11) }
    /// A `Date` stored as nanoseconds since 1970 (64-bit).
    @inlinable public static var dateNano: PropertyType { PropertyType(rawValue: 12) }
    /// A `FlexValue`: null, a scalar, or lists and maps of them, stored as a u32 length and the
    /// value's `FlexEncoding` (see `docs/flex.md`).
    @inlinable public static var flex: PropertyType { PropertyType(rawValue: 13) }
    /// `Data` or `[UInt8]`.
    @inlinable public static var byteVector: PropertyType { PropertyType(rawValue: 23) }
    /// `[Bool]`: one byte per element, 0 or 1.
    @inlinable public static var boolVector: PropertyType { PropertyType(rawValue: 22) }
    /// `[Int16]` (`[UInt16]` with the `unsigned` flag).
    @inlinable public static var shortVector: PropertyType { PropertyType(rawValue: 24) }
    /// ObjectBox's vector of 16-bit characters; Swift has no such type, so Cellar never writes it.
    @inlinable public static var charVector: PropertyType { PropertyType(rawValue: 25) }
    /// `[Int32]` (`[UInt32]` with the `unsigned` flag).
    @inlinable public static var intVector: PropertyType { PropertyType(rawValue: 26) }
    /// `[Int]`, `[Int64]` (`[UInt]`, `[UInt64]` with the `unsigned` flag).
    @inlinable public static var longVector: PropertyType { PropertyType(rawValue: 27) }
    /// `[Float]`.
    @inlinable public static var floatVector: PropertyType { PropertyType(rawValue: 28) }
    /// `[Double]`.
    @inlinable public static var doubleVector: PropertyType { PropertyType(rawValue: 29) }
    /// `[String]`.
    @inlinable public static var stringVector: PropertyType { PropertyType(rawValue: 30) }
    /// `[Date]`, each as milliseconds since 1970.
    @inlinable public static var dateVector: PropertyType { PropertyType(rawValue: 31) }
    /// `[Date]` with `// cellar: date-nano`, each as nanoseconds since 1970.
    @inlinable public static var dateNanoVector: PropertyType { PropertyType(rawValue: 32) }

    /// A Foundation `UUID`: its 16 bytes inline, in RFC 4122 order (as `uuid_t` gives them).
    /// A Cellar extension: ObjectBox has no UUID type, so the code is outside ObjectBox's 1–32,
    /// far enough above them to leave ObjectBox room to add types (see `docs/model.md`).
    @inlinable public static var uuid: PropertyType { PropertyType(rawValue: 100) }

    /// One embedded object (a type marked `// cellar: embedded`), stored as a nested record in
    /// its owner's record; `ModelProperty.embeddedType` names its type. A Cellar extension, like
    /// UUID (see `docs/embedded.md`).
    @inlinable public static var embedded: PropertyType { PropertyType(rawValue: 101) }
    /// A list of embedded objects: a list of nested records (1000 + `embedded`'s code).
    @inlinable public static var embeddedList: PropertyType { PropertyType(rawValue: 1101) }

    /// A `GeoPoint` (latitude and longitude in degrees): two little-endian Float64 inline, 16 bytes.
    /// A Cellar extension, beside UUID and embedded objects (see `docs/geo.md`).
    @inlinable public static var geoPoint: PropertyType { PropertyType(rawValue: 102) }

    /// A Foundation `Decimal`, stored exactly in 23 bytes inline that compare in the numbers'
    /// order (`DecimalEncoding`). A Cellar extension, beside UUID (see `docs/model.md`).
    @inlinable public static var decimal: PropertyType { PropertyType(rawValue: 103) }

    /// Whether the property holds embedded objects (one, or a list of them).
    public var isEmbedded: Bool { self == .embedded || self == .embeddedList }

    // Collections ObjectBox has no code for are Cellar extensions, numbered from the element's
    // code: a list is 1000 + element (where ObjectBox has no vector code for it), a set 2000 +
    // element, a map from String keys 3000 + value. See `docs/collections.md`.

    /// A list of `element`: ObjectBox's vector code where it has one (`[Int]` is 27), else
    /// 1000 + the element's code (`[UUID]` 1100, `[Data]` 1023). Nil for an element that cannot
    /// be in a collection.
    public static func list(of element: PropertyType) -> PropertyType? {
        guard element.known?.isCollectionElement == true else { return nil }
        if let vector = CollectionShape.vectorCodes[element.rawValue] { return PropertyType(rawValue: vector) }
        return PropertyType(rawValue: CollectionShape.Kind.list.base + element.rawValue)
    }

    /// A set of `element`: 2000 + the element's code.
    public static func set(of element: PropertyType) -> PropertyType? {
        guard element.known?.isCollectionElement == true else { return nil }
        return PropertyType(rawValue: CollectionShape.Kind.set.base + element.rawValue)
    }

    /// A map from `String` keys to `value`: 3000 + the value's code.
    public static func map(of value: PropertyType) -> PropertyType? {
        guard value.known?.isCollectionElement == true else { return nil }
        return PropertyType(rawValue: CollectionShape.Kind.map.base + value.rawValue)
    }

    /// What the type is a collection of; nil for a type that is not a list, set or map. A byte
    /// vector (`Data`, `[UInt8]`) is not one: it is compared as a whole.
    public var collection: CollectionShape? {
        if let element = CollectionShape.vectorElements[rawValue] { return CollectionShape(kind: .list, element: PropertyType(rawValue: element)) }
        for kind in [CollectionShape.Kind.list, .set, .map] {
            let element = rawValue - kind.base
            if Known.scalar(element)?.isCollectionElement == true {
                if kind == .list && CollectionShape.vectorCodes[element] != nil { return nil }   // spelled with its vector code
                return CollectionShape(kind: kind, element: PropertyType(rawValue: element))
            }
        }
        return nil
    }

    /// Whether Cellar can store values of this type.
    public var isSupported: Bool { known != nil }

    /// Bytes of the value inline in a record (16 for a UUID); nil for strings, byte vectors,
    /// collections, Flex values and embedded objects (a length, then the bytes), and for a code
    /// Cellar does not know. (Only scalars have a width: a collection's code is not looked into.)
    var fixedWidth: Int? { Known.scalar(rawValue)?.fixedWidth }

    /// The type's name, such as `String` or `StringVector` or `UUIDSet`; `type <code>` for a code Cellar does not know.
    public var description: String {
        if let known { return known.description }
        return self == .charVector ? "CharVector" : "type \(rawValue)"
    }
}

// MARK: The closed set of types

extension PropertyType {
    /// A type Cellar stores, as a closed set: ``PropertyType/known`` of a type code.
    ///
    /// `PropertyType` is open (a model file may hold a code from a newer version), so a switch on
    /// it needs a `default:` and the compiler cannot point at a type it forgot. Code that treats
    /// each type its own way switches over `known` instead, with no `default:`: a new case makes
    /// the compiler list every place that must say what the type does. The facts about each type
    /// (its code, name, width, whether a collection may hold it) are the switches below;
    /// docs/object-layer-map.md lists the other places.
    public enum Known: Hashable, Sendable, CustomStringConvertible {
        case bool, byte, short, char, int, long, float, double, string, date, relation, dateNano
        case flex, byteVector, uuid, decimal, geoPoint, embedded, embeddedList
        /// A list, set or map of a scalar (ObjectBox's vectors are lists).
        case collection(CollectionShape)

        /// The scalar type with this code (nil for a collection's code, or one Cellar does not know).
        static func scalar(_ code: Int) -> Known? {
            switch code {
            case 1: .bool
            case 2: .byte
            case 3: .short
            case 4: .char
            case 5: .int
            case 6: .long
            case 7: .float
            case 8: .double
            case 9: .string
            case 10: .date
            case 11: .relation
            case 12: .dateNano
            case 13: .flex
            case 23: .byteVector
            case 100: .uuid
            case 101: .embedded
            case 102: .geoPoint
            case 103: .decimal
            case 1101: .embeddedList
            default: nil
            }
        }

        /// The type code the model file writes.
        public var code: PropertyType {
            switch self {
            case .bool: .bool
            case .byte: .byte
            case .short: .short
            case .char: .char
            case .int: .int
            case .long: .long
            case .float: .float
            case .double: .double
            case .string: .string
            case .date: .date
            case .relation: .relation
            case .dateNano: .dateNano
            case .flex: .flex
            case .byteVector: .byteVector
            case .uuid: .uuid
            case .decimal: .decimal
            case .geoPoint: .geoPoint
            case .embedded: .embedded
            case .embeddedList: .embeddedList
            case .collection(let shape): shape.code
            }
        }

        /// The type's name, as model files' comments and error messages write it.
        public var description: String {
            switch self {
            case .bool: "Bool"
            case .byte: "Byte"
            case .short: "Short"
            case .char: "Char"
            case .int: "Int"
            case .long: "Long"
            case .float: "Float"
            case .double: "Double"
            case .string: "String"
            case .date: "Date"
            case .relation: "Relation"
            case .dateNano: "DateNano"
            case .flex: "Flex"
            case .byteVector: "ByteVector"
            case .uuid: "UUID"
            case .decimal: "Decimal"
            case .geoPoint: "GeoPoint"
            case .embedded: "Embedded"
            case .embeddedList: "EmbeddedList"
            case .collection(let shape): shape.description
            }
        }

        /// Bytes of the value inline in a record; nil for a u32 length and then the bytes.
        var fixedWidth: Int? {
            switch self {
            case .bool, .byte: 1
            case .short, .char: 2
            case .int, .float: 4
            case .long, .double, .date, .relation, .dateNano: 8
            case .uuid, .geoPoint: 16
            case .decimal: DecimalEncoding.width
            case .string, .flex, .byteVector, .embedded, .embeddedList, .collection: nil
            }
        }

        /// Whether a list, set or map may hold values of the type.
        var isCollectionElement: Bool {
            switch self {
            case .bool, .byte, .short, .int, .long, .float, .double, .string, .date, .dateNano, .byteVector, .uuid: true
            // ObjectBox's 16-bit character has no Swift type; relations are `ToMany`; flex values
            // hold their own lists; embedded objects have a list type of their own. Decimals
            // are not collection elements yet.
            case .char, .relation, .flex, .embedded, .embeddedList, .geoPoint, .decimal, .collection: false
            }
        }
    }

    /// The type as Cellar knows it; nil for a code it does not know (from a newer version) or
    /// cannot store (ObjectBox's `CharVector`).
    public var known: Known? {
        Known.scalar(rawValue) ?? collection.map(Known.collection)
    }
}

/// A collection property type taken apart: a list, set or map, and its element's type (for a
/// map, its values' type; keys are always strings).
public struct CollectionShape: Hashable, Sendable, CustomStringConvertible {
    /// Which kind of collection.
    public enum Kind: Hashable, Sendable {
        /// A list (order and duplicates kept), a set, or a map from strings to values.
        case list, set, map

        /// The first code of the kind's extension range.
        var base: Int {
            switch self {
            case .list: 1000
            case .set: 2000
            case .map: 3000
            }
        }
    }

    /// List, set or map.
    public let kind: Kind
    /// The element's scalar type (Bool, an integer, Float, Double, String, Date, DateNano,
    /// ByteVector for `Data`, UUID).
    public let element: PropertyType

    /// ObjectBox's vector codes, by element code (Byte's vector is the byte vector itself, `Data`).
    static let vectorCodes: [Int: Int] = [1: 22, 3: 24, 5: 26, 6: 27, 7: 28, 8: 29, 9: 30, 10: 31, 12: 32]
    static let vectorElements: [Int: Int] = Dictionary(uniqueKeysWithValues: vectorCodes.map { ($1, $0) })

    /// The collection's type code: ObjectBox's vector code for a list that has one, else the
    /// kind's base plus the element's code.
    var code: PropertyType {
        if kind == .list, let vector = CollectionShape.vectorCodes[element.rawValue] { return PropertyType(rawValue: vector) }
        return PropertyType(rawValue: kind.base + element.rawValue)
    }

    /// The shape as the model file's comments and error messages name it: ObjectBox's name for
    /// a list it has a vector type for (`StringVector`), else such as `UUIDList` or `StringSet`.
    public var description: String {
        switch kind {
        case .list: CollectionShape.vectorCodes[element.rawValue] == nil ? "\(element)List" : "\(element)Vector"
        case .set: "\(element)Set"
        case .map: "\(element)Map"
        }
    }
}

/// A property's flags in the meta model, with ObjectBox's values.
public struct PropertyFlags: OptionSet, Hashable, Sendable {
    /// The flags' bits, as the model file writes them.
    public var rawValue: UInt32
    /// The flags with these bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The object id property (one per entity).
    public static let id = PropertyFlags(rawValue: 1)
    /// Not optional in code.
    public static let notNull = PropertyFlags(rawValue: 4)
    /// The property has an index (a value index unless a hash flag is set).
    public static let indexed = PropertyFlags(rawValue: 8)
    /// No two objects may hold the same value (`// cellar: unique`): a put that would break it throws
    /// ``CellarError/Code/uniqueViolation``, unless ``uniqueOnConflictReplace`` is set.
    public static let unique = PropertyFlags(rawValue: 32)
    /// The id is set by the app (`// cellar: id = { "assignable": true }`), not assigned by `put`.
    public static let idSelfAssignable = PropertyFlags(rawValue: 128)
    /// Zero values are left out of the index (to-one relations).
    public static let indexPartialSkipZero = PropertyFlags(rawValue: 512)
    /// The index keys hash the string value (32-bit) instead of holding it.
    public static let indexHash = PropertyFlags(rawValue: 2048)
    /// The index keys hash the string value (64-bit) instead of holding it.
    public static let indexHash64 = PropertyFlags(rawValue: 4096)
    /// An unsigned integer: same storage, unsigned order in indexes and queries.
    public static let unsigned = PropertyFlags(rawValue: 8192)
    /// A put whose unique value another object holds replaces that object instead of throwing
    /// (`unique = { "onConflict": "replace" }`).
    public static let uniqueOnConflictReplace = PropertyFlags(rawValue: 32768)
    /// The primary key (`// cellar: primaryKey`): unique and indexed, the object's identity for
    /// `Box.get(primaryKey:)` and upserts. A Cellar extension: ObjectBox has no such flag, so the
    /// bit is far above ObjectBox's (see `docs/model.md`).
    public static let primaryKey = PropertyFlags(rawValue: 1 << 28)
    /// A full-text index (`// cellar: index = "fulltext"`) on a String property: the index holds
    /// the text's words, not its value (see `docs/full-text.md`). Set together with `indexed`. A
    /// Cellar extension, beside `primaryKey`.
    public static let fullTextIndex = PropertyFlags(rawValue: 1 << 29)
    /// A geospatial index (`// cellar: index = "geo"`) on a GeoPoint property: keys are cells of a
    /// space-filling curve (see `docs/geo.md`). Set together with `indexed`. A Cellar extension.
    public static let geoIndex = PropertyFlags(rawValue: 1 << 30)
}
