#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Group commit, in `.full` durability: commits written while a sync is in flight are synced
/// together by the next sync, so that N threads committing at once pay for about one sync per
/// group instead of one each (`docs/engine.md`, "Group commit").
///
/// A commit goes through it in two steps:
///
/// 1. Under the writer gate, once its frame is written (not synced), `enqueue` queues it, in
///    commit order, with how to publish it. The writer gate is then released, and the next writer
///    begins on this commit's state (the engine's `tip`) while it is still unsynced.
/// 2. Without the gate, `awaitDurable` waits until the commit is done. A committer that finds no
///    sync in flight becomes the leader: it syncs the file once for every commit queued so far, its
///    own and the others'. Once the sync returned, it wakes the committer of the first commit
///    queued meanwhile, who leads the next sync, then publishes its own group, in commit order
///    (each commit's `beforePublish` hook, then the engine's `current`), after the group before
///    it, and wakes their committers. So a commit is visible only once it is durable, commits
///    become visible in the order they were written, a group costs one sync and one wake-up per
///    committer, and syncs follow each other without waiting for publication. Syncs never
///    overlap: a sync that fails is then the one that covered the commits whose bytes it could
///    not write (a failed write-back is reported to one sync of the file only).
///
/// A leader gathers before it syncs: when fewer commits are queued than the last group had, it
/// waits for more, at most half as long as the last sync took (and never more than 1 ms). Without
/// that, the committers of the group just published come back while the next sync is already in
/// flight, wait for the one after it, and a group holds about half the committing threads: each
/// thread waits two syncs per commit. With one thread committing, groups have one commit and
/// nobody waits.
///
/// A failed sync fails every commit queued (each of their committers gets the error) and every
/// one queued after: nothing written after the last good sync is known to be on disk, and the
/// engine refuses further commits (the reason goes to `refusal`, the log's).
///
/// Thread-safe: its state is behind one mutex; each committer that has to wait does so on a
/// condition variable of its own (made then), and leaders waiting for their turn to publish, and
/// `settle`, on one shared condition variable.
final class GroupCommit: @unchecked Sendable {
    /// A commit written to the log and waiting for its sync and its turn to be published.
    final class Waiter: @unchecked Sendable {
        // `taken`, `done`, `error` and `wake` are touched only under the group's mutex; `publish`
        // under it while queued, then only by the leader that took it, until it is `done`.
        /// Its place in commit order (1, 2, …; not its transaction id, which may jump).
        let sequence: UInt64
        /// What it publishes.
        let snapshot: Snapshot
        /// The data file its frame is in (a compaction swaps the file only once no commit is
        /// pending: `settle`).
        let file: any StorageFile
        /// Makes it visible: the `beforePublish` hook, then the engine's `current`. Dropped once
        /// called (or once the commit failed): it refers to the committer's hook, which must not
        /// outlive the commit call.
        fileprivate var publish: ((Snapshot) -> Void)?
        /// In a leader's group: that leader finishes it.
        fileprivate var taken = false
        fileprivate var done = false
        fileprivate var error: (any Error)?
        /// Signalled (holding the group's mutex) when the commit is done, or when its committer
        /// should lead the next sync; made only when the committer has to wait (one thread
        /// committing alone leads every sync and never waits).
        private var wake: UnsafeMutablePointer<pthread_cond_t>?

        fileprivate init(sequence: UInt64, snapshot: Snapshot, file: any StorageFile, publish: @escaping (Snapshot) -> Void) {
            self.sequence = sequence
            self.snapshot = snapshot
            self.file = file
            self.publish = publish
        }

        deinit {
            if let wake {
                pthread_cond_destroy(wake)
                wake.deallocate()
            }
        }

        /// Called holding `mutex`: waits until `signal` (or a spurious wake-up); returns holding it.
        fileprivate func wait(releasing mutex: UnsafeMutablePointer<pthread_mutex_t>) {
            let condition: UnsafeMutablePointer<pthread_cond_t>
            if let wake {
                condition = wake
            } else {
                condition = .allocate(capacity: 1)
                pthread_cond_init(condition, nil)
                wake = condition
            }
            pthread_cond_wait(condition, mutex)
        }

        /// Called holding the mutex `wait` is given, after changing what the committer waits for.
        /// A committer not waiting yet checks that state under the mutex before it waits, so no
        /// wake-up is lost.
        fileprivate func signal() {
            if let wake { pthread_cond_signal(wake) }
        }
    }

    // Everything below is touched only under `mutex`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Broadcast when a group is done (published or failed), for the leader of the next group and
    /// for `settle`.
    private let changed: UnsafeMutablePointer<pthread_cond_t>
    /// The commits written and not taken by a leader yet, in commit order.
    private var queue: [Waiter] = []
    /// The commits written and not done yet (queued, or in a leader's group).
    private var pending = 0
    /// Every commit up to this sequence is done (published or failed), but those that failed on
    /// their own after a failed sync (`awaitDurable`), which come after every group.
    private var finished: UInt64 = 0
    /// The sequence of the newest commit written (queued).
    private var written: UInt64 = 0
    /// Every commit up to this sequence is durable.
    private var synced: UInt64 = 0
    /// A leader is syncing.
    private var syncing = false
    /// The error of the sync that failed; once set, no queued commit succeeds.
    private var failure: (any Error)?
    /// Syncs made, and commits they made durable (for the tests).
    private var syncCount = 0
    private var durableCount = 0
    /// The commits of the last sync, and how long it took: how many the next leader gathers,
    /// and for how long at most.
    private var lastGroupSize = 1
    private var lastSyncNanoseconds: UInt64 = 0
    /// A leader is gathering: `enqueue` signals `arrived`.
    private var gathering = false
    private let arrived: UnsafeMutablePointer<pthread_cond_t>
    /// Why commits are refused: set (unless it is already) when a sync fails.
    private let refusal: Locked<String?>

    init(refusal: Locked<String?>) {
        self.refusal = refusal
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        changed = .allocate(capacity: 1)
        pthread_cond_init(changed, nil)
        arrived = .allocate(capacity: 1)
        pthread_cond_init(arrived, nil)
    }

    deinit {
        pthread_cond_destroy(arrived)
        arrived.deallocate()
        pthread_cond_destroy(changed)
        changed.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    private func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Under the writer gate, before a frame is written: whether every commit written before it is
    /// durable already. Only then may its commit record carry `CommitRecord.durableFlag`, which
    /// tells recovery that everything before the record was synced once.
    var everythingSynced: Bool {
        withLock { synced == written && failure == nil }
    }

    /// Under the writer gate, once the frame of the commit that makes `snapshot` is written to
    /// `file`: queues it, in commit order. `publish` makes it visible; it is called at most once,
    /// by whichever committer leads the sync that covers it, and dropped by the time
    /// `awaitDurable` returns.
    func enqueue(_ snapshot: Snapshot, file: any StorageFile, publish: @escaping (Snapshot) -> Void) -> Waiter {
        withLock {
            written += 1
            let waiter = Waiter(sequence: written, snapshot: snapshot, file: file, publish: publish)
            queue.append(waiter)
            pending += 1
            if gathering { pthread_cond_signal(arrived) }
            return waiter
        }
    }

    /// Returns once `waiter`'s commit is durable and published (leading a sync when none is in
    /// flight). Throws the sync's error when a sync failed before it covered the commit; the
    /// commit is then never published.
    func awaitDurable(_ waiter: Waiter) throws {
        pthread_mutex_lock(mutex)
        while !waiter.done {
            if waiter.taken || (syncing && failure == nil) {
                waiter.wait(releasing: mutex)
            } else if let failure {
                // Queued after the failed sync: it fails too.
                queue.removeAll { $0 === waiter }
                waiter.publish = nil
                waiter.done = true
                waiter.error = failure
                pending -= 1
                if pending == 0 { pthread_cond_broadcast(changed) }
            } else {
                lead(waiter)
            }
        }
        let error = waiter.error
        pthread_mutex_unlock(mutex)
        if let error { throw error }
    }

    /// Called holding the mutex, with no sync in flight and `me` queued (not taken); returns holding it. Syncs
    /// once for every commit queued, wakes the committer of the first commit left (who leads the
    /// next sync), publishes its group in order once the group before it is done, and wakes their
    /// committers.
    private func lead(_ me: Waiter) {
        syncing = true
        gather()
        let target = written
        let file = queue.last!.file
        pthread_mutex_unlock(mutex)
        let syncError: (any Error)?
        let started = Self.monotonicNanoseconds()
        do {
            try file.sync()
            syncError = nil
        } catch {
            syncError = error
        }
        let took = Self.monotonicNanoseconds() &- started
        pthread_mutex_lock(mutex)
        syncCount += 1
        lastSyncNanoseconds = took
        let batch: [Waiter]
        if let syncError {
            if failure == nil {
                failure = syncError
                refusal.withLock { reason in
                    if reason == nil { reason = "a sync failed (\(syncError)); whether the last commits are on disk is unknown" }
                }
            }
            batch = queue
            queue.removeAll()
        } else {
            let count = queue.firstIndex { $0.sequence > target } ?? queue.count
            if count == queue.count {
                // The common case, and always so with one thread committing: no copy.
                batch = queue
                queue = []
            } else {
                batch = Array(queue[..<count])
                queue.removeFirst(count)
            }
            synced = target
            durableCount += count
            lastGroupSize = count
        }
        for waiter in batch { waiter.taken = true }
        syncing = false
        // The next sync starts while this group is published.
        queue.first?.signal()
        // In commit order: after the group before this one.
        while finished != batch[0].sequence - 1 { pthread_cond_wait(changed, mutex) }
        pthread_mutex_unlock(mutex)
        // Before any of them is done: a reader sees them one by one, in order.
        for waiter in batch {
            if syncError == nil { waiter.publish?(waiter.snapshot) }
            waiter.publish = nil
        }
        pthread_mutex_lock(mutex)
        for waiter in batch {
            waiter.done = true
            waiter.error = syncError
        }
        finished = batch[batch.count - 1].sequence
        pending -= batch.count
        pthread_cond_broadcast(changed)
        for waiter in batch where waiter !== me { waiter.signal() }
    }

    /// Called holding the mutex by a leader about to sync (with `syncing` set, so that committers
    /// arriving meanwhile wait to be taken): while fewer commits are queued than the last group
    /// had, waits for more, at most half as long as the last sync took and never more than 1 ms
    /// (see the type's comment). Returns holding the mutex.
    private func gather() {
        guard queue.count < lastGroupSize, lastSyncNanoseconds > 0, failure == nil else { return }
        let wait = min(lastSyncNanoseconds / 2, 1_000_000)
        let deadline = Self.monotonicNanoseconds() &+ wait
        var realtime = timespec()
        clock_gettime(CLOCK_REALTIME, &realtime)
        let until = UInt64(realtime.tv_sec) &* 1_000_000_000 &+ UInt64(realtime.tv_nsec) &+ wait
        var limit = timespec(tv_sec: Int(until / 1_000_000_000), tv_nsec: Int(until % 1_000_000_000))
        gathering = true
        while queue.count < lastGroupSize && failure == nil && Self.monotonicNanoseconds() < deadline {
            if pthread_cond_timedwait(arrived, mutex, &limit) == ETIMEDOUT { break }
        }
        gathering = false
    }

    private static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    /// Waits until every commit written is done (published or failed): what the holder of the
    /// writer gate does before it looks at the newest commit, syncs, or swaps the file (close,
    /// compaction). No commit can be written meanwhile, since the gate is held.
    func settle() {
        withLock {
            while pending > 0 { pthread_cond_wait(changed, mutex) }
        }
    }

    /// Syncs made by committers so far, and the commits they made durable.
    var counts: (syncs: Int, commits: Int) { withLock { (syncCount, durableCount) } }

    /// The commits written and not done yet: queued, or in the group a sync covers.
    var pendingCount: Int { withLock { pending } }
}
