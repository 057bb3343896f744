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

// Debug builds: the widths the layouts read, without the generic path. Unspecialized (as in a
// debug build), `loadUnaligned(fromByteOffset:as:)` looks up type metadata on every call, and
// the test suite spent about a quarter of its CPU time on that path (297 against 229 user-s with
// these). These overloads copy the bytes with `memcpy` instead; release builds have only the
// generic loader above, specialized. LittleEndianTests holds them to it.
#if DEBUG
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension UnsafeRawPointer {
    @inlinable @inline(__always) package func loadLE(_ type: UInt16.Type, at offset: Int) -> UInt16 {
        var value: UInt16 = 0
        memcpy(&value, self + offset, 2)
        return UInt16(littleEndian: value)
    }

    @inlinable @inline(__always) package func loadLE(_ type: UInt32.Type, at offset: Int) -> UInt32 {
        var value: UInt32 = 0
        memcpy(&value, self + offset, 4)
        return UInt32(littleEndian: value)
    }

    @inlinable @inline(__always) package func loadLE(_ type: UInt64.Type, at offset: Int) -> UInt64 {
        var value: UInt64 = 0
        memcpy(&value, self + offset, 8)
        return UInt64(littleEndian: value)
    }
}

extension UnsafeMutableRawPointer {
    @inlinable @inline(__always) package func loadLE(_ type: UInt16.Type, at offset: Int) -> UInt16 { UnsafeRawPointer(self).loadLE(type, at: offset) }
    @inlinable @inline(__always) package func loadLE(_ type: UInt32.Type, at offset: Int) -> UInt32 { UnsafeRawPointer(self).loadLE(type, at: offset) }
    @inlinable @inline(__always) package func loadLE(_ type: UInt64.Type, at offset: Int) -> UInt64 { UnsafeRawPointer(self).loadLE(type, at: offset) }
}

// With the bounds check the generic `loadUnaligned` of a buffer makes in a debug build.
extension UnsafeRawBufferPointer {
    @inlinable @inline(__always) package func loadLE(_ type: UInt16.Type, at offset: Int) -> UInt16 {
        assert(offset >= 0 && offset &+ 2 <= count, "a load of 2 bytes at \(offset) of \(count)")
        return baseAddress!.loadLE(type, at: offset)
    }

    @inlinable @inline(__always) package func loadLE(_ type: UInt32.Type, at offset: Int) -> UInt32 {
        assert(offset >= 0 && offset &+ 4 <= count, "a load of 4 bytes at \(offset) of \(count)")
        return baseAddress!.loadLE(type, at: offset)
    }

    @inlinable @inline(__always) package func loadLE(_ type: UInt64.Type, at offset: Int) -> UInt64 {
        assert(offset >= 0 && offset &+ 8 <= count, "a load of 8 bytes at \(offset) of \(count)")
        return baseAddress!.loadLE(type, at: offset)
    }
}
#endif
