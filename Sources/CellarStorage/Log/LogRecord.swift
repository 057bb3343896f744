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
    /// it with zeros up to its length, and seals it with its checksum. The record must have room
    /// for `sealing.recordLength(body:)`. In an encrypted file the record is only prepared here
    /// (header, epoch, padding): the frame stream encrypts and checksums it when it writes the
    /// buffer that holds it (`sealEncrypted`), off the thread that builds the frame.
    static func seal(_ record: UnsafeMutableRawPointer, bodyLength: Int, kind: RecordKind,
                     fileOffset: UInt64, sealing: RecordSealing) {
        let length = sealing.recordLength(body: bodyLength)
        let paddedBody = (bodyLength + 7) & ~7
        let padStart = headerSize + bodyLength
        if paddedBody > bodyLength { (record + padStart).initializeMemory(as: UInt8.self, repeating: 0, count: paddedBody - bodyLength) }
        record.storeLE(UInt32(length), at: 8)
        if sealing.cipher != nil {
            record.storeLE(UInt32(kind.rawValue) | sealing.epoch << 8, at: 12)
            return
        }
        record.storeLE(UInt32(kind.rawValue), at: 12)
        let sum = Checksum.xxh64(UnsafeRawBufferPointer(start: record + 8, count: length - 8), seed: fileOffset ^ sealing.salt)
        record.storeLE(sum, at: 0)
    }

    /// Encrypts and checksums the records `seal` prepared in `count` bytes at `buffer`, which go
    /// to file offset `fileOffset`: each record's padded body in place, its tag after it (see
    /// `RecordCipher`), then its checksum over the ciphertext.
    static func sealEncrypted(_ buffer: UnsafeMutableRawPointer, count: Int, fileOffset: UInt64, sealing: RecordSealing) throws {
        guard let cipher = sealing.cipher else { return }
        var at = 0
        while at < count {
            let record = buffer + at
            let length = Int(record.loadLE(UInt32.self, at: 8))
            precondition(length >= headerSize + RecordCipher.tagSize && at + length <= count, "a frame buffer holds whole records")
            let offset = fileOffset + UInt64(at)
            let epoch = record.loadLE(UInt32.self, at: 12) >> 8
            try cipher.seal(record, paddedBody: length - headerSize - RecordCipher.tagSize, fileOffset: offset, epoch: epoch)
            let sum = Checksum.xxh64(UnsafeRawBufferPointer(start: record + 8, count: length - 8), seed: offset ^ sealing.salt)
            record.storeLE(sum, at: 0)
            at += length
        }
    }

    /// Checks the record that starts at `offset` in a region of `available` readable bytes: bounds,
    /// alignment, kind and checksum. Returns its length and kind, or nil when it does not verify.
    static func verify(_ base: UnsafeRawPointer, offset: UInt64, available: UInt64, salt: UInt64) -> (length: Int, kind: RecordKind)? {
        // No addition with `offset`: it may come from a corrupt superblock or reference.
        guard offset & 7 == 0, offset <= available else { return nil }
        return verify(record: base + Int(offset), available: available - offset, offset: offset, salt: salt)
    }

    /// The length and kind of the record that starts at `offset`, when its header is plausible
    /// (alignment, bounds, kind) — without its checksum: for an encrypted record, whose tag
    /// authenticates the same bytes.
    static func header(_ base: UnsafeRawPointer, offset: UInt64, available: UInt64) -> (length: Int, kind: RecordKind)? {
        guard offset & 7 == 0, offset <= available, UInt64(headerSize) <= available - offset else { return nil }
        let record = base + Int(offset)
        let length = Int(record.loadLE(UInt32.self, at: 8))
        guard length >= headerSize, length & 7 == 0, UInt64(length) <= available - offset,
              let kind = RecordKind(rawValue: record.load(fromByteOffset: 12, as: UInt8.self))
        else { return nil }
        return (length, kind)
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
