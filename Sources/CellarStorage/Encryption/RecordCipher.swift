/// Encrypts and authenticates the records of one data file with AES-256-GCM under the file's
/// record key (see `EncryptionHeader`).
///
/// An encrypted record keeps the plain record's header (checksum, length, kind) and puts the
/// write epoch in its three spare bytes; its body is the ciphertext of the body padded with zeros
/// to 8 bytes, followed by the 16-byte tag:
///
/// ```
/// 0   8  XXH64 of bytes 8..<length, seed = record offset ^ salt (over the ciphertext)
/// 8   4  length of the whole record
/// 12  1  kind
/// 13  3  write epoch (see `EpochSlots`)
/// 16  …  ciphertext of the padded body, then the 16-byte GCM tag
/// ```
/// The nonce is the record's file offset (8 bytes) and the epoch (4): within one file a nonce
/// repeats only if two records are written at the same offset in the same epoch, and the writer
/// moves to a new epoch, durably, before it writes again where an unfinished frame may have
/// written (`LogWriter`). Another file has another record key. Bytes 8 ..< 16 of the header are
/// the associated data, so a record's length, kind and epoch are authenticated with its body; the
/// offset is, through the nonce: a record copied elsewhere does not open.
final class RecordCipher: Sendable {
    static let tagSize = AESGCMKey.tagSize
    /// The highest epoch a record header can carry (24 bits).
    static let maxEpoch: UInt32 = (1 << 24) - 1

    let key: AESGCMKey

    init(key: AESGCMKey) {
        self.key = key
    }

    /// Calls `body` with the nonce: the offset's 8 bytes and the epoch's 4, little-endian (on the
    /// stack).
    private static func withNonce<R>(offset: UInt64, epoch: UInt32, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: (offset.littleEndian, epoch.littleEndian)) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<12])) }
    }

    /// Encrypts in place the `paddedBody` bytes at `record + 16` and writes the tag after them.
    /// The record's bytes 8 ..< 16 (length, kind, epoch) must be written already.
    func seal(_ record: UnsafeMutableRawPointer, paddedBody: Int, fileOffset: UInt64, epoch: UInt32) throws {
        let body = UnsafeMutableRawBufferPointer(start: record + LogRecord.headerSize, count: paddedBody)
        try Self.withNonce(offset: fileOffset, epoch: epoch) { nonce in
            try key.seal(body, nonce: nonce, authenticating: UnsafeRawBufferPointer(start: record + 8, count: 8),
                         tag: record + LogRecord.headerSize + paddedBody)
        }
    }

    /// Decrypts the record of `length` bytes at `record` (file offset `fileOffset`) into
    /// `destination` (`length - 32` bytes: the padded body). False when it does not authenticate
    /// (a wrong key, or bytes changed).
    func open(_ record: UnsafeRawPointer, length: Int, fileOffset: UInt64, into destination: UnsafeMutableRawPointer) -> Bool {
        let paddedBody = length - LogRecord.headerSize - Self.tagSize
        guard paddedBody >= 0 else { return false }
        let epoch = UInt32(record.loadLE(UInt32.self, at: 12) >> 8)
        return Self.withNonce(offset: fileOffset, epoch: epoch) { nonce in
            key.open(UnsafeRawBufferPointer(start: record + LogRecord.headerSize, count: paddedBody),
                     tag: UnsafeRawBufferPointer(start: record + LogRecord.headerSize + paddedBody, count: Self.tagSize),
                     nonce: nonce, authenticating: UnsafeRawBufferPointer(start: record + 8, count: 8), into: destination)
        }
    }
}

/// How the records of one data file are sealed: the checksum salt, and the cipher and write epoch
/// when the file is encrypted. A value: the writer hands a copy to each frame it writes.
struct RecordSealing {
    let salt: UInt64
    let cipher: RecordCipher?
    var epoch: UInt32 = 0

    init(salt: UInt64, cipher: RecordCipher? = nil, epoch: UInt32 = 0) {
        self.salt = salt
        self.cipher = cipher
        self.epoch = epoch
    }

    /// Bytes a record of this file takes beyond its padded body: the header, and the tag when
    /// encrypted.
    var overhead: Int { LogRecord.headerSize + (cipher == nil ? 0 : RecordCipher.tagSize) }

    /// The length of a record holding `body` bytes.
    @inline(__always)
    func recordLength(body: Int) -> Int { overhead + ((body + 7) & ~7) }
}
