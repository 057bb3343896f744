// Recomputes the checksums of a data file, so that a fuzzer's mutations reach the code behind them.
//
// Every part of a data file is checksummed (XXH64): the file header, each superblock slot and
// each log record, seeded with its offset and the store's salt; in an encrypted file also the
// header's encryption block and its two write-epoch slots. A random mutation of a record
// therefore almost always just fails its checksum, and the engine stops there: the node
// validation, the recovery chain checks and the tree walks would never see malformed input.
// FuzzOpenStore runs each input twice: as it is (the checksum paths), then resealed by this file.
//
// The layout is the one in Sources/CellarStorage/Log/FileHeader.swift and LogRecord.swift, and for
// encrypted files Encryption/EncryptionHeader.swift, EpochSlots.swift and RecordCipher.swift (see
// also docs/format.md). An encrypted record's checksum covers its bytes 8..<length like a plain
// one's (the ciphertext and the GCM tag), so resealing gets a mutated record past its checksum; it
// then fails its authentication, which must be reported as `fileCorrupt`. `MakeCorpus` checks that resealing an intact store changes nothing, which
// proves that this XXH64 and the engine's agree.

/// XXH64 (the 64-bit xxHash), written from its specification.
public enum XXH64 {
    static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    @inline(__always)
    static func rotateLeft(_ value: UInt64, by bits: UInt64) -> UInt64 {
        (value << bits) | (value >> (64 - bits))
    }

    @inline(__always)
    static func mix(_ accumulator: UInt64, _ lane: UInt64) -> UInt64 {
        rotateLeft(accumulator &+ lane &* prime2, by: 31) &* prime1
    }

    @inline(__always)
    static func word64(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self))
    }

    /// The hash of `bytes` with `seed`.
    public static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
        let length = bytes.count
        var offset = 0
        var acc: UInt64
        if length >= 32 {
            var lanes = (seed &+ prime1 &+ prime2, seed &+ prime2, seed, seed &- prime1)
            while length - offset >= 32 {
                lanes.0 = mix(lanes.0, word64(bytes, offset))
                lanes.1 = mix(lanes.1, word64(bytes, offset + 8))
                lanes.2 = mix(lanes.2, word64(bytes, offset + 16))
                lanes.3 = mix(lanes.3, word64(bytes, offset + 24))
                offset += 32
            }
            acc = rotateLeft(lanes.0, by: 1) &+ rotateLeft(lanes.1, by: 7)
                &+ rotateLeft(lanes.2, by: 12) &+ rotateLeft(lanes.3, by: 18)
            for lane in [lanes.0, lanes.1, lanes.2, lanes.3] {
                acc = (acc ^ mix(0, lane)) &* prime1 &+ prime4
            }
        } else {
            acc = seed &+ prime5
        }
        acc &+= UInt64(length)
        while length - offset >= 8 {
            acc = rotateLeft(acc ^ mix(0, word64(bytes, offset)), by: 27) &* prime1 &+ prime4
            offset += 8
        }
        if length - offset >= 4 {
            let word = UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            acc = rotateLeft(acc ^ (word &* prime1), by: 23) &* prime2 &+ prime3
            offset += 4
        }
        while offset < length {
            acc = rotateLeft(acc ^ (UInt64(bytes[offset]) &* prime5), by: 11) &* prime1
            offset += 1
        }
        acc ^= acc >> 33
        acc &*= prime2
        acc ^= acc >> 29
        acc &*= prime3
        acc ^= acc >> 32
        return acc
    }
}

/// Rewrites the checksums of a data file in place.
public enum Reseal {
    static let headerSize = 4096
    static let superblockSlots = [512, 1024]
    static let superblockSize = 64
    static let recordHeaderSize = 16
    /// Flag bit 1 of the header's flags (offset 56): the file is encrypted.
    static let encryptedFlag: UInt32 = 2
    /// An encrypted file's encryption block: bytes 128..<232 checksummed (seed 0) at 232.
    static let encryptionBlock = 128..<232
    /// An encrypted file's write-epoch slots, checksummed like the superblock slots.
    static let epochSlots = [1536, 2048]
    static let epochSlotSize = 64

    /// Makes every checksum of `file` match its bytes: the file header's (bytes 0..<48, seed 0,
    /// stored at 48), its flags' (bytes 0..<64, seed 0, stored at 64, unless 56..<72 are all zero
    /// as in a file from before the flags), each superblock slot that is not all zero (bytes 8..<64, seed slot offset ^
    /// salt, stored at 0), and each record of the log from offset 4096 on, as far as the records'
    /// length and kind fields chain (bytes 8..<length, seed record offset ^ salt, stored at 0; the
    /// kind is byte 12, bytes 13..<16 are an encrypted record's write epoch). When the flags say
    /// encrypted (bit 1), also the encryption block (bytes 128..<232, seed 0, stored at 232) and
    /// each write-epoch slot that is not all zero (at 1536 and 2048, as a superblock slot).
    /// Returns whether anything changed.
    @discardableResult
    public static func reseal(_ file: inout [UInt8]) -> Bool {
        file.withUnsafeMutableBytes { reseal($0) }
    }

    static func reseal(_ file: UnsafeMutableRawBufferPointer) -> Bool {
        var changed = false
        func seal(_ range: Range<Int>, seed: UInt64, at offset: Int) {
            let sum = XXH64.hash(UnsafeRawBufferPointer(rebasing: file[range]), seed: seed)
            if load(file, offset) != sum {
                file.storeBytes(of: sum.littleEndian, toByteOffset: offset, as: UInt64.self)
                changed = true
            }
        }
        guard file.count >= 56 else { return false }
        seal(0..<48, seed: 0, at: 48)
        if file.count >= 72, file[56..<72].contains(where: { $0 != 0 }) { seal(0..<64, seed: 0, at: 64) }
        let salt = load(file, 32)
        for slot in superblockSlots where slot + superblockSize <= file.count {
            if file[slot + 8 ..< slot + superblockSize].contains(where: { $0 != 0 }) {
                seal(slot + 8 ..< slot + superblockSize, seed: UInt64(slot) ^ salt, at: slot)
            }
        }
        let flags = file.count >= 60 ? UInt32(littleEndian: file.loadUnaligned(fromByteOffset: 56, as: UInt32.self)) : 0
        if flags & encryptedFlag != 0 {
            if encryptionBlock.upperBound + 8 <= file.count { seal(encryptionBlock, seed: 0, at: encryptionBlock.upperBound) }
            for slot in epochSlots where slot + epochSlotSize <= file.count {
                if file[slot + 8 ..< slot + epochSlotSize].contains(where: { $0 != 0 }) {
                    seal(slot + 8 ..< slot + epochSlotSize, seed: UInt64(slot) ^ salt, at: slot)
                }
            }
        }
        var offset = headerSize
        while offset + recordHeaderSize <= file.count {
            let length = Int(UInt32(littleEndian: file.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)))
            let kind = file[offset + 12]
            guard length >= recordHeaderSize, length % 8 == 0, length <= file.count - offset,
                  (1...3).contains(kind) else { break }
            seal(offset + 8 ..< offset + length, seed: UInt64(offset) ^ salt, at: offset)
            offset += length
        }
        return changed
    }

    static func load(_ file: UnsafeMutableRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: file.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}
