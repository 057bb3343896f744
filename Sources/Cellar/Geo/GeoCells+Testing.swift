/// Entry points into the geospatial internals for tests and fuzzing (the `Fuzz` package cannot
/// see internal declarations).
@_spi(Testing) public enum GeoTesting {
    /// `GeoPoint.decode(_:)`: a point from the 16 bytes a record stores.
    ///
    /// - Throws: `CellarError.fileCorrupt` when fewer than 16 bytes are given or a coordinate is
    ///   out of range, NaN or infinite.
    public static func decodePoint(_ bytes: UnsafeRawBufferPointer) throws -> GeoPoint {
        try GeoPoint.decode(bytes)
    }

    /// The bytes `decodePoint(_:)` reads (`GeoPoint.encode(into:)`).
    public static func encodePoint(_ point: GeoPoint) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: GeoPoint.encodedSize)
        bytes.withUnsafeMutableBytes { point.encode(into: $0) }
        return bytes
    }

    /// `GeoCells.cell(of:)`: the level-30 cell id of `point`.
    public static func cell(of point: GeoPoint) -> UInt64 {
        GeoCells.cell(of: point)
    }

    /// `GeoCells.covering(_:maxRanges:)`: the ranges of cell ids the spatial index reads for
    /// `shape`.
    public static func covering(_ shape: some GeoShape, maxRanges: Int) -> [ClosedRange<UInt64>] {
        GeoCells.covering(shape, maxRanges: maxRanges)
    }

    /// Every cell id (`GeoCells.allCells`).
    public static var allCells: ClosedRange<UInt64> { GeoCells.allCells }
}
