import Foundation

/// A value given to a query condition (before it is checked against the property's type), or a
/// property's stored value as property queries read it.
///
/// Two values are equal when they are the same case holding equal values, as query conditions
/// compare them: strings by their UTF-8 bytes (Swift's `==` on `String` compares canonical
/// equivalence, under which a precomposed "é" equals "e" followed by a combining accent), doubles
/// as numbers (-0 equals 0; NaN equals nothing). Hashing agrees, so sets and `distinct()` tell
/// apart what `==` and `isIn` tell apart.
public enum QueryValue: Sendable, Hashable, CustomStringConvertible {
    /// A signed integer; also a `Bool` (1 or 0).
    case integer(Int64)
    /// An unsigned integer; also an ``EntityId``.
    case unsigned(UInt64)
    /// A `Float` or `Double`.
    case floating(Double)
    /// A string.
    case string(String)
    /// Bytes: `Data` or `[UInt8]`.
    case bytes([UInt8])
    /// A date.
    case date(Date)
    /// A UUID; compared with a UUID property's stored bytes (RFC 4122 order).
    case uuid(UUID)
    /// A decimal; compared with a Decimal property's values as numbers (1.5 equals 1.50).
    case decimal(Decimal)

    /// The value as text: a number, a quoted string, a byte count, a date, a UUID or a decimal.
    public var description: String {
        switch self {
        case .integer(let v): String(v)
        case .unsigned(let v): String(v)
        case .floating(let v): String(v)
        case .string(let v): "\"\(v)\""
        case .bytes(let v): "\(v.count) bytes"
        case .date(let v): "\(v)"
        case .uuid(let v): v.uuidString
        case .decimal(let v): v.description
        }
    }

    /// Whether both are the same case with equal values, strings compared by their UTF-8 bytes.
    public static func == (a: QueryValue, b: QueryValue) -> Bool {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): x == y
        case (.unsigned(let x), .unsigned(let y)): x == y
        case (.floating(let x), .floating(let y)): x == y
        case (.string(let x), .string(let y)): UTF8Bytes.equal(x, y)
        case (.bytes(let x), .bytes(let y)): x == y
        case (.date(let x), .date(let y)): x == y
        case (.uuid(let x), .uuid(let y)): x == y
        case (.decimal(let x), .decimal(let y)): DecimalEncoding.bytes(x) == DecimalEncoding.bytes(y)
        default: false
        }
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .integer(let v): hasher.combine(0 as UInt8); hasher.combine(v)
        case .unsigned(let v): hasher.combine(1 as UInt8); hasher.combine(v)
        case .floating(let v): hasher.combine(2 as UInt8); hasher.combine(v)
        case .string(let v): hasher.combine(3 as UInt8); UTF8Bytes.hash(v, into: &hasher)
        case .bytes(let v): hasher.combine(4 as UInt8); hasher.combine(v)
        case .date(let v): hasher.combine(5 as UInt8); hasher.combine(v)
        case .uuid(let v): hasher.combine(6 as UInt8); hasher.combine(v)
        case .decimal(let v): hasher.combine(7 as UInt8); hasher.combine(DecimalEncoding.bytes(v))
        }
    }
}

/// A Swift value a query condition can compare a property with: integers, `Bool`, `Float`,
/// `Double`, `String`, `Date`, `Data`, `[UInt8]`, `UUID`, `Decimal` and `EntityId`. Enums and custom types are
/// queried by their database value (`Status.done.rawValue`).
public protocol QueryValueConvertible: Sendable {
    /// The value as a query compares it.
    var queryValue: QueryValue { get }
}

extension QueryValue: QueryValueConvertible { public var queryValue: QueryValue { self } }
extension Int: QueryValueConvertible { public var queryValue: QueryValue { .integer(Int64(self)) } }
extension Int8: QueryValueConvertible { public var queryValue: QueryValue { .integer(Int64(self)) } }
extension Int16: QueryValueConvertible { public var queryValue: QueryValue { .integer(Int64(self)) } }
extension Int32: QueryValueConvertible { public var queryValue: QueryValue { .integer(Int64(self)) } }
extension Int64: QueryValueConvertible { public var queryValue: QueryValue { .integer(self) } }
extension UInt: QueryValueConvertible { public var queryValue: QueryValue { .unsigned(UInt64(self)) } }
extension UInt8: QueryValueConvertible { public var queryValue: QueryValue { .unsigned(UInt64(self)) } }
extension UInt16: QueryValueConvertible { public var queryValue: QueryValue { .unsigned(UInt64(self)) } }
extension UInt32: QueryValueConvertible { public var queryValue: QueryValue { .unsigned(UInt64(self)) } }
extension UInt64: QueryValueConvertible { public var queryValue: QueryValue { .unsigned(self) } }
extension Bool: QueryValueConvertible { public var queryValue: QueryValue { .integer(self ? 1 : 0) } }
extension Float: QueryValueConvertible { public var queryValue: QueryValue { .floating(Double(self)) } }
extension Double: QueryValueConvertible { public var queryValue: QueryValue { .floating(self) } }
extension String: QueryValueConvertible { public var queryValue: QueryValue { .string(self) } }
extension Date: QueryValueConvertible { public var queryValue: QueryValue { .date(self) } }
extension Data: QueryValueConvertible { public var queryValue: QueryValue { .bytes(Array(self)) } }
extension Array: QueryValueConvertible where Element == UInt8 { public var queryValue: QueryValue { .bytes(self) } }
extension UUID: QueryValueConvertible { public var queryValue: QueryValue { .uuid(self) } }
extension Decimal: QueryValueConvertible { public var queryValue: QueryValue { .decimal(self) } }
extension EntityId: QueryValueConvertible { public var queryValue: QueryValue { .unsigned(value) } }
