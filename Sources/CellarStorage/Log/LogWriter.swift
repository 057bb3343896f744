#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The writing end of the log (the engine's pager): appends each commit's frame to the data file,
/// keeps zeros written ahead of the log's end, records checkpoints in the header's superblock
/// slots, and takes over the file a compaction wrote. It does not sync commits: in `.full`
/// durability the engine's `GroupCommit` does, once for every commit written meanwhile.
///
/// A commit goes through it in three calls, made by `StorageEngine.commit` in this order:
/// `nextTransactionId` (is a commit owed, may it be made), `beginFrame` (the stream the tree
/// mutator writes the frame's node and value records into), `appendCommit` (the commit record,
/// the write, the new snapshot). Then `committed` makes a checkpoint when one is due and writes
/// zeros ahead.
///
/// Owned by one engine and used only while its writer gate is held (a write transaction's commit,
/// a compaction, close): it needs no lock of its own, except for `failure`, which a sync leader of
/// `GroupCommit` sets without the gate (`refuse`).
final class LogWriter {
    /// The data file; a compaction replaces it (`adopt`).
    private(set) var file: any StorageFile
    /// How the data file's records are sealed: its salt (checksums are seeded with it), and its
    /// cipher and write epoch when encrypted; a compacted file has its own.
    private(set) var sealing: RecordSealing
    /// The data file's salt.
    var salt: UInt64 { sealing.salt }
    /// A frame was begun since the last commit the log took: it may have written records past
    /// `end` that the next frame overwrites. In an encrypted file the next frame then begins a
    /// new epoch (`nextEpoch`).
    private var frameBegunSinceCommit = false
    /// Where the next frame starts: just past the newest commit.
    private(set) var end: UInt64
    /// Why commits are refused (a sync failed, so what is on disk is unknown); nil while they are not.
    var failure: String? { refusal.withLock { $0 } }
    /// Behind `failure`; shared with `GroupCommit`, whose sync leader sets it without the gate.
    let refusal = Locked<String?>(nil)
    /// Whether this log is a compaction's copy being written: its commits are flagged partial
    /// until `StorageEngine.sealCopy`.
    var partialCommits: Bool
    /// The file's physical size: the log, then zeros written ahead of it (see `extendAhead`).
    private var physicalSize: UInt64
    /// The lowest id the next commit may carry: a compacted copy goes on from the store it copies.
    private var transactionFloor: UInt64 = 0
    /// A compaction's copy that keeps past commits (`StorageEngine.copyWindowStart`): the id every
    /// commit carries until it is cleared (the copy's partial commits and its seal carry the id of
    /// the first commit kept), and the time the next commit records (that commit's own).
    var pinnedTransactionId: UInt64?
    var nextCommitTime: UInt64?
    private var commitsSinceSuperblock = 0
    private var superblockSequence: UInt64
    private var lastSuperblockTxn: UInt64
    /// Where frames are built; one, reused by every commit.
    private let frame = FrameStream()
    /// One of several writing processes (`StorageOptions.sharedWriting`): others append to the
    /// file between this one's transactions, write superblocks and take write epochs.
    private let shared: Bool
    /// Which file `file` is, for the mappings made of it (`MapGeneration.fileIdentity`): set when
    /// `shared`, so that this engine's readers can tell that another process compacted.
    private(set) var fileIdentity: FileIdentity?
    /// The last catch-up took commits of another process, which this one cannot know were synced:
    /// the next commit record is not flagged durable (see `appendCommit`).
    private(set) var foreignCommitsUnsynced = false
    /// `.full` durability: each commit is synced (by `GroupCommit`) before it is published.
    private let durable: Bool
    private let superblockInterval: Int
    private let initialMapSize: Int

    init(file: any StorageFile, sealing: RecordSealing, recovered: RecoveredState, physicalSize: UInt64,
         partialCommits: Bool, options: StorageOptions) {
        self.file = file
        self.sealing = sealing
        self.end = recovered.end
        self.physicalSize = physicalSize
        self.partialCommits = partialCommits
        self.superblockSequence = recovered.superblockSequence
        self.lastSuperblockTxn = recovered.txnId
        self.durable = options.durability == .full
        self.superblockInterval = options.superblockInterval
        self.initialMapSize = options.initialMapSize
        self.shared = options.sharedWriting
        self.fileIdentity = options.sharedWriting ? try? file.identity() : nil
    }

    // MARK: Commit

    /// Throws `commitsRefused` once a sync has failed.
    func checkAccepting() throws {
        if let failure { throw StorageError.commitsRefused(reason: failure) }
    }

    /// Refuses every further commit, for `reason` (the first reason given is kept). Thread-safe.
    func refuse(_ reason: String) {
        refusal.withLock { if $0 == nil { $0 = reason } }
    }

    /// The id of the commit on top of `base`, or nil when none is owed: nothing changed, and no id
    /// is owed since `raiseTransactionIds`. Throws `commitsRefused` once a sync has failed.
    func nextTransactionId(after base: Snapshot, hasChanges: Bool) throws -> UInt64? {
        try checkAccepting()
        if let pinnedTransactionId { return pinnedTransactionId }
        guard hasChanges || transactionFloor > base.txnId else { return nil }
        return max(base.txnId + 1, transactionFloor)
    }

    /// Makes the next commit carry an id of at least `txnId`, even when it changes nothing.
    /// Recovery accepts ids that go up by more than one.
    func raiseTransactionIds(to txnId: UInt64) {
        transactionFloor = max(transactionFloor, txnId)
    }

    /// Starts a frame at the log's end: the stream its node and value records are appended to.
    /// A transaction that spills (`TreeMutator.spill`) begins it at its first spill and its commit
    /// goes on with the same stream (`openFrame`); nothing else writes between the two, as both
    /// hold the writer gate.
    func beginFrame() throws -> FrameStream {
        if frameBegunSinceCommit { try nextEpoch() }
        frameBegunSinceCommit = true
        frame.begin(file: file, at: end, sealing: sealing)
        return frame
    }

    /// In an encrypted file: moves to the next write epoch, synced before any record uses it (see
    /// `EpochSlots`). Nothing in a plain one.
    func nextEpoch() throws {
        guard sealing.cipher != nil else { return }
        // Other writing processes take epochs too: the next is above every one taken.
        let taken = shared ? max(sealing.epoch, try EpochSlots.read(file, salt: sealing.salt)) : sealing.epoch
        guard taken < RecordCipher.maxEpoch else {
            throw StorageError.commitsRefused(reason: "the data file has used all of its \(RecordCipher.maxEpoch) write epochs; compact it (a compacted file starts anew)")
        }
        try EpochSlots.write(taken + 1, to: file, salt: sealing.salt)
        sealing.epoch = taken + 1
    }

    /// The frame `beginFrame` began, to go on with (a transaction that spilled, at its commit).
    var openFrame: FrameStream {
        precondition(frame.frameStart == end, "a spilled frame must start at the log's end")
        return frame
    }

    /// After a transaction that spilled up to `spillEnd` ended without a commit: the records it
    /// wrote past the log's end read as zeros from now on (a hole punched, where the file system
    /// can), so that an aborted import gives its disk space back and a later open finds no tail
    /// to clean. They are garbage either way (no commit follows them) and the next frame
    /// overwrites them; a failure here changes nothing.
    func discardSpilled(through spillEnd: UInt64) {
        guard spillEnd > end else { return }
        _ = try? file.punchHoleOnce(at: end, length: spillEnd - end)
    }

    /// Starts writing `start ..< end` of the data file to the disk without waiting (a spilling
    /// transaction's records; see `Syscall.startWriteback`).
    func startWriteback(from start: UInt64, to end: UInt64) {
        guard end > start else { return }
        file.startWriteback(at: start, length: end - start)
    }

    /// A new mapping of the data file that reaches `length` bytes (room to double), for the
    /// records a transaction spilled.
    func map(reaching length: UInt64) throws -> MapGeneration {
        MapGeneration(region: try file.map(length: MapGeneration.mappingLength(for: length, minimum: initialMapSize)), salt: salt,
                      cipher: sealing.cipher, fileIdentity: fileIdentity)
    }

    /// Ends the frame `beginFrame` started with its commit record, writes what is left of it (not
    /// synced) and returns the snapshot the commit makes, for the engine to publish (in `.full`
    /// durability once `GroupCommit` has synced it). `written`: the offsets of the frame's
    /// records, which readers need not verify (the page cache holds what this process wrote).
    /// `afterSync`: every commit before this one is durable (in `.full` durability; see
    /// `GroupCommit.everythingSynced`), so its record may carry `CommitRecord.durableFlag`.
    /// `spilled`: the mapping a transaction that spilled read its records through, used when the
    /// base's does not reach the commit and it does.
    func appendCommit(txnId: UInt64, catalogRoot: UInt64, liveBytes: UInt64, base: Snapshot,
                      written: [UInt64], afterSync: Bool, spilled: MapGeneration? = nil) throws -> Snapshot {
        let commitOffset = frame.end
        let newEnd = commitOffset + UInt64(CommitRecord.length(sealing))
        // Map first: once the commit record is on disk the commit must not fail for want of a mapping.
        var generation = base.generation
        if newEnd > UInt64(generation.region.length) {
            if let spilled, newEnd <= UInt64(spilled.region.length) {
                generation = spilled
            } else {
                generation = try map(reaching: newEnd)
            }
        }
        let commit = CommitRecord(txnId: txnId, catalogRoot: catalogRoot, frameStart: end,
                                  previousCommit: base.commitOffset, liveBytes: liveBytes,
                                  timeMs: nextCommitTime ?? WallClock.milliseconds(),
                                  flags: (durable && afterSync && !foreignCommitsUnsynced ? CommitRecord.durableFlag : 0)
                                      | (partialCommits ? CommitRecord.partialFlag : 0))
        let (record, offset) = try frame.appendRecord(length: CommitRecord.length(sealing))
        commit.write(to: record, fileOffset: offset, sealing: sealing)
        // A plain write that fails makes nothing durable: this commit fails, the store goes on.
        try frame.flush()
        end = newEnd
        nextCommitTime = nil
        frameBegunSinceCommit = false
        // The sync that makes this commit durable covers the other processes' frames before it.
        foreignCommitsUnsynced = false
        // Readers need not verify what this process wrote; an encrypted file's records are
        // still decrypted on their first read.
        if generation.cipher == nil {
            for offset in written { generation.records.markVerified(offset) }
        }
        return Snapshot(txnId: commit.txnId, catalogRoot: catalogRoot, committedLength: newEnd,
                        commitOffset: commitOffset, liveBytes: commit.liveBytes, generation: generation)
    }

    /// After the commit `appendCommit` made: a checkpoint every `superblockInterval` commits, at
    /// `durableSnapshot` (in `.full` durability the newest commit published, which is durable;
    /// the commit just written may not be synced yet), then zeros ahead of the log.
    func committed(durableSnapshot: Snapshot) {
        physicalSize = max(physicalSize, end)
        commitsSinceSuperblock += 1
        if commitsSinceSuperblock >= superblockInterval {
            // A failed sync here (`.none` durability) refuses the next commits (with the reason)
            // rather than failing this one.
            try? checkpoint(durableSnapshot, durableAlready: durable)
        }
        extendAhead()
    }

    // MARK: Zeros ahead

    /// Keeps zeros written ahead of the log's end, so that a small commit overwrites blocks the
    /// file already has instead of growing it: `fdatasync` then flushes data only, where a growing
    /// file also makes the file system commit its journal. The zeros are synced with the next
    /// group of commits (`GroupCommit`), so their blocks are allocated and the file's new size is
    /// on disk from then on. They are not part of the store: recovery stops at them (a zero length
    /// is no record). A failure here only means no zeros ahead.
    private func extendAhead() {
        // Only a per-commit sync gains from it; without one (`.none`, in memory) the zeros would
        // be writes for nothing.
        guard durable, physicalSize < end + zerosAhead / 2 else { return }
        _ = writeZeros(upTo: end + zerosAhead)
    }

    /// How far ahead of the log's end `extendAhead` keeps zeros: a sixteenth of the log, at least
    /// 1 MiB and at most 4 MiB. The sync after the commit that writes them waits for them, so the
    /// cap bounds that group's latency; more would only make it rarer.
    private var zerosAhead: UInt64 { UInt64(min(max(Int(end / 16), 1 << 20), 4 << 20)) }

    /// Writes zeros from the physical end up to `target`; false when a write failed.
    private func writeZeros(upTo target: UInt64) -> Bool {
        guard let zeros = ZeroBytes.megabyte else { return false }
        var at = max(physicalSize, end)
        while at < target {
            let n = Int(min(target - at, 1 << 20))
            guard (try? file.write(UnsafeRawBufferPointer(start: zeros, count: n), at: at)) != nil else { return false }
            at += UInt64(n)
            physicalSize = at
        }
        return true
    }

    /// For a compacted copy about to replace a store's file: writes the zeros the store's commits
    /// keep ahead of the log (this copy commits without syncs and keeps none), so that the first
    /// commits after the swap do not wait for them. Not synced here. A failure only means none.
    func writeZerosAhead() {
        _ = writeZeros(upTo: end + zerosAhead)
    }

    // MARK: Checkpoints

    /// Points a superblock slot at `snapshot`, the newest commit. The commit must be on disk
    /// first: in `.full` it is (`durableAlready`); otherwise this syncs. The slot itself is not
    /// synced: a torn slot fails its checksum and open uses the other one (or reads the log from
    /// the start).
    func checkpoint(_ snapshot: Snapshot, durableAlready: Bool) throws {
        guard snapshot.txnId != lastSuperblockTxn, snapshot.commitOffset != 0 else { return }
        if !durableAlready {
            do {
                try file.sync()
            } catch {
                refuse("a sync failed (\(error)); commits since the last sync may be lost")
                throw error
            }
        }
        commitsSinceSuperblock = 0
        if shared {
            // Another process may have written a superblock since: this one must be newer.
            superblockSequence = max(superblockSequence, Superblock.newestSequence(in: file, salt: salt))
        }
        superblockSequence += 1
        let slot = FileHeader.superblockOffsets[Int(superblockSequence % 2)]
        let block = Superblock(sequence: superblockSequence, commitOffset: snapshot.commitOffset,
                               txnId: snapshot.txnId, end: snapshot.committedLength)
        // The commit is durable already; a failed superblock write only makes the next open read more.
        try? block.encode(slotOffset: slot, salt: salt).withUnsafeBytes { try file.write($0, at: slot) }
        lastSuperblockTxn = snapshot.txnId
    }

    /// At close: unless commits were refused, syncs, points a superblock at `snapshot` (so the
    /// next open is quick) and syncs again. Failures are ignored: close cannot report them.
    func syncAndCheckpoint(_ snapshot: Snapshot) {
        guard failure == nil, (try? file.sync()) != nil else { return }
        try? checkpoint(snapshot, durableAlready: true)
        try? file.sync()
    }

    // MARK: The swap

    /// What a log hands to the engine that takes over its file (see `handOver` and `adopt`).
    struct Handover {
        let file: any StorageFile
        let sealing: RecordSealing
        let physicalSize: UInt64
        let superblockSequence: UInt64
    }

    /// Records a superblock at `snapshot` (the data must be synced), so that the next open starts
    /// at the newest commit instead of reading the whole log, and hands the file over. This log
    /// must not be used after.
    func handOver(at snapshot: Snapshot) -> Handover {
        try? checkpoint(snapshot, durableAlready: true)
        return Handover(file: file, sealing: sealing, physicalSize: physicalSize, superblockSequence: superblockSequence)
    }

    /// Makes `file` (the file of `handover`, maybe opened again under its new name) this log's
    /// file, its newest commit `snapshot`. Returns the file it replaces, for the caller to close.
    func adopt(_ handover: Handover, file newFile: any StorageFile, at snapshot: Snapshot) -> any StorageFile {
        let old = file
        file = newFile
        fileIdentity = shared ? try? newFile.identity() : nil
        sealing = handover.sealing
        // Whatever the copy's writer left past its end, the next frame starts a new epoch.
        frameBegunSinceCommit = true
        end = snapshot.committedLength
        physicalSize = handover.physicalSize
        commitsSinceSuperblock = 0
        superblockSequence = handover.superblockSequence
        lastSuperblockTxn = snapshot.txnId
        return old
    }

    // MARK: Several writing processes

    /// One of several writing processes, holding the write lock again: the log now ends at
    /// `snapshot`, the newest commit another process appended, in a file of `physicalSize`
    /// bytes. Those commits are not known to be synced: the next commit record is not flagged
    /// durable.
    func caughtUp(to snapshot: Snapshot, physicalSize: UInt64) {
        end = snapshot.committedLength
        self.physicalSize = physicalSize
        foreignCommitsUnsynced = true
    }

    /// One of several writing processes, holding the write lock: when the bytes at the log's end
    /// are not zeros, a process died while it wrote a frame there (frames are written front to
    /// back, so what it left starts at the end); everything from the end to the file's physical
    /// end is overwritten with zeros, as a writable open does, so that readers find zeros after
    /// the newest commit again and nothing of that frame is left behind the next one. Not synced:
    /// the next commit's sync covers it.
    func clearTornTail() throws {
        guard try hasBytesAtEnd() else { return }
        let size = try file.size()
        physicalSize = max(physicalSize, size)
        guard size > end else { return }
        try file.zero(at: end, length: size - end, from: ZeroBytes.buffer)
    }

    /// Whether the 16 bytes at the log's end are not all zeros (one `pread`): another process
    /// appended a frame there since this one last wrote (whole or not). The writer among several
    /// looks there before anything else when it takes the lock.
    func hasBytesAtEnd() throws -> Bool {
        var head = (UInt64(0), UInt64(0))
        let read = try withUnsafeMutableBytes(of: &head) { try file.read(into: $0, at: end) }
        return read > 0 && head != (0, 0)
    }

    /// Makes the file another process compacted (opened by `OpenedStore`, under the write lock)
    /// this log's file, its newest commit the one open found. Returns the file it replaces, for
    /// the caller to close.
    func adopt(_ opened: OpenedStore) -> any StorageFile {
        let old = file
        file = opened.file
        fileIdentity = opened.generation.fileIdentity
        sealing = opened.sealing
        frameBegunSinceCommit = false  // the open took a new write epoch
        end = opened.recovered.end
        physicalSize = opened.size
        commitsSinceSuperblock = 0
        superblockSequence = opened.recovered.superblockSequence
        lastSuperblockTxn = opened.recovered.txnId
        foreignCommitsUnsynced = true
        return old
    }
}
