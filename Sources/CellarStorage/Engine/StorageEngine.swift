import Atomics
import Dispatch

/// A store on disk: a directory holding one append-only data file (`data.cellar`) and a lock
/// file (`lock`). Keys and values are bytes in named B+trees.
///
/// One process writes (the others get `StorageError.storeLocked`, or wait for the lock with
/// `StorageOptions.lockWaitTimeout`), or several take turns (`StorageOptions.sharedWriting`);
/// within a process one write transaction at a time, and any number of readers on any threads,
/// each on a snapshot, never blocked. Other processes may open the store read-only: each of their
/// read transactions starts on the newest commit the writers made.
///
/// ```swift
/// let engine = try StorageEngine(directory: "/tmp/my-store")
/// try engine.write { txn in
///     let tree = try txn.tree("greetings")!
///     try txn.put(tree, key: Array("hello".utf8), value: Array("world".utf8))
/// }
/// let value = try engine.read { txn in try txn.tree("greetings").flatMap { try txn.get($0, key: Array("hello".utf8)) } }
/// ```
///
/// The engine is the environment the parts hang off (`docs/engine.md`): the newest commit
/// (`current`, published with one atomic store), the writer gate (one write transaction, or a
/// compaction's hold, at a time), the `LogWriter` that appends commits to the data file, and the
/// compaction state. A commit flows top-down: `WriteTransaction.commit` → `StorageEngine.commit`,
/// which has the transaction's `TreeMutator` write the frame into the `LogWriter`'s stream, has
/// the `LogWriter` append the commit record, and publishes the snapshot; in `.full` durability
/// the writer gate is released first, and `GroupCommit` syncs the commit together with the others
/// written meanwhile before it is published (`awaitDurable`).
public final class StorageEngine: @unchecked Sendable {
    // Thread safety: `current` is atomic; `log`, `journal`, `tip`, `tipCache`, `activeWriter`
    // and `compressionDictionaries` are only touched while the writer gate is held (by a write
    // transaction, by a compaction, by close); `group` is thread-safe; the rest is immutable or
    // atomic.
    /// The name of the data file inside the store's directory: `data.cellar`.
    public static let dataFileName = "data.cellar"
    /// The version of the file format this engine writes and reads (it opens no other, so every
    /// store it opens has this one).
    public static let formatVersion: UInt32 = FileHeader.formatVersion
    /// The name of the lock file inside the store's directory, on which a writer holds an exclusive
    /// lock while the store is open.
    public static let lockFileName = "lock"

    /// The directory of the store.
    public let directory: String
    /// The options the engine was opened with.
    public let options: StorageOptions
    /// The store's identity, created with it and kept forever.
    public let uuid: StoreUUID
    /// The lock file's descriptor (the store's write lock); -1 when read-only or in memory.
    let lockDescriptor: Int32
    /// With several writing processes (`StorageOptions.sharedWriting`): the write lock, taken for
    /// each piece of write work rather than for the engine's life; nil otherwise.
    let sharedLock: SharedWriteLock?
    /// The data file's generation (`SharedWriteLock.fileGeneration`) the log's file is of; only
    /// touched holding the writer gate.
    var fileGeneration: UInt64 = 0
    /// The newest commit: what a new reader starts on. In `.full` durability it is durable.
    let current: ManagedAtomic<Snapshot>
    /// The newest commit written to the log: what the next write transaction starts on. Ahead of
    /// `current` while commits wait for their sync (`group`); the same otherwise.
    var tip: Snapshot {
        // Only a commit leaves what it wrote for the tip it makes (`commit`).
        didSet { if tipCache.snapshot !== tip { tipCache = TipCache() } }
    }
    /// The tip's catalog entries that write transactions found or wrote, and the nodes it wrote
    /// (see `TipCache`); only touched holding the writer gate.
    var tipCache = TipCache()
    /// Syncs the commits in `.full` durability, several at once when they come together, and
    /// publishes them in order; nil in `.none` durability and read-only.
    let group: GroupCommit?
    /// The writer gate: held by the write transaction, by compaction between transactions
    /// (`holdingWriter`), and by close.
    let writer = DispatchSemaphore(value: 1)
    let closedFlag = ManagedAtomic<Bool>(false)

    // Compaction (see Compaction/): one at a time, on this queue when it starts by itself.
    let compactionGate = DispatchSemaphore(value: 1)
    let compactionQueue = DispatchQueue(label: "cellar.compaction", qos: .utility)
    let compactionScheduled = ManagedAtomic<Bool>(false)
    /// An automatic compaction that failed is not tried again before the log reaches this length.
    let automaticCompactionFloor = ManagedAtomic<UInt64>(0)
    /// Set while an open that deferred its compaction (`StorageOptions.deferCompactionAtOpen`)
    /// has not called `compactAtOpenIfDue` yet: no automatic compaction starts before it, so
    /// none copies the store before the layer above has set its rewrites.
    let openCompactionPending = ManagedAtomic<Bool>(false)
    /// How compaction rewrites values; only touched while holding `compactionGate`.
    var compactionRewrites: CompactionRewrites?
    /// A test's seam: runs while a compaction has counted the new data file in the lock file and
    /// not yet renamed it into place (the window another process's reader may look in).
    var duringSwapForTesting: (() -> Void)?
    /// Compactions that replaced the data file since open (for tests and diagnostics).
    package let compactions = ManagedAtomic<Int>(0)
    /// Shared by the transactions for compressed values (see `ValueCodecs`).
    let codecs = ValueCodecs()

    // Writer state.
    /// Appends commits to the data file; a compaction gives it the compacted file.
    let log: LogWriter
    /// Records what transactions change while a compaction runs; nil otherwise.
    var journal: ChangeJournal?
    private var activeWriter: ObjectIdentifier?
    /// A read-only engine's way to the commits the writing process makes after open (and to the file
    /// a compaction renames over the data file), and that of one of several writing processes to
    /// the others' commits; nil for the only writer and in memory.
    let follower: LogFollower?
    /// With several writing processes: how this one tells the others it committed, and hears
    /// them (see `watchOtherProcesses`); a read-only engine's, to hear; nil otherwise.
    let commitSignal: CommitSignal?
    /// Compresses the values writers put; nil when the options say `.none` or the store is read-only.
    let compressor: ValueCompressor?
    /// The dictionaries writers compressed with (see `CompressionDictionaryCache`).
    let compressionDictionaries = CompressionDictionaryCache()
    /// Where transactions read an encrypted file's records decrypted (unused when plain).
    let decryptedViews: DecryptedViews
    /// The master key of the store's encryption; nil when plain. A compaction with a new key
    /// changes it (only while holding `compactionGate`).
    var masterKey: MasterKey?

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

    /// Opens a store (`OpenedStore`: the lock, the file, recovery); `compactionCopy`: the file is
    /// a compaction's copy being written (its header says compacted, its commits so far are
    /// partial), which only `compact` opens.
    init(directory: String, options: StorageOptions, compactionCopy: Bool) throws {
        let options = try options.validated()
        self.directory = directory
        self.options = options
        compressor = options.readOnly ? nil : try options.compression.level.map { try ValueCompressor(level: $0) }
        let opened = try OpenedStore.open(directory: directory, options: options, compactionCopy: compactionCopy)
        let recovered = opened.recovered
        lockDescriptor = opened.lockDescriptor
        uuid = opened.header.uuid
        masterKey = opened.master
        decryptedViews = DecryptedViews(cacheSize: options.decryptedCacheSize)
        log = LogWriter(file: opened.file, sealing: opened.sealing, recovered: recovered, physicalSize: opened.size,
                        partialCommits: compactionCopy, options: options)
        if options.sharedWriting {
            let lock = SharedWriteLock(descriptor: opened.lockDescriptor, path: directory + "/" + Self.lockFileName,
                                       wait: options.sharedLockWait)
            sharedLock = lock
            // The followers' own descriptor, read-only: the log's is replaced when this process
            // compacts, and closed by it.
            var readOptions = options
            readOptions.readOnly = true
            readOptions.sharedWriting = false
            var readFile: (any StorageFile)?
            do {
                let file = try options.openDataFile(directory + "/" + Self.dataFileName, create: false, readOnly: true)
                readFile = file
                follower = try LogFollower(directory: directory, options: readOptions, uuid: opened.header.uuid, file: file,
                                           sealing: opened.sealing, writeLock: lock)
            } catch {
                readFile?.close()
                opened.file.close()
                Syscall.close(opened.lockDescriptor)
                throw error
            }
        } else {
            sharedLock = nil
            follower = options.readOnly && !options.inMemory
                ? try LogFollower(directory: directory, options: options, uuid: opened.header.uuid, file: opened.file,
                                  sealing: opened.sealing)
                : nil
        }
        let snapshot = Snapshot(
            txnId: recovered.txnId, catalogRoot: recovered.catalogRoot, committedLength: recovered.end,
            commitOffset: recovered.commitOffset, liveBytes: recovered.liveBytes, generation: opened.generation)
        current = ManagedAtomic(snapshot)
        tip = snapshot
        group = options.durability == .full && !options.readOnly ? GroupCommit(refusal: log.refusal) : nil
        commitSignal = options.sharedWriting || (options.readOnly && !options.inMemory)
            ? CommitSignal(directory: directory, posting: options.sharedWriting) : nil
        // A compaction that died between its two counts of the new file left an odd generation:
        // this open holds the lock and opened the file the path leads to, so that swap is over.
        if lockDescriptor >= 0, SharedWriteLock.isSwapping(SharedWriteLock.fileGeneration(lockDescriptor)) {
            SharedWriteLock.endSwap(lockDescriptor)
        }
        // The open held the lock (for recovery); from now on each write takes it.
        if let sharedLock {
            fileGeneration = SharedWriteLock.fileGeneration(sharedLock.descriptor)
            sharedLock.releaseAfterOpen()
        }
    }

    deinit { close() }

    // MARK: Transactions

    /// A read transaction on the newest commit. One atomic load; never blocks.
    ///
    /// Read-only, the engine first looks whether the writing process committed since (or a
    /// compaction replaced the data file) and starts on the newest whole commit: one `stat` and a
    /// look at the mapping when nothing changed (`docs/engine.md`, "Several processes"). It never
    /// waits for the writer. Throws when a data file a compaction renamed into place cannot be
    /// opened; the next call tries again.
    public func beginRead() throws -> ReadTransaction {
        guard !closedFlag.load(ordering: .relaxed) else { throw StorageError.closed }
        if let follower { try follower.refresh(current) }
        return try ReadTransaction(snapshot: current.load(ordering: .acquiring), codecs: codecs, views: decryptedViews)
    }

    /// Runs `body` in a read transaction on the newest commit.
    public func read<T>(_ body: (ReadTransaction) throws -> T) throws -> T {
        try body(beginRead())
    }

    /// Starts the write transaction, waiting until the previous one has ended. Calling it again on
    /// the same thread before ending the first deadlocks, as with any non-reentrant lock. It starts
    /// on the newest commit written, which in `.full` durability may still wait for its sync
    /// (group commit): if that sync fails, this transaction's commit is refused.
    public func beginWrite() throws -> WriteTransaction {
        guard !options.readOnly else { throw StorageError.readOnly }
        guard !closedFlag.load(ordering: .relaxed) else { throw StorageError.closed }
        writer.wait()
        guard !closedFlag.load(ordering: .relaxed) else { writer.signal(); throw StorageError.closed }
        do {
            try log.checkAccepting()
            try holdSharedLock()
        } catch {
            writer.signal()
            throw error
        }
        let mutator: TreeMutator
        do {
            let kept = tipCache.take(at: tip)
            mutator = try TreeMutator(base: tip, view: decryptedViews.view(for: tip.generation), options: options,
                                      compressor: compressor, dictionaries: compressionDictionaries, codecs: codecs,
                                      spillLog: options.inMemory ? nil : log, knownTrees: kept.entries, baseNodes: kept.nodes)
        } catch {
            sharedLock?.release()
            writer.signal()
            throw error
        }
        let txn = WriteTransaction(engine: self, mutator: mutator, journal: journal)
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

    /// Takes the writer gate, then waits until every commit written is published (or failed):
    /// what close and compaction do before they look at the newest commit (`current` is then
    /// `tip`), sync or swap the file.
    func acquireSettledWriter() {
        writer.wait()
        group?.settle()
    }

    /// Called exactly once by every write transaction when it ends.
    func endWrite(_ txn: WriteTransaction) {
        precondition(activeWriter == ObjectIdentifier(txn), "a write transaction ended twice")
        activeWriter = nil
        // Ended without a frame (aborted, nothing to commit, or failed before writing): its
        // catalog entries, and the base's nodes it did not take over, are still the tip's.
        let mutator = txn.mutator
        if tipCache.snapshot == nil, !mutator.frameWritten, mutator.base === tip {
            let kept = mutator.takeBase()
            tipCache = TipCache(snapshot: tip, entries: kept.entries, nodes: kept.nodes)
        }
        writer.signal()
        sharedLock?.release()
    }

    // MARK: Several writing processes

    /// Several processes on one store (this one among several writers, or read-only): calls
    /// `hook` each time this engine's readers move to commits another process made, with a read
    /// transaction on the newest commit they saw and one on the new one, before any reader of this
    /// engine can see the new one; what it returns runs once they can. Moves happen at a read's
    /// or a write's start, and whenever another writer posts a commit (`CommitSignal`; and every
    /// second whatever was heard), on a queue of the engine's. For a layer above that tells its
    /// observers. Set once, before the engine is shared. Nothing for the only writer.
    package func watchOtherProcesses(_ hook: @escaping @Sendable (_ from: ReadTransaction, _ to: ReadTransaction) -> (@Sendable () -> Void)?) {
        guard let follower, let commitSignal else { return }
        let codecs = codecs, views = decryptedViews
        follower.announce { from, to in
            guard let older = try? ReadTransaction(snapshot: from, codecs: codecs, views: views),
                  let newer = try? ReadTransaction(snapshot: to, codecs: codecs, views: views) else { return nil }
            return hook(older, newer)
        }
        commitSignal.listen(on: DispatchQueue(label: "cellar.other-processes")) { [weak self] in
            guard let self, !self.closedFlag.load(ordering: .relaxed) else { return }
            try? self.follower?.refresh(self.current)
        }
    }

    /// With several writing processes, holding the writer gate: takes the shared write lock for one
    /// piece of work (released by the caller with `sharedLock.release()`), and when this process
    /// did not hold it already, catches up with what the others wrote since. Nothing otherwise.
    func holdSharedLock() throws {
        guard let sharedLock, try sharedLock.acquire() else { return }
        do {
            try catchUpWithOtherWriters()
        } catch {
            sharedLock.release()
            throw error
        }
    }

    /// One of several writing processes, having just taken the write lock (so holding the writer
    /// gate, with no commit of its own pending): makes the newest commit in the file the `tip` the
    /// next write starts on and the `current` readers see. The follower walks the frames the
    /// others appended (verified as a reader verifies them); when another process compacted, the
    /// new file is opened and recovered here and the log writes to it from now on; what a process
    /// that died while writing left after the newest commit is overwritten with zeros.
    ///
    /// When nothing changed (the common case) this costs two `pread`s: the data file's generation
    /// in the lock file, and the 16 bytes at the log's end. No `stat` of the data file: see
    /// `SharedWriteLock.fileGeneration` for why that matters.
    func catchUpWithOtherWriters() throws {
        guard let follower, let sharedLock else { return }
        let generation = SharedWriteLock.fileGeneration(sharedLock.descriptor)
        guard try generation != fileGeneration || log.hasBytesAtEnd() else { return }
        try follower.refresh(current, catchingUp: true)
        let newest = current.load(ordering: .acquiring)
        let compacted = generation != fileGeneration
        if compacted, let mine = log.fileIdentity, let (identity, _) = Syscall.identity(ofPath: directory + "/" + Self.dataFileName),
           identity != mine {
            // Another process compacted (or this one did, and the log still has the old file): the
            // data file's name leads to another file, whole, since its writer held this lock.
            let opened = try OpenedStore.open(directory: directory, options: options, compactionCopy: false, lockHeld: true)
            guard opened.header.uuid == uuid, opened.recovered.txnId >= tip.txnId else {
                opened.file.close()
                throw StorageError.fileCorrupt(offset: 16, reason: opened.header.uuid == uuid
                    ? "the data file that replaced this store's ends before a commit this process read"
                    : "the data file was replaced by another store's (another UUID)")
            }
            let recovered = opened.recovered
            let snapshot = Snapshot(txnId: recovered.txnId, catalogRoot: recovered.catalogRoot,
                                    committedLength: recovered.end, commitOffset: recovered.commitOffset,
                                    liveBytes: recovered.liveBytes, generation: opened.generation)
            log.adopt(opened).close()
            masterKey = opened.master
            tip = snapshot
            if snapshot.txnId >= newest.txnId { current.store(snapshot, ordering: .releasing) }
            fileGeneration = settled(generation, sharedLock)
            return
        }
        // Only a newer commit moves the tip, and only one read from the log's own file lets the
        // log clear what follows it: should the follower have read another file (it never must),
        // the write is refused rather than another process's frame taken for a torn one.
        if let written = log.fileIdentity, newest.generation.fileIdentity != written {
            throw StorageError.fileCorrupt(offset: log.end, reason: "the commits other processes appended were read "
                                           + "from another file than the one this process writes; nothing was cleared")
        }
        if newest.txnId > tip.txnId {
            tip = newest
            log.caughtUp(to: newest, physicalSize: try log.file.size())
        }
        fileGeneration = settled(generation, sharedLock)
        try log.clearTornTail()
    }

    /// The generation `generation` (read holding `lock`) once this process has looked where the
    /// data file's path leads: itself, or, when odd (a compaction died between its two counts,
    /// `SharedWriteLock.isSwapping`), the next even one, written; no swap is under way while
    /// this process holds the lock.
    private func settled(_ generation: UInt64, _ lock: SharedWriteLock) -> UInt64 {
        SharedWriteLock.isSwapping(generation) ? SharedWriteLock.endSwap(lock.descriptor) : generation
    }

    // MARK: Commit

    /// Commits what `changes` (the write transaction's trees) hold, top-down: the log says
    /// whether a commit is owed and its id; the trees write their frame (dirty nodes and values,
    /// then the catalog) into the log's stream; the log appends the commit record and writes the
    /// frame; it becomes the `tip` the next writer starts on; the log makes a checkpoint when one
    /// is due and writes zeros ahead, and a compaction may be scheduled.
    ///
    /// In `.none` durability the commit is then published at once: `publishing` learns its id and
    /// the engine stores the new snapshot as `current`; this returns nil. In `.full` durability it
    /// returns the commit, queued in `group` (with `publishing`) but not yet synced nor published:
    /// the caller releases the writer gate and calls `awaitDurable` with it, and `publishing` must
    /// stay valid until that returns. Nil too when no commit was made.
    /// Called by `WriteTransaction.commit`, holding the writer gate.
    func commit(_ changes: TreeMutator, beforePublish publishing: @escaping (UInt64) -> Void = { _ in }) throws -> GroupCommit.Waiter? {
        let base = changes.base
        // A transaction without changes makes no commit, unless an id is owed (`raiseTransactionIds`).
        guard let txnId = try log.nextTransactionId(after: base, hasChanges: changes.hasChanges) else { return nil }
        // A transaction whose spill failed may refer to records that never reached the file.
        if let failure = changes.spillFailure { throw failure }
        let afterSync = group?.everythingSynced ?? false
        let spilled = changes.spillState
        let (catalogRoot, liveBytes) = try changes.writeFrame(to: spilled == nil ? log.beginFrame() : log.openFrame, sealing: log.sealing)
        let snapshot = try log.appendCommit(txnId: txnId, catalogRoot: catalogRoot, liveBytes: liveBytes, base: base,
                                            written: changes.writtenRecords, afterSync: afterSync,
                                            spilled: spilled?.generation)
        tip = snapshot
        let made = changes.takeCommitted()
        tipCache = TipCache(snapshot: snapshot, entries: made.entries, nodes: made.nodes)
        let signal = sharedLock == nil ? nil : commitSignal
        let ticket = group?.enqueue(snapshot, file: log.file) { [current] snapshot in
            publishing(snapshot.txnId)
            current.store(snapshot, ordering: .releasing)
            signal?.post()
        }
        if ticket != nil {
            // Several writing processes: the lock is kept until this commit is synced and published.
            sharedLock?.retain()
        } else {
            publishing(snapshot.txnId)
            current.store(snapshot, ordering: .releasing)
            signal?.post()
        }
        log.committed(durableSnapshot: current.load(ordering: .acquiring))
        if options.automaticCompaction != nil, journal == nil {
            considerCompaction(end: snapshot.committedLength, liveBytes: snapshot.liveBytes)
        }
        return ticket
    }

    /// In `.full` durability, after `commit` and without the writer gate: returns once `ticket`'s
    /// commit is durable and published. The commit is synced with every other commit written
    /// meanwhile, by whichever of their committers leads that sync (this one when no sync is in
    /// flight), and that leader publishes them in commit order: each one's `beforePublish` hook,
    /// then `current`. Throws the sync's error when the sync that should have covered it failed
    /// (or one before); the commit is then never published, and the store refuses further
    /// commits.
    func awaitDurable(_ ticket: GroupCommit.Waiter) throws {
        defer { sharedLock?.release() }
        try group!.awaitDurable(ticket)
    }

    /// Decrypted views made since open (an encrypted store's readers' cache, replaced when full);
    /// 0 for a plain store.
    package var decryptedViewsMade: Int { decryptedViews.made.load(ordering: .relaxed) }

    /// Syncs made by committers in `.full` durability since open, and the commits they made
    /// durable: with several threads committing at once, fewer syncs than commits (group commit).
    /// Zeros with `.none` durability.
    package var groupCommitCounts: (syncs: Int, commits: Int) { group?.counts ?? (0, 0) }

    /// Commits written and waiting for their sync or their turn to be published (for the tests,
    /// which hold a sync until every committing thread has one queued). Zero with `.none`.
    package var pendingCommits: Int { group?.pendingCount ?? 0 }

    // MARK: Information and close

    /// The id of the newest commit (0 for a store without commits). Read-only: the newest commit
    /// the last `beginRead` found.
    public var lastTransactionId: UInt64 { current.load(ordering: .acquiring).txnId }

    /// Compactions of the writing process a read-only engine followed to their new file since open
    /// (for tests and diagnostics); 0 for a writable engine.
    package var followedCompactions: Int { follower?.switches.load(ordering: .relaxed) ?? 0 }

    /// Whether the data file of the newest commit is encrypted (see ``StorageOptions/encryptionKey``).
    public var isEncrypted: Bool { current.load(ordering: .acquiring).generation.cipher != nil }

    /// Bytes of the data file in use: everything up to the newest commit.
    public var fileSize: UInt64 { current.load(ordering: .acquiring).committedLength }

    /// Bytes of records reachable from the newest commit; the rest of the file is garbage.
    public var liveBytes: UInt64 { current.load(ordering: .acquiring).liveBytes }

    /// Makes every commit so far durable, as `.full` durability does at each commit: in `.none`
    /// durability, once after a series of commits (an import, say) that must survive power loss
    /// before the caller goes on. Waits for a running write transaction. Throws `commitsRefused`
    /// when this sync fails (or one failed before): what is on disk is then unknown, and the store
    /// takes no more commits. Nothing to do for a read-only or in-memory engine.
    public func sync() throws {
        guard !options.readOnly, !options.inMemory else { return }
        guard !closedFlag.load(ordering: .relaxed) else { throw StorageError.closed }
        acquireSettledWriter()
        defer { writer.signal() }
        try log.checkAccepting()
        do {
            try log.file.sync()
        } catch {
            log.refuse("a sync of the data file failed: \(error)")
            try log.checkAccepting()
        }
    }

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
            acquireSettledWriter()
            if let sharedLock {
                // The checkpoint only when no other process writes at the moment, after catching up
                // with it: a superblock must name the newest commit.
                if sharedLock.tryAcquire() {
                    if (try? catchUpWithOtherWriters()) != nil {
                        log.syncAndCheckpoint(current.load(ordering: .acquiring))
                    } else {
                        try? log.file.sync()
                    }
                    sharedLock.release()
                } else {
                    try? log.file.sync()
                }
            } else {
                log.syncAndCheckpoint(current.load(ordering: .acquiring))
            }
            writer.signal()
        }
        commitSignal?.cancel()
        follower?.close()
        if follower == nil || sharedLock != nil { log.file.close() }
        if lockDescriptor >= 0 { Syscall.close(lockDescriptor) }
    }
}
