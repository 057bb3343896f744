#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Strings as queries compare them: by their UTF-8 bytes. Swift's `==`, `<` and hashing on
/// `String` use canonical equivalence instead (a precomposed "é" equals "e" followed by a
/// combining accent), which would make sets and dictionaries merge values that conditions tell
/// apart. Both functions read the strings' own bytes (native strings are contiguous UTF-8):
/// nothing is allocated.
enum UTF8Bytes {
    /// Whether `a` and `b` are the same bytes.
    @inline(__always)
    static func equal(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
        }
    }

    /// Feeds `string`'s bytes and their count to `hasher` (the count keeps it prefix-free, as
    /// `Array`'s hashing is).
    @inline(__always)
    static func hash(_ string: String, into hasher: inout Hasher) {
        var string = string
        string.withUTF8 { bytes in
            hasher.combine(bytes.count)
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        }
    }
}
