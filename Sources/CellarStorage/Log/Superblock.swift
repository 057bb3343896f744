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

    /// The highest sequence of a valid slot in `file` (0 when neither is valid): what a writer
    /// that shares the file with other processes reads before it writes a slot.
    static func newestSequence(in file: any StorageFile, salt: UInt64) -> UInt64 {
        var newest: UInt64 = 0
        var bytes = [UInt8](repeating: 0, count: size)
        for slot in FileHeader.superblockOffsets {
            guard (try? bytes.withUnsafeMutableBytes({ try file.read(into: $0, at: slot) })) == size,
                  let block = bytes.withUnsafeBytes({ decode($0, slotOffset: slot, salt: salt) }) else { continue }
            newest = max(newest, block.sequence)
        }
        return newest
    }
}
