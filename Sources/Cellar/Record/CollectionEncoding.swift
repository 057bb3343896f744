import CellarStorage
import Foundation

/// How lists, sets and maps are stored in a record field. The field is a variable one (a u32
/// length, then the payload, like a string), so a record reader that does not know the type can
/// still step over it. The payload, little-endian:
///
/// ```
/// list, elements of fixed width w     the elements, packed (count = length / w)
/// list of strings or Data             u32 count, then per element: u32 length, the bytes
/// set                                 as a list, elements in ascending order (`precedes`), none equal
/// map from String                     u32 count, then per entry, keys in ascending UTF-8 byte
///                                     order, none equal: u32 key length, the key's UTF-8 bytes,
///                                     the value (w bytes, or u32 length and the bytes)
/// ```
///
/// A `[UInt8]` list is the byte vector it always was (`Data`); an empty collection is a present
/// field of length 0 (or a count of 0), while a nil optional collection is an absent field.
/// Sorted sets and maps make equal collections equal bytes (an update that changes nothing is
/// seen as such by index maintenance) and let a query stop early.
///
/// Limits, enforced on write with `illegalArgument`: at most `maxElements` elements or entries,
/// a field below `maxFieldBytes`. A reader checks every count and length against the bytes that
/// are there before it allocates, and throws `fileCorrupt` for any that do not fit.
@usableFromInline package enum CollectionEncoding {
    /// The most elements (or map entries) one collection holds.
    public static let maxElements = 16_777_216
    /// The most bytes one collection field holds (a record is at most about 1 GiB).
    public static let maxFieldBytes = 1 << 30

    @usableFromInline
    static func checkCount(_ count: Int, _ what: String) throws {
        guard count <= maxElements else {
            throw CellarError.illegalArgument("a \(what) of \(count) elements is above the \(maxElements) a collection may hold")
        }
    }

    @usableFromInline
    static func checkSize(_ size: Int) throws {
        guard size <= maxFieldBytes else {
            throw CellarError.illegalArgument("a collection of \(size) bytes is above the \(maxFieldBytes) one property may hold")
        }
    }

    @usableFromInline
    static func corrupt(_ message: String) -> CellarError { CellarError.fileCorrupt(message) }
}

// MARK: Writing

@_spi(CellarGenerated) extension RecordBuilder {
    /// Adds a list (see `CollectionEncoding`).
    @inlinable
    public func add<T: CollectionElement>(_ list: [T], slot: Int) throws {
        try CollectionEncoding.checkCount(list.count, "list")
        try addElements(list, slot: slot)
    }

    /// Adds a list when there is one; nil leaves the field absent.
    @inlinable
    public func add<T: CollectionElement>(_ list: [T]?, slot: Int) throws {
        if let list { try add(list, slot: slot) }
    }

    /// Adds a set, its elements in ascending order (`CollectionElement.precedes`).
    @inlinable
    public func add<T: CollectionElement>(_ set: Set<T>, slot: Int) throws {
        try CollectionEncoding.checkCount(set.count, "set")
        try addElements(set.sorted(by: T.precedes), slot: slot)
    }

    /// Adds a set when there is one; nil leaves the field absent.
    @inlinable
    public func add<T: CollectionElement>(_ set: Set<T>?, slot: Int) throws {
        if let set { try add(set, slot: slot) }
    }

    /// Adds a map from strings, its entries in ascending order of their keys' UTF-8 bytes.
    @inlinable
    public func add<T: CollectionElement>(_ map: [String: T], slot: Int) throws {
        try CollectionEncoding.checkCount(map.count, "map")
        let entries = map.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        var size = 4
        for (key, value) in entries {
            size += 4 + key.utf8.count + (T.elementWidth ?? 4 + value.encodedSize)
        }
        try CollectionEncoding.checkSize(size)
        let at = variableField(slot, count: size)
        var target = state.pointee.buffer + at
        target.storeBytes(of: UInt32(entries.count).littleEndian, as: UInt32.self)
        target += 4
        for (key, value) in entries {
            let keySize = key.utf8.count
            target.storeBytes(of: UInt32(keySize).littleEndian, as: UInt32.self)
            try key.encode(to: target + 4)
            target += 4 + keySize
            target = try Self.put(value, at: target)
        }
    }

    /// Adds a map when there is one; nil leaves the field absent.
    @inlinable
    public func add<T: CollectionElement>(_ map: [String: T]?, slot: Int) throws {
        if let map { try add(map, slot: slot) }
    }

    /// Writes `elements` as a list's payload.
    @inlinable
    func addElements<T: CollectionElement>(_ elements: [T], slot: Int) throws {
        if let width = T.elementWidth {
            try CollectionEncoding.checkSize(width * elements.count)
            let at = variableField(slot, count: width * elements.count)
            var target = state.pointee.buffer + at
            for element in elements {
                try element.encode(to: target)
                target += width
            }
            return
        }
        var size = 4
        for element in elements { size += 4 + element.encodedSize }
        try CollectionEncoding.checkSize(size)
        let at = variableField(slot, count: size)
        var target = state.pointee.buffer + at
        target.storeBytes(of: UInt32(elements.count).littleEndian, as: UInt32.self)
        target += 4
        for element in elements { target = try Self.put(element, at: target) }
    }

    /// Writes one element (with its length when variable) at `target`; returns where it ends.
    @inlinable
    static func put<T: CollectionElement>(_ element: T, at target: UnsafeMutableRawPointer) throws -> UnsafeMutableRawPointer {
        if let width = T.elementWidth {
            try element.encode(to: target)
            return target + width
        }
        let size = element.encodedSize
        target.storeBytes(of: UInt32(size).littleEndian, as: UInt32.self)
        try element.encode(to: target + 4)
        return target + 4 + size
    }
}

// MARK: Reading

@_spi(CellarGenerated) extension RecordReader {
    /// The list in `slot`; nil when absent.
    public func list<T: CollectionElement>(_ type: T.Type, slot: Int) throws -> [T]? {
        guard let bytes = try bytes(slot: slot) else { return nil }
        var elements = CollectionElements(bytes, width: T.elementWidth)
        var list: [T] = []
        list.reserveCapacity(try elements.count())
        while let element = try elements.next() { list.append(try T.decode(element)) }
        return list
    }

    /// The set in `slot`; nil when absent.
    public func set<T: CollectionElement>(_ type: T.Type, slot: Int) throws -> Set<T>? {
        guard let bytes = try bytes(slot: slot) else { return nil }
        var elements = CollectionElements(bytes, width: T.elementWidth)
        var set = Set<T>(minimumCapacity: try elements.count())
        while let element = try elements.next() { set.insert(try T.decode(element)) }
        return set
    }

    /// The map in `slot`; nil when absent.
    public func map<T: CollectionElement>(_ type: T.Type, slot: Int) throws -> [String: T]? {
        guard let bytes = try bytes(slot: slot) else { return nil }
        var entries = MapEntries(bytes, width: T.elementWidth)
        var map = [String: T](minimumCapacity: try entries.count())
        while let (key, value) = try entries.next() {
            let key = try String.decode(key)
            guard map.updateValue(try T.decode(value), forKey: key) == nil else {
                throw CollectionEncoding.corrupt("a map holds the key \"\(key.prefix(100))\" twice")
            }
        }
        return map
    }
}

/// The elements of a list or set payload, in place, one after the other.
struct CollectionElements {
    let bytes: UnsafeRawBufferPointer
    /// Nil: length-prefixed elements after a u32 count.
    let width: Int?
    private var position: Int
    private var remaining: Int?

    init(_ bytes: UnsafeRawBufferPointer, width: Int?) {
        self.bytes = bytes
        self.width = width
        position = width == nil ? 4 : 0
    }

    /// The number of elements, checked against the bytes there are.
    mutating func count() throws -> Int {
        if let width {
            guard bytes.count % width == 0 else {
                throw CollectionEncoding.corrupt("a list of \(width)-byte elements has \(bytes.count) bytes")
            }
            return bytes.count / width
        }
        if let remaining { return remaining }
        guard bytes.count >= 4 else { throw CollectionEncoding.corrupt("a list of \(bytes.count) bytes is shorter than its count") }
        let count = Int(bytes.loadLE(UInt32.self, at: 0))
        // Each element takes at least its 4-byte length.
        guard count <= (bytes.count - 4) / 4 else {
            throw CollectionEncoding.corrupt("a list of \(bytes.count) bytes claims \(count) elements")
        }
        remaining = count
        return count
    }

    /// The next element's bytes (without a length); nil after the last. Throws when the bytes end
    /// before it, or go on after the last element.
    mutating func next() throws -> UnsafeRawBufferPointer? {
        if let width {
            guard position + width <= bytes.count else {
                guard position == bytes.count else { _ = try count(); return nil }
                return nil
            }
            defer { position += width }
            return UnsafeRawBufferPointer(rebasing: bytes[position..<(position + width)])
        }
        let left = try count()
        guard try CollectionElements.hasMore(left, position: position, in: bytes, "a list") else { return nil }
        remaining = left - 1
        return try CollectionElements.lengthPrefixed(bytes, at: &position)
    }

    /// Whether `left` elements remain; when none does, checks that the bytes end at `position`.
    static func hasMore(_ left: Int, position: Int, in bytes: UnsafeRawBufferPointer, _ what: String) throws -> Bool {
        if left > 0 { return true }
        guard position == bytes.count else {
            throw CollectionEncoding.corrupt("\(what) has \(bytes.count - position) bytes after its last element")
        }
        return false
    }

    /// The u32-length-prefixed bytes at `position`, which moves past them.
    static func lengthPrefixed(_ bytes: UnsafeRawBufferPointer, at position: inout Int) throws -> UnsafeRawBufferPointer {
        guard bytes.count - position >= 4 else { throw CollectionEncoding.corrupt("a collection ends inside an element's length") }
        let length = Int(bytes.loadLE(UInt32.self, at: position))
        guard length <= bytes.count - position - 4 else {
            throw CollectionEncoding.corrupt("a collection's element of \(length) bytes runs past its \(bytes.count) bytes")
        }
        defer { position += 4 + length }
        return UnsafeRawBufferPointer(rebasing: bytes[(position + 4)..<(position + 4 + length)])
    }
}

/// The entries of a map payload, in place: each key's UTF-8 bytes and its value's bytes.
struct MapEntries {
    let bytes: UnsafeRawBufferPointer
    let width: Int?
    private var position = 4
    private var remaining: Int?
    private var previousKey: UnsafeRawBufferPointer?

    init(_ bytes: UnsafeRawBufferPointer, width: Int?) {
        self.bytes = bytes
        self.width = width
    }

    mutating func count() throws -> Int {
        if let remaining { return remaining }
        guard bytes.count >= 4 else { throw CollectionEncoding.corrupt("a map of \(bytes.count) bytes is shorter than its count") }
        let count = Int(bytes.loadLE(UInt32.self, at: 0))
        // Each entry takes at least a key length and a value (of width bytes, or a length).
        guard count <= (bytes.count - 4) / (4 + (width ?? 4)) else {
            throw CollectionEncoding.corrupt("a map of \(bytes.count) bytes claims \(count) entries")
        }
        remaining = count
        return count
    }

    /// The next entry; nil after the last. Throws for keys out of order or repeated.
    mutating func next() throws -> (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)? {
        let left = try count()
        guard try CollectionElements.hasMore(left, position: position, in: bytes, "a map") else { return nil }
        remaining = left - 1
        let key = try CollectionElements.lengthPrefixed(bytes, at: &position)
        if let previousKey, !previousKey.lexicographicallyPrecedes(key) {
            throw CollectionEncoding.corrupt("a map's keys are not in ascending order")
        }
        previousKey = key
        let value: UnsafeRawBufferPointer
        if let width {
            guard width <= bytes.count - position else { throw CollectionEncoding.corrupt("a map ends inside a value") }
            value = UnsafeRawBufferPointer(rebasing: bytes[position..<(position + width)])
            position += width
        } else {
            value = try CollectionElements.lengthPrefixed(bytes, at: &position)
        }
        return (key, value)
    }
}

extension CollectionShape {
    /// Bytes of one element when fixed; nil for strings and `Data`.
    var elementWidth: Int? {
        element == .string || element == .byteVector ? nil : element.fixedWidth
    }
}

@_spi(CellarGenerated) extension RecordReader {
    /// Checks the collection in `slot` (when present): its counts and lengths, Bools, UTF-8 of
    /// strings and keys, the order of a map's keys and of a set's elements.
    func verifyCollection(slot: Int, _ shape: CollectionShape) throws {
        guard let bytes = try bytes(slot: slot) else { return }
        let width = shape.elementWidth
        func check(_ element: UnsafeRawBufferPointer) throws {
            if shape.element == .bool { _ = try Bool.decode(element) }
            if shape.element == .string { _ = try String.decode(element) }
        }
        if shape.kind == .map {
            var entries = MapEntries(bytes, width: width)
            while let (key, value) = try entries.next() {
                _ = try String.decode(key)
                try check(value)
            }
            return
        }
        var elements = CollectionElements(bytes, width: width)
        _ = try elements.count()
        var previous: UnsafeRawBufferPointer?
        while let element = try elements.next() {
            try check(element)
            if shape.kind == .set, let previous, !ElementOrder.precedes(previous, element, shape.element) {
                throw CollectionEncoding.corrupt("a set's elements are not in ascending order")
            }
            previous = element
        }
    }
}

/// The order of stored elements, on their bytes, where it does not depend on the property's
/// flags: Bools, strings, `Data` and UUIDs (whose order is their bytes'). Numbers are not checked:
/// whether an integer set is in signed or unsigned order depends on the `unsigned` flag, which
/// `verify(types:)` does not see.
enum ElementOrder {
    static func precedes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, _ type: PropertyType) -> Bool {
        switch type {
        case .bool, .string, .byteVector, .uuid: a.lexicographicallyPrecedes(b)
        default: true
        }
    }
}

// MARK: Dates in nanoseconds

@_spi(CellarGenerated) extension RecordBuilder {
    /// Adds a list of dates as nanoseconds since 1970 (`// cellar: date-nano`; about ±292 years).
    public func addNanoseconds(_ list: [Date]?, slot: Int) throws {
        guard let list else { return }
        try add(list.map { try DateStorage.nanoseconds($0) }, slot: slot)
    }

    /// Adds a set of dates as nanoseconds since 1970, in ascending order.
    public func addNanoseconds(_ set: Set<Date>?, slot: Int) throws {
        guard let set else { return }
        try add(Set(set.map { try DateStorage.nanoseconds($0) }), slot: slot)
    }

    /// Adds a map of dates as nanoseconds since 1970.
    public func addNanoseconds(_ map: [String: Date]?, slot: Int) throws {
        guard let map else { return }
        try add(map.mapValues { try DateStorage.nanoseconds($0) }, slot: slot)
    }
}

@_spi(CellarGenerated) extension RecordReader {
    /// A list of dates stored as nanoseconds since 1970; nil when absent.
    public func dateNanosecondsList(slot: Int) throws -> [Date]? {
        try list(Int64.self, slot: slot)?.map(DateStorage.date(nanoseconds:))
    }

    /// A set of dates stored as nanoseconds since 1970; nil when absent.
    public func dateNanosecondsSet(slot: Int) throws -> Set<Date>? {
        try set(Int64.self, slot: slot).map { Set($0.map(DateStorage.date(nanoseconds:))) }
    }

    /// A map of dates stored as nanoseconds since 1970; nil when absent.
    public func dateNanosecondsMap(slot: Int) throws -> [String: Date]? {
        try map(Int64.self, slot: slot)?.mapValues(DateStorage.date(nanoseconds:))
    }
}
