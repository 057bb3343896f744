#if !CELLAR_OPENSSL
import Crypto
import CryptoExtras

// The backend of `CryptoPrimitives` on every platform but Linux: swift-crypto, which is CryptoKit
// on Apple platforms, and CryptoExtras for scrypt (see CryptoPrimitives.swift).

extension CryptoPrimitives {
    /// HMAC-SHA256 of `message` under `key`.
    static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
    }

    /// scrypt (RFC 7914) of `passphrase` with `salt`, N = 2^`logN`, to `count` bytes. Throws what
    /// CryptoExtras throws for parameters it refuses.
    static func scrypt(passphrase: [UInt8], salt: [UInt8], logN: Int, r: Int, p: Int, count: Int) throws -> [UInt8] {
        let derived = try KDF.Scrypt.deriveKey(from: passphrase, salt: salt, outputByteCount: count,
                                               rounds: 1 << logN, blockSize: r, parallelism: p)
        return derived.withUnsafeBytes { Array($0) }
    }
}

/// An AES-256-GCM key: seals and opens with 12-byte nonces and 16-byte tags.
struct AESGCMKey: Sendable {
    static let tagSize = 16
    let key: SymmetricKey

    /// `bytes`: 32 bytes.
    init(_ bytes: [UInt8]) {
        precondition(bytes.count == 32, "an AES-256 key is 32 bytes")
        key = SymmetricKey(data: bytes)
    }

    /// Encrypts `text` in place, authenticating `aad` with it, and writes the 16-byte tag at `tag`.
    func seal(_ text: UnsafeMutableRawBufferPointer, nonce: UnsafeRawBufferPointer, authenticating aad: UnsafeRawBufferPointer,
              tag: UnsafeMutableRawPointer) throws {
        let box = try AES.GCM.seal(UnsafeRawBufferPointer(text), using: key, nonce: AES.GCM.Nonce(data: nonce), authenticating: aad)
        box.ciphertext.withUnsafeBytes { text.copyMemory(from: $0) }
        box.tag.withUnsafeBytes { tag.copyMemory(from: $0.baseAddress!, byteCount: Self.tagSize) }
    }

    /// Decrypts `ciphertext` into `destination` (as many bytes) when it and `aad` authenticate
    /// under `tag` (16 bytes). False when they do not, and `destination` then holds none of the plaintext.
    func open(_ ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
              authenticating aad: UnsafeRawBufferPointer, into destination: UnsafeMutableRawPointer) -> Bool {
        guard let box = try? AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag),
              let plain = try? AES.GCM.open(box, using: key, authenticating: aad),
              plain.count == ciphertext.count
        else { return false }
        plain.withUnsafeBytes { if ciphertext.count > 0 { destination.copyMemory(from: $0.baseAddress!, byteCount: ciphertext.count) } }
        return true
    }
}
#endif
