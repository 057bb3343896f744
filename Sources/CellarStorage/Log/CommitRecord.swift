/// The last record of a frame. Its presence (verified) is what makes a transaction committed.
///
/// ```
/// 16  8  transaction id (each commit is the previous one + 1)
/// 24  8  offset of the catalog tree's root node (0: no trees)
/// 32  8  offset where this frame starts
/// 40  8  offset of the previous commit record (0 for the first)
/// 48  8  live bytes: bytes of records reachable from this commit
/// 56  8  time of commit, ms since 1970
/// 64  4  flags: bit 0 = durable (synced before the next frame was written),
///                bit 1 = partial (a step of a compaction's copy, not a state of the store)
/// 68  4  zero
/// ```
struct CommitRecord: Equatable {
    static let bodySize = 56
    /// The length of a commit record in a plain file (an encrypted one adds the tag: `length(_:)`).
    static let length = LogRecord.paddedLength(body: bodySize)

    /// The length of a commit record sealed with `sealing`.
    static func length(_ sealing: RecordSealing) -> Int { sealing.recordLength(body: bodySize) }
    static let durableFlag: UInt32 = 1
    /// A commit of a compaction's copy before its last one: it holds only part of the store (some
    /// trees copied, others not yet), so recovery walks past it but never stops at it.
    static let partialFlag: UInt32 = 2

    var txnId: UInt64
    var catalogRoot: UInt64
    var frameStart: UInt64
    var previousCommit: UInt64
    var liveBytes: UInt64
    var timeMs: UInt64
    var flags: UInt32

    func write(to record: UnsafeMutableRawPointer, fileOffset: UInt64, sealing: RecordSealing) {
        let body = record + LogRecord.headerSize
        body.storeLE(txnId, at: 0)
        body.storeLE(catalogRoot, at: 8)
        body.storeLE(frameStart, at: 16)
        body.storeLE(previousCommit, at: 24)
        body.storeLE(liveBytes, at: 32)
        body.storeLE(timeMs, at: 40)
        body.storeLE(flags, at: 48)
        body.storeLE(UInt32(0), at: 52)
        LogRecord.seal(record, bodyLength: Self.bodySize, kind: .commit, fileOffset: fileOffset, sealing: sealing)
    }

    /// Reads the commit record of `length` bytes at `record` (file offset `offset`), which
    /// `LogRecord.verify` has accepted; in an encrypted file, decrypted. Nil when it does not
    /// authenticate, or has not the length of a commit record.
    static func read(_ record: UnsafeRawPointer, length: Int, offset: UInt64, sealing: RecordSealing) -> CommitRecord? {
        guard length == Self.length(sealing) else { return nil }
        guard let cipher = sealing.cipher else { return read(body: record + LogRecord.headerSize) }
        return withUnsafeTemporaryAllocation(byteCount: length, alignment: 8) { plain -> CommitRecord? in
            guard cipher.open(record, length: length, fileOffset: offset, into: plain.baseAddress!) else { return nil }
            return read(body: UnsafeRawPointer(plain.baseAddress!))
        }
    }

    private static func read(body: UnsafeRawPointer) -> CommitRecord {
        return CommitRecord(txnId: body.loadLE(UInt64.self, at: 0),
                            catalogRoot: body.loadLE(UInt64.self, at: 8),
                            frameStart: body.loadLE(UInt64.self, at: 16),
                            previousCommit: body.loadLE(UInt64.self, at: 24),
                            liveBytes: body.loadLE(UInt64.self, at: 32),
                            timeMs: body.loadLE(UInt64.self, at: 40),
                            flags: body.loadLE(UInt32.self, at: 48))
    }
}
