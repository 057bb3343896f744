/// Compaction the policy in `StorageOptions.automaticCompaction` starts by itself: at open, and
/// after a commit (on `compactionQueue`).
extension StorageEngine {
    /// Whether the policy in `options.automaticCompaction` says a log of `end` bytes, `liveBytes`
    /// of them live, is worth compacting.
    func compactionDue(end: UInt64, liveBytes: UInt64) -> Bool {
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
    func compactAutomatically(_ policy: StorageOptions.AutomaticCompaction) -> CompactionReport? {
        if let retention = options.pastRetention, !windowedCompactionPays(policy, retention: retention) { return nil }
        do {
            return try compact()
        } catch {
            automaticCompactionFloor.store(fileSize + policy.minimumFileSize, ordering: .relaxed)
            return nil
        }
    }

    /// After a commit: schedules one compaction on `compactionQueue` when the policy in
    /// `options.automaticCompaction` says the file holds enough garbage.
    func considerCompaction(end: UInt64, liveBytes: UInt64) {
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
}
