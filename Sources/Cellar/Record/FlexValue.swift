import Foundation

/// A flexible property value: null, a scalar, or a list or map of flexible values, nested like
/// JSON. A property of this type (`PropertyType.flex`) holds whatever the app puts in it, stored
/// as a self-describing encoding (`FlexEncoding`, `docs/flex.md`).
///
/// ```swift
/// let payload: FlexValue = ["user": ["name": "Ada", "age": 36], "tags": ["a", "b"], "note": nil]
/// payload["user"]?["age"]?.intValue        // 36
/// ```
///
/// What is stored is read back equal, with two exceptions in what the stored form can hold:
/// a date is stored in whole milliseconds since 1970 (rounded to the nearest one, like a `Date`
/// property), and strings are stored as the UTF-8 of their Unicode scalars as given, so two
/// canonically equivalent strings (equal in Swift: "é" precomposed and "e" + U+0301) are stored as
/// different bytes and read back as they were written.
///
/// Equality compares doubles by bit pattern: `.double(.nan)` equals itself (so that a decoded
/// value equals what was written), and `.double(0.0)` differs from `.double(-0.0)`. An integer
/// never equals a double: `.integer(1) != .double(1)`.
public indirect enum FlexValue: Hashable, Sendable {
    /// No value (JSON's null; `nil` as a literal).
    case null
    /// A Boolean.
    case bool(Bool)
    /// A 64-bit signed integer; integer literals make this case.
    case integer(Int64)
    /// Stored as its bit pattern: NaN payloads and the sign of zero survive.
    case double(Double)
    /// A string, stored as the UTF-8 of its Unicode scalars as given.
    case string(String)
    /// A byte vector.
    case bytes(Data)
    /// Stored as Int64 milliseconds since 1970, rounded to the nearest millisecond; at most
    /// `FlexEncoding.maxDateMilliseconds` from 1970.
    case date(Date)
    /// Stored as its 16 bytes in RFC 4122 order.
    case uuid(UUID)
    /// Elements in order; at most `FlexEncoding.maxElements`.
    case list([FlexValue])
    /// Entries by key; at most `FlexEncoding.maxElements`. Stored in the order of the keys' UTF-8.
    case map([String: FlexValue])

    /// Whether both are the same case with equal contents; doubles compare by bit pattern.
    public static func == (a: FlexValue, b: FlexValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.integer(let x), .integer(let y)): x == y
        case (.double(let x), .double(let y)): x.bitPattern == y.bitPattern
        case (.string(let x), .string(let y)): x == y
        case (.bytes(let x), .bytes(let y)): x == y
        case (.date(let x), .date(let y)): x == y
        case (.uuid(let x), .uuid(let y)): x == y
        case (.list(let x), .list(let y)): x == y
        case (.map(let x), .map(let y)): x == y
        default: false
        }
    }

    /// Hashes what ``==(_:_:)`` compares (doubles by bit pattern).
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(1); hasher.combine(value)
        case .integer(let value): hasher.combine(2); hasher.combine(value)
        case .double(let value): hasher.combine(3); hasher.combine(value.bitPattern)
        case .string(let value): hasher.combine(4); hasher.combine(value)
        case .bytes(let value): hasher.combine(5); hasher.combine(value)
        case .date(let value): hasher.combine(6); hasher.combine(value)
        case .uuid(let value): hasher.combine(7); hasher.combine(value)
        case .list(let value): hasher.combine(8); hasher.combine(value)
        case .map(let value): hasher.combine(9); hasher.combine(value)
        }
    }
}

// MARK: Accessors

extension FlexValue {
    /// The value under `key` when this is a map that has it; nil otherwise.
    public subscript(key: String) -> FlexValue? {
        if case .map(let map) = self { map[key] } else { nil }
    }

    /// The element at `index` when this is a list that long; nil otherwise (no trap).
    public subscript(index: Int) -> FlexValue? {
        if case .list(let list) = self, list.indices.contains(index) { list[index] } else { nil }
    }

    /// Whether this is ``null``.
    public var isNull: Bool { self == .null }

    /// The Boolean of a ``bool(_:)``; nil for every other case.
    public var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }

    /// The integer of an `.integer`; nil for every other case (a double is not converted).
    public var intValue: Int64? {
        if case .integer(let value) = self { value } else { nil }
    }

    /// The number of an `.integer` or a `.double`, as a `Double` (rounded when the integer has
    /// more than 53 significant bits); nil for every other case.
    public var doubleValue: Double? {
        switch self {
        case .double(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }

    /// The string of a ``string(_:)``; nil for every other case.
    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// The bytes of a ``bytes(_:)``; nil for every other case.
    public var dataValue: Data? {
        if case .bytes(let value) = self { value } else { nil }
    }

    /// The date of a ``date(_:)``; nil for every other case.
    public var dateValue: Date? {
        if case .date(let value) = self { value } else { nil }
    }

    /// The UUID of a ``uuid(_:)``; nil for every other case.
    public var uuidValue: UUID? {
        if case .uuid(let value) = self { value } else { nil }
    }

    /// The elements of a ``list(_:)``; nil for every other case.
    public var listValue: [FlexValue]? {
        if case .list(let value) = self { value } else { nil }
    }

    /// The entries of a ``map(_:)``; nil for every other case.
    public var mapValue: [String: FlexValue]? {
        if case .map(let value) = self { value } else { nil }
    }
}

// MARK: Literals

extension FlexValue: ExpressibleByNilLiteral {
    /// ``null``, written `nil`.
    public init(nilLiteral: ()) { self = .null }
}

extension FlexValue: ExpressibleByBooleanLiteral {
    /// A ``bool(_:)``, written `true` or `false`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension FlexValue: ExpressibleByIntegerLiteral {
    /// An ``integer(_:)``, written as an integer literal.
    public init(integerLiteral value: Int64) { self = .integer(value) }
}

extension FlexValue: ExpressibleByFloatLiteral {
    /// A ``double(_:)``, written as a floating-point literal.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension FlexValue: ExpressibleByStringLiteral {
    /// A ``string(_:)``, written as a string literal.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension FlexValue: ExpressibleByArrayLiteral {
    /// A ``list(_:)``, written as an array literal.
    public init(arrayLiteral elements: FlexValue...) { self = .list(elements) }
}

extension FlexValue: ExpressibleByDictionaryLiteral {
    /// A map; of a key given twice, the last value is kept.
    public init(dictionaryLiteral elements: (String, FlexValue)...) {
        self = .map(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
