import Dispatch

/// What compaction does under the writer gate, between write transactions: starting and ending
/// the journal, the copy engine's own steps (ids, the seal, zeros, syncs), and the swap of the
/// data file.
extension StorageEngine {
    /// Runs `body` holding the writer gate, between write transactions, as compaction does to
    /// start its journal, to take what was journaled, and to swap files. Returns the result and how
    /// long writers were kept waiting, in nanoseconds.
    func holdingWriter<T>(_ body: () throws -> T) throws -> (T, UInt64) {
        acquireSettledWriter()
        let start = DispatchTime.now().uptimeNanoseconds
        defer { writer.signal() }
        guard !closedFlag.load(ordering: .relaxed) else { throw StorageError.closed }
        try log.checkAccepting()
        let result = try body()
        return (result, DispatchTime.now().uptimeNanoseconds - start)
    }

    /// Stops journaling changes (a compaction that gave up), once the write transaction ends.
    func endJournal() {
        acquireSettledWriter()
        journal = nil
        writer.signal()
    }

    // MARK: The copy's engine

    /// Syncs the data file, throwing when the sync fails (`close` syncs too, but cannot report a
    /// failure). For a copy written in `.none` durability that must be on disk before it is used.
    func syncNow() throws {
        acquireSettledWriter()
        defer { writer.signal() }
        try log.file.sync()
    }

    /// Makes the next commit carry an id of at least `txnId`, even when it changes nothing: a
    /// compacted copy goes on from the store it copies. Recovery accepts ids that go up by more
    /// than one.
    func raiseTransactionIds(to txnId: UInt64) {
        acquireSettledWriter()
        defer { writer.signal() }
        log.raiseTransactionIds(to: txnId)
    }

    /// Ends a compaction's copy: one last commit, the first without `CommitRecord.partialFlag`,
    /// whose id is at least `txnId` and above every id of the copy. Recovery stops at no commit
    /// before it, so no prefix of the copy opens as a state the store never had.
    func sealCopy(carrying txnId: UInt64) throws {
        acquireSettledWriter()
        log.partialCommits = false
        log.raiseTransactionIds(to: max(txnId, current.load(ordering: .acquiring).txnId + 1))
        writer.signal()
        try write { _ in }  // no changes, but an id is owed: a commit is made
    }

    /// For a compacted copy about to replace a store's file: writes the zeros the store's commits
    /// keep ahead of the log (this copy commits without syncs and keeps none), so that the first
    /// commits after the swap do not wait for them. The caller syncs them with the copy (`syncNow`).
    /// A failure only means none.
    func prepareZerosAhead() {
        acquireSettledWriter()
        defer { writer.signal() }
        log.writeZerosAhead()
    }

    // MARK: The swap

    /// Hands this engine's data file and newest commit over to the engine that adopts them (a
    /// compacted copy: `switchToCompactedFile`), and ends this engine without closing the file.
    /// Records a superblock first (the data must be synced), so that the next open starts at the
    /// newest commit instead of reading the whole log.
    private func surrender() -> (handover: LogWriter.Handover, snapshot: Snapshot) {
        acquireSettledWriter()
        defer { writer.signal() }
        let snapshot = current.load(ordering: .acquiring)
        let handover = log.handOver(at: snapshot)
        closedFlag.store(true, ordering: .releasing)
        if lockDescriptor >= 0 { Syscall.close(lockDescriptor) }
        return (handover, snapshot)
    }

    /// Makes the compacted copy's file (at `path`; everything of it synced) the store's data file.
    /// The writer gate must be held and `expected` must be the newest commit. The copy must hold
    /// a commit at least as new, with the same UUID, trees and counts; then its file is renamed
    /// over the data file, the directory is synced, and the next commit goes to it. The copy
    /// engine ends. Readers on older snapshots keep their mapping of the old file (the kernel keeps
    /// its unlinked inode) and finish on it. Returns the new log's length.
    func switchToCompactedFile(of copy: StorageEngine, at path: String, expected: Snapshot) throws -> UInt64 {
        let dataPath = directory + "/" + Self.dataFileName
        let (handover, snapshot) = copy.surrender()
        var newFile = handover.file
        do {
            guard copy.uuid == uuid else {
                throw StorageError.fileCorrupt(offset: 16, reason: "the compacted file has another store UUID")
            }
            guard snapshot.txnId >= expected.txnId else {
                throw StorageError.fileCorrupt(offset: snapshot.commitOffset, reason: "the compacted file ends before the newest commit")
            }
            try Self.checkSameTrees(ReadTransaction(snapshot: expected, codecs: codecs, views: decryptedViews),
                                    ReadTransaction(snapshot: snapshot, codecs: codecs, views: copy.decryptedViews))
            // The other processes learn of the new file from the lock file: counted before the
            // rename (a crash between the two only makes them look for nothing new) and after it
            // (what a reader found in between is not kept: `SharedWriteLock.isSwapping`).
            if lockDescriptor >= 0 { fileGeneration = SharedWriteLock.beginSwap(lockDescriptor) }
            defer { if lockDescriptor >= 0 { fileGeneration = SharedWriteLock.endSwap(lockDescriptor) } }
            duringSwapForTesting?()
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
        let old = log.adopt(handover, file: newFile, at: snapshot)
        journal = nil
        compactions.wrappingIncrement(ordering: .relaxed)
        let published = snapshot.mapped(onFile: log.fileIdentity)
        current.store(published, ordering: .releasing)
        tip = published
        old.close()
        do {
            try Syscall.syncDirectory(directory)
        } catch {
            // The rename may not survive a power loss, and commits to the new file would go with
            // it: refuse them, as after any failed sync.
            log.refuse("syncing the directory after compaction failed (\(error)); reopen the store")
            throw error
        }
        return snapshot.committedLength
    }
}
