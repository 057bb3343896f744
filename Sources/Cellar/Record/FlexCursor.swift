import CellarStorage
import Foundation

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
        Int(base.loadLE(UInt32.self, at: try take(4)))
    }

    mutating func word() throws -> UInt64 {
        base.loadLE(UInt64.self, at: try take(8))
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
        guard RecordReader.isValidUTF8(bytes) else {
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
                guard RecordReader.isValidUTF8(key) else { throw Self.corrupt("a map key that is not valid UTF-8", at: keyAt) }
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
}
