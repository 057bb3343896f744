/// XXH64, the 64-bit xxHash: the checksum of every record in the log.
///
/// Fast (several GB/s on one core) and strong enough to catch torn writes and bit flips. Each
/// record's checksum is seeded with its own file offset and the store's salt, so a record that is
/// valid somewhere else (a stale copy, a misdirected write) does not verify where it lies.
package enum Checksum {
    private static let p1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let p3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let p4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let p5: UInt64 = 0x27D4_EB2F_1656_67C5

    @inline(__always)
    private static func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 { (x &<< r) | (x &>> (64 &- r)) }

    @inline(__always)
    private static func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
        rotl(acc &+ input &* p2, 31) &* p1
    }

    @inline(__always)
    private static func merge(_ acc: UInt64, _ value: UInt64) -> UInt64 {
        (acc ^ round(0, value)) &* p1 &+ p4
    }

    /// The XXH64 hash of `bytes` with `seed`.
    package static func xxh64(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        let count = bytes.count
        guard let base = bytes.baseAddress else { return avalanche(seed &+ p5) }
        var p = 0
        var h: UInt64
        if count >= 32 {
            var v1 = seed &+ p1 &+ p2
            var v2 = seed &+ p2
            var v3 = seed
            var v4 = seed &- p1
            // One pointer walks the stripes up to the last whole one (wrapping arithmetic: no
            // overflow checks in the loop, which is most of a large record's checksum).
            var stripe = base
            let lastStripe = base + (count &- 32)
            repeat {
                v1 = round(v1, UInt64(littleEndian: stripe.loadUnaligned(as: UInt64.self)))
                v2 = round(v2, UInt64(littleEndian: stripe.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
                v3 = round(v3, UInt64(littleEndian: stripe.loadUnaligned(fromByteOffset: 16, as: UInt64.self)))
                v4 = round(v4, UInt64(littleEndian: stripe.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
                stripe += 32
            } while stripe <= lastStripe
            p = stripe - base
            h = rotl(v1, 1) &+ rotl(v2, 7) &+ rotl(v3, 12) &+ rotl(v4, 18)
            h = merge(h, v1); h = merge(h, v2); h = merge(h, v3); h = merge(h, v4)
        } else {
            h = seed &+ p5
        }
        h = h &+ UInt64(count)
        while p + 8 <= count {
            h ^= round(0, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: p, as: UInt64.self)))
            h = rotl(h, 27) &* p1 &+ p4
            p += 8
        }
        if p + 4 <= count {
            h ^= UInt64(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: p, as: UInt32.self))) &* p1
            h = rotl(h, 23) &* p2 &+ p3
            p += 4
        }
        while p < count {
            h ^= UInt64(base.load(fromByteOffset: p, as: UInt8.self)) &* p5
            h = rotl(h, 11) &* p1
            p += 1
        }
        return avalanche(h)
    }

    @inline(__always)
    private static func avalanche(_ hash: UInt64) -> UInt64 {
        var h = hash
        h ^= h >> 33
        h = h &* p2
        h ^= h >> 29
        h = h &* p3
        h ^= h >> 32
        return h
    }
}
