#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

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
///    own and the others', then publishes each of them, in commit order (each one's
///    `beforePublish` hook, then the engine's `current`), and wakes their committers. When
///    commits were queued meanwhile, it wakes the first of them to lead the next sync. So a commit
///    is visible only once it is durable, commits become visible in the order they were written,
///    and a group costs one sync and one wake-up per committer.
///
/// A failed sync fails every commit queued (each of their committers gets the error) and every
/// one queued after: nothing written after the last good sync is known to be on disk, and the
/// engine refuses further commits (the reason goes to `refusal`, the log's).
///
/// Thread-safe: its state is behind one mutex; each committer waits on a semaphore of its own, and
/// `settle` on a condition variable.
final class GroupCommit: @unchecked Sendable {
    /// A commit written to the log and waiting for its sync and its turn to be published.
    final class Waiter: @unchecked Sendable {
        // `done` and `error` are touched only under the group's mutex; `publish` by the committer
        // (when queued) and the leader that takes it (while it is out of the queue, before `done`).
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
        fileprivate var done = false
        fileprivate var error: (any Error)?
        /// Signalled when the commit is done, or when its committer should lead the next sync.
        fileprivate let wake = DispatchSemaphore(value: 0)

        fileprivate init(sequence: UInt64, snapshot: Snapshot, file: any StorageFile, publish: @escaping (Snapshot) -> Void) {
            self.sequence = sequence
            self.snapshot = snapshot
            self.file = file
            self.publish = publish
        }
    }

    // Everything below is touched only under `mutex`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Signalled when the queue is empty and no sync is in flight (for `settle`).
    private let settled: UnsafeMutablePointer<pthread_cond_t>
    /// The commits written and not done yet, in commit order.
    private var queue: [Waiter] = []
    /// The sequence of the newest commit written (queued).
    private var written: UInt64 = 0
    /// Every commit up to this sequence is durable.
    private var synced: UInt64 = 0
    /// A leader is syncing, or publishing what it synced.
    private var syncing = false
    /// The error of the sync that failed; once set, no queued commit succeeds.
    private var failure: (any Error)?
    /// Syncs made, and commits they made durable (for tests and benchmarks).
    private var syncCount = 0
    private var durableCount = 0
    /// Why commits are refused: set (unless it is already) when a sync fails.
    private let refusal: Locked<String?>

    init(refusal: Locked<String?>) {
        self.refusal = refusal
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        settled = .allocate(capacity: 1)
        pthread_cond_init(settled, nil)
    }

    deinit {
        pthread_cond_destroy(settled)
        settled.deallocate()
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
            return waiter
        }
    }

    /// Returns once `waiter`'s commit is durable and published (leading a sync when none is in
    /// flight). Throws the sync's error when a sync failed before it covered the commit; the
    /// commit is then never published.
    func awaitDurable(_ waiter: Waiter) throws {
        pthread_mutex_lock(mutex)
        while !waiter.done {
            if let failure {
                // Queued after the failed sync: it fails too.
                queue.removeAll { $0 === waiter }
                waiter.publish = nil
                waiter.done = true
                waiter.error = failure
                if queue.isEmpty && !syncing { pthread_cond_broadcast(settled) }
            } else if syncing {
                pthread_mutex_unlock(mutex)
                waiter.wake.wait()
                pthread_mutex_lock(mutex)
            } else {
                lead(waiter)
            }
        }
        let error = waiter.error
        pthread_mutex_unlock(mutex)
        if let error { throw error }
    }

    /// Called holding the mutex, with no sync in flight and `me` queued; returns holding it. Syncs
    /// once for every commit queued, publishes them in order, wakes their committers and the
    /// committer of the first commit left, who leads the next sync.
    private func lead(_ me: Waiter) {
        syncing = true
        let target = written
        let file = queue.last!.file
        pthread_mutex_unlock(mutex)
        let syncError: (any Error)?
        do {
            try file.sync()
            syncError = nil
        } catch {
            syncError = error
        }
        pthread_mutex_lock(mutex)
        syncCount += 1
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
            batch = Array(queue[..<count])
            queue.removeFirst(count)
            synced = target
            durableCount += count
        }
        pthread_mutex_unlock(mutex)
        // In commit order, and before any of them is done: a reader sees them one by one.
        for waiter in batch {
            if syncError == nil { waiter.publish?(waiter.snapshot) }
            waiter.publish = nil
        }
        pthread_mutex_lock(mutex)
        for waiter in batch {
            waiter.done = true
            waiter.error = syncError
        }
        syncing = false
        let next = queue.first
        if queue.isEmpty { pthread_cond_broadcast(settled) }
        pthread_mutex_unlock(mutex)
        for waiter in batch where waiter !== me { waiter.wake.signal() }
        next?.wake.signal()
        pthread_mutex_lock(mutex)
    }

    /// Waits until every commit written is done (published or failed): what the holder of the
    /// writer gate does before it looks at the newest commit, syncs, or swaps the file (close,
    /// compaction). No commit can be written meanwhile, since the gate is held.
    func settle() {
        withLock {
            while !queue.isEmpty || syncing { pthread_cond_wait(settled, mutex) }
        }
    }

    /// Syncs made by committers so far, and the commits they made durable.
    var counts: (syncs: Int, commits: Int) { withLock { (syncCount, durableCount) } }
}
