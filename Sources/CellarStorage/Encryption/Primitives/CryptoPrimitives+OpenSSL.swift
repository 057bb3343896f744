#if CELLAR_OPENSSL
import COpenSSL

// The Linux backend of `CryptoPrimitives`: the system's libcrypto (see CryptoPrimitives.swift).

extension CryptoPrimitives {
    /// HMAC-SHA256 of `message` under `key`.
    static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var code = [UInt8](repeating: 0, count: sha256Size)
        var length: UInt32 = 0
        let done = key.withUnsafeBytes { key in
            message.withUnsafeBytes { message in
                code.withUnsafeMutableBufferPointer { code in
                    HMAC(EVP_sha256(), key.baseAddress, Int32(key.count), message.bindMemory(to: UInt8.self).baseAddress,
                         message.count, code.baseAddress, &length)
                }
            }
        }
        // Fails only when libcrypto cannot allocate.
        precondition(done != nil && length == UInt32(sha256Size), "libcrypto's HMAC-SHA256 failed")
        return code
    }

    /// scrypt (RFC 7914) of `passphrase` with `salt`, N = 2^`logN`, to `count` bytes. Throws
    /// `illegalArgument` when libcrypto refuses the parameters or cannot allocate the memory.
    static func scrypt(passphrase: [UInt8], salt: [UInt8], logN: Int, r: Int, p: Int, count: Int) throws -> [UInt8] {
        var derived = [UInt8](repeating: 0, count: count)
        // libcrypto refuses what needs more than `maxmem` bytes (32 MiB by default): allow what
        // these parameters need (128·r·N for V, 128·r·p for B) with room for its own arithmetic.
        let needed = UInt64(128 * r) * (UInt64(1) << UInt64(logN) + UInt64(p) + 2)
        let done = passphrase.withUnsafeBytes { passphrase in
            salt.withUnsafeBytes { salt in
                derived.withUnsafeMutableBufferPointer { derived in
                    EVP_PBE_scrypt(passphrase.bindMemory(to: CChar.self).baseAddress, passphrase.count,
                                   salt.bindMemory(to: UInt8.self).baseAddress, salt.count,
                                   UInt64(1) << UInt64(logN), UInt64(r), UInt64(p), needed + (1 << 20),
                                   derived.baseAddress, count)
                }
            }
        }
        guard done == 1 else {
            throw StorageError.illegalArgument("scrypt refused its parameters (log2 N \(logN), r \(r), p \(p)) or found no memory for them")
        }
        return derived
    }
}

/// An AES-256-GCM key: seals and opens with 12-byte nonces and 16-byte tags.
struct AESGCMKey: Sendable {
    static let tagSize = 16
    let bytes: [UInt8]

    /// libcrypto's AES-256-GCM, fetched once (see the shim).
    nonisolated(unsafe) private static let cipher: OpaquePointer = {
        guard let cipher = cellar_aes_256_gcm() else { preconditionFailure("libcrypto has no AES-256-GCM") }
        return cipher
    }()

    /// `bytes`: 32 bytes.
    init(_ bytes: [UInt8]) {
        precondition(bytes.count == 32, "an AES-256 key is 32 bytes")
        self.bytes = bytes
    }

    /// Runs `body` with a new cipher context, set up for the key and `nonce` (12 bytes).
    private func withContext<R>(encrypting: Bool, nonce: UnsafeRawBufferPointer, _ body: (OpaquePointer) throws -> R) throws -> R {
        precondition(nonce.count == 12, "an AES-GCM nonce is 12 bytes")
        guard let context = EVP_CIPHER_CTX_new() else { throw StorageError.illegalArgument("libcrypto could not allocate a cipher context") }
        defer { EVP_CIPHER_CTX_free(context) }
        let ready = bytes.withUnsafeBufferPointer { key in
            EVP_CipherInit_ex(context, Self.cipher, nil, key.baseAddress, nonce.bindMemory(to: UInt8.self).baseAddress, encrypting ? 1 : 0)
        }
        guard ready == 1 else { throw StorageError.illegalArgument("libcrypto could not set up AES-256-GCM") }
        return try body(context)
    }

    /// Passes `input` (and `aad` first) through the context; the output goes to `output`.
    private static func update(_ context: OpaquePointer, aad: UnsafeRawBufferPointer, input: UnsafeRawBufferPointer,
                               output: UnsafeMutableRawPointer?) -> Bool {
        precondition(input.count < Int(Int32.max) && aad.count < Int(Int32.max), "one AES-GCM message is under 2 GiB")
        var length: Int32 = 0
        if aad.count > 0 {
            guard EVP_CipherUpdate(context, nil, &length, aad.bindMemory(to: UInt8.self).baseAddress, Int32(aad.count)) == 1 else { return false }
        }
        if input.count > 0 {
            guard EVP_CipherUpdate(context, output?.assumingMemoryBound(to: UInt8.self), &length,
                                   input.bindMemory(to: UInt8.self).baseAddress, Int32(input.count)) == 1,
                  length == Int32(input.count)
            else { return false }
        }
        return true
    }

    /// Ends the message: computes the tag (sealing) or checks it (opening). GCM writes nothing here;
    /// the buffer is for libcrypto's signature.
    private static func final(_ context: OpaquePointer) -> Bool {
        var unused = (UInt64(0), UInt64(0))
        var length: Int32 = 0
        return withUnsafeMutableBytes(of: &unused) { EVP_CipherFinal_ex(context, $0.bindMemory(to: UInt8.self).baseAddress, &length) } == 1
    }

    /// Encrypts `text` in place, authenticating `aad` with it, and writes the 16-byte tag at `tag`.
    func seal(_ text: UnsafeMutableRawBufferPointer, nonce: UnsafeRawBufferPointer, authenticating aad: UnsafeRawBufferPointer,
              tag: UnsafeMutableRawPointer) throws {
        try withContext(encrypting: true, nonce: nonce) { context in
            guard Self.update(context, aad: aad, input: UnsafeRawBufferPointer(text), output: text.baseAddress),
                  Self.final(context),
                  EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(Self.tagSize), tag) == 1
            else { throw StorageError.illegalArgument("libcrypto's AES-256-GCM failed to seal") }
        }
    }

    /// Decrypts `ciphertext` into `destination` (as many bytes) when it and `aad` authenticate
    /// under `tag` (16 bytes). False when they do not, and `destination` then holds none of the plaintext
    /// (libcrypto decrypts before it checks the tag: zeroed).
    func open(_ ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
              authenticating aad: UnsafeRawBufferPointer, into destination: UnsafeMutableRawPointer) -> Bool {
        guard tag.count == Self.tagSize else { return false }
        let authentic = (try? withContext(encrypting: false, nonce: nonce) { context -> Bool in
            // libcrypto's SET_TAG takes a non-const pointer but only reads it.
            return Self.update(context, aad: aad, input: ciphertext, output: destination)
                && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(Self.tagSize), UnsafeMutableRawPointer(mutating: tag.baseAddress)) == 1
                && Self.final(context)
        }) ?? false
        if !authentic, ciphertext.count > 0 { destination.initializeMemory(as: UInt8.self, repeating: 0, count: ciphertext.count) }
        return authentic
    }
}
#endif
