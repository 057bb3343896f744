/// The part of an encrypted data file's header that opening needs: how the master key is made
/// from what the user gives (raw bytes, or scrypt over a passphrase), the file's own salt for the
/// record key, and a check that tells a wrong key from a corrupt file. Bytes 128 ..< 256 of the
/// header, written once with the file.
///
/// ```
/// offset  size  field
///    128     4  magic "CENC"
///    132     4  cipher: 1 = AES-256-GCM
///    136     4  key derivation: 0 = the key's bytes, 1 = scrypt over a passphrase
///    140     4  scrypt log2(N)
///    144     4  scrypt r
///    148     4  scrypt p
///    152    32  key-derivation salt (kept by compaction, so that a passphrase goes on working)
///    184    32  file salt: random per data file (a compacted file has a new one)
///    216    16  key check: HMAC-SHA256 under a key derived from the file key, truncated
///    232     8  XXH64 of bytes 128 ..< 232, seed 0
/// ```
/// The master key and the file salt give the file's record key by HKDF-SHA256, with the store's
/// UUID in its info: every data file has its own record key (see `RecordCipher` for the nonces).
struct EncryptionHeader: Equatable {
    static let offset = 128
    static let size = 112
    static let magic: [UInt8] = Array("CENC".utf8)
    static let aes256GCM: UInt32 = 1
    static let rawKey: UInt32 = 0
    static let scrypt: UInt32 = 1
    /// scrypt's cost: N = 2^15, r = 8, p = 1 (32 MiB of memory).
    static let defaultScrypt = (logN: UInt32(15), r: UInt32(8), p: UInt32(1))

    var keyDerivation: UInt32
    var scryptLogN: UInt32
    var scryptR: UInt32
    var scryptP: UInt32
    var derivationSalt: [UInt8]
    var fileSalt: [UInt8]
    var keyCheck: [UInt8]

    /// A header for a new data file encrypted under `master`, with a new file salt; the key
    /// derivation's salt and parameters are `master`'s (a compacted file keeps the store's, so
    /// that its passphrase goes on working).
    static func make(master: MasterKey, uuid: StoreUUID) -> EncryptionHeader {
        var header = EncryptionHeader(
            keyDerivation: master.fromPassphrase ? scrypt : rawKey,
            scryptLogN: master.scryptLogN, scryptR: master.scryptR, scryptP: master.scryptP,
            derivationSalt: master.derivationSalt, fileSalt: randomBytes(32), keyCheck: [])
        header.keyCheck = header.check(master: master.bytes, uuid: uuid)
        return header
    }

    /// The check a key must reproduce: HMAC-SHA256 of the UUID under a key derived (HKDF) from the
    /// master key and the file salt, its first 16 bytes.
    func check(master: [UInt8], uuid: StoreUUID) -> [UInt8] {
        let checkKey = CryptoPrimitives.hkdfSHA256(key: master, salt: fileSalt, info: Array("cellar key check v1".utf8) + uuid.bytes,
                                                   count: 32)
        return Array(CryptoPrimitives.hmacSHA256(key: checkKey, message: uuid.bytes).prefix(16))
    }

    /// The master key `key` gives for this file. Throws `wrongEncryptionKey` when it does not
    /// reproduce the key check.
    func master(from key: EncryptionKey, uuid: StoreUUID) throws -> MasterKey {
        let master = try MasterKey(key, derivationSalt: derivationSalt, logN: scryptLogN, r: scryptR, p: scryptP,
                                   expectPassphrase: keyDerivation == Self.scrypt)
        guard constantTimeEqual(check(master: master.bytes, uuid: uuid), keyCheck) else {
            throw StorageError.wrongEncryptionKey
        }
        return master
    }

    /// The record key of this data file.
    func recordKey(master: [UInt8], uuid: StoreUUID) -> AESGCMKey {
        AESGCMKey(CryptoPrimitives.hkdfSHA256(key: master, salt: fileSalt, info: Array("cellar record key v1".utf8) + uuid.bytes,
                                              count: 32))
    }

    func encode(into buffer: UnsafeMutableRawBufferPointer) {
        let at = Self.offset
        for (i, byte) in Self.magic.enumerated() { buffer[at + i] = byte }
        buffer.storeBytes(of: Self.aes256GCM.littleEndian, toByteOffset: at + 4, as: UInt32.self)
        buffer.storeBytes(of: keyDerivation.littleEndian, toByteOffset: at + 8, as: UInt32.self)
        buffer.storeBytes(of: scryptLogN.littleEndian, toByteOffset: at + 12, as: UInt32.self)
        buffer.storeBytes(of: scryptR.littleEndian, toByteOffset: at + 16, as: UInt32.self)
        buffer.storeBytes(of: scryptP.littleEndian, toByteOffset: at + 20, as: UInt32.self)
        for i in 0..<32 { buffer[at + 24 + i] = derivationSalt[i] }
        for i in 0..<32 { buffer[at + 56 + i] = fileSalt[i] }
        for i in 0..<16 { buffer[at + 88 + i] = keyCheck[i] }
        let sum = Checksum.xxh64(UnsafeRawBufferPointer(rebasing: buffer[at..<(at + 104)]))
        buffer.storeBytes(of: sum.littleEndian, toByteOffset: at + 104, as: UInt64.self)
    }

    static func decode(_ buffer: UnsafeRawBufferPointer) throws -> EncryptionHeader {
        let at = offset
        guard buffer.count >= at + size else {
            throw StorageError.fileCorrupt(offset: UInt64(at), reason: "the header is too short for its encryption block")
        }
        let sum = Checksum.xxh64(UnsafeRawBufferPointer(rebasing: buffer[at..<(at + 104)]))
        guard Array(buffer[at..<(at + 4)]) == magic, sum == buffer.loadLE(UInt64.self, at: at + 104) else {
            throw StorageError.fileCorrupt(offset: UInt64(at), reason: "the header's encryption block fails its check")
        }
        guard buffer.loadLE(UInt32.self, at: at + 4) == aes256GCM else {
            throw StorageError.fileCorrupt(offset: UInt64(at + 4), reason: "unknown cipher \(buffer.loadLE(UInt32.self, at: at + 4))")
        }
        let derivation = buffer.loadLE(UInt32.self, at: at + 8)
        guard derivation == rawKey || derivation == scrypt else {
            throw StorageError.fileCorrupt(offset: UInt64(at + 8), reason: "unknown key derivation \(derivation)")
        }
        return EncryptionHeader(
            keyDerivation: derivation,
            scryptLogN: buffer.loadLE(UInt32.self, at: at + 12), scryptR: buffer.loadLE(UInt32.self, at: at + 16),
            scryptP: buffer.loadLE(UInt32.self, at: at + 20),
            derivationSalt: Array(buffer[(at + 24)..<(at + 56)]), fileSalt: Array(buffer[(at + 56)..<(at + 88)]),
            keyCheck: Array(buffer[(at + 88)..<(at + 104)]))
    }
}

/// The 256-bit master key an `EncryptionKey` gives for a store, with the key-derivation
/// parameters that made it (kept by compaction for the next file).
struct MasterKey: Sendable {
    let bytes: [UInt8]
    /// Made from a passphrase (with scrypt), not given as bytes.
    let fromPassphrase: Bool
    let derivationSalt: [UInt8]
    let scryptLogN: UInt32
    let scryptR: UInt32
    let scryptP: UInt32

    /// The master key of `key` for a new store (a new random key-derivation salt).
    init(newFor key: EncryptionKey) throws {
        let d = EncryptionHeader.defaultScrypt
        try self.init(key, derivationSalt: randomBytes(32), logN: d.logN, r: d.r, p: d.p, expectPassphrase: key.isPassphrase)
    }

    init(_ key: EncryptionKey, derivationSalt: [UInt8], logN: UInt32, r: UInt32, p: UInt32, expectPassphrase: Bool) throws {
        self.derivationSalt = derivationSalt
        scryptLogN = logN
        scryptR = r
        scryptP = p
        fromPassphrase = expectPassphrase
        switch key.material {
        case .master(let master):
            // The master key an open already derived (a compaction's copy, made by the engine).
            guard master.fromPassphrase == expectPassphrase, master.derivationSalt == derivationSalt else {
                throw StorageError.wrongEncryptionKey
            }
            self.bytes = master.bytes
        case .bytes(let bytes):
            // A raw key against a store made from a passphrase (or the reverse) is a wrong key.
            guard !expectPassphrase else { throw StorageError.wrongEncryptionKey }
            self.bytes = bytes
        case .passphrase(let passphrase):
            guard expectPassphrase else { throw StorageError.wrongEncryptionKey }
            guard !passphrase.isEmpty else { throw StorageError.illegalArgument("an empty passphrase is no key") }
            // Bounded so that a corrupt or hostile header cannot ask for unbounded memory or time.
            guard (10...20).contains(logN), (1...32).contains(r), (1...16).contains(p) else {
                throw StorageError.fileCorrupt(offset: UInt64(EncryptionHeader.offset + 12),
                                               reason: "scrypt parameters out of range (log2 N \(logN), r \(r), p \(p))")
            }
            self.bytes = try CryptoPrimitives.scrypt(passphrase: Array(passphrase.utf8), salt: derivationSalt, logN: Int(logN),
                                                     r: Int(r), p: Int(p), count: 32)
        }
    }
}
