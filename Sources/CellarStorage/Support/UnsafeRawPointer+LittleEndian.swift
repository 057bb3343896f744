extension UnsafeRawBufferPointer {
    /// A little-endian integer at `offset`; the caller has checked the bounds.
    @inline(__always)
    func loadLE<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

extension UnsafeRawPointer {
    @inline(__always)
    func loadLE<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

extension UnsafeMutableRawPointer {
    @inline(__always)
    func loadLE<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    @inline(__always)
    func storeLE<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
    }
}
