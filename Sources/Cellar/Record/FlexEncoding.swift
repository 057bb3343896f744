import Foundation

/// The stored form of a `FlexValue`: self-describing, little-endian, written forward in one pass.
/// Each value is a tag byte and its payload:
///
/// ```
/// tag  value     payload
///  1   null      -
///  2   false     -
///  3   true      -
///  4   integer   i64
///  5   double    u64, the bit pattern
///  6   date      i64, milliseconds since 1970 (at most ±maxDateMilliseconds)
///  7   uuid      16 bytes, RFC 4122 order
///  8   string    u32 length, then that many bytes of UTF-8
///  9   bytes     u32 length, then the bytes
/// 10   list      u32 count, u32 body length, then `count` values (the body)
/// 11   map       u32 count, u32 body length, then `count` entries (the body), each a key
///                (u32 length, then UTF-8) and a value; keys unique and in ascending order of
///                their UTF-8 bytes (a shorter key before the longer keys it begins)
/// ```
///
/// Tag 0 and tags above 11 are never written: zeroed bytes do not read as a value. A stored Flex
/// field is a u32 length and one such value (`RecordBuilder.add(_:slot:)`), see `docs/flex.md`.
///
/// Why not FlexBuffers (ObjectBox's Flex encoding): FlexBuffers writes children before their
/// parents and reaches them through offsets read backwards from the end of the buffer, with
/// widths chosen per vector after its elements are known; its offsets may point anywhere before
/// them, several parents may share a child, and a verifier must guard every offset and remember
/// what it has checked, or shared references cost it exponential time. This encoding is written forward in one
/// pass (the only thing filled in afterwards is a container's body length), every container says
/// how many bytes its body takes, so a reader skips a nested value without parsing it, and
/// nothing points anywhere: a reader only ever moves forward, inside its container's body, which
/// makes the checks simple and their cost bounded by the size of the bytes. Sorted map keys give
/// equal dictionaries equal bytes, and let a lookup stop at the first greater key.
///
/// Limits, checked on write (`CellarError.illegalArgument`) and on read
/// (`CellarError.fileCorrupt`): containers nest at most `maxDepth` deep, a container holds at
/// most `maxElements` elements, the encoding (and so every string, byte vector and body in it)
/// is at most `maxSize` bytes, and a date lies within `maxDateMilliseconds` of 1970.
@_spi(Testing) public enum FlexEncoding {
    /// How deep containers nest, at most. The nesting depth of a scalar (also at top level) is 0,
    /// of a list or map 1 more than the deepest of its elements (1 when it is empty): `[[1]]` has
    /// depth 2. Realm's mixed collections nest up to 100 levels too.
    public static let maxDepth = 100
    /// How many elements (or map entries) one list or map holds, at most: 2^24.
    public static let maxElements = 16_777_216
    /// The size of an encoding, at most: what a u32 length holds.
    public static let maxSize = Int(UInt32.max)
    /// How far from 1970 a date lies, at most, in milliseconds: 2^50, about 35,700 years. Within
    /// it a stored date reads back as a `Date` that writes again as the same milliseconds
    /// (`Double` has the precision to spare); `Date` properties reach further, to ±292 million
    /// years, but a decoded Flex value must always be writable again.
    public static let maxDateMilliseconds: Int64 = 1 << 50

    static let tagNull: UInt8 = 1
    static let tagFalse: UInt8 = 2
    static let tagTrue: UInt8 = 3
    static let tagInteger: UInt8 = 4
    static let tagDouble: UInt8 = 5
    static let tagDate: UInt8 = 6
    static let tagUUID: UInt8 = 7
    static let tagString: UInt8 = 8
    static let tagBytes: UInt8 = 9
    static let tagList: UInt8 = 10
    static let tagMap: UInt8 = 11

    /// The fewest bytes an element of a list takes (a null), and an entry of a map (an empty key
    /// and a null): a claimed count is checked against the body's length with these before
    /// anything is read or allocated for it.
    static let minListElement = 1
    static let minMapEntry = 5

    // MARK: Writing

    /// Appends the encoding of `value` to `bytes`. Throws `CellarError.illegalArgument` for a
    /// value beyond the limits (nesting, elements, size, dates), leaving `bytes` as it was.
    public static func append(_ value: FlexValue, to bytes: inout [UInt8]) throws {
        let start = bytes.count
        do {
            try write(value, level: 0, into: &bytes)
            guard bytes.count - start <= maxSize else {
                throw CellarError.illegalArgument("a Flex value of \(bytes.count - start) bytes is larger than FlexEncoding.maxSize (\(maxSize))")
            }
        } catch {
            bytes.removeSubrange(start...)
            throw error
        }
    }

    /// The encoding of `value`. Throws `CellarError.illegalArgument` for a value beyond the limits.
    public static func encode(_ value: FlexValue) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try append(value, to: &bytes)
        return bytes
    }

    /// Writes `value`, found inside `level` containers.
    private static func write(_ value: FlexValue, level: Int, into bytes: inout [UInt8]) throws {
        switch value {
        case .null: bytes.append(tagNull)
        case .bool(let value): bytes.append(value ? tagTrue : tagFalse)
        case .integer(let value):
            bytes.append(tagInteger)
            appendWord(UInt64(bitPattern: value), to: &bytes)
        case .double(let value):
            bytes.append(tagDouble)
            appendWord(value.bitPattern, to: &bytes)
        case .date(let value):
            let milliseconds = try DateStorage.milliseconds(value)
            guard milliseconds >= -maxDateMilliseconds && milliseconds <= maxDateMilliseconds else {
                throw CellarError.illegalArgument("the date \(value) is further from 1970 than a Flex value holds (FlexEncoding.maxDateMilliseconds, \(maxDateMilliseconds) ms)")
            }
            bytes.append(tagDate)
            appendWord(UInt64(bitPattern: milliseconds), to: &bytes)
        case .uuid(let value):
            bytes.append(tagUUID)
            withUnsafeBytes(of: value.uuid) { bytes.append(contentsOf: $0) }
        case .string(let value):
            bytes.append(tagString)
            try appendLength(value.utf8.count, of: "a string", to: &bytes)
            bytes.append(contentsOf: value.utf8)
        case .bytes(let value):
            bytes.append(tagBytes)
            try appendLength(value.count, of: "a byte vector", to: &bytes)
            bytes.append(contentsOf: value)
        case .list(let elements):
            let body = try beginContainer(tagList, count: elements.count, level: level, into: &bytes)
            for element in elements { try write(element, level: level + 1, into: &bytes) }
            try endContainer(body: body, in: &bytes)
        case .map(let entries):
            let body = try beginContainer(tagMap, count: entries.count, level: level, into: &bytes)
            let sorted = entries.map { (key: Array($0.key.utf8), value: $0.value) }
                .sorted { $0.key.lexicographicallyPrecedes($1.key) }
            for entry in sorted {
                try appendLength(entry.key.count, of: "a map key", to: &bytes)
                bytes.append(contentsOf: entry.key)
                try write(entry.value, level: level + 1, into: &bytes)
            }
            try endContainer(body: body, in: &bytes)
        }
    }

    /// Writes a container's tag, count and a body length to fill in; returns where the body starts.
    private static func beginContainer(_ tag: UInt8, count: Int, level: Int, into bytes: inout [UInt8]) throws -> Int {
        guard level < maxDepth else {
            throw CellarError.illegalArgument("a Flex value nests deeper than FlexEncoding.maxDepth (\(maxDepth)) lists and maps")
        }
        guard count <= maxElements else {
            throw CellarError.illegalArgument("a Flex \(tag == tagList ? "list" : "map") of \(count) elements holds more than FlexEncoding.maxElements (\(maxElements))")
        }
        bytes.append(tag)
        appendUInt32(UInt32(count), to: &bytes)
        appendUInt32(0, to: &bytes)
        return bytes.count
    }

    /// Fills in the body length of the container whose body started at `body`.
    private static func endContainer(body: Int, in bytes: inout [UInt8]) throws {
        let length = bytes.count - body
        guard length <= maxSize else {
            throw CellarError.illegalArgument("a Flex list or map of \(length) bytes is larger than FlexEncoding.maxSize (\(maxSize))")
        }
        withUnsafeBytes(of: UInt32(length).littleEndian) { length in
            bytes.withUnsafeMutableBytes { $0.baseAddress!.advanced(by: body - 4).copyMemory(from: length.baseAddress!, byteCount: 4) }
        }
    }

    private static func appendLength(_ count: Int, of what: String, to bytes: inout [UInt8]) throws {
        guard count <= maxSize else {
            throw CellarError.illegalArgument("\(what) of \(count) bytes in a Flex value is larger than FlexEncoding.maxSize (\(maxSize))")
        }
        appendUInt32(UInt32(count), to: &bytes)
    }

    private static func appendUInt32(_ value: UInt32, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private static func appendWord(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    // MARK: Reading

    /// The value `bytes` encode; they must be exactly one value. Throws `CellarError.fileCorrupt`
    /// for bytes that are not the encoding of a value within the limits.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> FlexValue {
        var reader = try FlexCursor(bytes)
        let value = try reader.value(level: 0, build: true)
        try reader.expectEnd()
        return value
    }

    /// Checks `bytes` as `decode` does, building nothing (but the keys of a map that has a key
    /// outside ASCII, to check that no two are equal as Strings). Throws what `decode` throws.
    public static func verify(_ bytes: UnsafeRawBufferPointer) throws {
        var reader = try FlexCursor(bytes)
        _ = try reader.value(level: 0, build: false)
        try reader.expectEnd()
    }

    /// The value at `path` (map keys and list indexes) in the encoding `bytes`, read in place
    /// without decoding the rest: nil when the path does not exist (a missing key, an index out
    /// of range, a step into a scalar). An empty path gives the whole value. Throws
    /// `CellarError.fileCorrupt` for what it meets on the way that is not a valid encoding: the
    /// bounds of the whole value, every header it reads, the order of the keys it passes, the
    /// value it returns (strings and keys it only skips are not checked for UTF-8; `verify`
    /// checks everything).
    public static func find(_ path: [FlexPathComponent], in bytes: UnsafeRawBufferPointer) throws -> FlexScalar? {
        var reader = try FlexCursor(bytes)
        try reader.skipValue()
        try reader.expectEnd()
        reader.at = 0
        for (level, component) in path.enumerated() {
            let tagAt = reader.at
            let tag = try reader.byte()
            switch (component, tag) {
            case (.index(let index), tagList):
                let count = try reader.containerHeader(tag, level: level, at: tagAt)
                guard index >= 0 && index < count else { return nil }
                for _ in 0..<index { try reader.skipValue() }
            case (.key(let key), tagMap):
                let count = try reader.containerHeader(tag, level: level, at: tagAt)
                var found = false
                try Array(key.utf8).withUnsafeBytes { target in
                    var previous: UnsafeRawBufferPointer?
                    for _ in 0..<count {
                        let name = try reader.key(after: previous)
                        let order = FlexCursor.compare(name, target)
                        if order == 0 { found = true; return }
                        if order > 0 { return }
                        try reader.skipValue()
                        previous = name
                    }
                }
                if !found { return nil }
            default:
                // A scalar (or the other kind of container): the path does not exist. Its bounds
                // are checked, its tag too.
                reader.at = tagAt
                try reader.skipValue()
                return nil
            }
        }
        return try reader.scalar(level: path.count)
    }
}

/// One step of a path into a `FlexValue`: a map's key or a list's index.
@_spi(Testing) public enum FlexPathComponent: Hashable, Sendable {
    case key(String)
    case index(Int)
}

/// A value found in an encoding by `FlexEncoding.find`, in place: the buffers point into the
/// encoding and are valid while its bytes are. A list or a map gives its element count.
@_spi(Testing) public enum FlexScalar {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    /// The string's bytes, checked to be valid UTF-8.
    case string(UnsafeRawBufferPointer)
    /// The byte vector's bytes.
    case bytes(UnsafeRawBufferPointer)
    /// Milliseconds since 1970 (`DateEncoding.date(milliseconds:)` makes the `Date`).
    case date(milliseconds: Int64)
    /// 16 bytes, RFC 4122 order (`UUIDEncoding.uuid(_:)` makes the `UUID`).
    case uuid(UnsafeRawBufferPointer)
    /// A list and its element count.
    case list(count: Int)
    /// A map and its entry count.
    case map(count: Int)
}
