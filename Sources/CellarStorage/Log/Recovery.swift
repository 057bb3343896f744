/// What open learns from the log: the newest complete commit and where the next frame goes.
struct RecoveredState {
    var txnId: UInt64 = 0
    var commitOffset: UInt64 = 0
    var catalogRoot: UInt64 = 0
    var liveBytes: UInt64 = 0
    /// Where the next frame starts: just past the newest complete commit.
    var end = UInt64(FileHeader.size)
    /// The file goes on past `end` with something other than zeros (a torn or unfinished frame):
    /// the caller cuts it off. Zeros past `end` (written ahead by the writer) are left in place.
    var hasTail = false
    /// The highest sequence of a valid superblock slot: the next superblock written must be newer.
    var superblockSequence: UInt64 = 0
    /// The newest commit is a step of a compaction's copy (`CommitRecord.partialFlag`).
    var partial = false
}

/// The records a reader's walk verified past the newest commit it found (`end`), not yet followed
/// by a commit: a frame being written (see `Recovery.walk(_:base:fileSize:sealing:pending:)`).
struct PendingRecords {
    struct Record {
        let offset: UInt64
        /// The record's first 8 bytes (its checksum) and next 8 (its length, kind and zeros).
        let checksum: UInt64
        let lengthAndKind: UInt64
    }

    var end: UInt64 = 0
    var records: [Record] = []
}

/// Finds the newest complete commit.
///
/// 1. Of the two superblock slots, the valid one with the higher sequence whose commit record
///    verifies is the starting point; with neither, the start of the log.
/// 2. From there, frames are read forward: each record must verify (checksum seeded with its
///    offset), and a commit record must continue the chain (a higher transaction id, its frame
///    start, the previous commit's offset). Each such commit becomes the newest. Ids go up by one,
///    except in a compacted file: its first commit goes on from the store it copied, and its last
///    catch-up commit jumps to the id of the commit it caught up with (`StorageEngine.compact`).
/// 3. The first record that does not verify ends the log. If a *durable* commit record still
///    verifies beyond that point, the bad bytes lie inside synced data: that is corruption, not a
///    torn write, and open throws `fileCorrupt` with the offset instead of dropping commits.
///    Otherwise the tail is a torn or unfinished frame, which a writable open overwrites with
///    zeros, unless it is all zeros already: the space the writer keeps written ahead of the log.
/// 4. A compacted file (`FileHeader.compacted`) holds the store only from its first commit without
///    `CommitRecord.partialFlag` on: the copy's earlier commits hold some trees and not others.
///    When the newest commit found is partial, or there is none, the file is a prefix of a
///    compacted file (a copy that was interrupted, a disk that lost its end): `fileCorrupt`, never
///    a state no commit had. Only the compaction that is writing the copy opens it that way
///    (`acceptsPartial`).
enum Recovery {
    static func recover(base: UnsafeRawPointer, fileSize: UInt64, header: FileHeader, sealing: RecordSealing,
                        acceptsPartial: Bool = false) throws -> RecoveredState {
        let salt = header.salt
        var state = RecoveredState()
        var candidates: [Superblock] = []
        for slot in FileHeader.superblockOffsets where slot + UInt64(Superblock.size) <= fileSize {
            let bytes = UnsafeRawBufferPointer(start: base + Int(slot), count: Superblock.size)
            if let block = Superblock.decode(bytes, slotOffset: slot, salt: salt) { candidates.append(block) }
        }
        let newestSequence = candidates.map(\.sequence).max() ?? 0
        for block in candidates.sorted(by: { $0.sequence > $1.sequence }) {
            if let (length, kind) = LogRecord.verify(base, offset: block.commitOffset, available: fileSize, salt: salt),
               kind == .commit, block.end == block.commitOffset + UInt64(length),
               let commit = CommitRecord.read(base + Int(block.commitOffset), length: length, offset: block.commitOffset,
                                              sealing: sealing) {
                guard commit.txnId == block.txnId else { continue }
                state = RecoveredState(txnId: commit.txnId, commitOffset: block.commitOffset,
                                       catalogRoot: commit.catalogRoot, liveBytes: commit.liveBytes, end: block.end,
                                       partial: commit.flags & CommitRecord.partialFlag != 0)
                break
            }
        }

        let position = walk(&state, base: base, fileSize: fileSize, sealing: sealing)
        state.superblockSequence = newestSequence
        if !acceptsPartial && (state.partial || (header.compacted && state.commitOffset == 0)) {
            throw StorageError.fileCorrupt(
                offset: position,
                reason: "the log stops inside a compaction's copy, before the commit that completes it (the file was "
                    + "cut short there, or a record there fails its check): no whole state of the store comes before it")
        }
        if state.end < fileSize {
            // Zeros only: the space the writer keeps ahead of the log. Nothing to cut.
            if allZero(base + Int(state.end), count: Int(fileSize - state.end)) { return state }
            if let corrupt = firstDurableCommit(after: state.end, base: base, fileSize: fileSize, sealing: sealing, newerThan: state.txnId) {
                throw StorageError.fileCorrupt(
                    offset: position,
                    reason: "a record of a synced transaction fails its check (a later durable commit at offset \(corrupt) is intact)")
            }
            state.hasTail = true
        }
        return state
    }

    /// Walks forward frame by frame from `state.end` (step 2 above): each record must verify, each
    /// commit record must continue the chain from `state`, and each such commit becomes `state`.
    /// Returns the offset of the first record that does not verify or does not continue the chain.
    /// A read-only engine calls it too, from its newest commit on, to find the commits the writing
    /// process made since (`LogFollower`): a frame still being written never verifies whole, so it
    /// is never taken.
    static func walk(_ state: inout RecoveredState, base: UnsafeRawPointer, fileSize: UInt64, sealing: RecordSealing) -> UInt64 {
        var position = state.end
        while let (length, kind) = LogRecord.verify(base, offset: position, available: fileSize, salt: sealing.salt) {
            if kind == .commit, !take(commitAt: position, length: length, base: base, sealing: sealing, into: &state) { break }
            position += UInt64(length)
        }
        return position
    }

    /// `walk` for a reader that looks again and again while a frame is being written: the records
    /// past the newest commit it verified last time (`pending`, valid for that commit's `end`) are
    /// not hashed again while their headers (checksum, length and kind) are unchanged. A record
    /// whose header is unchanged holds the same bytes (its checksum covers them), or is being
    /// rewritten with the same bytes: the writer writes a record's header before its body. One
    /// whose header changed (an aborted frame overwritten by the next) is verified again, and so
    /// is everything after it. Leaves in `pending` the records verified past the newest commit.
    static func walk(_ state: inout RecoveredState, base: UnsafeRawPointer, fileSize: UInt64, sealing: RecordSealing,
                     pending: inout PendingRecords) -> UInt64 {
        var position = state.end
        if pending.end == state.end {
            var kept = 0
            for record in pending.records {
                guard record.offset == position, position + (record.lengthAndKind & 0xffff_ffff) <= fileSize,
                      (base + Int(position)).loadLE(UInt64.self, at: 0) == record.checksum,
                      (base + Int(position)).loadLE(UInt64.self, at: 8) == record.lengthAndKind else { break }
                position += record.lengthAndKind & 0xffff_ffff
                kept += 1
            }
            pending.records.removeSubrange(kept...)
        } else {
            pending = PendingRecords(end: state.end)
        }
        while let (length, kind) = LogRecord.verify(base, offset: position, available: fileSize, salt: sealing.salt) {
            if kind == .commit {
                guard take(commitAt: position, length: length, base: base, sealing: sealing, into: &state) else { break }
                pending = PendingRecords(end: state.end)
            } else {
                pending.records.append(PendingRecords.Record(
                    offset: position, checksum: (base + Int(position)).loadLE(UInt64.self, at: 0),
                    lengthAndKind: (base + Int(position)).loadLE(UInt64.self, at: 8)))
            }
            position += UInt64(length)
        }
        return position
    }

    /// Takes the verified commit record at `position` as the newest commit when it continues the
    /// chain from `state` (a higher id, its frame starting at `state.end`, the previous commit's
    /// offset, a catalog root before it); false, leaving `state` alone, when it does not. After a
    /// partial commit the id may also stay the same: a compaction that keeps past commits gives
    /// its copy's partial commits and their seal the id of the first commit it keeps.
    private static func take(commitAt position: UInt64, length: Int, base: UnsafeRawPointer, sealing: RecordSealing,
                             into state: inout RecoveredState) -> Bool {
        guard let commit = CommitRecord.read(base + Int(position), length: length, offset: position, sealing: sealing),
              commit.txnId > state.txnId || (state.partial && commit.txnId == state.txnId),
              commit.frameStart == state.end,
              commit.previousCommit == state.commitOffset, commit.catalogRoot < position
        else { return false }
        state.txnId = commit.txnId
        state.commitOffset = position
        state.catalogRoot = commit.catalogRoot
        state.liveBytes = commit.liveBytes
        state.end = position + UInt64(length)
        state.partial = commit.flags & CommitRecord.partialFlag != 0
        return true
    }

    /// Whether `count` bytes at `start` are all zero.
    private static func allZero(_ start: UnsafeRawPointer, count: Int) -> Bool {
        var i = 0
        while i + 8 <= count {
            if start.loadUnaligned(fromByteOffset: i, as: UInt64.self) != 0 { return false }
            i += 8
        }
        while i < count {
            if start.load(fromByteOffset: i, as: UInt8.self) != 0 { return false }
            i += 1
        }
        return true
    }

    /// Looks for a durable commit record past `start` (at any 8-byte boundary) at least two
    /// transactions newer than the last good one: proof that the frame after the last good commit
    /// was synced once (a durable frame is only written after the one before it was synced).
    private static func firstDurableCommit(after start: UInt64, base: UnsafeRawPointer, fileSize: UInt64, sealing: RecordSealing,
                                           newerThan txnId: UInt64) -> UInt64? {
        var offset = (start + 7) & ~7
        let length = CommitRecord.length(sealing)
        while offset + UInt64(length) <= fileSize {
            let record = base + Int(offset)
            // Cheap filter before the checksum: the exact length and kind of a commit record.
            if record.loadLE(UInt32.self, at: 8) == UInt32(length),
               record.load(fromByteOffset: 12, as: UInt8.self) == RecordKind.commit.rawValue,
               let (_, kind) = LogRecord.verify(base, offset: offset, available: fileSize, salt: sealing.salt), kind == .commit,
               let commit = CommitRecord.read(record, length: length, offset: offset, sealing: sealing) {
                if commit.flags & CommitRecord.durableFlag != 0 && commit.txnId > txnId + 1 { return offset }
            }
            offset += 8
        }
        return nil
    }
}
