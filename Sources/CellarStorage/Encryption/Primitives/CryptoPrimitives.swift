/// The cryptography encryption at rest is built from, and the one place that names a library for it.
///
/// Encryption needs four things: AES-256-GCM (`AESGCMKey`), HMAC-SHA256 and scrypt
/// (`CryptoPrimitives`), and secure random bytes. HKDF-SHA256 (RFC 5869) is written here on top
/// of HMAC, once for every backend. Two backends give the rest, one file each, with the same
/// declarations:
///
/// - `CryptoPrimitives+OpenSSL.swift` (Linux): the system's libcrypto (OpenSSL 1.1 or 3; Debian's
///   libssl-dev). Compiled when the package defines `CELLAR_OPENSSL`, which it does on Linux.
/// - `CryptoPrimitives+SwiftCrypto.swift` (every other platform): swift-crypto, which is CryptoKit
///   on Apple platforms, and its CryptoExtras for scrypt. `CELLAR_CRYPTO=swift-crypto` in the
///   environment of a Linux build takes it too (the fuzz build does, so that it is exercised here).
///
/// Both compute the same standard functions, so a store written under one opens under the other:
/// the known-answer tests (`CryptoPrimitivesTests`) hold each backend to the RFCs' and NIST's
/// vectors. See docs/encryption.md for why these algorithms.
enum CryptoPrimitives {
    static let sha256Size = 32

    /// HKDF-SHA256 (RFC 5869): extract with `salt`, then expand to `count` bytes (at most 255 × 32)
    /// with `info`.
    static func hkdfSHA256(key: [UInt8], salt: [UInt8], info: [UInt8], count: Int) -> [UInt8] {
        precondition(count > 0 && count <= 255 * sha256Size, "HKDF-SHA256 gives 1 to 8160 bytes")
        // An empty salt is a salt of zeros, the hash's length (RFC 5869, 2.2).
        let pseudoRandomKey = hmacSHA256(key: salt.isEmpty ? [UInt8](repeating: 0, count: sha256Size) : salt, message: key)
        var output: [UInt8] = []
        output.reserveCapacity(count + sha256Size)
        var block: [UInt8] = []
        var counter: UInt8 = 1
        while output.count < count {
            block = hmacSHA256(key: pseudoRandomKey, message: block + info + [counter])
            output += block
            counter &+= 1
        }
        return Array(output.prefix(count))
    }
}

/// `count` bytes from the system's secure random generator (`getrandom` on Linux,
/// `arc4random_buf` on Apple platforms).
func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
}

/// Compares without an early exit, so that timing does not say how much of a key check matched.
func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for i in 0..<a.count { difference |= a[i] ^ b[i] }
    return difference == 0
}
