/// The write epoch of an encrypted data file, kept in two slots of the header, each in its own
/// 512-byte sector and written alternately, like the superblocks:
///
/// ```
/// 0  8  XXH64 of bytes 8..<64, seed = slot offset ^ salt
/// 8  4  epoch
/// ```
/// The epoch is the higher of the valid slots. Every record an encrypted file holds carries the
/// epoch it was written in, which is part of its nonce (`RecordCipher`). The writer moves to the
/// next epoch, synced before any record uses it, when it opens the file and whenever it is about
/// to write where an unfinished frame may already have written (after an aborted transaction that
/// spilled, a failed commit): so no offset is written twice in one epoch, and no nonce repeats.
enum EpochSlots {
    static let offsets: [UInt64] = [1536, 2048]
    static let size = 64

    /// The file's epoch: the higher valid slot; 0 when neither is valid (a new file).
    static func read(_ file: any StorageFile, salt: UInt64) throws -> UInt32 {
        var epoch: UInt32 = 0
        for slot in offsets {
            var bytes = [UInt8](repeating: 0, count: size)
            guard try bytes.withUnsafeMutableBytes({ try file.read(into: $0, at: slot) }) == size else { continue }
            if let value = decode(bytes, slot: slot, salt: salt) { epoch = max(epoch, value) }
        }
        return epoch
    }

    /// Writes `epoch` into its slot (the one the previous epoch did not use) and syncs.
    static func write(_ epoch: UInt32, to file: any StorageFile, salt: UInt64) throws {
        let slot = offsets[Int(epoch % 2)]
        try encode(epoch, slot: slot, salt: salt).withUnsafeBytes { try file.write($0, at: slot) }
        try file.sync()
    }

    static func encode(_ epoch: UInt32, slot: UInt64, salt: UInt64) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size)
        bytes.withUnsafeMutableBytes { buffer in
            buffer.storeBytes(of: epoch.littleEndian, toByteOffset: 8, as: UInt32.self)
            let sum = Checksum.xxh64(UnsafeRawBufferPointer(rebasing: buffer[8..<size]), seed: slot ^ salt)
            buffer.storeBytes(of: sum.littleEndian, toByteOffset: 0, as: UInt64.self)
        }
        return bytes
    }

    static func decode(_ bytes: [UInt8], slot: UInt64, salt: UInt64) -> UInt32? {
        bytes.withUnsafeBytes { buffer in
            let sum = Checksum.xxh64(UnsafeRawBufferPointer(rebasing: buffer[8..<size]), seed: slot ^ salt)
            guard sum == buffer.loadLE(UInt64.self, at: 0), sum != 0 || buffer.loadLE(UInt64.self, at: 8) != 0 else { return nil }
            return buffer.loadLE(UInt32.self, at: 8)
        }
    }
}
