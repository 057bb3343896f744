#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where an indexed property's value lies in a record: enough to compare two records' values
/// byte by byte without reading them as values. A plain struct, so that going through an
/// entity's list of them retains nothing.
struct IndexedField: Sendable {
    let slot: Int
    /// The value's size when fixed; 0 for a string or byte vector (a u32 length, then the bytes).
    let size: Int

    init(_ property: PropertySchema) {
        slot = property.slot
        switch property.kind {
        case .integer(let width, _), .floating(let width): size = width
        case .string, .bytes: size = 0
        }
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
            guard mine.count == theirs.count else { return false }
            if mine.count > 0 && memcmp(mine.baseAddress!, theirs.baseAddress!, mine.count) != 0 { return false }
        }
        return true
    }
}
