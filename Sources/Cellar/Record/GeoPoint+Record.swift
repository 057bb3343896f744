import CellarStorage

/// GeoPoints in records: 16 bytes inline, the latitude then the longitude, each a little-endian
/// Float64 (`GeoPoint.encode(into:)`), read back checked (`GeoPoint.decode(_:)`).
extension RecordBuilder {
    /// Adds a GeoPoint as its 16 bytes.
    @_spi(CellarGenerated) public func add(_ value: GeoPoint, slot: Int) {
        let at = field(slot, size: GeoPoint.encodedSize)
        value.encode(into: UnsafeMutableRawBufferPointer(start: state.pointee.buffer + at, count: GeoPoint.encodedSize))
    }

    /// Adds a GeoPoint when there is one; nil leaves the field absent.
    @_spi(CellarGenerated) public func add(_ value: GeoPoint?, slot: Int) {
        if let value { add(value, slot: slot) }
    }
}

extension RecordReader {
    /// The GeoPoint in `slot`; nil when absent. Throws `fileCorrupt` when the stored coordinates
    /// are out of range, NaN or infinite, or the record is too short for them.
    @_spi(CellarGenerated) public func geoPoint(slot: Int) throws -> GeoPoint? {
        guard let at = try offset(slot, size: GeoPoint.encodedSize) else { return nil }
        return try GeoPoint.decode(UnsafeRawBufferPointer(start: base + at, count: GeoPoint.encodedSize))
    }
}

extension GeoPoint {
    /// The point in 16 bytes that were checked when read (`PropertySchema.value(stored:)`
    /// decodes them), without checking again.
    static func decodeChecked(_ bytes: UnsafeRawBufferPointer) -> GeoPoint {
        GeoPoint(uncheckedLatitude: Double(bitPattern: bytes.loadLE(UInt64.self, at: 0)),
                 longitude: Double(bitPattern: bytes.loadLE(UInt64.self, at: 8)))
    }
}

extension GeoPoint {
    /// What a non-optional GeoPoint property reads from a record without the point: latitude 0,
    /// longitude 0.
    @_spi(CellarGenerated) public static let absent = GeoPoint(uncheckedLatitude: 0, longitude: 0)
}
