import Atomics
import CellarStorage

/// The record of the commits the live queries of a store have not yet seen, written by the
/// writer while each commit is being published (one append per commit, whatever the number of
/// live queries) and read by the passes of the store's `LiveQueryHub`.
///
/// Scheduling: the first commit recorded while no pass is scheduled marks the journal scheduled
/// and asks for a signal (`takeSignal`), which the writer gives once the commit is visible; later
/// commits ride on that pass until it begins (`beginUpdate`).
final class LiveJournal: Sendable {
    private struct State {
        var entries: [(txnId: UInt64, changes: CommittedChanges?)] = []
        var scheduled = false
        var closed = false
    }

    private let state = Locked(State())
    /// Whether a recorded commit asked for an update that is not scheduled yet.
    private let signalDue = ManagedAtomic<Bool>(false)

    init() {}

    /// The writer, before commit `txnId` is visible: what it changed (nil: not known object by
    /// object).
    func record(_ txnId: UInt64, _ changes: CommittedChanges?) {
        state.withLock { state in
            guard !state.closed else { return }
            state.entries.append((txnId, changes))
            if !state.scheduled {
                state.scheduled = true
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
        state.withLock { state in
            guard !state.closed, !state.scheduled else { return false }
            state.scheduled = true
            return true
        }
    }

    /// An update begins (before it opens its snapshot): commits recorded from now on schedule
    /// another.
    func beginUpdate() {
        state.withLock { $0.scheduled = false }
    }

    /// Takes the entries of the commits up to `txnId` (in commit order); tells whether newer
    /// ones remain.
    func take(through txnId: UInt64) -> (changes: [CommittedChanges?], remaining: Bool) {
        state.withLock { state in
            let count = state.entries.firstIndex { $0.txnId > txnId } ?? state.entries.count
            let taken = state.entries[..<count].map(\.changes)
            state.entries.removeFirst(count)
            return (taken, !state.entries.isEmpty)
        }
    }

    /// Stops recording and scheduling for good.
    func close() {
        state.withLock { state in
            state.closed = true
            state.entries = []
        }
    }
}
