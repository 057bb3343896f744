/// A record in the log. Everything after the file header is a sequence of records, each 8-byte
/// aligned and self-checked:
///
/// ```
/// 0   8  XXH64 of bytes 8..<length, seed = record offset ^ salt
/// 8   4  length of the whole record including this header, a multiple of 8
/// 12  1  kind (1 node, 2 value, 3 commit)
/// 13  3  zero; in an encrypted file, the write epoch (see `RecordCipher`)
/// 16  …  body
/// ```
/// One write transaction appends one *frame*: its node and value records followed by one commit
/// record. A frame without its commit record is not part of the store.
enum RecordKind: UInt8 {
    case node = 1
    case value = 2
    case commit = 3
}

enum LogRecord {
    static let headerSize = 16
    /// Records are at most 2 GiB (their length field is 32 bits; we keep the top bit free).
    static let maxLength = Int(Int32.max) & ~7

    @inline(__always)
    static func paddedLength(body: Int) -> Int { (headerSize + body + 7) & ~7 }

    /// Writes the header of a record whose body has already been written at `record + 16`, padding
    /// it with zeros up to its length, encrypts it when `sealing` says so (see `RecordCipher`), and
    /// seals it with its checksum. The record must have room for `sealing.recordLength(body:)`.
    static func seal(_ record: UnsafeMutableRawPointer, bodyLength: Int, kind: RecordKind,
                     fileOffset: UInt64, sealing: RecordSealing) throws {
        let length = sealing.recordLength(body: bodyLength)
        let paddedBody = (bodyLength + 7) & ~7
        let padStart = headerSize + bodyLength
        if paddedBody > bodyLength { (record + padStart).initializeMemory(as: UInt8.self, repeating: 0, count: paddedBody - bodyLength) }
        record.storeLE(UInt32(length), at: 8)
        if let cipher = sealing.cipher {
            record.storeLE(UInt32(kind.rawValue) | sealing.epoch << 8, at: 12)
            try cipher.seal(record, paddedBody: paddedBody, fileOffset: fileOffset, epoch: sealing.epoch)
        } else {
            record.storeLE(UInt32(kind.rawValue), at: 12)
        }
        let sum = Checksum.xxh64(UnsafeRawBufferPointer(start: record + 8, count: length - 8), seed: fileOffset ^ sealing.salt)
        record.storeLE(sum, at: 0)
    }

    /// Checks the record that starts at `offset` in a region of `available` readable bytes: bounds,
    /// alignment, kind and checksum. Returns its length and kind, or nil when it does not verify.
    static func verify(_ base: UnsafeRawPointer, offset: UInt64, available: UInt64, salt: UInt64) -> (length: Int, kind: RecordKind)? {
        // No addition with `offset`: it may come from a corrupt superblock or reference.
        guard offset & 7 == 0, offset <= available else { return nil }
        return verify(record: base + Int(offset), available: available - offset, offset: offset, salt: salt)
    }

    /// Checks the record at `record`, which lies at file offset `offset`, with `available` bytes
    /// readable from `record` on.
    static func verify(record: UnsafeRawPointer, available: UInt64, offset: UInt64, salt: UInt64) -> (length: Int, kind: RecordKind)? {
        guard offset & 7 == 0, UInt64(headerSize) <= available else { return nil }
        let length = Int(record.loadLE(UInt32.self, at: 8))
        guard length >= headerSize, length & 7 == 0, UInt64(length) <= available,
              let kind = RecordKind(rawValue: record.load(fromByteOffset: 12, as: UInt8.self))
        else { return nil }
        let sum = Checksum.xxh64(UnsafeRawBufferPointer(start: record + 8, count: length - 8), seed: offset ^ salt)
        guard sum == record.loadLE(UInt64.self, at: 0) else { return nil }
        return (length, kind)
    }
}
