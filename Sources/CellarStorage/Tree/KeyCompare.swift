/// Byte-wise lexicographic comparison of keys (shorter wins a tie), the order of every tree.
///
/// Two implementations are kept so the micro-benchmark can compare them: `simd` skips equal
/// 16-byte chunks with one `SIMD16<UInt8>` compare and finds the first difference in a differing
/// chunk with two big-endian 64-bit loads; `bytes` is the plain loop. `compare` is the one the
/// engine uses; see docs/performance-log.md for the measurement that chose it.
public enum KeyCompare {
    /// The comparison the engine uses: negative, zero or positive like `memcmp`, with length as
    /// the tie-breaker.
    @inlinable @inline(__always)
    public static func compare(_ a: UnsafeRawPointer, _ aCount: Int, _ b: UnsafeRawPointer, _ bCount: Int) -> Int {
        simd(a, aCount, b, bCount)
    }

    /// `compare` on two buffers (either may be empty).
    @inlinable @inline(__always)
    public static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        compare(a.nonNullBase, a.count, b.nonNullBase, b.count)
    }

    /// `SIMD16<UInt8>` comparison, 16 bytes a step.
    @inlinable @inline(__always)
    public static func simd(_ a: UnsafeRawPointer, _ aCount: Int, _ b: UnsafeRawPointer, _ bCount: Int) -> Int {
        let n = min(aCount, bCount)
        var i = 0
        while i &+ 16 <= n {
            let va = a.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self)
            let vb = b.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self)
            // `any(.!=)` is one vector compare and a mask test; `va != vb` compiles to a scalar loop.
            if any(va .!= vb) {
                let a0 = UInt64(bigEndian: a.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                let b0 = UInt64(bigEndian: b.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                if a0 != b0 { return a0 < b0 ? -1 : 1 }
                let a1 = UInt64(bigEndian: a.loadUnaligned(fromByteOffset: i &+ 8, as: UInt64.self))
                let b1 = UInt64(bigEndian: b.loadUnaligned(fromByteOffset: i &+ 8, as: UInt64.self))
                return a1 < b1 ? -1 : 1
            }
            i &+= 16
        }
        if i &+ 8 <= n {
            let a0 = UInt64(bigEndian: a.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            let b0 = UInt64(bigEndian: b.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            if a0 != b0 { return a0 < b0 ? -1 : 1 }
            i &+= 8
        }
        while i < n {
            let x = a.load(fromByteOffset: i, as: UInt8.self)
            let y = b.load(fromByteOffset: i, as: UInt8.self)
            if x != y { return x < y ? -1 : 1 }
            i &+= 1
        }
        return aCount == bCount ? 0 : (aCount < bCount ? -1 : 1)
    }

    /// The plain byte loop, kept as the benchmark's baseline.
    @inlinable
    public static func bytes(_ a: UnsafeRawPointer, _ aCount: Int, _ b: UnsafeRawPointer, _ bCount: Int) -> Int {
        let n = min(aCount, bCount)
        var i = 0
        while i < n {
            let x = a.load(fromByteOffset: i, as: UInt8.self)
            let y = b.load(fromByteOffset: i, as: UInt8.self)
            if x != y { return x < y ? -1 : 1 }
            i &+= 1
        }
        return aCount == bCount ? 0 : (aCount < bCount ? -1 : 1)
    }
}
