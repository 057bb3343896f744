import CellarStorage
import Foundation

/// A type that lists, sets and maps of a record can hold (see `CollectionEncoding`): `Bool`, the
/// integer types, `Float`, `Double`, `String`, `Date` (milliseconds since 1970), `Data` and `UUID`.
///
/// Generated bindings use it through `RecordBuilder.add(_:slot:)` and `RecordReader.list`,
/// `set` and `map`; apps do not conform their own types (a type with a converter is stored through
/// the converter's built-in type instead).
public protocol CollectionElement: Hashable, Sendable {
    /// Bytes of one element when every element has the same size; nil for strings and `Data`,
    /// which are stored as a u32 length and then their bytes.
    static var elementWidth: Int? { get }
    /// Bytes this element is stored in (without the length of a variable one).
    var encodedSize: Int { get }
    /// Writes the element's `encodedSize` bytes at `target`. Throws `illegalArgument` for a value
    /// that has no stored form (a date outside ±292 million years).
    func encode(to target: UnsafeMutableRawPointer) throws
    /// The element stored in `bytes` (exactly its width, or its length). Throws `fileCorrupt` for
    /// bytes that cannot be one (a Bool other than 0 or 1, a string that is not UTF-8).
    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> Self
    /// The order a set keeps its elements in, the order queries compare them in: numbers by value
    /// (Float and Double by `isTotallyOrdered`, so -0 before +0 and NaN last), `false` before
    /// `true`, dates by time, strings and `Data` by their bytes, UUIDs by their 16 bytes.
    static func precedes(_ a: Self, _ b: Self) -> Bool
}

extension FixedWidthInteger where Self: CollectionElement {
    /// The integer's size in bytes.
    @inlinable public static var elementWidth: Int? { MemoryLayout<Self>.size }
    /// The integer's size in bytes.
    @inlinable public var encodedSize: Int { MemoryLayout<Self>.size }
    /// Writes the integer little-endian at `target`.
    @inlinable public func encode(to target: UnsafeMutableRawPointer) throws {
        target.storeBytes(of: littleEndian, as: Self.self)
    }
    /// Reads a little-endian integer from `bytes`.
    @inlinable public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> Self {
        bytes.loadLE(Self.self, at: 0)
    }
    /// Orders integers by value.
    @inlinable public static func precedes(_ a: Self, _ b: Self) -> Bool { a < b }
}

extension Int8: CollectionElement {}
extension UInt8: CollectionElement {}
extension Int16: CollectionElement {}
extension UInt16: CollectionElement {}
extension Int32: CollectionElement {}
extension UInt32: CollectionElement {}
extension Int64: CollectionElement {}
extension UInt64: CollectionElement {}
extension Int: CollectionElement {}
extension UInt: CollectionElement {}

extension Bool: CollectionElement {
    @inlinable public static var elementWidth: Int? { 1 }
    @inlinable public var encodedSize: Int { 1 }
    @inlinable public func encode(to target: UnsafeMutableRawPointer) throws {
        target.storeBytes(of: self ? 1 : 0, as: UInt8.self)
    }
    @inlinable public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> Bool {
        let byte = bytes.load(as: UInt8.self)
        guard byte <= 1 else { throw CellarError.fileCorrupt("a list of Bools holds \(byte)") }
        return byte == 1
    }
    @inlinable public static func precedes(_ a: Bool, _ b: Bool) -> Bool { !a && b }
}

extension Float: CollectionElement {
    @inlinable public static var elementWidth: Int? { 4 }
    @inlinable public var encodedSize: Int { 4 }
    @inlinable public func encode(to target: UnsafeMutableRawPointer) throws {
        target.storeBytes(of: bitPattern.littleEndian, as: UInt32.self)
    }
    @inlinable public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> Float {
        Float(bitPattern: bytes.loadLE(UInt32.self, at: 0))
    }
    @inlinable public static func precedes(_ a: Float, _ b: Float) -> Bool {
        a.isTotallyOrdered(belowOrEqualTo: b) && !b.isTotallyOrdered(belowOrEqualTo: a)
    }
}

extension Double: CollectionElement {
    @inlinable public static var elementWidth: Int? { 8 }
    @inlinable public var encodedSize: Int { 8 }
    @inlinable public func encode(to target: UnsafeMutableRawPointer) throws {
        target.storeBytes(of: bitPattern.littleEndian, as: UInt64.self)
    }
    @inlinable public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> Double {
        Double(bitPattern: bytes.loadLE(UInt64.self, at: 0))
    }
    @inlinable public static func precedes(_ a: Double, _ b: Double) -> Bool {
        a.isTotallyOrdered(belowOrEqualTo: b) && !b.isTotallyOrdered(belowOrEqualTo: a)
    }
}

extension Date: CollectionElement {
    @inlinable public static var elementWidth: Int? { 8 }
    @inlinable public var encodedSize: Int { 8 }
    @inlinable public func encode(to target: UnsafeMutableRawPointer) throws {
        target.storeBytes(of: try DateStorage.milliseconds(self).littleEndian, as: Int64.self)
    }
    @inlinable public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> Date {
        DateStorage.date(milliseconds: bytes.loadLE(Int64.self, at: 0))
    }
    @inlinable public static func precedes(_ a: Date, _ b: Date) -> Bool { a < b }
}

extension UUID: CollectionElement {
    @inlinable public static var elementWidth: Int? { 16 }
    @inlinable public var encodedSize: Int { 16 }
    @inlinable public func encode(to target: UnsafeMutableRawPointer) throws {
        withUnsafeBytes(of: uuid) { target.copyMemory(from: $0.baseAddress!, byteCount: 16) }
    }
    @inlinable public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> UUID { uuidFromBytes(bytes) }
    public static func precedes(_ a: UUID, _ b: UUID) -> Bool {
        withUnsafeBytes(of: a.uuid) { x in withUnsafeBytes(of: b.uuid) { y in memcmp(x.baseAddress!, y.baseAddress!, 16) < 0 } }
    }
}

extension String: CollectionElement {
    @inlinable public static var elementWidth: Int? { nil }
    @inlinable public var encodedSize: Int { utf8.count }
    public func encode(to target: UnsafeMutableRawPointer) throws {
        var copy = self
        copy.withUTF8 { bytes in
            if bytes.count > 0 { target.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
        }
    }
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> String {
        guard let string = RecordReader.string(validating: bytes) else {
            throw CellarError.fileCorrupt("a collection holds a string that is not valid UTF-8")
        }
        return string
    }
    public static func precedes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }
}

extension Data: CollectionElement {
    @inlinable public static var elementWidth: Int? { nil }
    @inlinable public var encodedSize: Int { count }
    public func encode(to target: UnsafeMutableRawPointer) throws {
        withUnsafeBytes { bytes in
            if bytes.count > 0 { target.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
        }
    }
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> Data { Data(bytes) }
    public static func precedes(_ a: Data, _ b: Data) -> Bool { a.lexicographicallyPrecedes(b) }
}
