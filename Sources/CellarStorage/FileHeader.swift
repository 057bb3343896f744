/// The first 4 KiB of the data file: the file header and two superblock slots.
///
/// ```
/// offset  size  field
///      0     8  magic "CELLARDB"
///      8     4  format version (1)
///     12     4  header size (4096): where the log starts
///     16    16  store UUID
///     32     8  salt: random, mixed into every record checksum seed
///     40     8  creation time, ms since 1970
///     48     8  XXH64 of bytes 0..<48, seed 0
///     56     4  flags: bit 0 = a compacted file (see `compacted`)
///     60     4  zero
///     64     8  XXH64 of bytes 0..<64, seed 0 (all of 56..<72 zero: a file from before the flags)
///    512    64  superblock slot 0
///   1024    64  superblock slot 1
/// ```
/// All integers little-endian. See docs/format.md.
struct FileHeader: Equatable {
    static let magic: [UInt8] = Array("CELLARDB".utf8)
    static let formatVersion: UInt32 = 1
    static let size = 4096
    static let superblockOffsets: [UInt64] = [512, 1024]

    /// Bytes of the header that `decode` reads.
    static let encodedSize = 72
    /// Flag bit: the file was written by a compaction. Its log holds the copy's commits first,
    /// each flagged `CommitRecord.partialFlag`, and the store's state begins at the first commit
    /// without that flag: a prefix of the file that ends before it is not a store.
    static let compactedFlag: UInt32 = 1

    var uuid: StoreUUID
    var salt: UInt64
    var createdMs: UInt64
    var flags: UInt32 = 0

    /// Whether the file was written by a compaction (`compactedFlag`).
    var compacted: Bool { flags & Self.compactedFlag != 0 }

    func encode(into buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count >= Self.encodedSize)
        for (i, byte) in Self.magic.enumerated() { buffer[i] = byte }
        buffer.storeBytes(of: Self.formatVersion.littleEndian, toByteOffset: 8, as: UInt32.self)
        buffer.storeBytes(of: UInt32(Self.size).littleEndian, toByteOffset: 12, as: UInt32.self)
        buffer.storeBytes(of: uuid.high.bigEndian, toByteOffset: 16, as: UInt64.self)
        buffer.storeBytes(of: uuid.low.bigEndian, toByteOffset: 24, as: UInt64.self)
        buffer.storeBytes(of: salt.littleEndian, toByteOffset: 32, as: UInt64.self)
        buffer.storeBytes(of: createdMs.littleEndian, toByteOffset: 40, as: UInt64.self)
        let sum = Checksum.xxh64(UnsafeRawBufferPointer(rebasing: buffer[0..<48]))
        buffer.storeBytes(of: sum.littleEndian, toByteOffset: 48, as: UInt64.self)
        buffer.storeBytes(of: flags.littleEndian, toByteOffset: 56, as: UInt32.self)
        buffer.storeBytes(of: UInt32(0), toByteOffset: 60, as: UInt32.self)
        let extended = Checksum.xxh64(UnsafeRawBufferPointer(rebasing: buffer[0..<64]))
        buffer.storeBytes(of: extended.littleEndian, toByteOffset: 64, as: UInt64.self)
    }

    static func decode(_ buffer: UnsafeRawBufferPointer) throws -> FileHeader {
        guard buffer.count >= 56 else {
            throw StorageError.fileCorrupt(offset: 0, reason: "the file is shorter than its header")
        }
        guard Array(buffer[0..<8]) == magic else {
            throw StorageError.fileCorrupt(offset: 0, reason: "no Cellar magic: this is not a Cellar data file")
        }
        let sum = Checksum.xxh64(UnsafeRawBufferPointer(rebasing: buffer[0..<48]))
        guard sum == buffer.loadLE(UInt64.self, at: 48) else {
            throw StorageError.fileCorrupt(offset: 0, reason: "file header checksum mismatch")
        }
        let version = buffer.loadLE(UInt32.self, at: 8)
        guard version == formatVersion else { throw StorageError.unsupportedFormat(version: version) }
        guard buffer.loadLE(UInt32.self, at: 12) == UInt32(size) else {
            throw StorageError.fileCorrupt(offset: 12, reason: "unexpected header size")
        }
        // The flags and their checksum. A file written before they existed has zeros there (the
        // header's rest was always zero), which reads as no flags; anything else must verify.
        var flags: UInt32 = 0
        if buffer.count >= encodedSize,
           buffer.loadLE(UInt64.self, at: 56) != 0 || buffer.loadLE(UInt64.self, at: 64) != 0 {
            let extended = Checksum.xxh64(UnsafeRawBufferPointer(rebasing: buffer[0..<64]))
            guard extended == buffer.loadLE(UInt64.self, at: 64) else {
                throw StorageError.fileCorrupt(offset: 56, reason: "file header flags checksum mismatch")
            }
            flags = buffer.loadLE(UInt32.self, at: 56)
            guard flags & ~compactedFlag == 0 else {
                throw StorageError.fileCorrupt(offset: 56, reason: "unknown file header flags \(flags)")
            }
        }
        return FileHeader(
            uuid: StoreUUID(high: UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: 16, as: UInt64.self)),
                            low: UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: 24, as: UInt64.self))),
            salt: buffer.loadLE(UInt64.self, at: 32),
            createdMs: buffer.loadLE(UInt64.self, at: 40),
            flags: flags)
    }
}

/// A superblock slot: names a commit known to be complete so that open can start there instead of
/// reading the whole log. Two slots are written alternately; each has its own checksum, so a torn
/// write of one leaves the other.
///
/// ```
/// 0  8  XXH64 of bytes 8..<64, seed = slot offset ^ salt
/// 8  8  sequence number (the higher valid slot wins)
/// 16 8  offset of the commit record
/// 24 8  transaction id of that commit
/// 32 8  end of that commit's frame (where the next frame starts)
/// ```
struct Superblock: Equatable {
    static let size = 64
    var sequence: UInt64
    var commitOffset: UInt64
    var txnId: UInt64
    var end: UInt64

    func encode(slotOffset: UInt64, salt: UInt64) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Self.size)
        bytes.withUnsafeMutableBytes { buffer in
            buffer.storeBytes(of: sequence.littleEndian, toByteOffset: 8, as: UInt64.self)
            buffer.storeBytes(of: commitOffset.littleEndian, toByteOffset: 16, as: UInt64.self)
            buffer.storeBytes(of: txnId.littleEndian, toByteOffset: 24, as: UInt64.self)
            buffer.storeBytes(of: end.littleEndian, toByteOffset: 32, as: UInt64.self)
            let sum = Checksum.xxh64(UnsafeRawBufferPointer(rebasing: buffer[8..<Self.size]), seed: slotOffset ^ salt)
            buffer.storeBytes(of: sum.littleEndian, toByteOffset: 0, as: UInt64.self)
        }
        return bytes
    }

    /// The slot's content, or nil when its checksum fails (never written, torn or corrupt).
    static func decode(_ buffer: UnsafeRawBufferPointer, slotOffset: UInt64, salt: UInt64) -> Superblock? {
        guard buffer.count >= size else { return nil }
        let sum = Checksum.xxh64(UnsafeRawBufferPointer(rebasing: buffer[8..<size]), seed: slotOffset ^ salt)
        guard sum == buffer.loadLE(UInt64.self, at: 0) else { return nil }
        return Superblock(sequence: buffer.loadLE(UInt64.self, at: 8),
                          commitOffset: buffer.loadLE(UInt64.self, at: 16),
                          txnId: buffer.loadLE(UInt64.self, at: 24),
                          end: buffer.loadLE(UInt64.self, at: 32))
    }
}

extension UnsafeRawBufferPointer {
    /// A little-endian integer at `offset`; the caller has checked the bounds.
    @inline(__always)
    func loadLE<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

extension UnsafeRawPointer {
    @inline(__always)
    func loadLE<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

extension UnsafeMutableRawPointer {
    @inline(__always)
    func loadLE<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    @inline(__always)
    func storeLE<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
    }
}
