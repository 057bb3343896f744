import CellarStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where an indexed property's value lies in a record: enough to compare two records' values
/// byte by byte without reading them as values, and, for a number, to make its index key from
/// its bytes. A plain struct, so that going through an entity's list of them retains nothing.
struct IndexedField: Sendable {
    let slot: Int
    /// The value's size when fixed (16 for a UUID); 0 for a string or byte vector (a u32
    /// length, then the bytes).
    let size: Int
    let index: IndexSchema
    /// Signed integers are sign-extended, and their keys have the sign bit flipped.
    let signed: Bool
    let floating: Bool

    /// The field of `property` in its own index, or in `index` (one over several properties).
    init(_ property: PropertySchema, index: IndexSchema? = nil) {
        slot = property.slot
        self.index = index ?? property.index!
        switch property.kind {
        case .integer(let width, let signed):
            size = width
            self.signed = signed
            floating = false
        case .floating(let width):
            size = width
            signed = false
            floating = true
        case .string, .bytes, .collection, .flex, .embedded:
            size = 0
            signed = false
            floating = false
        case .uuid, .geoPoint:
            size = 16
            signed = false
            floating = false
        case .decimal:
            size = DecimalEncoding.width
            signed = false
            floating = false
        }
    }

    /// Whether `keyBits` makes this field's keys: a number in an index that is not unique (a
    /// unique one is checked first, through the general path).
    var hasFixedKey: Bool { size > 0 && size <= 8 && !index.unique }

    /// The key bits (see `IndexKey`) of a number (not a UUID) whose `size` stored bytes are `raw`, the same as
    /// `IndexKey.part` gives for its value; nil when it is not indexed (a zero that the index
    /// skips). Only for a field with `hasFixedKey`, on a record this process built (its bytes are
    /// not checked the way `RecordReader.value(of:)` checks a stored one).
    @inline(__always)
    func keyBits(_ raw: UnsafeRawBufferPointer) -> UInt64? {
        var bits: UInt64
        switch size {
        case 1:
            let v = raw.load(as: UInt8.self)
            bits = signed ? UInt64(bitPattern: Int64(Int8(bitPattern: v))) : UInt64(v)
        case 2:
            let v = raw.loadLE(UInt16.self, at: 0)
            bits = signed ? UInt64(bitPattern: Int64(Int16(bitPattern: v))) : UInt64(v)
        case 4:
            let v = raw.loadLE(UInt32.self, at: 0)
            if floating { return IndexKey.orderedBits(Double(Float(bitPattern: v))) }
            bits = signed ? UInt64(bitPattern: Int64(Int32(bitPattern: v))) : UInt64(v)
        default:
            bits = raw.loadLE(UInt64.self, at: 0)
            if floating { return IndexKey.orderedBits(Double(bitPattern: bits)) }
        }
        if index.skipZero && bits == 0 { return nil }
        return IndexKey.integerKey(bits, signed: signed)
    }
}

extension RecordReader {
    /// The bytes of `field`'s value in this record; nil when absent.
    @inline(__always)
    func rawValue(_ field: IndexedField) throws -> UnsafeRawBufferPointer? {
        guard field.size > 0 else { return try bytes(slot: field.slot) }
        guard let at = try offset(field.slot, size: field.size) else { return nil }
        return UnsafeRawBufferPointer(start: base + at, count: field.size)
    }

    /// Whether this record and `other` hold the same bytes in every one of `fields` (both absent
    /// counts as the same). Equal bytes are equal values, so an update for which this holds
    /// changes no index entry and needs no unique check (the common update: a field that is not
    /// indexed changed).
    func sameValues(_ fields: [IndexedField], as other: RecordReader) throws -> Bool {
        for field in fields {
            let mine = try rawValue(field)
            let theirs = try other.rawValue(field)
            guard let mine, let theirs else {
                if (mine == nil) != (theirs == nil) { return false }
                continue
            }
            if field.size == 8 {
                // The common indexed field (a 64-bit number): two words, no memcmp.
                if mine.loadUnaligned(as: UInt64.self) != theirs.loadUnaligned(as: UInt64.self) { return false }
                continue
            }
            guard mine.count == theirs.count else { return false }
            if mine.count > 0 && memcmp(mine.baseAddress!, theirs.baseAddress!, mine.count) != 0 { return false }
        }
        return true
    }
}
