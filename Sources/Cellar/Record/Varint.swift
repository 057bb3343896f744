/// Unsigned LEB128 varints, as the full-text postings, the HNSW nodes and the change history
/// store their numbers: 7 bits a byte, low bits first, the high bit set on every byte but the
/// last. Each value has one encoding: a reader refuses overlong ones (a last byte of 0 after
/// others), so bytes decode and encode back alike.
enum Varint {
    /// Why bytes are no varint.
    enum Malformed: Error {
        /// The bytes end before its last byte.
        case truncated
        /// Its value needs more than 64 bits.
        case overflows
        /// It has a last byte of 0 after others (never written).
        case overlong
    }

    /// Appends `value`.
    @inline(__always)
    static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// Stores `value` at `out`, where at least `maxBytes` bytes are free; returns the pointer past
    /// it. For writers that reserve room for a whole entry once and write through a local cursor.
    @inline(__always)
    static func put(_ value: UInt64, at out: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
        var value = value, out = out
        while value >= 0x80 {
            out.storeBytes(of: UInt8(truncatingIfNeeded: value) | 0x80, as: UInt8.self)
            out += 1
            value >>= 7
        }
        out.storeBytes(of: UInt8(value), as: UInt8.self)
        return out + 1
    }

    /// The most bytes a varint takes.
    static let maxBytes = 10

    /// The varint at `offset` in `bytes`, moving `offset` past it.
    @inline(__always)
    static func read(_ bytes: UnsafeRawBufferPointer, at offset: inout Int) throws(Malformed) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < bytes.count else { throw .truncated }
            let byte = bytes[offset]
            offset += 1
            // At bit 63 only a last byte of 0 or 1 fits.
            if shift == 63 && byte > 1 { throw .overflows }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 {
                if byte == 0 && shift > 0 { throw .overlong }
                return value
            }
            shift += 7
        }
    }
}
