import CellarStorage

/// The change history (``StoreOptions/changeHistory``): reading it and pruning it.
extension Store {
    /// The entries of the commits after `sequence`, oldest first (at most `limit` of them when
    /// given): what a consumer that has seen the history up to `sequence` has not seen yet
    /// (0: from the start). Read in one transaction (or in the one open on this thread).
    ///
    /// Throws ``CellarError/Code/illegalArgument`` when the store does not record history, and
    /// when entries after `sequence` were pruned (``pruneHistory(before:)``): the consumer would
    /// miss changes, and must start over from the objects themselves.
    public func history(since sequence: UInt64, limit: Int? = nil) throws -> [HistoryEntry] {
        try history(since: sequence, limit: limit, changes: nil)
    }

    /// `history(since:limit:)` that also stops before an entry that would bring the changes
    /// read past `changes` (the first entry is read whatever its size).
    func history(since sequence: UInt64, limit: Int?, changes: Int?) throws -> [HistoryEntry] {
        if let limit, limit < 0 { throw CellarError.illegalArgument("the history's limit is \(limit); it must not be negative") }
        return try inReadContext { context in
            guard let state = try historyState(in: context) else { throw Self.noHistory }
            guard sequence >= state.firstKept - 1 else {
                throw CellarError.illegalArgument("the history before sequence \(state.firstKept) was pruned: entries after \(sequence) are gone; read the objects again, then go on from sequence \(state.lastSequence)")
            }
            guard sequence < state.lastSequence, limit != 0, let cursor = try context.cursor(treeNamed: StorageLayout.historyTree) else { return [] }
            let names = HistoryNames(model)
            var entries: [HistoryEntry] = []
            var read = 0
            try cursor.scan(KeyRange(lower: Self.historyKey(sequence), lowerInclusive: false)) { key, value in
                guard key.count == 8 else { throw CellarError.fileCorrupt("a key of the history tree has \(key.count) bytes, expected 8") }
                let entrySequence = UInt64(bigEndian: key.loadUnaligned(as: UInt64.self))
                let entry = try HistoryEncoding.decode(sequence: entrySequence, value, model: names)
                if let changes, !entries.isEmpty, read + entry.changes.count > changes { return false }
                entries.append(entry)
                read += entry.changes.count
                return (limit.map { entries.count < $0 } ?? true) && (changes.map { read < $0 } ?? true)
            }
            return entries
        }
    }

    /// Drops the history's entries before `sequence`: call it with the lowest sequence every
    /// consumer has seen plus one (entries up to it stay readable). Later calls of
    /// ``history(since:limit:)`` from before it throw. Sequence numbers go on from where they
    /// were: pruning everything (``lastHistorySequence()`` + 1) starts no new count. Runs in the
    /// write transaction open on this thread, or in one of its own.
    ///
    /// Throws ``CellarError/Code/illegalArgument`` when the store does not record history, or
    /// for a `sequence` past ``lastHistorySequence()`` + 1 (entries not written yet).
    public func pruneHistory(before sequence: UInt64) throws {
        try inWriteContext { context in
            let write = context.write!
            guard let meta = try write.tree(StorageLayout.metaTree, create: false),
                  var state = try HistoryState.read(meta, in: write) else { throw Self.noHistory }
            guard sequence <= state.lastSequence + 1 else {
                throw CellarError.illegalArgument("cannot prune the history before sequence \(sequence): its last entry is \(state.lastSequence)")
            }
            guard sequence > state.firstKept else { return }
            if let tree = try write.tree(StorageLayout.historyTree, create: false) {
                var keys: [[UInt8]] = []
                try write.cursor(tree).scan(KeyRange(upper: Self.historyKey(sequence))) { key, _ in
                    keys.append(Array(key))
                    return true
                }
                for key in keys { _ = try write.delete(tree, key: key) }
            }
            state.firstKept = sequence
            try state.write(meta, in: write)
        }
    }

    /// The sequence number of the newest history entry (0 before the first); entries stay
    /// numbered after pruning. Throws ``CellarError/Code/illegalArgument`` when the store does
    /// not record history.
    public func lastHistorySequence() throws -> UInt64 {
        try inReadContext { context in
            guard let state = try historyState(in: context) else { throw Self.noHistory }
            return state.lastSequence
        }
    }

    /// The history's state in the transaction of `context`; nil when the store records none.
    func historyState(in context: TransactionContext) throws -> HistoryState? {
        if let write = context.write {
            guard let meta = try write.tree(StorageLayout.metaTree, create: false) else { return nil }
            return try HistoryState.read(meta, in: write)
        }
        guard let meta = try context.read!.tree(StorageLayout.metaTree) else { return nil }
        return try HistoryState.read(meta, in: context.read!)
    }

    /// Turns history on in a store that does not record it yet (at open, with
    /// ``StoreOptions/changeHistory``). Whether it records it afterwards.
    static func startHistory(_ engine: StorageEngine, wanted: Bool, readOnly: Bool) throws -> Bool {
        let recorded = try engine.read { txn -> Bool in
            guard let meta = try txn.tree(StorageLayout.metaTree) else { return false }
            return try HistoryState.read(meta, in: txn) != nil
        }
        guard !recorded, wanted else { return recorded }
        guard !readOnly else { return false }
        try engine.write { txn in
            let meta = try txn.tree(StorageLayout.metaTree, create: true)!
            if try HistoryState.read(meta, in: txn) == nil { try HistoryState().write(meta, in: txn) }
        }
        return true
    }

    static func historyKey(_ sequence: UInt64) -> [UInt8] {
        withUnsafeBytes(of: sequence.bigEndian) { Array($0) }
    }

    private static var noHistory: CellarError {
        CellarError.illegalArgument("the store does not record history: open it with StoreOptions.changeHistory set")
    }
}
