import Atomics
import Dispatch
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A store on disk: a directory holding one append-only data file (`data.cellar`) and a lock
/// file (`lock`). Keys and values are bytes in named B+trees.
///
/// One process writes (the others get `StorageError.storeLocked`); within it one write transaction
/// at a time, and any number of readers on any threads, each on a snapshot, never blocked.
///
/// ```swift
/// let engine = try StorageEngine(directory: "/tmp/my-store")
/// try engine.write { txn in
///     let tree = try txn.tree("greetings")!
///     try txn.put(tree, key: Array("hello".utf8), value: Array("world".utf8))
/// }
/// let value = try engine.read { txn in try txn.tree("greetings").flatMap { try txn.get($0, key: Array("hello".utf8)) } }
/// ```
public final class StorageEngine: @unchecked Sendable {
    // Thread safety: `current` is atomic; everything under "writer state" is only touched while the
    // writer semaphore is held (by a write transaction, by a compaction, by close); the rest is
    // immutable.
    public static let dataFileName = "data.cellar"
    public static let lockFileName = "lock"

    /// The directory of the store.
    public let directory: String
    public let options: StorageOptions
    /// The store's identity, created with it and kept forever.
    public let uuid: StoreUUID
    private let lockDescriptor: Int32
    let current: ManagedAtomic<Snapshot>
    private let writer = DispatchSemaphore(value: 1)
    let closedFlag = ManagedAtomic<Bool>(false)

    // Compaction (see Compaction.swift): one at a time, on this queue when it starts by itself.
    let compactionGate = DispatchSemaphore(value: 1)
    let compactionQueue = DispatchQueue(label: "cellar.compaction", qos: .utility)
    let compactionScheduled = ManagedAtomic<Bool>(false)
    /// An automatic compaction that failed is not tried again before the log reaches this length.
    let automaticCompactionFloor = ManagedAtomic<UInt64>(0)
    /// Set while an open that deferred its compaction (`StorageOptions.deferCompactionAtOpen`)
    /// has not called `compactAtOpenIfDue` yet: no automatic compaction starts before it, so
    /// none copies the store before the layer above has set its rewrites.
    private let openCompactionPending = ManagedAtomic<Bool>(false)
    /// How compaction rewrites values; only touched while holding `compactionGate`.
    var compactionRewrites: CompactionRewrites?
    /// Compactions that replaced the data file since open (for tests and diagnostics).
    package let compactions = ManagedAtomic<Int>(0)
    /// Shared by the transactions for compressed values (see `ValueCodecs`).
    let codecs = ValueCodecs()

    // Writer state.
    /// The data file; a compaction replaces it (`switchToCompactedFile`).
    private(set) var file: any StorageFile
    /// The data file's salt (checksums are seeded with it); a compacted file has its own.
    private var salt: UInt64
    /// Records what transactions change while a compaction runs; nil otherwise.
    var journal: ChangeJournal?
    /// The lowest id the next commit may carry: a compacted copy goes on from the store it copies.
    private var transactionFloor: UInt64 = 0
    private var end: UInt64
    private var failure: String?
    private var commitsSinceSuperblock = 0
    private var superblockSequence: UInt64 = 0
    private var lastSuperblockTxn: UInt64 = 0
    private let frame = FrameStream()
    /// The file's physical size: the log, then zeros written ahead of it (see `extendAhead`).
    private var physicalSize: UInt64 = 0
    private var activeWriter: ObjectIdentifier?
    /// This engine writes a compaction's copy: its commits are flagged partial until `sealCopy`.
    private var partialCommits = false
    /// Compresses the values writers put; nil when the options say `.none` or the store is read-only.
    let compressor: ValueCompressor?
    /// The dictionaries writers compressed with, by id (ids are never reused, so none goes stale).
    var compressionDictionaries: [UInt32: CompressionDictionary] = [:]

    /// Opens the store in `directory`, creating it (and the directory) when missing, unless read-only.
    /// With `options.inMemory`, `directory` only names the store in messages.
    ///
    /// A writable open compacts the store before it returns when its log already holds more
    /// garbage than `options.automaticCompaction` allows (and the policy's `atOpen` is set).
    public convenience init(directory: String, options: StorageOptions = StorageOptions()) throws {
        try self.init(directory: directory, options: options, compactionCopy: false)
        if options.deferCompactionAtOpen {
            openCompactionPending.store(true, ordering: .releasing)
        } else {
            compactAtOpenIfDue()
        }
    }

    /// Opens a store; `compactionCopy`: the file is a compaction's copy being written (its header
    /// says compacted, its commits so far are partial), which only `compact` opens.
    init(directory: String, options: StorageOptions, compactionCopy: Bool) throws {
        var options = options
        if options.inMemory {
            guard !options.readOnly else {
                throw StorageError.illegalArgument("an in-memory store cannot be opened read-only: it starts empty")
            }
            options.durability = .none
            if options.openFile == nil {
                options.openFile = { path, _, _ in try PosixFile(anonymous: path) }
            }
        }
        guard options.nodeSize >= 256, options.nodeSize <= 1 << 20 else {
            throw StorageError.illegalArgument("nodeSize must be between 256 and 1 MiB, got \(options.nodeSize)")
        }
        guard options.initialMapSize > 0, options.superblockInterval > 0 else {
            throw StorageError.illegalArgument("initialMapSize and superblockInterval must be positive")
        }
        guard options.compressionThreshold >= 16 else {
            throw StorageError.illegalArgument("compressionThreshold must be at least 16 bytes, got \(options.compressionThreshold)")
        }
        if let level = options.compression.level, level < -(1 << 17) || level > 22 {
            throw StorageError.illegalArgument("zstd level must be between -131072 and 22, got \(level)")
        }
        self.directory = directory
        self.options = options
        compressor = options.readOnly ? nil : options.compression.level.map { ValueCompressor(level: $0) }
        let dataPath = directory + "/" + Self.dataFileName

        if options.readOnly || options.inMemory {
            lockDescriptor = -1
        } else {
            try Syscall.makeDirectory(directory)
            lockDescriptor = try Self.lock(directory + "/" + Self.lockFileName)
            // What a compaction that did not finish left behind (see `compact`): only a writer
            // holding this lock builds it, and that is now us. Left in place when it cannot be
            // removed (a file of someone else's in it): it is never read, and `compact` says why
            // it cannot start.
            try? Self.removeCompactionLeftovers(directory)
        }
        var opened: (any StorageFile)?
        do {
            let file = try options.openDataFile(dataPath, create: !options.readOnly, readOnly: options.readOnly)
            opened = file
            var size = try file.size()
            let header: FileHeader
            // The file's start, read once: all of a file too short to hold a commit, else the header.
            let start = try Self.readStart(of: file, count: size <= UInt64(FileHeader.size) ? Int(size) : FileHeader.encodedSize)
            let existing = Result { try start.withUnsafeBytes { try FileHeader.decode($0) } }
            if case .failure = existing, !Self.isUnfinishedHeader(size <= UInt64(FileHeader.size) ? start[...] : start.prefix(8)) {
                // Any other file is someone else's, and is left alone.
                throw StorageError.notAStore(path: dataPath, reason: size <= UInt64(FileHeader.size)
                    ? "its \(size) bytes do not start with Cellar's header" : "it does not start with Cellar's magic")
            }
            if size <= UInt64(FileHeader.size), case .failure = existing {
                // No valid header and no room for a commit: a store whose creation was cut short
                // (empty, zeros, or the start of Cellar's header) holds nothing committed and is
                // created anew.
                guard !options.readOnly else {
                    throw StorageError.fileCorrupt(offset: 0, reason: "the store was never completely created (no valid header)")
                }
                header = try Self.createHeader(file, directory: options.inMemory ? nil : directory)
                size = UInt64(FileHeader.size)
            } else {
                header = try existing.get()
                if size < UInt64(FileHeader.size) && !options.readOnly {
                    // A valid header whose superblock area was never written: complete it.
                    try file.truncate(to: UInt64(FileHeader.size))
                    try file.sync()
                    size = UInt64(FileHeader.size)
                }
            }
            var region = try file.map(length: Self.mapLength(for: size, minimum: options.initialMapSize))
            var recovered: RecoveredState
            var attempt = 0
            while true {
                do {
                    recovered = try Recovery.recover(base: region.base, fileSize: size, header: header,
                                                     acceptsPartial: compactionCopy)
                    break
                } catch StorageError.fileCorrupt(let offset, let reason) {
                    // A read-only open races with the process that writes: what looked like a bad
                    // record followed by later commits may be a frame that was being appended.
                    // When the record verifies on a second look, look at the whole log again.
                    guard options.readOnly, attempt < 20, Self.verifiesNow(file, at: offset, salt: header.salt) else {
                        throw StorageError.fileCorrupt(offset: offset, reason: reason)
                    }
                    attempt += 1
                    usleep(1_000)
                    size = try file.size()
                    region = try file.map(length: Self.mapLength(for: size, minimum: options.initialMapSize))
                }
            }
            let generation = MapGeneration(region: region, salt: header.salt)
            if recovered.hasTail && !options.readOnly {
                // Overwritten with zeros (the space ahead of the log), never cut off: the file
                // must not shrink under a process that has it mapped (a read-only open of the
                // same store elsewhere), whose reads past the new end would be SIGBUS.
                try file.zero(at: recovered.end, length: size - recovered.end, from: Self.zeroBytes)
                try file.sync()
            }
            self.file = file
            self.uuid = header.uuid
            self.salt = header.salt
            self.end = recovered.end
            self.physicalSize = size
            self.partialCommits = compactionCopy
            self.lastSuperblockTxn = recovered.txnId
            self.superblockSequence = recovered.superblockSequence
            self.current = ManagedAtomic(Snapshot(
                txnId: recovered.txnId, catalogRoot: recovered.catalogRoot, committedLength: recovered.end,
                commitOffset: recovered.commitOffset, liveBytes: recovered.liveBytes, generation: generation))
        } catch {
            opened?.close()
            if lockDescriptor >= 0 { Syscall.close(lockDescriptor) }
            throw error
        }
    }

    deinit { close() }

    /// Syncs the data file, throwing when the sync fails (`close` syncs too, but cannot report a
    /// failure). For a copy written in `.none` durability that must be on disk before it is used.
    func syncNow() throws {
        writer.wait()
        defer { writer.signal() }
        try file.sync()
    }

    /// Makes the next commit carry an id of at least `txnId`, even when it changes nothing: a
    /// compacted copy goes on from the store it copies. Recovery accepts ids that go up by more
    /// than one.
    func raiseTransactionIds(to txnId: UInt64) {
        writer.wait()
        defer { writer.signal() }
        transactionFloor = max(transactionFloor, txnId)
    }

    /// Ends a compaction's copy: one last commit, the first without `CommitRecord.partialFlag`,
    /// whose id is at least `txnId` and above every id of the copy. Recovery stops at no commit
    /// before it, so no prefix of the copy opens as a state the store never had.
    func sealCopy(carrying txnId: UInt64) throws {
        writer.wait()
        partialCommits = false
        transactionFloor = max(transactionFloor, txnId, current.load(ordering: .acquiring).txnId + 1)
        writer.signal()
        try write { _ in }  // no changes, but an id is owed: a commit is made
    }

    // MARK: Transactions

    /// A read transaction on the newest commit. One atomic load; never blocks.
    public func beginRead() throws -> ReadTransaction {
        guard !closedFlag.load(ordering: .relaxed) else { throw StorageError.closed }
        return ReadTransaction(snapshot: current.load(ordering: .acquiring), codecs: codecs)
    }

    /// Runs `body` in a read transaction on the newest commit.
    public func read<T>(_ body: (ReadTransaction) throws -> T) throws -> T {
        try body(beginRead())
    }

    /// Starts the write transaction, waiting until the previous one has ended. Calling it again on
    /// the same thread before ending the first deadlocks, as with any non-reentrant lock.
    public func beginWrite() throws -> WriteTransaction {
        guard !options.readOnly else { throw StorageError.readOnly }
        guard !closedFlag.load(ordering: .relaxed) else { throw StorageError.closed }
        writer.wait()
        guard !closedFlag.load(ordering: .relaxed) else { writer.signal(); throw StorageError.closed }
        if let failure {
            writer.signal()
            throw StorageError.commitsRefused(reason: failure)
        }
        let txn = WriteTransaction(engine: self, base: current.load(ordering: .acquiring), nodeSize: options.nodeSize,
                                   journal: journal)
        activeWriter = ObjectIdentifier(txn)
        return txn
    }

    /// Runs `body` in the write transaction and commits; when `body` throws, nothing is changed.
    public func write<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
        let txn = try beginWrite()
        do {
            let result = try body(txn)
            try txn.commit()
            return result
        } catch {
            txn.abort()
            throw error
        }
    }

    /// Called exactly once by every write transaction when it ends.
    func endWrite(_ txn: WriteTransaction) {
        precondition(activeWriter == ObjectIdentifier(txn), "a write transaction ended twice")
        activeWriter = nil
        writer.signal()
    }

    // MARK: Commit

    /// Appends `txn`'s frame, syncs it (in `.full` durability) and publishes the new snapshot.
    func commit(_ txn: WriteTransaction) throws {
        if let failure { throw StorageError.commitsRefused(reason: failure) }
        let base = txn.base
        let txnId = max(base.txnId + 1, transactionFloor)
        // A transaction without changes makes no commit, unless an id is owed (`raiseTransactionIds`).
        guard txn.hasChanges || transactionFloor > base.txnId else { return }
        let durable = options.durability == .full
        frame.begin(file: file, at: end)
        let (catalogRoot, liveBytes) = try txn.writeFrame(to: frame, salt: salt)
        let commitOffset = frame.end
        let newEnd = commitOffset + UInt64(CommitRecord.length)
        // Map first: once the commit record is on disk the commit must not fail for want of a mapping.
        var generation = base.generation
        if newEnd > UInt64(generation.region.length) {
            generation = MapGeneration(region: try file.map(length: Self.mapLength(for: newEnd, minimum: options.initialMapSize)), salt: salt)
        }
        let commit = CommitRecord(txnId: txnId, catalogRoot: catalogRoot, frameStart: end,
                                  previousCommit: base.commitOffset, liveBytes: liveBytes,
                                  timeMs: Self.nowMs(),
                                  flags: (durable ? CommitRecord.durableFlag : 0) | (partialCommits ? CommitRecord.partialFlag : 0))
        let (record, offset) = try frame.appendRecord(length: CommitRecord.length)
        commit.write(to: record, fileOffset: offset, salt: salt)
        if durable {
            do {
                if frame.flushed == 0 {
                    // The whole frame in one durable write (one system call where the OS has it).
                    try frame.writeDurably()
                } else {
                    try frame.flush()
                    try file.sync()
                }
            } catch {
                // A plain write that failed made nothing durable and synced nothing: this commit
                // fails, the store goes on. Any other failure may have been the sync's.
                if !Self.isWriteFailure(error) {
                    failure = "a sync failed (\(error)); whether the last commit is on disk is unknown"
                }
                throw error
            }
        } else {
            try frame.flush()
        }
        end = newEnd
        // What this process just wrote is what the map shows (the page cache holds our bytes):
        // no need to verify it again when it is read.
        for offset in txn.writtenRecords { generation.records.markVerified(offset) }
        current.store(Snapshot(txnId: commit.txnId, catalogRoot: catalogRoot, committedLength: newEnd,
                               commitOffset: commitOffset, liveBytes: commit.liveBytes, generation: generation),
                      ordering: .releasing)
        physicalSize = max(physicalSize, newEnd)
        commitsSinceSuperblock += 1
        if commitsSinceSuperblock >= options.superblockInterval {
            // The commit is visible already; a failed sync here refuses the next commits (with the
            // reason) rather than failing this one.
            try? checkpoint(durableAlready: durable)
        }
        extendAhead()
        if options.automaticCompaction != nil, journal == nil { considerCompaction(end: newEnd, liveBytes: commit.liveBytes) }
    }

    /// Keeps zeros written ahead of the log's end, so that a small commit overwrites blocks the
    /// file already has instead of growing it: `fdatasync` then flushes data only, where a growing
    /// file also makes the file system commit its journal. The zeros are synced with the next
    /// commit. They are not part of the store: recovery stops at them (a zero length is no
    /// record). A failure here only means no zeros ahead.
    private func extendAhead() {
        // Only a per-commit sync gains from it; without one (`.none`, in memory) the zeros would
        // be writes for nothing.
        guard options.durability == .full, physicalSize < end + zerosAhead / 2 else { return }
        guard writeZeros(upTo: end + zerosAhead) else { return }
        // Synced now, so their blocks are allocated and the file's new size is on disk: later
        // commits (synced by range) then overwrite allocated blocks and commit no metadata. A
        // failed sync refuses further commits, as any failed sync does.
        do {
            try file.sync()
        } catch {
            failure = "a sync failed (\(error)); the store cannot promise durability any more"
        }
    }

    /// How far ahead of the log's end `extendAhead` keeps zeros: a sixteenth of the log, at least
    /// 1 MiB and at most 4 MiB. The commit that writes them waits for them (and their sync), so
    /// the cap bounds that commit's latency; more would only make it rarer.
    private var zerosAhead: UInt64 { UInt64(min(max(Int(end / 16), 1 << 20), 4 << 20)) }

    /// Writes zeros from the physical end up to `target`; false when a write failed.
    private func writeZeros(upTo target: UInt64) -> Bool {
        guard let zeros = zeroMegabyte else { return false }
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
    /// commits after the swap do not wait for them. The caller syncs them with the copy (`syncNow`).
    /// A failure only means none.
    func prepareZerosAhead() {
        writer.wait()
        defer { writer.signal() }
        _ = writeZeros(upTo: end + zerosAhead)
    }

    /// Points a superblock slot at the newest commit. The commit must be on disk first: in `.full`
    /// it is; in `.none` this syncs. The slot itself is not synced: a torn slot fails its checksum
    /// and open uses the other one (or reads the log from the start).
    private func checkpoint(durableAlready: Bool) throws {
        let snapshot = current.load(ordering: .acquiring)
        guard snapshot.txnId != lastSuperblockTxn, snapshot.commitOffset != 0 else { return }
        if !durableAlready {
            do {
                try file.sync()
            } catch {
                failure = "a sync failed (\(error)); commits since the last sync may be lost"
                throw error
            }
        }
        commitsSinceSuperblock = 0
        superblockSequence += 1
        let slot = FileHeader.superblockOffsets[Int(superblockSequence % 2)]
        let block = Superblock(sequence: superblockSequence, commitOffset: snapshot.commitOffset,
                               txnId: snapshot.txnId, end: snapshot.committedLength)
        // The commit is durable already; a failed superblock write only makes the next open read more.
        try? block.encode(slotOffset: slot, salt: salt).withUnsafeBytes { try file.write($0, at: slot) }
        lastSuperblockTxn = snapshot.txnId
    }

    /// Whether `error` is a write that failed before any sync was attempted.
    private static func isWriteFailure(_ error: any Error) -> Bool {
        guard case StorageError.io(let operation, let code, _) = error else { return false }
        if operation == "pwrite" { return true }
        // The durable write fails with these before it writes anything.
        return code == ENOSPC || code == EDQUOT || code == EFBIG
    }

    // MARK: Compaction's hold on the writer (the rest is in Compaction.swift)

    /// Runs `body` holding the writer lock, between write transactions, as compaction does to
    /// start its journal, to take what was journaled, and to swap files. Returns the result and how
    /// long writers were kept waiting, in nanoseconds.
    func holdingWriter<T>(_ body: () throws -> T) throws -> (T, UInt64) {
        writer.wait()
        let start = DispatchTime.now().uptimeNanoseconds
        defer { writer.signal() }
        guard !closedFlag.load(ordering: .relaxed) else { throw StorageError.closed }
        if let failure { throw StorageError.commitsRefused(reason: failure) }
        let result = try body()
        return (result, DispatchTime.now().uptimeNanoseconds - start)
    }

    /// Stops journaling changes (a compaction that gave up), once the write transaction ends.
    func endJournal() {
        writer.wait()
        journal = nil
        writer.signal()
    }

    /// Hands this engine's data file and newest commit over to the engine that adopts them (a
    /// compacted copy: `switchToCompactedFile`), and ends this engine without closing the file.
    /// Records a superblock first (the data must be synced), so that the next open starts at the
    /// newest commit instead of reading the whole log.
    private func surrender() -> (file: any StorageFile, snapshot: Snapshot, salt: UInt64, physicalSize: UInt64, superblockSequence: UInt64) {
        writer.wait()
        defer { writer.signal() }
        try? checkpoint(durableAlready: true)
        closedFlag.store(true, ordering: .releasing)
        if lockDescriptor >= 0 { Syscall.close(lockDescriptor) }
        return (file, current.load(ordering: .acquiring), salt, physicalSize, superblockSequence)
    }

    /// Makes the compacted copy's file (at `path`; everything of it synced) the store's data file.
    /// The writer lock must be held and `expected` must be the newest commit. The copy must hold
    /// a commit at least as new, with the same UUID, trees and counts; then its file is renamed
    /// over the data file, the directory is synced, and the next commit goes to it. The copy
    /// engine ends. Readers on older snapshots keep their mapping of the old file (the kernel keeps
    /// its unlinked inode) and finish on it. Returns the new log's length.
    func switchToCompactedFile(of copy: StorageEngine, at path: String, expected: Snapshot) throws -> UInt64 {
        let dataPath = directory + "/" + Self.dataFileName
        let handover = copy.surrender()
        var newFile = handover.file
        let snapshot = handover.snapshot
        do {
            guard copy.uuid == uuid else {
                throw StorageError.fileCorrupt(offset: 16, reason: "the compacted file has another store UUID")
            }
            guard snapshot.txnId >= expected.txnId else {
                throw StorageError.fileCorrupt(offset: snapshot.commitOffset, reason: "the compacted file ends before the newest commit")
            }
            try Self.checkSameTrees(ReadTransaction(snapshot: expected, codecs: codecs), ReadTransaction(snapshot: snapshot, codecs: codecs))
            try Syscall.rename(path, to: dataPath)
        } catch {
            newFile.close()
            throw error
        }
        // The same file under its new name, so that errors name it right (the copy's mapping stays
        // valid after its descriptor is closed). Should this open fail, the copy's descriptor serves.
        if let renamed = try? options.openDataFile(dataPath, create: false, readOnly: false) {
            newFile.close()
            newFile = renamed
        }
        // The data file's name now leads to the new file: from here on the engine must write there,
        // whatever else fails.
        let old = file
        file = newFile
        salt = handover.salt
        end = snapshot.committedLength
        physicalSize = handover.physicalSize
        commitsSinceSuperblock = 0
        superblockSequence = handover.superblockSequence
        lastSuperblockTxn = snapshot.txnId
        journal = nil
        compactions.wrappingIncrement(ordering: .relaxed)
        current.store(snapshot, ordering: .releasing)
        old.close()
        do {
            try Syscall.syncDirectory(directory)
        } catch {
            // The rename may not survive a power loss, and commits to the new file would go with
            // it: refuse them, as after any failed sync.
            failure = "syncing the directory after compaction failed (\(error)); reopen the store"
            throw error
        }
        return snapshot.committedLength
    }

    /// Whether the policy in `options.automaticCompaction` says a log of `end` bytes, `liveBytes`
    /// of them live, is worth compacting.
    private func compactionDue(end: UInt64, liveBytes: UInt64) -> Bool {
        guard let policy = options.automaticCompaction, !options.inMemory, !options.readOnly else { return false }
        return end >= policy.minimumFileSize && end >= automaticCompactionFloor.load(ordering: .relaxed)
            && Double(end - min(end, liveBytes)) >= policy.garbageShare * Double(end)
    }

    /// Compacts now, on this thread, when the log already passes the automatic policy and its
    /// `atOpen` is set: what a writable open does before it returns (the object layer calls it
    /// once it has set its rewrites). A process too short-lived for a background compaction to
    /// finish (killed a few hundred milliseconds after it opened) would otherwise only ever grow
    /// the file. A failure leaves the store as it was: it is not tried again before the log has
    /// grown by the policy's minimum size. Returns what the compaction did, or nil.
    /// Until it is called, an engine opened with `deferCompactionAtOpen` starts no automatic
    /// compaction.
    @discardableResult
    package func compactAtOpenIfDue() -> CompactionReport? {
        defer { openCompactionPending.store(false, ordering: .releasing) }
        guard let policy = options.automaticCompaction, policy.atOpen else { return nil }
        let snapshot = current.load(ordering: .acquiring)
        guard compactionDue(end: snapshot.committedLength, liveBytes: snapshot.liveBytes) else { return nil }
        return compactAutomatically(policy)
    }

    /// A compaction the policy started, at open or after a commit. One that fails leaves the store
    /// as it was (the store goes on with its file) and is not tried again before the log has grown
    /// by the policy's minimum size.
    private func compactAutomatically(_ policy: StorageOptions.AutomaticCompaction) -> CompactionReport? {
        do {
            return try compact()
        } catch {
            automaticCompactionFloor.store(fileSize + policy.minimumFileSize, ordering: .relaxed)
            return nil
        }
    }

    /// After a commit: schedules one compaction on `compactionQueue` when the policy in
    /// `options.automaticCompaction` says the file holds enough garbage.
    private func considerCompaction(end: UInt64, liveBytes: UInt64) {
        guard let policy = options.automaticCompaction, compactionDue(end: end, liveBytes: liveBytes),
              !openCompactionPending.load(ordering: .acquiring),
              compactionScheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        compactionQueue.async { [weak self] in
            guard let self else { return }
            defer { compactionScheduled.store(false, ordering: .releasing) }
            _ = compactAutomatically(policy)
        }
    }

    // MARK: Information and close

    /// The id of the newest commit (0 for a store without commits).
    public var lastTransactionId: UInt64 { current.load(ordering: .acquiring).txnId }

    /// Bytes of the data file in use: everything up to the newest commit.
    public var fileSize: UInt64 { current.load(ordering: .acquiring).committedLength }

    /// Bytes of records reachable from the newest commit; the rest of the file is garbage.
    public var liveBytes: UInt64 { current.load(ordering: .acquiring).liveBytes }

    /// Closes the store: waits for the write transaction to end, syncs and records a superblock
    /// (so the next open is quick), releases the lock. Open read transactions keep working on their
    /// snapshots. Idempotent.
    public func close() {
        guard !options.readOnly || !closedFlag.load(ordering: .relaxed) else { return }
        guard closedFlag.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        if !options.readOnly {
            // A running compaction sees the flag at its next step and gives up; wait for that.
            compactionGate.wait()
            compactionGate.signal()
            writer.wait()
            if failure == nil {
                if (try? file.sync()) != nil { try? checkpoint(durableAlready: true); try? file.sync() }
            }
            writer.signal()
        }
        file.close()
        if lockDescriptor >= 0 { Syscall.close(lockDescriptor) }
    }

    // MARK: Helpers

    /// 1 MiB of zeros that cost nothing: an anonymous mapping that is never written, so every page
    /// of it is the kernel's shared zero page. (Read-only after its thread-safe lazy initialization.)
    nonisolated(unsafe) private static let zeroMegabyteMapping: UnsafeRawPointer? = {
        let pointer = mmap(nil, 1 << 20, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let pointer, pointer != MAP_FAILED else { return nil }
        return UnsafeRawPointer(pointer)
    }()
    private var zeroMegabyte: UnsafeRawPointer? { Self.zeroMegabyteMapping }
    /// Zeros to write from: the megabyte above, or 4 KiB where it could not be mapped.
    private static var zeroBytes: UnsafeRawBufferPointer {
        if let zeros = zeroMegabyteMapping { return UnsafeRawBufferPointer(start: zeros, count: 1 << 20) }
        return UnsafeRawBufferPointer(start: fallbackZeros, count: FileHeader.size)
    }
    nonisolated(unsafe) private static let fallbackZeros: UnsafeRawPointer = {
        let zeros = UnsafeMutableRawPointer.allocate(byteCount: FileHeader.size, alignment: 8)
        zeros.initializeMemory(as: UInt8.self, repeating: 0, count: FileHeader.size)
        return UnsafeRawPointer(zeros)
    }()

    /// Takes the store's write lock. A lock that is busy is tried again for a moment before
    /// `storeLocked` is thrown: when any thread of this process forks (to run a command, say), the
    /// child shares our descriptors until it execs, and may briefly hold a lock we just released.
    private static func lock(_ path: String) throws -> Int32 {
        let fd = try Syscall.open(path, flags: O_RDWR | O_CREAT, mode: 0o644)
        var attempts = 0
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = Syscall.errno()
            if code == EINTR { continue }
            if code == EWOULDBLOCK && attempts < 20 {
                attempts += 1
                usleep(10_000)
                continue
            }
            Syscall.close(fd)
            if code == EWOULDBLOCK { throw StorageError.storeLocked(path: path) }
            throw StorageError.io(operation: "flock", errno: code, path: path)
        }
        return fd
    }

    /// Whether the record at `offset` verifies when read again from the file (a read-only open
    /// checking whether a bad record was only being written).
    private static func verifiesNow(_ file: any StorageFile, at offset: UInt64, salt: UInt64) -> Bool {
        var header = [UInt8](repeating: 0, count: LogRecord.headerSize)
        guard (try? header.withUnsafeMutableBytes({ try file.read(into: $0, at: offset) })) == LogRecord.headerSize else { return false }
        let length = Int(header.withUnsafeBytes { $0.loadLE(UInt32.self, at: 8) })
        // A record cannot be longer than what the file holds after it: a corrupt length must not
        // make this allocate up to 2 GiB (found by FuzzOpenStore).
        guard length >= LogRecord.headerSize, length <= LogRecord.maxLength,
              let size = try? file.size(), offset <= size, UInt64(length) <= size - offset else { return false }
        var record = [UInt8](repeating: 0, count: length)
        guard (try? record.withUnsafeMutableBytes({ try file.read(into: $0, at: offset) })) == length else { return false }
        return record.withUnsafeBytes { bytes in
            LogRecord.verify(record: bytes.baseAddress!, available: UInt64(length), offset: offset, salt: salt) != nil
        }
    }

    /// Whether `bytes`, the start of a data file without a valid header, are what a creation that
    /// was cut short leaves: nothing, zeros, or bytes that begin with Cellar's magic (as much of it
    /// as there is).
    private static func isUnfinishedHeader(_ bytes: ArraySlice<UInt8>) -> Bool {
        if bytes.allSatisfy({ $0 == 0 }) { return true }
        let magic = FileHeader.magic
        return bytes.prefix(magic.count).elementsEqual(magic.prefix(min(bytes.count, magic.count)))
    }

    /// The first `count` bytes of `file` (fewer when it is shorter).
    private static func readStart(of file: any StorageFile, count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let n = try bytes.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        return Array(bytes[0..<n])
    }

    static func readHeader(_ file: any StorageFile) throws -> FileHeader {
        try readStart(of: file, count: FileHeader.encodedSize).withUnsafeBytes { try FileHeader.decode($0) }
    }

    private static func createHeader(_ file: any StorageFile, directory: String?) throws -> FileHeader {
        var rng = SystemRandomNumberGenerator()
        let header = FileHeader(uuid: .random(), salt: rng.next(), createdMs: nowMs())
        // The file holds at most the 4096 bytes the header overwrites: no truncation (which could
        // cut a mapping another process has of it).
        try writeHeader(header, to: file)
        if let directory { try Syscall.syncDirectory(directory) }
        return header
    }

    /// Writes `header` as the first 4096 bytes of `file` (the superblock slots zero) and syncs it.
    static func writeHeader(_ header: FileHeader, to file: any StorageFile) throws {
        var bytes = [UInt8](repeating: 0, count: FileHeader.size)
        bytes.withUnsafeMutableBytes { header.encode(into: $0) }
        try bytes.withUnsafeBytes { try file.write($0, at: 0) }
        try file.sync()
    }

    /// A mapping length for a file of `size` bytes: room to double, in whole megabytes.
    static func mapLength(for size: UInt64, minimum: Int) -> Int {
        let wanted = max(UInt64(minimum), size * 2)
        return Int((wanted + (1 << 20) - 1) & ~((1 << 20) - 1))
    }

    static func nowMs() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec) / 1_000_000
    }
}
