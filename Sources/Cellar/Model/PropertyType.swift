/// A property's type in the meta model, with ObjectBox's type codes, so a model JSON file from an
/// ObjectBox project reads unchanged. Codes Cellar does not know are kept as they are.
public struct PropertyType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int
    @inlinable public init(rawValue: Int) { self.rawValue = rawValue }
    @inlinable public static func == (a: PropertyType, b: PropertyType) -> Bool { a.rawValue == b.rawValue }

    // The types are computed and inlinable, not stored `static let`s: a stored one is reached
    // through an addressor call from other modules, on every comparison in a hot switch.

    @inlinable public static var bool: PropertyType { PropertyType(rawValue: 1) }
    /// 8-bit integer (`Int8`, or `UInt8` with the `unsigned` flag).
    @inlinable public static var byte: PropertyType { PropertyType(rawValue: 2) }
    /// 16-bit integer.
    @inlinable public static var short: PropertyType { PropertyType(rawValue: 3) }
    @inlinable public static var char: PropertyType { PropertyType(rawValue: 4) }
    /// 32-bit integer.
    @inlinable public static var int: PropertyType { PropertyType(rawValue: 5) }
    /// 64-bit integer (`Int`, `Int64`, `Id`, `UInt64` with the `unsigned` flag).
    @inlinable public static var long: PropertyType { PropertyType(rawValue: 6) }
    @inlinable public static var float: PropertyType { PropertyType(rawValue: 7) }
    @inlinable public static var double: PropertyType { PropertyType(rawValue: 8) }
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
    /// A Foundation `UUID`: its 16 bytes inline, in RFC 4122 order (as `uuid_t` gives them).
    /// A Cellar extension: ObjectBox has no UUID type, so the code is outside ObjectBox's 1–32,
    /// far enough above them to leave ObjectBox room to add types (see `docs/model.md`).
    @inlinable public static var uuid: PropertyType { PropertyType(rawValue: 100) }

    /// Whether Cellar can store values of this type.
    public var isSupported: Bool { Self.names[rawValue] != nil }

    /// Bytes of the value inline in a record (16 for a UUID); nil for strings, byte vectors and
    /// Flex values (a length, then the bytes).
    var fixedWidth: Int? {
        switch rawValue {
        case 1, 2: 1
        case 3, 4: 2
        case 5, 7: 4
        case 6, 8, 10, 11, 12: 8
        case 100: 16
        default: nil
        }
    }

    private static let names: [Int: String] = [
        1: "Bool", 2: "Byte", 3: "Short", 4: "Char", 5: "Int", 6: "Long", 7: "Float", 8: "Double",
        9: "String", 10: "Date", 11: "Relation", 12: "DateNano", 13: "Flex", 23: "ByteVector", 100: "UUID",
    ]

    public var description: String { Self.names[rawValue] ?? "type \(rawValue)" }
}

/// A property's flags in the meta model, with ObjectBox's values.
public struct PropertyFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The object id property (one per entity).
    public static let id = PropertyFlags(rawValue: 1)
    /// Not optional in code.
    public static let notNull = PropertyFlags(rawValue: 4)
    public static let indexed = PropertyFlags(rawValue: 8)
    public static let unique = PropertyFlags(rawValue: 32)
    /// The id is set by the app (`// cellar: id = { "assignable": true }`), not assigned by `put`.
    public static let idSelfAssignable = PropertyFlags(rawValue: 128)
    /// Zero values are left out of the index (to-one relations).
    public static let indexPartialSkipZero = PropertyFlags(rawValue: 512)
    public static let indexHash = PropertyFlags(rawValue: 2048)
    public static let indexHash64 = PropertyFlags(rawValue: 4096)
    /// An unsigned integer: same storage, unsigned order in indexes and queries.
    public static let unsigned = PropertyFlags(rawValue: 8192)
    public static let uniqueOnConflictReplace = PropertyFlags(rawValue: 32768)
}
