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
/// 1. Under the writer gate, once its frame is written (not synced), `enqueue` gives it a
///    `Ticket`: its place in commit order. The writer gate is then released, and the next writer
///    begins on this commit's state (the engine's `tip`) while it is still unsynced.
/// 2. Without the gate, `awaitDurable` waits until a sync has covered the commit. A committer that
///    finds no sync in flight becomes the leader: it syncs the file once for every commit written
///    so far, its own and the others'. The others wait for that sync, or lead the next one. Then
///    each committer, in commit order, runs its `publish` (the `beforePublish` hook and the
///    store of the engine's `current`): a commit is visible only once it is durable, and commits
///    become visible in the order they were written.
///
/// A failed sync fails every commit not yet synced (each of their committers gets the error) and
/// every one after: nothing written after it is known to be on disk, and the engine refuses
/// further commits (the reason goes to `refusal`, the log's).
///
/// Thread-safe: its state is behind one mutex, with one condition variable for the waiters.
final class GroupCommit: @unchecked Sendable {
    /// A commit written to the log and waiting for its sync and its turn to be published.
    struct Ticket {
        /// Its place in commit order (1, 2, …; not its transaction id, which may jump).
        let sequence: UInt64
        /// What it publishes.
        let snapshot: Snapshot
        /// The data file its frame is in (a compaction swaps the file only once no commit is
        /// pending: `settle`).
        let file: any StorageFile
    }

    // Everything below is touched only under `mutex`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    /// The sequence of the newest commit written (enqueued).
    private var written: UInt64 = 0
    /// Every commit up to this sequence is durable.
    private var synced: UInt64 = 0
    /// Every commit up to this sequence is done: published, or failed.
    private var finished: UInt64 = 0
    /// A leader is syncing.
    private var syncing = false
    /// The error of the sync that failed; once set, no commit after `synced` succeeds.
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
        condition = .allocate(capacity: 1)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
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
    /// `file`: its place in commit order.
    func enqueue(_ snapshot: Snapshot, file: any StorageFile) -> Ticket {
        withLock {
            written += 1
            return Ticket(sequence: written, snapshot: snapshot, file: file)
        }
    }

    /// Waits until `ticket`'s commit is durable (leading a sync when none is in flight), then, when
    /// every earlier commit is done, calls `publish` and returns. Throws the sync's error when a
    /// sync failed before it covered the commit; `publish` is then not called.
    func awaitDurable(_ ticket: Ticket, publish: () -> Void) throws {
        pthread_mutex_lock(mutex)
        while synced < ticket.sequence && failure == nil {
            if syncing {
                pthread_cond_wait(condition, mutex)
                continue
            }
            // Lead: one sync for everything written so far.
            syncing = true
            let target = written
            pthread_mutex_unlock(mutex)
            let error: (any Error)?
            do {
                try ticket.file.sync()
                error = nil
            } catch let caught {
                error = caught
            }
            pthread_mutex_lock(mutex)
            syncing = false
            syncCount += 1
            if let error {
                if failure == nil {
                    failure = error
                    refusal.withLock { reason in
                        if reason == nil { reason = "a sync failed (\(error)); whether the last commits are on disk is unknown" }
                    }
                }
            } else {
                durableCount += Int(target - synced)
                synced = target
            }
            pthread_cond_broadcast(condition)
        }
        // Published in commit order: wait for the commits before this one.
        while finished != ticket.sequence - 1 { pthread_cond_wait(condition, mutex) }
        let durable = synced >= ticket.sequence
        let error = failure
        pthread_mutex_unlock(mutex)
        if durable { publish() }
        withLock {
            finished = ticket.sequence
            pthread_cond_broadcast(condition)
        }
        if !durable, let error { throw error }
    }

    /// Waits until every commit written is done (published or failed): what the holder of the
    /// writer gate does before it looks at the newest commit, syncs, or swaps the file (close,
    /// compaction). No commit can be written meanwhile, since the gate is held.
    func settle() {
        withLock {
            while finished != written { pthread_cond_wait(condition, mutex) }
        }
    }

    /// Syncs made by committers so far, and the commits they made durable.
    var counts: (syncs: Int, commits: Int) { withLock { (syncCount, durableCount) } }
}
