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

/// Reads an encoding forward. `end` is the end of the innermost container being read (at the
/// start, of the whole buffer): nothing is read past it, so a value cannot reach out of its
/// container and every length is checked against the bytes actually there.
struct FlexCursor {
    let base: UnsafeRawPointer
    var end: Int
    var at = 0

    init(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            throw CellarError.fileCorrupt("a Flex value of 0 bytes: it takes at least a tag byte")
        }
        self.base = base
        self.end = bytes.count
    }

    static func corrupt(_ what: String, at offset: Int) -> CellarError {
        CellarError.fileCorrupt("a Flex value has \(what) at byte \(offset)")
    }

    /// After the top-level value: no bytes may follow it.
    func expectEnd() throws {
        guard at == end else { throw Self.corrupt("\(end - at) bytes after its end", at: at) }
    }

    /// Checks that `count` more bytes are there and moves past them; returns where they start.
    mutating func take(_ count: Int) throws -> Int {
        guard count <= end - at else {
            throw Self.corrupt("\(count) bytes to read where \(end - at) are left", at: at)
        }
        defer { at += count }
        return at
    }

    mutating func byte() throws -> UInt8 {
        base.load(fromByteOffset: try take(1), as: UInt8.self)
    }

    mutating func uint32() throws -> Int {
        Int(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: try take(4), as: UInt32.self)))
    }

    mutating func word() throws -> UInt64 {
        UInt64(littleEndian: base.loadUnaligned(fromByteOffset: try take(8), as: UInt64.self))
    }

    /// A u32 length and that many bytes.
    mutating func lengthAndBytes() throws -> UnsafeRawBufferPointer {
        let count = try uint32()
        return UnsafeRawBufferPointer(start: base + (try take(count)), count: count)
    }

    /// A date's milliseconds, checked against the limit the writer keeps.
    mutating func milliseconds() throws -> Int64 {
        let at = self.at
        let milliseconds = Int64(bitPattern: try word())
        guard milliseconds >= -FlexEncoding.maxDateMilliseconds && milliseconds <= FlexEncoding.maxDateMilliseconds else {
            throw Self.corrupt("a date of \(milliseconds) ms since 1970, beyond ±\(FlexEncoding.maxDateMilliseconds)", at: at)
        }
        return milliseconds
    }

    /// A string's bytes, checked to be UTF-8.
    mutating func utf8(_ what: String) throws -> UnsafeRawBufferPointer {
        let bytes = try lengthAndBytes()
        guard Self.isValidUTF8(bytes) else {
            throw Self.corrupt("\(what) that is not valid UTF-8", at: at - bytes.count)
        }
        return bytes
    }

    /// A map key, checked to follow `previous` in byte order (strictly: keys are unique).
    mutating func key(after previous: UnsafeRawBufferPointer?) throws -> UnsafeRawBufferPointer {
        let key = try lengthAndBytes()
        if let previous, Self.compare(previous, key) >= 0 {
            throw Self.corrupt("a map key that is not after the key before it in byte order", at: at - key.count - 4)
        }
        return key
    }

    /// The count and body length after a container's tag (at `tagAt`, `level` containers deep);
    /// checks them and narrows `end` to the body. Returns the count.
    mutating func containerHeader(_ tag: UInt8, level: Int, at tagAt: Int) throws -> Int {
        guard level < FlexEncoding.maxDepth else {
            throw Self.corrupt("lists and maps nested deeper than \(FlexEncoding.maxDepth)", at: tagAt)
        }
        let count = try uint32()
        let length = try uint32()
        let minimum = tag == FlexEncoding.tagList ? FlexEncoding.minListElement : FlexEncoding.minMapEntry
        // Both at most 2^32, the product fits: no count is trusted before the bytes are there.
        guard count <= FlexEncoding.maxElements, count * minimum <= length, length <= end - at else {
            throw Self.corrupt("a \(tag == FlexEncoding.tagList ? "list" : "map") of \(count) elements in \(length) bytes, where \(end - at) are left", at: tagAt)
        }
        end = at + length
        return count
    }

    /// After a container's elements: they must fill its body exactly. Restores `end`.
    mutating func endContainer(outerEnd: Int, at tagAt: Int) throws {
        guard at == end else {
            throw Self.corrupt("a list or map whose elements end \(end - at) bytes before its body does", at: tagAt)
        }
        end = outerEnd
    }

    /// Reads the value at `at`, found inside `level` containers; with `build` false it only checks
    /// (and returns `.null` for strings, byte vectors and containers).
    mutating func value(level: Int, build: Bool) throws -> FlexValue {
        let tagAt = at
        let tag = try byte()
        switch tag {
        case FlexEncoding.tagNull: return .null
        case FlexEncoding.tagFalse: return .bool(false)
        case FlexEncoding.tagTrue: return .bool(true)
        case FlexEncoding.tagInteger: return .integer(Int64(bitPattern: try word()))
        case FlexEncoding.tagDouble: return .double(Double(bitPattern: try word()))
        case FlexEncoding.tagDate: return .date(DateStorage.date(milliseconds: try milliseconds()))
        case FlexEncoding.tagUUID: return .uuid(UUIDEncoding.uuid(UnsafeRawBufferPointer(start: base + (try take(16)), count: 16)))
        case FlexEncoding.tagString:
            let bytes = try utf8("a string")
            return build ? .string(String(decoding: bytes, as: UTF8.self)) : .null
        case FlexEncoding.tagBytes:
            let bytes = try lengthAndBytes()
            return build ? .bytes(Data(bytes)) : .null
        case FlexEncoding.tagList:
            let outerEnd = end
            let count = try containerHeader(tag, level: level, at: tagAt)
            var elements: [FlexValue] = []
            // Safe: the count was checked against the bytes there.
            if build { elements.reserveCapacity(count) }
            for _ in 0..<count {
                let element = try value(level: level + 1, build: build)
                if build { elements.append(element) }
            }
            try endContainer(outerEnd: outerEnd, at: tagAt)
            return build ? .list(elements) : .null
        case FlexEncoding.tagMap:
            let outerEnd = end
            let count = try containerHeader(tag, level: level, at: tagAt)
            let body = at
            var entries: [String: FlexValue] = [:]
            if build { entries.reserveCapacity(count) }
            var previous: UnsafeRawBufferPointer?
            var allASCII = true
            for _ in 0..<count {
                let keyAt = at
                let key = try self.key(after: previous)
                guard Self.isValidUTF8(key) else { throw Self.corrupt("a map key that is not valid UTF-8", at: keyAt) }
                if allASCII && !RecordReader.isASCII(key) { allASCII = false }
                let element = try value(level: level + 1, build: build)
                if build, entries.updateValue(element, forKey: String(decoding: key, as: UTF8.self)) != nil {
                    throw Self.equalKeys(key, at: keyAt)
                }
                previous = key
            }
            try endContainer(outerEnd: outerEnd, at: tagAt)
            // Keys in byte order are distinct bytes, but two different byte strings can be equal
            // Strings (canonically equivalent: "é" and "e" + U+0301; the Kelvin sign and "K"),
            // which a dictionary holds once. The writer never writes such a pair; a decoded map
            // finds it as it inserts, the check walks the keys again when one is outside ASCII.
            if !build && !allASCII { try checkDistinctStrings(count: count, body: body) }
            return build ? .map(entries) : .null
        default:
            throw Self.corrupt("the unknown tag \(tag)", at: tagAt)
        }
    }

    static func equalKeys(_ key: UnsafeRawBufferPointer, at offset: Int) -> CellarError {
        corrupt("two map keys that are equal as Strings (\"\(String(decoding: key, as: UTF8.self))\")", at: offset)
    }

    /// Walks a checked map body again (`count` entries from `body`) and checks that no two keys
    /// are equal as Strings. Leaves `at` and `end` as they were.
    private func checkDistinctStrings(count: Int, body: Int) throws {
        var walk = self
        walk.at = body
        var seen = Set<String>(minimumCapacity: count)
        for _ in 0..<count {
            let keyAt = walk.at
            let key = try walk.lengthAndBytes()
            guard seen.insert(String(decoding: key, as: UTF8.self)).inserted else { throw Self.equalKeys(key, at: keyAt) }
            try walk.skipValue()
        }
    }

    /// Moves past the value at `at`, checking only its tag and that its bytes are there (a
    /// container's by its body length, without reading its elements).
    mutating func skipValue() throws {
        let tagAt = at
        switch try byte() {
        case FlexEncoding.tagNull, FlexEncoding.tagFalse, FlexEncoding.tagTrue: break
        case FlexEncoding.tagInteger, FlexEncoding.tagDouble, FlexEncoding.tagDate: _ = try take(8)
        case FlexEncoding.tagUUID: _ = try take(16)
        case FlexEncoding.tagString, FlexEncoding.tagBytes: _ = try lengthAndBytes()
        case FlexEncoding.tagList, FlexEncoding.tagMap:
            _ = try uint32()
            _ = try take(try uint32())
        case let tag: throw Self.corrupt("the unknown tag \(tag)", at: tagAt)
        }
    }

    /// The value at `at`, `level` containers deep, in place; a container's header is checked.
    mutating func scalar(level: Int) throws -> FlexScalar {
        let tagAt = at
        let tag = try byte()
        switch tag {
        case FlexEncoding.tagNull: return .null
        case FlexEncoding.tagFalse: return .bool(false)
        case FlexEncoding.tagTrue: return .bool(true)
        case FlexEncoding.tagInteger: return .integer(Int64(bitPattern: try word()))
        case FlexEncoding.tagDouble: return .double(Double(bitPattern: try word()))
        case FlexEncoding.tagDate: return .date(milliseconds: try milliseconds())
        case FlexEncoding.tagUUID: return .uuid(UnsafeRawBufferPointer(start: base + (try take(16)), count: 16))
        case FlexEncoding.tagString: return .string(try utf8("a string"))
        case FlexEncoding.tagBytes: return .bytes(try lengthAndBytes())
        case FlexEncoding.tagList: return .list(count: try containerHeader(tag, level: level, at: tagAt))
        case FlexEncoding.tagMap: return .map(count: try containerHeader(tag, level: level, at: tagAt))
        default: throw Self.corrupt("the unknown tag \(tag)", at: tagAt)
        }
    }

    /// The order of two byte strings: negative, 0 or positive (a prefix before what it begins).
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        if common > 0 {
            let order = memcmp(a.baseAddress!, b.baseAddress!, common)
            if order != 0 { return Int(order) }
        }
        return a.count - b.count
    }

    /// Whether `bytes` are well-formed UTF-8, by the standard library's decoder (the rules
    /// `String(decoding:as:)` repairs by, so a valid string decodes to exactly its bytes).
    static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if RecordReader.isASCII(bytes) { return true }
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}
