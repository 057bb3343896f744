import Atomics
import Foundation

/// The record of the commits the live queries of a store have not yet seen, written by the
/// writer while each commit is being published (one append per commit, whatever the number of
/// live queries) and read by the passes of the store's `LiveQueryHub`.
///
/// Scheduling: the first commit recorded while no pass is scheduled marks the journal scheduled
/// and asks for a signal (`takeSignal`), which the writer gives once the commit is visible; later
/// commits ride on that pass until it begins (`beginUpdate`).
final class LiveJournal: @unchecked Sendable {
    // Thread safety: `entries`, `scheduled` and `closed` under `lock`.
    private let lock = NSLock()
    private var entries: [(txnId: UInt64, changes: CommittedChanges?)] = []
    private var scheduled = false
    private var closed = false
    /// Whether a recorded commit asked for an update that is not scheduled yet.
    private let signalDue = ManagedAtomic<Bool>(false)

    init() {}

    /// The writer, before commit `txnId` is visible: what it changed (nil: not known object by
    /// object).
    func record(_ txnId: UInt64, _ changes: CommittedChanges?) {
        lock.withLock {
            guard !closed else { return }
            entries.append((txnId, changes))
            if !scheduled {
                scheduled = true
                signalDue.store(true, ordering: .releasing)
            }
        }
    }

    /// The writer, once the commit is visible: whether an update must be scheduled now.
    func takeSignal() -> Bool {
        signalDue.load(ordering: .relaxed) && signalDue.exchange(false, ordering: .acquiring)
    }

    /// Marks an update scheduled; false when one is already (or the journal is closed).
    func requestUpdate() -> Bool {
        lock.withLock {
            guard !closed, !scheduled else { return false }
            scheduled = true
            return true
        }
    }

    /// An update begins (before it opens its snapshot): commits recorded from now on schedule
    /// another.
    func beginUpdate() {
        lock.withLock { scheduled = false }
    }

    /// Takes the entries of the commits up to `txnId` (in commit order); tells whether newer
    /// ones remain.
    func take(through txnId: UInt64) -> (changes: [CommittedChanges?], remaining: Bool) {
        lock.withLock {
            let count = entries.firstIndex { $0.txnId > txnId } ?? entries.count
            let taken = entries[..<count].map(\.changes)
            entries.removeFirst(count)
            return (taken, !entries.isEmpty)
        }
    }

    /// Stops recording and scheduling for good.
    func close() {
        lock.withLock {
            closed = true
            entries = []
        }
    }
}
