#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Byte-array copies and compares for tests, which run as debug builds. There the standard
/// library's generic paths (`Array(someRawBuffer)`, `==` on `[UInt8]`) go element by element
/// through value witnesses, and model tests that compare megabytes spent most of their time in
/// them. These do the same with one `memmove` or `memcmp`.
public enum Bytes {
    /// A copy of `raw` as an array.
    public static func copy(_ raw: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: raw.count) { buffer, count in
            if raw.count > 0 { UnsafeMutableRawBufferPointer(buffer).copyMemory(from: raw) }
            count = raw.count
        }
    }

    /// Whether `a` and `b` hold the same bytes.
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 } }
    }

    /// Whether `a` sorts before `b` byte by byte, a shorter prefix first (the engine's key order,
    /// as `lexicographicallyPrecedes`).
    public static func precedes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        let common = min(a.count, b.count)
        let order = common == 0 ? 0 : a.withUnsafeBytes { x in b.withUnsafeBytes { y in memcmp(x.baseAddress!, y.baseAddress!, common) } }
        return order != 0 ? order < 0 : a.count < b.count
    }
}
