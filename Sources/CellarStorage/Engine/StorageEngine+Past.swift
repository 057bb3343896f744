/// Reading past commits. The log is append-only and a commit's trees are copied on write, so
/// every commit since the data file was written (created, or replaced by a compaction) is still
/// whole in it: its commit record names its catalog root, and each commit record the one before
/// it. A compaction copies the newest commit, or the window `StorageOptions.pastRetention` sets,
/// so the oldest commit readable is the first whole one of the current file.
extension StorageEngine {
    /// A past commit to read: by its transaction id, or the newest one committed at or before a
    /// time (the time each commit record holds, in milliseconds since 1970, from the clock of the
    /// process that committed).
    public enum PastCommit: Sendable, Equatable {
        case transaction(UInt64)
        case time(millisecondsSince1970: UInt64)
    }

    /// A read transaction on a past commit still in the data file. Walks the commit records back
    /// from the newest (each one verified), so it costs a look at each commit made since the one
    /// asked for.
    ///
    /// - Throws: `illegalArgument` when the file no longer holds that commit (older than its first
    ///   one, or a transaction id never committed), naming the oldest commit it holds;
    ///   `fileCorrupt` when a commit record on the way fails its check.
    public func beginRead(asOf past: PastCommit) throws -> ReadTransaction {
        let newest = try beginRead()
        let snapshot = newest.snapshot
        var oldest: (txnId: UInt64, timeMs: UInt64)?
        var found: Snapshot?
        try walkCommits(back: snapshot) { offset, length, commit in
            oldest = (commit.txnId, commit.timeMs)
            let matches: Bool
            switch past {
            case .transaction(let id): matches = commit.txnId == id
            case .time(let ms): matches = commit.timeMs <= ms
            }
            if matches {
                found = pastSnapshot(offset: offset, length: length, commit: commit, in: snapshot)
                return false
            }
            if case .transaction(let id) = past, commit.txnId < id { return false }
            return true
        }
        if let found { return try ReadTransaction(snapshot: found, codecs: codecs, views: decryptedViews) }
        switch past {
        case .transaction(let id):
            throw StorageError.illegalArgument("commit \(id) cannot be read: it is not among the commits the data file holds (\(Self.held(oldest)))")
        case .time(let ms):
            throw StorageError.illegalArgument("no commit at or before \(ms) ms since 1970 can be read: \(Self.held(oldest))")
        }
    }

    /// Read transactions on commit `id` and on the first commit after it (the commit of a write
    /// transaction that began on `id`, when no other writer came between), from one walk back
    /// from the newest commit, as `beginRead(asOf:)` makes.
    ///
    /// - Throws: `illegalArgument` when the file no longer holds commit `id` (or never did), or
    ///   holds no commit after it, naming the oldest commit it holds; `fileCorrupt` when a commit
    ///   record on the way fails its check.
    public func beginRead(commitAndTheOneAfter id: UInt64) throws -> (commit: ReadTransaction, after: ReadTransaction) {
        let newest = try beginRead()
        let snapshot = newest.snapshot
        var oldest: (txnId: UInt64, timeMs: UInt64)?
        // The walk goes back: the last commit above `id` it meets is the first after it.
        var after: (offset: UInt64, length: Int, commit: CommitRecord)?
        var found: Snapshot?
        try walkCommits(back: snapshot) { offset, length, commit in
            oldest = (commit.txnId, commit.timeMs)
            guard commit.txnId <= id else {
                after = (offset, length, commit)
                return true
            }
            if commit.txnId == id { found = pastSnapshot(offset: offset, length: length, commit: commit, in: snapshot) }
            return false
        }
        guard let found, let after else {
            let which = found == nil ? "commit \(id) cannot be read: it is not among the commits the data file holds"
                : "no commit after \(id) can be read: \(id) is the newest"
            throw StorageError.illegalArgument("\(which) (\(Self.held(oldest)))")
        }
        return (try ReadTransaction(snapshot: found, codecs: codecs, views: decryptedViews),
                try ReadTransaction(snapshot: pastSnapshot(offset: after.offset, length: after.length, commit: after.commit, in: snapshot),
                                    codecs: codecs, views: decryptedViews))
    }

    /// What the file holds, for an error's message: its oldest commit (`oldest`), and why.
    private static func held(_ oldest: (txnId: UInt64, timeMs: UInt64)?) -> String {
        (oldest.map { "the oldest commit the file holds is \($0.txnId), made at \($0.timeMs) ms since 1970" } ?? "the store has no commit")
            + "; a compaction keeps the newest, or the window `pastRetention` sets"
    }

    /// The oldest commit the data file holds (the first readable with `beginRead(asOf:)`): its
    /// transaction id and time; nil for a store without commits.
    public func oldestReadableCommit() throws -> (transactionId: UInt64, millisecondsSince1970: UInt64)? {
        var oldest: (UInt64, UInt64)?
        try walkCommits(back: try beginRead().snapshot) { _, _, commit in
            oldest = (commit.txnId, commit.timeMs)
            return true
        }
        return oldest
    }

    /// Calls `visit` with each whole commit of `snapshot`'s file from `snapshot`'s back to the
    /// first (a compaction's copy steps before it are not states of the store), newest first,
    /// with its record's offset and length, until it returns false.
    func walkCommits(back snapshot: Snapshot, _ visit: (UInt64, Int, CommitRecord) throws -> Bool) throws {
        let generation = snapshot.generation
        let sealing = RecordSealing(salt: generation.records.salt, cipher: generation.cipher)
        let base = UnsafeRawPointer(generation.region.base)
        var offset = snapshot.commitOffset
        var previousId = UInt64.max
        while offset != 0 {
            guard let (length, kind) = LogRecord.verify(base, offset: offset, available: snapshot.committedLength, salt: sealing.salt),
                  kind == .commit,
                  let commit = CommitRecord.read(base + Int(offset), length: length, offset: offset, sealing: sealing) else {
                throw StorageError.fileCorrupt(offset: offset, reason: "the commit record a later commit names fails its check")
            }
            // A partial commit may carry the id of the commit after it (see `Recovery.take`).
            if commit.flags & CommitRecord.partialFlag != 0 { return }
            guard commit.txnId < previousId, commit.previousCommit < offset else {
                throw StorageError.fileCorrupt(offset: offset, reason: "the commit record a later commit names fails its check")
            }
            guard try visit(offset, length, commit) else { return }
            previousId = commit.txnId
            offset = commit.previousCommit
        }
    }
}
