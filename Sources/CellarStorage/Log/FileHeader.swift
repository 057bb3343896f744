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
///    128   112  encrypted files only (flag bit 1): see `EncryptionHeader`
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
    static let encodedSize = 256
    /// Flag bit: the file was written by a compaction. Its log holds the copy's commits first,
    /// each flagged `CommitRecord.partialFlag`, and the store's state begins at the first commit
    /// without that flag: a prefix of the file that ends before it is not a store.
    static let compactedFlag: UInt32 = 1
    /// Flag bit: the file's records are encrypted; `encryption` says how to open them.
    static let encryptedFlag: UInt32 = 2

    var uuid: StoreUUID
    var salt: UInt64
    var createdMs: UInt64
    var flags: UInt32 = 0
    /// How the records are encrypted; nil in a plain file. Setting it sets `encryptedFlag`.
    var encryption: EncryptionHeader? {
        didSet { flags = encryption == nil ? flags & ~Self.encryptedFlag : flags | Self.encryptedFlag }
    }

    init(uuid: StoreUUID, salt: UInt64, createdMs: UInt64, flags: UInt32 = 0, encryption: EncryptionHeader? = nil) {
        self.uuid = uuid
        self.salt = salt
        self.createdMs = createdMs
        self.flags = flags & ~Self.encryptedFlag | (encryption == nil ? 0 : Self.encryptedFlag)
        self.encryption = encryption
    }

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
        encryption?.encode(into: buffer)
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
            guard flags & ~(compactedFlag | encryptedFlag) == 0 else {
                throw StorageError.fileCorrupt(offset: 56, reason: "unknown file header flags \(flags)")
            }
        }
        let encryption = flags & encryptedFlag != 0 ? try EncryptionHeader.decode(buffer) : nil
        return FileHeader(
            uuid: StoreUUID(high: UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: 16, as: UInt64.self)),
                            low: UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: 24, as: UInt64.self))),
            salt: buffer.loadLE(UInt64.self, at: 32),
            createdMs: buffer.loadLE(UInt64.self, at: 40),
            flags: flags, encryption: encryption)
    }
}
