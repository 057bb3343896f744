import CellarStorage
import Foundation

/// Reading the store as it was at a past commit (`docs/time-travel.md`).
extension Store {
    /// A moment of the store's past: a commit, by the id ``lastCommitId`` gave, or the newest
    /// commit made at or before a date (the time the commit was made, by the clock of the
    /// process that made it).
    public enum PastMoment: Sendable, Equatable {
        case commit(UInt64)
        case date(Date)
    }

    /// The id of the newest commit: what ``read(asOf:_:)`` takes to come back to this state.
    public var lastCommitId: UInt64 { engine.lastTransactionId }

    /// Runs `body` with every read of this store on this thread (boxes, queries, relations, the
    /// full-text, geo and vector indexes) answering as the store was at `moment`. Writes in
    /// `body` throw ``CellarError/Code/cannotWriteWhileReading``.
    ///
    /// The store's file holds every commit since it was created or last compacted, and a
    /// compaction keeps the window ``StoreOptions/pastRetention`` sets (the newest commit
    /// without one): those can be read. See ``oldestReadableCommit()``.
    ///
    /// - Throws: ``CellarError/Code/illegalArgument`` for a moment before the oldest commit held
    ///   (or a commit id never made), naming the oldest one, and inside another transaction on
    ///   this thread; `body`'s errors.
    public func read<T>(asOf moment: PastMoment, _ body: () throws -> T) throws -> T {
        guard ThreadTransactions.current(for: self) == nil else {
            throw CellarError.illegalArgument("read(asOf:) cannot run inside another transaction")
        }
        let past: StorageEngine.PastCommit = switch moment {
        case .commit(let id): .transaction(id)
        case .date(let date): .time(millisecondsSince1970: UInt64(max(0, (date.timeIntervalSince1970 * 1000).rounded(.down))))
        }
        let txn = try translatingErrors { try engine.beginRead(asOf: past) }
        let context = TransactionContext(store: self, read: txn)
        context.readsThePast = true
        ThreadTransactions.push(context)
        defer { ThreadTransactions.pop(context) }
        return try translatingErrors { try body() }
    }

    /// The oldest commit ``read(asOf:_:)`` can read, with the time it was made; nil for a store
    /// without commits.
    public func oldestReadableCommit() throws -> (commit: UInt64, date: Date)? {
        try translatingErrors { try engine.oldestReadableCommit() }.map {
            ($0.transactionId, Date(timeIntervalSince1970: Double($0.millisecondsSince1970) / 1000))
        }
    }
}
