import CellarStorage

/// The keys of index trees: the property's value, encoded so that byte order is value order,
/// followed by the object id (8 bytes, big-endian), so that equal values list their objects in id
/// order and every key is unique. Values are empty.
///
/// - integers (and Bools, dates, relation ids): 8 bytes big-endian; signed ones with the sign bit
///   flipped, so negative numbers sort first;
/// - Float and Double: the Double's bits, flipped so that byte order is numeric order (-0 is
///   stored as 0, every NaN as one NaN above +infinity);
/// - strings and byte vectors (value index): the bytes with 0x00 written as 0x00 0x01, then the
///   terminator 0x00 0x00, so that a shorter value sorts before its extensions and a prefix of
///   the value is a prefix of the key;
/// - hash indexes: the FNV-1a hash of the bytes, 4 bytes (`hash`) or 8 (`hash64`), big-endian;
/// - UUIDs and decimals: their bytes as stored (a UUID's 16 in RFC 4122 order, a decimal's 23 of
///   `DecimalEncoding`), unescaped: every one has the same length, so byte order of the keys is
///   byte order of the values (always a value index).
enum IndexKey {
    /// Appends the encoded `value` of `property` (without the id) as `index` keys it.
    static func appendValue(_ value: FieldValue, property: PropertySchema, index: IndexSchema, to key: inout [UInt8]) {
        encoded(value, property: property, index: index).append(to: &key)
    }

    /// `value` encoded as `index` keys it, without the checks `part` adds.
    static func encoded(_ value: FieldValue, property: PropertySchema, index: IndexSchema) -> Part {
        switch value {
        case .integer(let bits):
            var signed = false
            if case .integer(_, let isSigned) = property.kind { signed = isSigned }
            return .fixed(integerKey(bits, signed: signed), width: 8)
        case .floating(let double):
            return .fixed(orderedBits(double), width: 8)
        case .bytes(let bytes) where property.kind.isUUID || property.kind.isDecimal:
            return .escaped(Array(bytes))
        case .bytes(let bytes) where property.type == .geoPoint:
            return .fixed(GeoCells.cell(of: GeoPoint.decodeChecked(bytes)), width: 8)
        case .bytes(let bytes):
            switch index.kind {
            case .hash32: return .fixed(UInt64(hash32(bytes)), width: 4)
            case .hash64: return .fixed(hash64(bytes), width: 8)
            case .fullText, .geo, .hnsw:
                // Never reached: a full-text index's keys are its words (`FullTextIndex`), a geo
                // index's are GeoPoints' cells (above).
                preconditionFailure("\(property.qualifiedName): a \(index.kind) index has no key for these bytes")
            case .value:
                var escaped: [UInt8] = []
                escaped.reserveCapacity(bytes.count + 2)
                appendEscaped(bytes, to: &escaped)
                return .escaped(escaped)
            }
        }
    }

    /// The start of the keys of a string or byte vector in a value or hash index: the whole
    /// value's key part (`whole`), or what every key of a value starting with `bytes` starts with
    /// (a value index only).
    static func bytesPrefix(_ bytes: UnsafeRawBufferPointer, index: IndexSchema, whole: Bool) -> [UInt8] {
        var key: [UInt8] = []
        switch index.kind {
        case .value: appendEscaped(bytes, terminated: whole, to: &key)
        case .hash32: appendBigEndian32(hash32(bytes), to: &key)
        case .hash64: appendBigEndian(hash64(bytes), to: &key)
        case .fullText, .geo, .hnsw: break   // not asked: these serve `matches`, `isWithin`, `nearestNeighbors` only
        }
        return key
    }

    /// The integer key part of a signed or unsigned 64-bit pattern.
    static func integerKey(_ bits: UInt64, signed: Bool) -> UInt64 {
        signed ? bits ^ (1 << 63) : bits
    }

    static func orderedBits(_ value: Double) -> UInt64 {
        var double = value
        if double == 0 { double = 0 }                 // -0 → +0
        if double.isNaN { return UInt64.max }         // one NaN, above +infinity
        let bits = double.bitPattern
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }

    static func appendBigEndian(_ value: UInt64, to key: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { key.append(contentsOf: $0) }
    }

    static func appendBigEndian32(_ value: UInt32, to key: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { key.append(contentsOf: $0) }
    }

    /// The bytes with 0x00 escaped, without the terminator when `terminated` is false (a prefix).
    static func appendEscaped(_ bytes: UnsafeRawBufferPointer, terminated: Bool = true, to key: inout [UInt8]) {
        for byte in bytes {
            key.append(byte)
            if byte == 0 { key.append(1) }
        }
        if terminated { key.append(0); key.append(0) }
    }

    static func hash64(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    static func hash32(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        let hash = hash64(bytes)
        return UInt32(truncatingIfNeeded: hash ^ (hash >> 32))
    }

    /// The object id at the end of an index key.
    static func objectId(_ key: UnsafeRawBufferPointer) throws -> Id {
        guard key.count >= 8 else {
            throw CellarError.fileCorrupt("an index key has \(key.count) bytes, fewer than an object id")
        }
        return Id(bigEndian: key.loadUnaligned(fromByteOffset: key.count - 8, as: UInt64.self))
    }

    /// The value part of an index key, before the object id: a fixed-width number (integers,
    /// floats, hashes), kept in a register, or escaped bytes (a value index on strings and byte
    /// vectors; a UUID's 16 bytes, which need no escaping). Equal parts mean equal keys for the
    /// same object.
    enum Part: Equatable {
        /// `width` (4 or 8) big-endian bytes of `bits`.
        case fixed(UInt64, width: Int)
        case escaped([UInt8])

        /// Appends this part's bytes (a key without its id, or a prefix of keys).
        func append(to key: inout [UInt8]) {
            switch self {
            case .fixed(let bits, let width):
                if width == 8 { IndexKey.appendBigEndian(bits, to: &key) } else { IndexKey.appendBigEndian32(UInt32(truncatingIfNeeded: bits), to: &key) }
            case .escaped(let bytes):
                key.append(contentsOf: bytes)
            }
        }

        /// Calls `body` with the full key: this part followed by `id`, without allocating for a
        /// fixed part.
        func withKey<R>(id: Id, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
            switch self {
            case .fixed(let bits, let width):
                var words: (UInt64, UInt64) = (0, 0)
                return try withUnsafeMutableBytes(of: &words) { buffer in
                    if width == 8 {
                        buffer.storeBytes(of: bits.bigEndian, toByteOffset: 0, as: UInt64.self)
                    } else {
                        buffer.storeBytes(of: UInt32(truncatingIfNeeded: bits).bigEndian, toByteOffset: 0, as: UInt32.self)
                    }
                    buffer.storeBytes(of: id.bigEndian, toByteOffset: width, as: UInt64.self)
                    return try body(UnsafeRawBufferPointer(rebasing: buffer[0..<(width + 8)]))
                }
            case .escaped(let bytes):
                var key = bytes
                IndexKey.appendBigEndian(id, to: &key)
                return try key.withUnsafeBytes(body)
            }
        }
    }

    /// The key part of `value` of `property` in `index`; nil when the value is not indexed (a
    /// zero in an index that skips zeros). Throws when the key would exceed the engine's limit.
    static func part(_ value: FieldValue, index: IndexSchema, property: PropertySchema) throws -> Part? {
        if index.skipZero, case .integer(0) = value { return nil }
        let part = encoded(value, property: property, index: index)
        if case .escaped(let escaped) = part, escaped.count + 8 > StorageLimits.maxKeySize {
            throw CellarError.illegalArgument("the value of \(property.qualifiedName) is \(escaped.count + 8) bytes in its index, above the \(StorageLimits.maxKeySize) an index key may have; use a hash index (`// cellar: index = \"hash64\"`) for long values")
        }
        return part
    }

    /// The keys of object `id` in the index of `property` for its stored `value` (nil: absent):
    /// none when the value is not indexed, one per distinct element of a list or set.
    static func keys(_ value: FieldValue?, id: Id, property: PropertySchema) throws -> [[UInt8]] {
        guard let value else { return [] }
        if let collection = property.collection { return try collection.indexKeys(value, id: id) }
        return try key(value, id: id, index: property.index!, property: property).map { [$0] } ?? []
    }

    /// The full key of `value` of object `id` in `index`; nil when the value is not indexed
    /// (a zero in an index that skips zeros).
    static func key(_ value: FieldValue, id: Id, index: IndexSchema, property: PropertySchema) throws -> [UInt8]? {
        guard let part = try part(value, index: index, property: property) else { return nil }
        return try part.withKey(id: id) { Array($0) }
    }
}
