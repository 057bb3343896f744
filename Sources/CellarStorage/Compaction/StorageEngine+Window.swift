import Atomics

/// A compaction that keeps a window of past commits (`StorageOptions.pastRetention`) readable
/// with `beginRead(asOf:)` (`docs/time-travel.md`, "The window").
///
/// Instead of the newest commit alone, the copy gets the window's first commit, whole (its
/// partial commits and their seal carry that commit's id, and the seal its time), then every later
/// commit as a commit of its own with its id and time: the keys it changed, found by comparing
/// its trees with the commit before (`ReadTransaction.forEachDifference`; copy-on-write makes
/// that a walk down the changed paths only). Catching up with the writers goes the same way,
/// commit by commit, so the copy ends on the newest commit's own id.
extension StorageEngine {
    /// A commit of the data file: the snapshot it makes and the time its record holds.
    struct HeldCommit {
        var snapshot: Snapshot
        var timeMs: UInt64
    }

    /// The first commit of the window `retention` keeps, counting back from `newest`: the
    /// `n`-th newest commit, or the newest one made at or before `duration` ago (the state the
    /// store was in when the window opens). The oldest whole commit of the file when it holds
    /// fewer; nil when it holds none.
    func windowStart(of newest: Snapshot, keeping retention: StorageOptions.PastRetention,
                     nowMs: UInt64 = WallClock.milliseconds()) throws -> HeldCommit? {
        // A span longer than the clock's range keeps every commit.
        var windowMs = UInt64.max
        if case .duration(let duration) = retention {
            let (seconds, attoseconds) = duration.components
            let (ms, overflow) = UInt64(max(0, seconds)).multipliedReportingOverflow(by: 1000)
            let (sum, past) = ms.addingReportingOverflow(UInt64(max(0, attoseconds) / 1_000_000_000_000_000))
            if !overflow && !past { windowMs = sum }
        }
        var start: HeldCommit?
        var seen = 0
        try walkCommits(back: newest) { offset, length, commit in
            start = HeldCommit(snapshot: pastSnapshot(offset: offset, length: length, commit: commit, in: newest),
                               timeMs: commit.timeMs)
            seen += 1
            switch retention {
            case .commits(let n): return seen < n
            case .duration:
                // Within the span while less than `duration` older than now (a commit stamped
                // after now, by another clock, is within it).
                return commit.timeMs >= nowMs || nowMs - commit.timeMs < windowMs
            }
        }
        return start
    }

    /// The snapshot of the commit whose record (`length` bytes at `offset`) holds `commit`, read
    /// through the mapping of `newer`, a later commit of the same file.
    func pastSnapshot(offset: UInt64, length: Int, commit: CommitRecord, in newer: Snapshot) -> Snapshot {
        Snapshot(txnId: commit.txnId, catalogRoot: commit.catalogRoot, committedLength: offset + UInt64(length),
                 commitOffset: offset, liveBytes: commit.liveBytes, generation: newer.generation)
    }

    /// Copies `start` (the window's first commit) into `copy` whole, as `copyTrees` does, with
    /// every commit it takes carrying `start`'s id, and seals it with `start`'s time.
    func copyWindowStart(_ start: HeldCommit, into copy: StorageEngine, rewrites: CompactionRewrites?,
                         progress: CompactionProgress?) throws {
        copy.pinTransactionIds(start.snapshot.txnId)
        try Self.copyTrees(of: ReadTransaction(snapshot: start.snapshot, codecs: codecs, views: decryptedViews), into: copy,
                           rewrites: rewrites, cancelled: closedFlag, progress: progress)
        try copy.sealPinned(timeMs: start.timeMs)
    }

    /// Writes into `copy` each commit after `older` up to `newer` (both of this engine's file,
    /// `older` the copy's newest), each as one commit with its own id and time.
    func replayCommits(after older: Snapshot, through newer: Snapshot, into copy: StorageEngine,
                       rewrites: CompactionRewrites?) throws {
        guard newer.commitOffset != older.commitOffset else { return }
        var chain: [HeldCommit] = []
        var reached = false
        try walkCommits(back: newer) { offset, length, commit in
            if offset == older.commitOffset {
                reached = true
                return false
            }
            chain.append(HeldCommit(snapshot: pastSnapshot(offset: offset, length: length, commit: commit, in: newer),
                                    timeMs: commit.timeMs))
            return true
        }
        guard reached else {
            throw StorageError.fileCorrupt(offset: newer.commitOffset, reason: "the commit a compaction copied last is not "
                                           + "among the commits before the newest")
        }
        var previous = try ReadTransaction(snapshot: older, codecs: codecs, views: decryptedViews)
        for held in chain.reversed() {
            guard !closedFlag.load(ordering: .relaxed) else { throw StorageError.closed }
            let next = try ReadTransaction(snapshot: held.snapshot, codecs: codecs, views: decryptedViews)
            try copy.writeReplayed(id: held.snapshot.txnId, timeMs: held.timeMs) { txn in
                for name in try next.changedTrees(since: previous).sorted() {
                    guard try next.tree(name) != nil else {
                        _ = try txn.dropTree(name)
                        continue
                    }
                    let target = try txn.tree(name, create: true)!
                    let rewrite = rewrites?(name)
                    try next.forEachDifference(in: name, since: previous) { key, value in
                        if let value {
                            try Self.put(txn, target, key: key, value: value, rewrite: rewrite)
                        } else {
                            _ = try txn.delete(target, key: key)
                        }
                    }
                }
            }
            previous = next
        }
    }

    /// For the automatic policy, with a window kept: whether a compaction would give back at
    /// least the policy's share of the log. What lies before the window's first commit, less what
    /// of it that commit still holds, is what it would drop. When not, the policy waits for the
    /// log to grow by a quarter before it looks again.
    func windowedCompactionPays(_ policy: StorageOptions.AutomaticCompaction, retention: StorageOptions.PastRetention) -> Bool {
        let newest = current.load(ordering: .acquiring)
        guard let start = try? windowStart(of: newest, keeping: retention) else { return true }
        let dropped = start.snapshot.commitOffset - min(start.snapshot.commitOffset, start.snapshot.liveBytes)
        if Double(dropped) >= policy.garbageShare * Double(newest.committedLength) { return true }
        automaticCompactionFloor.store(newest.committedLength + newest.committedLength / 4, ordering: .relaxed)
        return false
    }

    // MARK: The copy's engine

    /// Makes every commit of this copy carry `txnId` until `sealPinned`.
    func pinTransactionIds(_ txnId: UInt64) {
        acquireSettledWriter()
        defer { writer.signal() }
        log.pinnedTransactionId = txnId
    }

    /// Ends the copy of a window's first commit: its seal (the first commit without
    /// `CommitRecord.partialFlag`) carries the pinned id and `timeMs`; later commits get ids of
    /// their own again.
    func sealPinned(timeMs: UInt64) throws {
        acquireSettledWriter()
        log.partialCommits = false
        log.nextCommitTime = timeMs
        writer.signal()
        try write { _ in }  // no changes, but the pinned id is owed: a commit is made
        acquireSettledWriter()
        log.raiseTransactionIds(to: log.pinnedTransactionId ?? 0)
        log.pinnedTransactionId = nil
        writer.signal()
    }

    /// Runs `body` as one write transaction whose commit carries `id` (above every id of this
    /// copy) and `timeMs`, even when it changes nothing.
    func writeReplayed(id: UInt64, timeMs: UInt64, _ body: (WriteTransaction) throws -> Void) throws {
        acquireSettledWriter()
        let newest = current.load(ordering: .acquiring).txnId
        log.raiseTransactionIds(to: id)
        log.nextCommitTime = timeMs
        writer.signal()
        guard id > newest else {
            throw StorageError.fileCorrupt(offset: 0, reason: "commit \(id) comes after commit \(newest) in the log")
        }
        try write(body)
    }
}
