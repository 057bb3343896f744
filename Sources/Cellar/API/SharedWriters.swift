import CellarStorage

/// What a `Store` checks when several processes write its database (``StoreOptions/sharedWriting``)
/// and a write transaction starts on a commit another process made (the engine caught up with it
/// when the transaction began): the database's model must still be the one this store was opened
/// with, and the change history must not have been turned on meanwhile. Either would make this
/// process write what the other cannot read (records without the newer model's properties,
/// indexes it no longer keeps) or leave gaps in the history, so the write is refused with the
/// reason, and the app opens the store again.
///
/// The rest of the store's state between transactions follows a foreign commit by itself: id
/// sequences are kept per commit id (`Store.savedSequences`), HNSW graphs per commit range
/// (`VectorIndexes`, loaded from the write's base when they do not reflect it), full-text
/// statistics and the history's state are read in each transaction.
///
/// Thread safety: `check` and `committed` run on the thread holding the engine's write
/// transaction; the state is behind a mutex all the same (a store's open sets it).
final class SharedWriters: Sendable {
    private struct State {
        /// The stored model's bytes once the store is open (nil while it opens: its own writes sync
        /// the model).
        var model: [UInt8]?
        /// The commit this store last wrote or checked: a write that starts on another is on a
        /// foreign commit.
        var known: UInt64 = 0
    }

    private let state = Locked(State())

    /// The store is open: its model is the stored one from now on.
    func opened(_ engine: StorageEngine) throws {
        let bytes = try translatingErrors {
            try engine.read { txn -> [UInt8]? in
                guard let meta = try txn.tree(StorageLayout.metaTree) else { return nil }
                return try txn.get(meta, key: StorageLayout.modelKey)
            }
        }
        state.withLock { $0.model = bytes ?? [] }
    }

    /// At the start of `txn`: when it starts on a commit this store did not make or check, checks
    /// the model and the history (one read of each). Throws `schema` or `illegalArgument` naming
    /// what changed.
    func check(_ txn: WriteTransaction, recordsHistory: Bool) throws {
        let base = txn.transactionId - 1
        guard let model = state.withLock({ $0.known == base ? nil : $0.model }) else { return }
        try translatingErrors {
            let meta = try txn.tree(StorageLayout.metaTree, create: false)
            let stored = try meta.flatMap { try txn.get($0, key: StorageLayout.modelKey) } ?? []
            guard stored == model else {
                throw CellarError.schema("another process changed the database's model since this store was opened (a newer version of the app or of an extension); open the store again with the newer model before writing")
            }
            if !recordsHistory, let meta, try HistoryState.read(meta, in: txn) != nil {
                throw CellarError.illegalArgument("another process turned the change history on since this store was opened; open the store again so that its writes are recorded too")
            }
        }
        state.withLock { $0.known = base }
    }

    /// `txn` committed: the next write of this store starts on its commit.
    func committed(_ txn: WriteTransaction) {
        state.withLock { $0.known = txn.transactionId }
    }
}
