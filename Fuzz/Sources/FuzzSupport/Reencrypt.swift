// Encrypts the records of an encrypted data file whose bodies are plaintext, so that a fuzzer's
// mutations of the plaintext (node structure, references, commit records) reach the engine's
// checks behind the decryption.
//
// Resealing (Reseal.swift) gets a mutated record of an encrypted file past its checksum, but not
// past its AES-GCM tag: every mutation of a record, its header's bytes 8..<16 included, then stops
// at the authentication (`fileCorrupt`). So FuzzOpenStore takes an encrypted input a third time as
// a *plaintext image*: each record's body is read as the plaintext and encrypted here, under the
// record key the fixed fuzz key (`FuzzKey`) gives for the file, then the checksums are resealed.
// `MakeCorpus` writes such images of its encrypted seeds (`encrypted-*-plaintext`, made with
// `decryptRecords`), and checks that encrypting an image gives back the engine's file byte for
// byte: this file and the engine agree on the key derivation, the nonces and the layout.
//
// The layout is the one in Sources/CellarStorage/Encryption/EncryptionHeader.swift and
// RecordCipher.swift:
// - the record key is HKDF-SHA256 of the master key (a raw key's 32 bytes), salt = the file salt
//   (header bytes 184..<216), info = "cellar record key v1" + the store's UUID (bytes 16..<32);
// - a record's body is the ciphertext of its padded body (bytes 16..<length-16), then the 16-byte
//   tag; the nonce is the record's file offset (8 bytes LE) and its write epoch (the 24 bits of
//   bytes 13..<16, as 4 bytes LE); bytes 8..<16 of its header are the associated data.
import Crypto

public enum Reencrypt {
    static let headerSize = 4096
    static let recordHeaderSize = 16
    static let tagSize = 16
    static let encryptedFlag: UInt32 = 2
    static let keyDerivationOffset = 136
    static let fileSaltOffset = 184

    /// The record key of the encrypted `file` under the raw master key `key`; nil when the file is
    /// not flagged encrypted, is too short for its encryption block, or says its key comes from a
    /// passphrase.
    static func recordKey(_ file: UnsafeRawBufferPointer, key: [UInt8]) -> SymmetricKey? {
        guard file.count >= headerSize,
              UInt32(littleEndian: file.loadUnaligned(fromByteOffset: 56, as: UInt32.self)) & encryptedFlag != 0,
              UInt32(littleEndian: file.loadUnaligned(fromByteOffset: keyDerivationOffset, as: UInt32.self)) == 0
        else { return nil }
        let salt = Array(file[fileSaltOffset ..< fileSaltOffset + 32])
        let info = Array("cellar record key v1".utf8) + Array(file[16..<32])
        return HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: key), salt: salt, info: info, outputByteCount: 32)
    }

    static func nonce(offset: Int, header: UnsafeRawBufferPointer) -> AES.GCM.Nonce {
        var bytes = [UInt8](repeating: 0, count: 12)
        for i in 0..<8 { bytes[i] = UInt8(truncatingIfNeeded: UInt64(offset) >> (8 * UInt64(i))) }
        for i in 0..<3 { bytes[8 + i] = header[13 + i] }  // the epoch: bytes 13..<16, its top byte 0
        return try! AES.GCM.Nonce(data: bytes)  // 12 bytes: always a valid nonce
    }

    /// Calls `body` with each record of the log from offset 4096 on that has room for a tag, as far
    /// as the records' length and kind fields chain: its offset and length.
    static func forEachRecord(_ file: UnsafeMutableRawBufferPointer, _ body: (Int, Int) throws -> Void) rethrows {
        var offset = headerSize
        while offset + recordHeaderSize <= file.count {
            let length = Int(UInt32(littleEndian: file.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)))
            guard length >= recordHeaderSize, length % 8 == 0, length <= file.count - offset,
                  (1...3).contains(file[offset + 12]) else { break }
            if length >= recordHeaderSize + tagSize { try body(offset, length) }
            offset += length
        }
    }

    /// Whether the record of `length` bytes at `offset` of `file` authenticates under `recordKey`.
    static func authenticates(_ file: UnsafeMutableRawBufferPointer, offset: Int, length: Int, recordKey: SymmetricKey) -> Bool {
        let header = UnsafeRawBufferPointer(rebasing: file[offset ..< offset + recordHeaderSize])
        guard let box = try? AES.GCM.SealedBox(nonce: nonce(offset: offset, header: header),
                                               ciphertext: UnsafeRawBufferPointer(rebasing: file[offset + recordHeaderSize ..< offset + length - tagSize]),
                                               tag: UnsafeRawBufferPointer(rebasing: file[offset + length - tagSize ..< offset + length]))
        else { return false }
        return (try? AES.GCM.open(box, using: recordKey, authenticating: UnsafeRawBufferPointer(rebasing: header[8..<16]))) != nil
    }

    /// Encrypts in place every record of the encrypted `file` (a plaintext image: record bodies in
    /// the clear, whatever their tags hold) with the record key that `key` gives for it, writing
    /// the tags, then reseals its checksums. Returns false, leaving `file` as it was, when it is
    /// not an encrypted file whose key is raw bytes, has no record to encrypt, or is no image: its
    /// first record authenticates already (ciphertext, whose encryption would only make records of
    /// random bytes, each open of which costs the engine's read-only retries: 20 ms).
    public static func encryptRecords(_ file: inout [UInt8], key: [UInt8]) -> Bool {
        let done = file.withUnsafeMutableBytes { file -> Bool in
            guard let recordKey = recordKey(UnsafeRawBufferPointer(file), key: key) else { return false }
            var first: (offset: Int, length: Int)?
            forEachRecord(file) { offset, length in if first == nil { first = (offset, length) } }
            guard let first, !authenticates(file, offset: first.offset, length: first.length, recordKey: recordKey) else { return false }
            forEachRecord(file) { offset, length in
                let body = offset + recordHeaderSize ..< offset + length - tagSize
                let header = UnsafeRawBufferPointer(rebasing: file[offset ..< offset + recordHeaderSize])
                // A 12-byte nonce and a key of 32 bytes: sealing cannot fail.
                let box = try! AES.GCM.seal(UnsafeRawBufferPointer(rebasing: file[body]), using: recordKey,
                                            nonce: nonce(offset: offset, header: header),
                                            authenticating: UnsafeRawBufferPointer(rebasing: header[8..<16]))
                box.ciphertext.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: file[body]).copyMemory(from: $0) }
                box.tag.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: file[body.upperBound ..< offset + length]).copyMemory(from: $0) }
            }
            return true
        }
        if done { Reseal.reseal(&file) }
        return done
    }

    /// The plaintext image of the encrypted `file`: every record that authenticates under the
    /// record key `key` gives, decrypted in place (its tag left as it is). Nil when `file` is not
    /// an encrypted file whose key is raw bytes; `failed` counts the records that did not
    /// authenticate (left as they are).
    public static func decryptRecords(_ file: [UInt8], key: [UInt8], failed: inout Int) -> [UInt8]? {
        var image = file
        var failures = 0
        let done = image.withUnsafeMutableBytes { file -> Bool in
            guard let recordKey = recordKey(UnsafeRawBufferPointer(file), key: key) else { return false }
            forEachRecord(file) { offset, length in
                let body = offset + recordHeaderSize ..< offset + length - tagSize
                let header = UnsafeRawBufferPointer(rebasing: file[offset ..< offset + recordHeaderSize])
                guard let box = try? AES.GCM.SealedBox(nonce: nonce(offset: offset, header: header),
                                                       ciphertext: UnsafeRawBufferPointer(rebasing: file[body]),
                                                       tag: UnsafeRawBufferPointer(rebasing: file[body.upperBound ..< offset + length])),
                      let plain = try? AES.GCM.open(box, using: recordKey, authenticating: UnsafeRawBufferPointer(rebasing: header[8..<16]))
                else {
                    failures += 1
                    return
                }
                plain.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: file[body]).copyMemory(from: $0) }
            }
            return true
        }
        failed = failures
        return done ? image : nil
    }
}
