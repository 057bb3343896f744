import Atomics
import Dispatch
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Compaction: the live entries of the store, copied into a new data file that replaces the old
/// one while the store stays in use (`docs/compaction.md`).
///
/// 1. Under the writer lock (between two write transactions): start a `ChangeJournal` and take
///    the newest snapshot.
/// 2. Without it: copy that snapshot's trees into a new file in `compacting/`, through an engine
///    of its own. Writers go on, and journal the keys they change.
/// 3. Without it: catch up. Take the journal and a newer snapshot (holding the lock a moment),
///    write each journaled key's value in that snapshot (or its absence) into the copy. Again,
///    while much changed and each round caught up with less than the one before.
/// 4. Under the lock: the last catch-up, the copy's last commit carrying the newest commit's id,
///    a sync, the check (same UUID, trees and counts), the rename, a directory sync, and the switch.
///
/// A crash before the rename leaves the old file, whole; after it, the new one, whole and synced.
/// Any error before the rename leaves the store as it was (the copy is removed).
extension StorageEngine {
    /// Where a compaction builds the new data file, inside the store's directory (an engine of its
    /// own with its own lock file). A writable open removes what a crash left of it.
    public static let compactionDirectoryName = "compacting"

    /// More journaled keys than this and catch-up runs another round without the writer lock
    /// (at most `maxUnlockedRounds`): what is left for the round under the lock stays small.
    static let smallCatchUp = 2_000
    static let maxUnlockedRounds = 8

    /// Compacts the store while it stays open: readers are never blocked, writers only while the
    /// journal starts, between catch-up rounds, and during the swap (`longestWriterWaitMicroseconds`
    /// says how long). Keeps the UUID and every tree, key and value; transaction ids keep going up.
    /// One compaction runs at a time (a second call waits for the first). Do not call it from a
    /// thread that holds the write transaction: it waits for it.
    ///
    /// Throws `readOnly`, `closed` (also when the store is closed meanwhile; it gives up), and the
    /// I/O errors of the copy (`ENOSPC` among them): then the store is as it was and goes on.
    @discardableResult
    public func compact() throws -> CompactionReport {
        try compact(changingKey: nil)
    }

    /// Told how far a compaction's copy got: the entries copied so far and the entries the store
    /// held when it started (the catch-up after it is short and not counted). Called on the
    /// compacting thread after each batch (16 MiB of keys and values).
    public typealias CompactionProgress = @Sendable (_ copied: Int, _ total: Int) -> Void

    /// Compacts the store (as `compact()`) into a file encrypted with `newKey`, or into a plain
    /// file when `newKey` is nil: how a store's key is changed, and encryption added or removed.
    /// Crash-safe like every compaction: a crash before the new file is renamed into place leaves
    /// the old file and key, one after it the new. From the switch on, this engine writes with the
    /// new key, and opening the store needs it; readers in other processes that were opened with
    /// the old key do not follow the new file. Readers of this engine finish on the old file.
    @discardableResult
    public func compact(newKey: EncryptionKey?) throws -> CompactionReport {
        try compact(changingKey: .some(newKey))
    }

    /// `changingKey`: nil keeps the store's encryption; `.some(nil)` removes it; `.some(key)`
    /// encrypts with `key`. (Internal, not private: tests hold a copy at a point of its progress,
    /// and hold each unlocked catch-up round after it: `afterRound` is told what the round caught
    /// up with, in keys, or in commits with a window.)
    func compact(changingKey: EncryptionKey??, progress: CompactionProgress? = nil,
                 afterRound: ((_ caughtUp: Int) -> Void)? = nil) throws -> CompactionReport {
        guard !options.readOnly else { throw StorageError.readOnly }
        guard !options.inMemory else {
            throw StorageError.illegalArgument("an in-memory store has no file to compact")
        }
        guard !closedFlag.load(ordering: .relaxed) else { throw StorageError.closed }
        compactionGate.wait()
        defer { compactionGate.signal() }
        let rewrites = compactionRewrites
        let started = DispatchTime.now().uptimeNanoseconds
        var longestWait: UInt64 = 0

        // 1. The journal and the snapshot to copy. With several writing processes, the write lock
        // is held until the end: the journal sees only this process's writes, so the others wait
        // (and one compaction runs at a time among them).
        let (snapshot, startWait) = try holdingWriter { () -> Snapshot in
            try holdSharedLock()
            journal = ChangeJournal()
            return current.load(ordering: .acquiring)
        }
        defer { sharedLock?.release() }
        longestWait = max(longestWait, startWait)
        var switched = false
        defer { if !switched { endJournal() } }

        let work = directory + "/" + Self.compactionDirectoryName
        // The copy's master key: the store's, or one made for the new key (a new scrypt salt).
        let copyMaster: MasterKey?
        switch changingKey {
        case .none: copyMaster = masterKey
        case .some(.none): copyMaster = nil
        case .some(.some(let key)): copyMaster = try MasterKey(newFor: key)
        }
        let copy: StorageEngine
        do {
            try Self.removeCompactionLeftovers(directory)
            copy = try makeCopyEngine(in: work, master: copyMaster)
        } catch {
            try? Self.removeCompactionLeftovers(directory)
            throw error
        }
        var rounds = 0
        let bytesBefore: UInt64, bytesAfter: UInt64, transactionId: UInt64
        do {
            // 2. The copy: the newest commit, or the window's first commit and each one after it.
            let window = try options.pastRetention.flatMap { try windowStart(of: snapshot, keeping: $0) }
            var copied = snapshot
            if let window {
                try copyWindowStart(window, into: copy, rewrites: rewrites, progress: progress)
                try replayCommits(after: window.snapshot, through: snapshot, into: copy, rewrites: rewrites)
            } else {
                copy.raiseTransactionIds(to: snapshot.txnId + 1)
                try Self.copyTrees(of: ReadTransaction(snapshot: snapshot, codecs: codecs, views: decryptedViews), into: copy, rewrites: rewrites,
                                   cancelled: closedFlag, progress: progress)
            }
            // 3. Catch up while writers go on: the keys they changed, or with a window each commit.
            var before = Int.max  // what the round before caught up with
            while rounds < Self.maxUnlockedRounds {
                let ((changes, count, newer), wait) = try holdingWriter { () -> ([String: ChangeJournal.TreeChanges], Int, Snapshot) in
                    let count = journal!.keyCount
                    return (journal!.take(), count, current.load(ordering: .acquiring))
                }
                longestWait = max(longestWait, wait)
                rounds += 1
                let caughtUp: Int
                if window != nil {
                    caughtUp = Int(clamping: newer.txnId - min(copied.txnId, newer.txnId))
                    try replayCommits(after: copied, through: newer, into: copy, rewrites: rewrites)
                    copied = newer
                } else {
                    caughtUp = count
                    try Self.catchUp(changes, from: ReadTransaction(snapshot: newer, codecs: codecs, views: decryptedViews), into: copy, rewrites: rewrites, cancelled: closedFlag)
                }
                afterRound?(caughtUp)
                // Another round only while what is left is large and the rounds shrink it: when
                // writers change as much during a round as it caught up with (a busy machine, or a
                // window replaying each commit), more rounds would only grow the last one.
                if count <= Self.smallCatchUp || caughtUp >= before { break }
                before = caughtUp
            }
            copy.prepareZerosAhead()
            try copy.syncNow()  // the catch-up rounds and the zeros
            // 4. The last round and the swap, under the lock.
            let (result, finalWait) = try holdingWriter { () -> (UInt64, UInt64, UInt64) in
                let newest = current.load(ordering: .acquiring)
                if window != nil {
                    _ = journal!.take()
                    try replayCommits(after: copied, through: newest, into: copy, rewrites: rewrites)
                } else {
                    try Self.catchUp(journal!.take(), from: ReadTransaction(snapshot: newest, codecs: codecs, views: decryptedViews), into: copy, rewrites: rewrites, cancelled: closedFlag)
                    try copy.sealCopy(carrying: newest.txnId)
                }
                try copy.syncNow()
                let after = try switchToCompactedFile(of: copy, at: work + "/" + Self.dataFileName, expected: newest)
                switched = true
                masterKey = copyMaster
                return (newest.committedLength, after, lastTransactionId)
            }
            rounds += 1
            longestWait = max(longestWait, finalWait)
            (bytesBefore, bytesAfter, transactionId) = result
        } catch {
            copy.close()
            if !switched { try? Self.removeCompactionLeftovers(directory) }
            throw error
        }
        try? Self.removeCompactionLeftovers(directory)  // the copy's lock file and the folder
        return CompactionReport(bytesBefore: bytesBefore, bytesAfter: bytesAfter, transactionId: transactionId,
                                milliseconds: (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000,
                                longestWriterWaitMicroseconds: longestWait / 1000, catchUpRounds: rounds)
    }

    /// Compacts the store in `directory` while no process has it open (`storeLocked` otherwise):
    /// opens it, compacts it, closes it. What `cellar compact` does.
    public static func compact(directory: String, options: StorageOptions = StorageOptions(),
                               progress: CompactionProgress? = nil) throws -> CompactionReport {
        try compact(directory: directory, options: options, changingKey: nil, progress: progress)
    }

    /// Compacts the store in `directory` (opened with `options`, its current key among them)
    /// into a file encrypted with `newKey`, or a plain one when nil, while no process has it open.
    /// What `cellar compact --new-key` does.
    @discardableResult
    public static func compact(directory: String, options: StorageOptions = StorageOptions(),
                               newKey: EncryptionKey?, progress: CompactionProgress? = nil) throws -> CompactionReport {
        try compact(directory: directory, options: options, changingKey: .some(newKey), progress: progress)
    }

    private static func compact(directory: String, options: StorageOptions, changingKey: EncryptionKey??,
                                progress: CompactionProgress?) throws -> CompactionReport {
        guard !options.inMemory, !options.readOnly else {
            throw StorageError.illegalArgument("compaction needs a store on disk, opened for writing")
        }
        var options = options
        options.automaticCompaction = nil
        let engine = try StorageEngine(directory: directory, options: options)
        defer { engine.close() }
        return try engine.compact(changingKey: changingKey, progress: progress)
    }

    /// An engine on a new, empty data file in the new directory `work` with this store's UUID and
    /// creation time and a new salt, written without a sync per commit (the caller syncs it).
    func makeCopyEngine(in work: String, master: MasterKey?) throws -> StorageEngine {
        try Syscall.makeDirectory(work)
        let header = try OpenedStore.readHeader(log.file)
        var rng = SystemRandomNumberGenerator()
        let newHeader = FileHeader(uuid: header.uuid, salt: rng.next(), createdMs: header.createdMs,
                                   flags: FileHeader.compactedFlag,
                                   encryption: master.map { EncryptionHeader.make(master: $0, uuid: header.uuid) })
        var copyOptions = StorageOptions(durability: .none, nodeSize: options.nodeSize)
        copyOptions.fileMode = options.fileMode
        copyOptions.automaticCompaction = nil
        copyOptions.compression = options.compression
        copyOptions.compressionThreshold = options.compressionThreshold
        copyOptions.dictionaryMinimumSamples = options.dictionaryMinimumSamples
        // The fault-injection seam reaches the copy too; an in-memory store's anonymous files do not
        // (its copy goes to disk).
        copyOptions.openFile = options.inMemory ? nil : options.openFile
        copyOptions.encryptionKey = master.map { EncryptionKey(material: .master($0)) }
        copyOptions.decryptedCacheSize = options.decryptedCacheSize
        let headerFile = try options.openDataFile(work + "/" + Self.dataFileName, create: true, readOnly: false)
        defer { headerFile.close() }
        try OpenedStore.writeHeader(newHeader, to: headerFile)
        return try StorageEngine(directory: work, options: copyOptions, compactionCopy: true)
    }

    /// Keys and values written to the copy between two of its commits: its dirty nodes stay small.
    private static let batchBytes = 16 << 20

    /// Sets how compaction rewrites values, tree by tree (see `CompactionRewrites`); the next
    /// compaction uses it. The object layer sets it when it opens a store.
    public func setCompactionRewrites(_ rewrites: CompactionRewrites?) {
        compactionGate.wait()
        compactionRewrites = rewrites
        compactionGate.signal()
    }

    /// Copies every tree of `source` into `engine`, in key order, committing every `batchBytes`.
    /// Values are written as `engine`'s options say (compressed or not, with a dictionary trained
    /// for the tree first when they say so); the old dictionaries are not copied, only their
    /// numbering goes on.
    static func copyTrees(of source: ReadTransaction, into engine: StorageEngine, rewrites: CompactionRewrites?,
                                  cancelled: ManagedAtomic<Bool>, progress: CompactionProgress?) throws {
        if let id = try source.storedNextDictionaryId() {
            try engine.write { try $0.setNextDictionaryId(id) }
        }
        let names = try source.treeNames()
        let total = try names.reduce(0) { sum, name in try sum + (source.tree(name).map { try source.count($0) } ?? 0) }
        var copied = 0
        for name in names {
            guard let tree = try source.tree(name) else { continue }
            let rewrite = rewrites?(name)
            if engine.options.compression.trainsDictionaries {
                try trainDictionary(for: name, cursor: try source.cursor(tree), count: try source.count(tree),
                                    into: engine, rewrite: rewrite)
            }
            try copyTree(name, cursor: try source.cursor(tree), into: engine, rewrite: rewrite, cancelled: cancelled) { batch in
                copied += batch
                progress?(copied, total)
            }
        }
    }

    /// Trains a dictionary for tree `name` from a sample of its values (as `rewrite` makes them),
    /// spread evenly over it, and installs it in `engine`; does nothing when the tree has too few
    /// values above the compression threshold, or zstd finds too little in common.
    private static func trainDictionary(for name: String, cursor: Cursor, count: Int, into engine: StorageEngine,
                                        rewrite: ValueRewrite?) throws {
        let threshold = engine.options.compressionThreshold
        let step = max(1, count / Dictionaries.maximumSamples)
        var samples: [UInt8] = []
        var sizes: [Int] = []
        var index = 0
        try cursor.scan { _, value in
            defer { index += 1 }
            guard index % step == 0 else { return true }
            let sample = try rewrite?(value) ?? Array(value)
            if sample.count >= threshold {
                samples += sample
                sizes.append(sample.count)
            }
            return samples.count < Dictionaries.maximumSampleBytes && sizes.count < Dictionaries.maximumSamples
        }
        guard sizes.count >= engine.options.dictionaryMinimumSamples else { return }
        let capacity = min(max(samples.count / 10, Dictionaries.minimumCapacity), Dictionaries.maximumCapacity)
        try engine.write { txn in
            let id = try txn.nextDictionaryId()
            guard let dictionary = try Zstd.trainDictionary(samples: samples, sizes: sizes, capacity: capacity, id: id) else { return }
            try txn.installDictionary(dictionary, id: id, for: name)
        }
    }

    /// Puts `value`, or what `rewrite` makes of it, under `key`.
    static func put(_ txn: WriteTransaction, _ tree: Tree, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
                            rewrite: ValueRewrite?) throws {
        if let rewrite, let rewritten = try rewrite(value) {
            try rewritten.withUnsafeBytes { try txn.put(tree, key: key, value: $0) }
        } else {
            try txn.put(tree, key: key, value: value)
        }
    }

    /// Copies the entries of `cursor` into the tree `name` of `engine` (created, even when empty).
    /// Copies tree `name` from `cursor` into `engine`, a commit per `batchBytes`; `copied` is told
    /// how many entries each batch copied.
    private static func copyTree(_ name: String, cursor: Cursor, into engine: StorageEngine, rewrite: ValueRewrite?,
                                 cancelled: ManagedAtomic<Bool>, copied: (Int) -> Void = { _ in }) throws {
        var more = try cursor.first()
        repeat {  // once at least: an empty tree is created too
            guard !cancelled.load(ordering: .relaxed) else { throw StorageError.closed }
            var entries = 0
            try engine.write { txn in
                let target = try txn.tree(name, create: true)!
                var written = 0
                while more && written < batchBytes {
                    let key = cursor.key
                    let value = try cursor.scanValue()  // a compressed one decoded into the cursor's buffer
                    try put(txn, target, key: key, value: value, rewrite: rewrite)
                    written += key.count + value.count
                    entries += 1
                    more = try cursor.next()
                }
            }
            copied(entries)
            // Synced batch by batch: dirty pages of the copy never pile up. A writer's sync can
            // wait for them (ext4 writes a file's new blocks before the journal commit that
            // allocates them, and a commit that grows the data file needs one).
            try engine.syncNow()
        } while more
    }

    /// Brings `changes` into the copy: each journaled key gets its value in `source`, or is
    /// deleted when `source` has none; a tree dropped meanwhile is copied again whole.
    private static func catchUp(_ changes: [String: ChangeJournal.TreeChanges], from source: ReadTransaction,
                                into engine: StorageEngine, rewrites: CompactionRewrites?, cancelled: ManagedAtomic<Bool>) throws {
        for name in changes.keys.sorted() {
            let rewrite = rewrites?(name)
            let change = changes[name]!
            let sourceTree = try source.tree(name)
            if change.whole || sourceTree == nil {
                try engine.write { txn in _ = try txn.dropTree(name) }
                if let sourceTree {
                    try copyTree(name, cursor: try source.cursor(sourceTree), into: engine, rewrite: rewrite, cancelled: cancelled)
                }
                continue
            }
            let keys = change.sortedKeys()
            var next = 0
            repeat {  // once at least: a tree created meanwhile exists in the copy too
                guard !cancelled.load(ordering: .relaxed) else { throw StorageError.closed }
                try engine.write { txn in
                    let target = try txn.tree(name, create: true)!
                    var written = 0
                    while next < keys.count && written < batchBytes {
                        let key = keys[next]
                        let found = try source.withValue(sourceTree!, key: key) { value -> Int? in
                            guard let value else { return nil }
                            try key.withUnsafeBytes { try put(txn, target, key: $0, value: value, rewrite: rewrite) }
                            return value.count
                        }
                        if let found {
                            written += found
                        } else {
                            try txn.delete(target, key: key)
                        }
                        written += key.count
                        next += 1
                    }
                }
            } while next < keys.count
        }
    }

    /// Throws unless `copy` holds the same trees as `source`, each with as many entries.
    static func checkSameTrees(_ source: ReadTransaction, _ copy: ReadTransaction) throws {
        let names = try source.treeNames()
        guard try copy.treeNames() == names else {
            throw StorageError.fileCorrupt(offset: 0, reason: "the compacted file does not list the same trees")
        }
        for name in names {
            let a = try source.count(try source.tree(name)!)
            let b = try copy.tree(name).map { try copy.count($0) } ?? -1
            guard a == b else {
                throw StorageError.fileCorrupt(offset: 0, reason: "the compacted tree \(name) holds \(b) entries, not \(a)")
            }
        }
    }

    /// Removes the compaction directory of `directory` and what is in it (a data file and a lock).
    static func removeCompactionLeftovers(_ directory: String) throws {
        try removeWorkDirectory(directory + "/" + compactionDirectoryName)
    }

    /// Removes a directory a compaction or a copy writes into, with what they put in it (a data
    /// file and a lock); nothing when it does not exist.
    static func removeWorkDirectory(_ work: String) throws {
        for name in [dataFileName, lockFileName] { unlink(work + "/" + name) }
        if rmdir(work) != 0 {
            let code = errno
            if code != ENOENT { throw StorageError.io(operation: "rmdir", errno: code, path: work) }
        }
    }
}
