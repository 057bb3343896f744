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

    /// Whether the property holds embedded objects (one, or a list of them).
    public var isEmbedded: Bool { self == .embedded || self == .embeddedList }

    // Collections ObjectBox has no code for are Cellar extensions, numbered from the element's
    // code: a list is 1000 + element (where ObjectBox has no vector code for it), a set 2000 +
    // element, a map from String keys 3000 + value. See `docs/collections.md`.

    /// A list of `element`: ObjectBox's vector code where it has one (`[Int]` is 27), else
    /// 1000 + the element's code (`[UUID]` 1100, `[Data]` 1023). Nil for an element that cannot
    /// be in a collection.
    public static func list(of element: PropertyType) -> PropertyType? {
        guard CollectionShape.elementTypes.contains(element.rawValue) else { return nil }
        if let vector = CollectionShape.vectorCodes[element.rawValue] { return PropertyType(rawValue: vector) }
        return PropertyType(rawValue: CollectionShape.Kind.list.base + element.rawValue)
    }

    /// A set of `element`: 2000 + the element's code.
    public static func set(of element: PropertyType) -> PropertyType? {
        guard CollectionShape.elementTypes.contains(element.rawValue) else { return nil }
        return PropertyType(rawValue: CollectionShape.Kind.set.base + element.rawValue)
    }

    /// A map from `String` keys to `value`: 3000 + the value's code.
    public static func map(of value: PropertyType) -> PropertyType? {
        guard CollectionShape.elementTypes.contains(value.rawValue) else { return nil }
        return PropertyType(rawValue: CollectionShape.Kind.map.base + value.rawValue)
    }

    /// What the type is a collection of; nil for a type that is not a list, set or map. A byte
    /// vector (`Data`, `[UInt8]`) is not one: it is compared as a whole.
    public var collection: CollectionShape? {
        if let element = CollectionShape.vectorElements[rawValue] { return CollectionShape(kind: .list, element: PropertyType(rawValue: element)) }
        for kind in [CollectionShape.Kind.list, .set, .map] {
            let element = rawValue - kind.base
            if CollectionShape.elementTypes.contains(element) {
                if kind == .list && CollectionShape.vectorCodes[element] != nil { return nil }   // spelled with its vector code
                return CollectionShape(kind: kind, element: PropertyType(rawValue: element))
            }
        }
        return nil
    }

    /// Whether Cellar can store values of this type.
    public var isSupported: Bool { (Self.names[rawValue] != nil && self != .charVector) || collection != nil }

    /// Bytes of the value inline in a record (16 for a UUID); nil for strings, byte vectors and
    /// Flex values (a length, then the bytes).
    var fixedWidth: Int? {
        switch rawValue {
        case 1, 2: 1
        case 3, 4: 2
        case 5, 7: 4
        case 6, 8, 10, 11, 12: 8
        case 100, 102: 16
        default: nil
        }
    }

    private static let names: [Int: String] = [
        1: "Bool", 2: "Byte", 3: "Short", 4: "Char", 5: "Int", 6: "Long", 7: "Float", 8: "Double",
        9: "String", 10: "Date", 11: "Relation", 12: "DateNano", 13: "Flex", 22: "BoolVector", 23: "ByteVector",
        24: "ShortVector", 25: "CharVector", 26: "IntVector", 27: "LongVector", 28: "FloatVector",
        29: "DoubleVector", 30: "StringVector", 31: "DateVector", 32: "DateNanoVector", 100: "UUID",
        101: "Embedded", 102: "GeoPoint", 1101: "EmbeddedList",
    ]

    /// The type's name, such as `String` or `StringList`; `type <code>` for a code Cellar does not know.
    public var description: String {
        if let name = Self.names[rawValue] { return name }
        if let shape = collection { return shape.description }
        return "type \(rawValue)"
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

    /// Element codes a collection can hold.
    static let elementTypes: Set<Int> = [1, 2, 3, 5, 6, 7, 8, 9, 10, 12, 23, 100]
    /// ObjectBox's vector codes, by element code (Byte's vector is the byte vector itself, `Data`).
    static let vectorCodes: [Int: Int] = [1: 22, 3: 24, 5: 26, 6: 27, 7: 28, 8: 29, 9: 30, 10: 31, 12: 32]
    static let vectorElements: [Int: Int] = Dictionary(uniqueKeysWithValues: vectorCodes.map { ($1, $0) })

    /// The shape as the model file's comments and error messages name it, such as `StringList`.
    public var description: String {
        switch kind {
        case .list: "\(element)List"
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
