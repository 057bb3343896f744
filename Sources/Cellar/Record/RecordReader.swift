import CellarStorage
import Foundation

/// Reads fields of one object record (see `RecordLayout`) in place, from the store's map.
///
/// Nothing is trusted: `init` checks the header and the slot table's bounds, and every accessor
/// checks its field's bounds (and, for strings, the UTF-8) before it reads, throwing
/// `CellarError.fileCorrupt` for bytes that cannot be a record. A slot the record does not have
/// (a property added after it was written) reads as nil.
///
/// Valid only while the bytes it reads are: inside the transaction that fetched them.
///
/// Its members are SPI, for bindings only (`@_spi(CellarGenerated) import Cellar`), as
/// `RecordBuilder`'s are.
public struct RecordReader {
    @usableFromInline let base: UnsafeRawPointer
    @usableFromInline let count: Int
    @usableFromInline let slotCount: Int
    /// Bit 0: the slot table holds u16 offsets (`RecordLayout.narrowFormat`), not u32. Bits 1–7:
    /// how deep the record nests (0 for an entity's record, 1 for an embedded object in it…).
    /// One byte for both: a scan makes a reader per record, and a field more made it slower.
    @usableFromInline let bits: UInt8

    /// Whether the slot table holds u16 offsets (`RecordLayout.narrowFormat`), not u32.
    @inlinable var narrow: Bool { bits & 1 != 0 }

    /// How deep the record nests: 0 for an entity's record, 1 for an embedded object in it…
    var depth: Int { Int(bits >> 1) }

    /// Checks the header of `bytes` and returns a reader on them.
    @inlinable @inline(__always)
    @_spi(CellarGenerated) public init(_ bytes: UnsafeRawBufferPointer) throws {
        try self.init(bytes, depth: 0)
    }

    /// A reader on a record nested `depth` levels deep (at most `Model.maxEmbeddingDepth`).
    @inlinable @inline(__always)
    init(_ bytes: UnsafeRawBufferPointer, depth: UInt8) throws {
        // Inlined: scans make one reader per record; the messages are built out of line.
        guard bytes.count >= RecordLayout.headerSize, let base = bytes.baseAddress else {
            throw Self.shorterThanHeader(bytes.count)
        }
        let slots = Int(base.loadLE(UInt16.self, at: 0))
        let format = base.loadLE(UInt16.self, at: 2)
        let narrow = format == RecordLayout.narrowFormat
        guard narrow || format == RecordLayout.wideFormat else { throw Self.unknownFormat(format) }
        guard RecordLayout.headerSize + (narrow ? 2 : 4) * slots <= bytes.count else { throw Self.tooManySlots(slots, count: bytes.count) }
        self.base = base
        self.count = bytes.count
        self.slotCount = slots
        self.bits = (narrow ? 1 : 0) | depth << 1
    }

    @usableFromInline
    static func shorterThanHeader(_ count: Int) -> CellarError {
        CellarError.fileCorrupt("an object record of \(count) bytes is shorter than its header")
    }

    @usableFromInline
    static func unknownFormat(_ format: UInt16) -> CellarError {
        CellarError.fileCorrupt("an object record has format \(format); this build reads formats \(RecordLayout.wideFormat) and \(RecordLayout.narrowFormat)")
    }

    @usableFromInline
    static func tooManySlots(_ slots: Int, count: Int) -> CellarError {
        CellarError.fileCorrupt("an object record of \(count) bytes claims \(slots) slots")
    }

    /// A reader on no record: every slot absent.
    @inlinable
    init(empty: ()) {
        base = UnsafeRawPointer(bitPattern: 8)!
        count = 0
        slotCount = 0
        bits = 1
    }

    /// The number of slots the record was written with.
    @_spi(CellarGenerated) public var slots: Int { slotCount }

    /// The offset of `slot`'s field, or nil when absent. Checks that `size` bytes fit.
    /// Always inlined: a scan reads a field or two of every record through it.
    @inlinable @inline(__always)
    func offset(_ slot: Int, size: Int) throws -> Int? {
        guard slot >= 0 else { return nil }
        let at = storedOffset(slot)
        if at == 0 { return nil }
        guard at >= fieldsStart, size <= count - at else {
            throw Self.outOfBounds(slot: slot, offset: at, size: size, count: count)
        }
        return at
    }

    /// The offset the slot table holds for `slot` (at least 0), unchecked: 0 when absent or
    /// past the table. A field at it must start at `fieldsStart` or later, within the record.
    @inlinable @inline(__always)
    func storedOffset(_ slot: Int) -> Int {
        guard slot < slotCount else { return 0 }
        return narrow
            ? Int(base.loadLE(UInt16.self, at: RecordLayout.headerSize + 2 * slot))
            : Int(base.loadLE(UInt32.self, at: RecordLayout.headerSize + 4 * slot))
    }

    /// Where the fields may begin: past the header and the slot table.
    @inlinable
    var fieldsStart: Int { RecordLayout.headerSize + (narrow ? 2 : 4) * slotCount }

    @usableFromInline
    static func outOfBounds(slot: Int, offset: Int, size: Int, count: Int) -> CellarError {
        CellarError.fileCorrupt("field \(slot) of an object record points at \(size) bytes at offset \(offset), outside the record's \(count) bytes")
    }

    /// Whether the record has a value in `slot`.
    @inlinable
    @_spi(CellarGenerated) public func has(slot: Int) throws -> Bool { try offset(slot, size: 0) != nil }

    // MARK: Scalars

    /// The integer in `slot`; nil when absent.
    @inlinable @inline(__always)
    @_spi(CellarGenerated) public func read<T: FixedWidthInteger>(_ type: T.Type, slot: Int) throws -> T? {
        try integer(type, slot: slot)
    }

    /// `read(_:slot:)` for the library's own inlinable code (which cannot call SPI).
    @inlinable @inline(__always)
    func integer<T: FixedWidthInteger>(_ type: T.Type, slot: Int) throws -> T? {
        guard let at = try offset(slot, size: MemoryLayout<T>.size) else { return nil }
        return base.loadLE(T.self, at: at)
    }

    /// The Bool in `slot`; nil when absent. Throws ``CellarError/Code/fileCorrupt`` for a byte other than 0 or 1.
    @inlinable
    @_spi(CellarGenerated) public func bool(slot: Int) throws -> Bool? {
        guard let byte = try read(UInt8.self, slot: slot) else { return nil }
        guard byte <= 1 else {
            throw CellarError.fileCorrupt("field \(slot) of an object record is a Bool holding \(byte)")
        }
        return byte == 1
    }

    /// The Float in `slot` (its 32-bit pattern); nil when absent.
    @inlinable
    @_spi(CellarGenerated) public func float(slot: Int) throws -> Float? {
        try read(UInt32.self, slot: slot).map { Float(bitPattern: $0) }
    }

    /// The Double in `slot` (its 64-bit pattern); nil when absent.
    @inlinable
    @_spi(CellarGenerated) public func double(slot: Int) throws -> Double? {
        try read(UInt64.self, slot: slot).map { Double(bitPattern: $0) }
    }

    /// A date stored as milliseconds since 1970.
    @inlinable @inline(__always)
    @_spi(CellarGenerated) public func date(slot: Int) throws -> Date? {
        try read(Int64.self, slot: slot).map { DateStorage.date(milliseconds: $0) }
    }

    /// A date stored as nanoseconds since 1970 (`// cellar: date-nano`).
    @inlinable
    @_spi(CellarGenerated) public func dateNanoseconds(slot: Int) throws -> Date? {
        try read(Int64.self, slot: slot).map { DateStorage.date(nanoseconds: $0) }
    }

    /// A UUID (16 bytes, RFC 4122 order); nil when absent. Throws `fileCorrupt` when fewer than
    /// 16 bytes are left in the record at the field's offset.
    @inlinable
    @_spi(CellarGenerated) public func uuid(slot: Int) throws -> UUID? {
        guard let at = try offset(slot, size: 16) else { return nil }
        return UUIDEncoding.uuid(UnsafeRawBufferPointer(start: base + at, count: 16))
    }

    /// A decimal; nil when absent. Throws `fileCorrupt` for bytes no decimal encodes to.
    @_spi(CellarGenerated) public func decimal(slot: Int) throws -> Decimal? {
        guard let at = try offset(slot, size: DecimalEncoding.width) else { return nil }
        return try DecimalEncoding.decimal(UnsafeRawBufferPointer(start: base + at, count: DecimalEncoding.width))
    }

    // MARK: Strings and bytes

    /// The bytes of the string or byte vector in `slot`, in place; nil when absent.
    @_spi(CellarGenerated) public func bytes(slot: Int) throws -> UnsafeRawBufferPointer? {
        try field(slot: slot)
    }

    /// `bytes(slot:)` for the library's own inlinable code (which cannot call SPI).
    @inlinable @inline(__always)
    func field(slot: Int) throws -> UnsafeRawBufferPointer? {
        guard let at = try offset(slot, size: 4) else { return nil }
        let length = Int(base.loadLE(UInt32.self, at: at))
        guard length <= count - at - 4 else {
            throw Self.outOfBounds(slot: slot, offset: at + 4, size: length, count: count)
        }
        return UnsafeRawBufferPointer(start: base + at + 4, count: length)
    }

    /// The string in `slot`; nil when absent. Throws for bytes that are not UTF-8.
    @inlinable @inline(__always)
    @_spi(CellarGenerated) public func string(slot: Int) throws -> String? {
        try text(slot: slot)
    }

    /// `string(slot:)` for the library's own inlinable code (which cannot call SPI).
    @inlinable @inline(__always)
    func text(slot: Int) throws -> String? {
        guard let bytes = try field(slot: slot) else { return nil }
        guard let string = Self.string(validating: bytes) else { throw Self.notUTF8(slot: slot) }
        return string
    }

    /// The error for a string field whose bytes are not UTF-8, built out of line so the inlined
    /// reads above stay small.
    @usableFromInline
    static func notUTF8(slot: Int) -> CellarError {
        CellarError.fileCorrupt("field \(slot) of an object record is a string that is not valid UTF-8")
    }

    /// `bytes` as a string when they are well-formed UTF-8, else nil: the standard library's
    /// check (which also finds whether they are all ASCII) and one copy, the way its
    /// `String(validatingCString:)` makes a string. (`String(decoding:as:)` repairs bad bytes
    /// instead, so it needed a second pass over them; `String(validating:as:)` is not specialized
    /// for buffers of bytes and costs more than both.)
    @inlinable @inline(__always)
    static func string(validating bytes: UnsafeRawBufferPointer) -> String? {
        String._tryFromUTF8(bytes.assumingMemoryBound(to: UInt8.self))
    }

    /// Whether `bytes` are well-formed UTF-8 (what `string(validating:)` accepts), checked
    /// without making a string: for bytes that stay bytes (flex values, index keys).
    static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if isASCII(bytes) { return true }
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

    /// Whether every byte is below 0x80: the bytes or-ed together 8 at a time (the last 8
    /// overlapping the ones before), tested once.
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        var bits: UInt64 = 0
        if count >= 8 {
            var i = 0
            while i + 8 <= count {
                bits |= base.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                i += 8
            }
            bits |= base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        } else {
            for i in 0..<count { bits |= UInt64(base.load(fromByteOffset: i, as: UInt8.self)) }
        }
        return bits & 0x8080_8080_8080_8080 == 0
    }

    /// The byte vector in `slot` as `Data`; nil when absent.
    @_spi(CellarGenerated) public func data(slot: Int) throws -> Data? {
        try bytes(slot: slot).map { Data($0) }
    }

    /// The byte vector in `slot` as `[UInt8]`; nil when absent.
    @_spi(CellarGenerated) public func byteArray(slot: Int) throws -> [UInt8]? {
        try bytes(slot: slot).map { Array($0) }
    }

    // MARK: Verification

    /// Checks every present field against the types the model gives its slots (`types[slot]`, nil
    /// for a slot with no property), without building anything. Used by `cellar verify` and the
    /// fuzzers; the accessors check the same bounds as they read.
    @_spi(CellarGenerated) public func verify(types: [PropertyType?]) throws {
        for slot in 0..<slotCount {
            guard slot < types.count, let type = types[slot] else {
                _ = try offset(slot, size: 0)
                continue
            }
            if let width = type.fixedWidth {
                _ = try offset(slot, size: width)
                if type == .bool { _ = try bool(slot: slot) }
                if type == .geoPoint { _ = try geoPoint(slot: slot) }
            } else if let shape = type.collection {
                try verifyCollection(slot: slot, shape)
            } else if type == .string {
                _ = try string(slot: slot)
            } else if type == .flex {
                if let bytes = try bytes(slot: slot) { try FlexEncoding.verify(bytes) }
            } else {
                _ = try bytes(slot: slot)
            }
        }
    }
}
