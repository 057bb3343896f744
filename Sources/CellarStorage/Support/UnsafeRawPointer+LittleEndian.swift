// The one little-endian loader and store of the package: every module of Cellar reads and writes
// its byte layouts through these (`package`: visible to the package's modules, not to apps).

extension UnsafeRawBufferPointer {
    /// A little-endian integer at `offset`; the caller has checked the bounds.
    @inlinable @inline(__always)
    package func loadLE<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

extension UnsafeRawPointer {
    /// A little-endian integer at `offset`.
    @inlinable @inline(__always)
    package func loadLE<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

extension UnsafeMutableRawPointer {
    /// A little-endian integer at `offset`.
    @inlinable @inline(__always)
    package func loadLE<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    /// Stores `value` little-endian at `offset`.
    @inlinable @inline(__always)
    package func storeLE<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
    }
}
