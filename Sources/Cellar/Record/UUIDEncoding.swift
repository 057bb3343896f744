import Foundation

/// How UUIDs are stored: their 16 bytes in RFC 4122 order (the order of `uuid_t`, the order of
/// the hex digits in `uuidString`), so that byte order of the stored values is the order of their
/// strings, which is the order queries and indexes compare them in.
@_spi(CellarGenerated) public enum UUIDEncoding {
    /// The nil UUID (all 16 bytes zero): what a non-optional UUID property absent from a record
    /// (added after the record was written) reads as.
    @inlinable
    public static var zero: UUID { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }

    /// The 16 bytes of `uuid`, in RFC 4122 order.
    @inlinable
    public static func bytes(_ uuid: UUID) -> [UInt8] {
        withUnsafeBytes(of: uuid.uuid) { Array($0) }
    }

    /// The UUID whose bytes are the 16 at `raw`; `raw` must hold at least 16.
    @inlinable
    public static func uuid(_ raw: UnsafeRawBufferPointer) -> UUID { uuidFromBytes(raw) }
}

/// `UUIDEncoding.uuid(_:)` for the library's own inlinable code (which cannot call SPI): the UUID
/// whose bytes are the 16 at `raw`.
@inlinable
func uuidFromBytes(_ raw: UnsafeRawBufferPointer) -> UUID {
    var value = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)).uuid
    withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[0..<16])) }
    return UUID(uuid: value)
}
