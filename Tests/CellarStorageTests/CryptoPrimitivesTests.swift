@testable import CellarStorage
import CellarTestSupport
import Testing

/// The cryptography behind encryption at rest, held to published known answers, so that whichever
/// backend a build compiled (libcrypto on Linux, swift-crypto elsewhere, or with
/// `CELLAR_CRYPTO=swift-crypto`) computes the same functions, and a store written under one opens
/// under the other.
@Suite("Cryptography primitives")
struct CryptoPrimitivesTests {
    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0 ..< $0 + 2], as: UTF8.self), radix: 16)! }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    @Test("HMAC-SHA256 gives RFC 4231's answers (test cases 1, 2 and 6: a short key, a text key, a key longer than a block)")
    func hmac() {
        #expect(Self.hex(CryptoPrimitives.hmacSHA256(key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8)))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(Self.hex(CryptoPrimitives.hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(Self.hex(CryptoPrimitives.hmacSHA256(key: [UInt8](repeating: 0xaa, count: 131),
                                                     message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test("HKDF-SHA256 gives RFC 5869's answers (test cases 1 and 3: with salt and info, and with neither)")
    func hkdf() {
        let first = CryptoPrimitives.hkdfSHA256(key: [UInt8](repeating: 0x0b, count: 22), salt: Self.bytes("000102030405060708090a0b0c"),
                                                info: Self.bytes("f0f1f2f3f4f5f6f7f8f9"), count: 42)
        #expect(Self.hex(first) == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
        let third = CryptoPrimitives.hkdfSHA256(key: [UInt8](repeating: 0x0b, count: 22), salt: [], info: [], count: 42)
        #expect(Self.hex(third) == "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")
    }

    @Test("scrypt gives RFC 7914's answers (N = 16 and N = 1024, p = 16)")
    func scrypt() throws {
        #expect(Self.hex(try CryptoPrimitives.scrypt(passphrase: [], salt: [], logN: 4, r: 1, p: 1, count: 64))
                == "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906")
        #expect(Self.hex(try CryptoPrimitives.scrypt(passphrase: Array("password".utf8), salt: Array("NaCl".utf8), logN: 10, r: 8, p: 16,
                                                     count: 64))
                == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640")
    }

    /// Test cases 13, 14 and 16 of the GCM specification (McGrew and Viega): an empty message, one
    /// block of zeros, and a message of 60 bytes with 20 bytes of associated data.
    static let gcmCases: [(key: String, nonce: String, aad: String, plain: String, cipher: String, tag: String)] = [
        (String(repeating: "00", count: 32), String(repeating: "00", count: 12), "", "", "", "530f8afbc74536b9a963b4f1c4cb738b"),
        (String(repeating: "00", count: 32), String(repeating: "00", count: 12), "", String(repeating: "00", count: 16),
         "cea7403d4d606b6e074ec5d3baf39d18", "d0d1c8a799996bf0265b98b5d48ab919"),
        ("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
         "feedfacedeadbeeffeedfacedeadbeefabaddad2",
         "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
         "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
         "76fc6ece0f4e1768cddf8853bb2d551b"),
    ]

    @Test("AES-256-GCM seals to the GCM specification's answers and opens them", arguments: 0..<3)
    func gcm(index: Int) throws {
        let c = Self.gcmCases[index]
        let key = AESGCMKey(Self.bytes(c.key))
        let nonce = Self.bytes(c.nonce), aad = Self.bytes(c.aad)
        var text = Self.bytes(c.plain)
        var tag = [UInt8](repeating: 0, count: AESGCMKey.tagSize)
        try text.withUnsafeMutableBytes { text in
            try nonce.withUnsafeBytes { nonce in
                try aad.withUnsafeBytes { aad in try tag.withUnsafeMutableBytes { try key.seal(text, nonce: nonce, authenticating: aad, tag: $0.baseAddress!) } }
            }
        }
        #expect(Self.hex(text) == c.cipher)
        #expect(Self.hex(tag) == c.tag)
        #expect(Self.open(key, text, tag: tag, nonce: nonce, aad: aad) == Self.bytes(c.plain))
    }

    /// The plaintext when `cipher` opens under `key`, nil when it does not; then the destination
    /// must hold none of the plaintext.
    static func open(_ key: AESGCMKey, _ cipher: [UInt8], tag: [UInt8], nonce: [UInt8], aad: [UInt8]) -> [UInt8]? {
        var plain = [UInt8](repeating: 0, count: max(cipher.count, 1))
        let authentic = cipher.withUnsafeBytes { cipher in
            tag.withUnsafeBytes { tag in
                nonce.withUnsafeBytes { nonce in
                    aad.withUnsafeBytes { aad in
                        plain.withUnsafeMutableBytes { key.open(cipher, tag: tag, nonce: nonce, authenticating: aad, into: $0.baseAddress!) }
                    }
                }
            }
        }
        return authentic ? Array(plain.prefix(cipher.count)) : nil
    }

    @Test("AES-256-GCM refuses a changed byte of the ciphertext, the tag, the nonce or the associated data, and a wrong key, and leaves no plaintext behind")
    func gcmRefuses() {
        let c = Self.gcmCases[2]
        let key = AESGCMKey(Self.bytes(c.key))
        let cipher = Self.bytes(c.cipher), tag = Self.bytes(c.tag), nonce = Self.bytes(c.nonce), aad = Self.bytes(c.aad)
        let plain = Self.bytes(c.plain)
        #expect(Self.open(key, cipher, tag: tag, nonce: nonce, aad: aad) == plain)
        func flipped(_ bytes: [UInt8], _ at: Int) -> [UInt8] {
            var bytes = bytes
            bytes[at] ^= 0x01
            return bytes
        }
        for at in [0, 17, cipher.count - 1] { #expect(Self.open(key, flipped(cipher, at), tag: tag, nonce: nonce, aad: aad) == nil) }
        for at in [0, 15] { #expect(Self.open(key, cipher, tag: flipped(tag, at), nonce: nonce, aad: aad) == nil) }
        #expect(Self.open(key, cipher, tag: tag, nonce: flipped(nonce, 11), aad: aad) == nil)
        #expect(Self.open(key, cipher, tag: tag, nonce: nonce, aad: flipped(aad, 3)) == nil)
        #expect(Self.open(key, cipher, tag: tag, nonce: nonce, aad: []) == nil)
        #expect(Self.open(AESGCMKey(flipped(Self.bytes(c.key), 31)), cipher, tag: tag, nonce: nonce, aad: aad) == nil)
        #expect(Self.open(key, cipher, tag: Array(tag.prefix(12)), nonce: nonce, aad: aad) == nil)

        // A refused message leaves nothing of its plaintext in the destination.
        var destination = [UInt8](repeating: 0xee, count: cipher.count)
        let authentic = destination.withUnsafeMutableBytes { destination in
            flipped(tag, 0).withUnsafeBytes { tag in
                cipher.withUnsafeBytes { cipher in
                    nonce.withUnsafeBytes { nonce in
                        aad.withUnsafeBytes { key.open(cipher, tag: tag, nonce: nonce, authenticating: $0, into: destination.baseAddress!) }
                    }
                }
            }
        }
        #expect(!authentic)
        #expect(destination != plain)
        #expect(!(0 ... destination.count - 8).contains { Array(destination[$0 ..< $0 + 8]) == Array(plain[$0 ..< $0 + 8]) })
    }

    /// An encrypted store written by the swift-crypto backend (by the fuzz corpus's generator,
    /// under the key 0, 1, …, 31: five commits in two opens, two trees), opened by whichever
    /// backend this build has: key derivation, key check, nonces and tags agree across backends.
    @Test("a store encrypted by the swift-crypto backend opens and reads under this build's, and refuses another key")
    func storeFromTheOtherBackend() throws {
        let directory = TestDirectory("crypto-fixture")
        defer { directory.remove() }
        TestDirectory.write(TestDirectory.read(FuzzRegressionTests.fixtures + "/encrypted-commits.cellar"),
                            to: directory.sub(StorageEngine.dataFileName))
        let other = try EncryptionKey(bytes: (0..<32).map { UInt8(255 - $0) })
        #expect(throws: StorageError.wrongEncryptionKey) {
            try StorageEngine(directory: directory.path, options: StorageOptions(readOnly: true, encryptionKey: other)).close()
        }
        let engine = try StorageEngine(directory: directory.path,
                                       options: StorageOptions(readOnly: true, encryptionKey: try EncryptionKey(bytes: (0..<32).map { UInt8($0) })))
        defer { engine.close() }
        let marker = Array("PLAINTEXT-MARKER: must not be in an encrypted file".utf8)
        let (items, log, markerValue) = try engine.read { txn -> (Int, Int, [UInt8]?) in
            var counts: [Int] = []
            for name in ["items", "log"] {
                var count = 0
                try txn.cursor(try #require(try txn.tree(name))).scan(reverse: false) { _, _ in count += 1; return true }
                counts.append(count)
            }
            return (counts[0], counts[1], try txn.get(try #require(try txn.tree("items")), key: marker))
        }
        // items: 40, less the 8 removed, plus the marker and the empty key, plus 20 more; log: 12,
        // less 6 removed, plus one.
        #expect(items == 54)
        #expect(log == 7)
        #expect(markerValue == marker + marker)
    }
}
