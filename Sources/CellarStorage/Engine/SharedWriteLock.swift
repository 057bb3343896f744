#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Atomics

/// The store's write lock when several processes write it (`StorageOptions.sharedWriting`): the
/// lock file's `flock`, held while this process has write work under way and released as soon as
/// it has none, so that another process can take it between two of this one's transactions
/// (`docs/engine.md`, "Several processes").
///
/// Work under way: the write transaction (or a compaction's hold), and each commit that waits for
/// its sync (`.full` durability: the next transaction may begin before the last one's group is
/// synced). Each piece `acquire`s or `retain`s once and `release`s once; the lock is let go when
/// the count returns to zero, which is after the last commit was synced and published. So the
/// next process that takes the lock finds every commit before it whole and durable in the file.
///
/// `acquire` is only called holding the engine's writer gate, so no two callers race to take the
/// `flock`; `release` may come from any committer's thread.
final class SharedWriteLock: @unchecked Sendable {
    /// The lock file's descriptor, open for the engine's life.
    let descriptor: Int32
    private let path: String
    /// How long `acquire` waits for another process: nil, for as long as it takes.
    private let wait: Duration?
    /// Work under way in this process; the `flock` is held while it is above zero.
    private let count = Locked(0)
    /// Whether this process holds the `flock`: set once it is taken, cleared just before it is let
    /// go. While it is set, no other process appends to the log, and the commits past the newest
    /// published one are this process's own (not yet synced): a reader of this engine must not
    /// walk to them (`LogFollower.refresh`).
    let isHeld = ManagedAtomic<Bool>(false)

    /// Wraps `descriptor`, the lock file's, whose `flock` the caller holds (the open took it).
    init(descriptor: Int32, path: String, wait: Duration?) {
        self.descriptor = descriptor
        self.path = path
        self.wait = wait
    }

    /// Lets go of the lock the open took (the engine is built): from now on it is taken per
    /// piece of work.
    func releaseAfterOpen() {
        Self.unlock(descriptor)
    }

    /// Counts one more piece of work, taking the `flock` when there was none. Returns true when it
    /// took it: another process may have written since this one last held it, and the caller
    /// catches up before it writes. Throws `storeLocked` when a finite wait runs out.
    func acquire() throws -> Bool {
        if count.withLock({ held in
            guard held > 0 else { return false }
            held += 1
            return true
        }) { return false }
        try Self.takeFlock(descriptor, path: path, waiting: wait)
        count.withLock { held in
            held = 1
            isHeld.store(true, ordering: .releasing)
        }
        return true
    }

    /// Counts one more piece of work while the lock is held (a commit that now waits for its sync).
    func retain() {
        count.withLock { held in
            precondition(held > 0, "retain without the write lock")
            held += 1
        }
    }

    /// Ends one piece of work; the last one lets go of the `flock`.
    func release() {
        count.withLock { held in
            precondition(held > 0, "the shared write lock was released more often than taken")
            held -= 1
            if held == 0 {
                isHeld.store(false, ordering: .releasing)
                Self.unlock(descriptor)
            }
        }
    }

    /// Takes the lock without waiting, for work that may be skipped (close's checkpoint). False
    /// when another process holds it.
    func tryAcquire() -> Bool {
        guard count.withLock({ $0 == 0 }) else {
            retain()
            return true
        }
        guard case .success = Syscall.valueOrErrno({ flock(descriptor, LOCK_EX | LOCK_NB) }) else { return false }
        count.withLock { held in
            held = 1
            isHeld.store(true, ordering: .releasing)
        }
        return true
    }

    // MARK: The data file's generation

    /// The number in the lock file's first 8 bytes: how many times a compaction replaced the data
    /// file (0 for a lock file never written). A writer that takes the lock compares it with the
    /// one it knew to learn whether another process compacted, with one `pread` of the lock file
    /// rather than a `stat` of the data file: a `stat` asks for the data file's timestamps, and
    /// on Linux (multigrain timestamps, 6.13 on) a file whose timestamps were looked at gets a new
    /// fine-grained one at its next write, which dirties its inode and makes the writer's next
    /// `fdatasync` write the inode too (measured: a `stat` between one-object durable commits
    /// took the commit rate to about 0.6×).
    static func fileGeneration(_ fd: Int32) -> UInt64 {
        var generation: UInt64 = 0
        let n = withUnsafeMutableBytes(of: &generation) { buffer in
            Syscall.valueOrErrno { pread(fd, buffer.baseAddress, 8, 0) }
        }
        guard case .success(8) = n else { return 0 }
        return UInt64(littleEndian: generation)
    }

    /// Whether `generation` says a swap is under way: a compaction counted its new file and may
    /// not have renamed it over the data file yet (or died in between). A swap takes the number to
    /// the next odd one before the rename and to the next even one after it (`beginSwap`,
    /// `endSwap`), so an even number read before a look at the data file's path promises that the
    /// path leads to the same file for as long as the number stays the same: a reader may keep
    /// what it found under an even number, never under an odd one (a look between the count and
    /// the rename finds the old file under the new number).
    static func isSwapping(_ generation: UInt64) -> Bool { generation & 1 == 1 }

    /// Before a compaction renames its copy over the data file (under the lock): the next odd
    /// number. A crash between this and the rename only makes the others look for a new file and
    /// find the same, never miss one. Returns the new generation.
    @discardableResult
    static func beginSwap(_ fd: Int32) -> UInt64 {
        let generation = fileGeneration(fd)
        return writeFileGeneration(fd, isSwapping(generation) ? generation &+ 2 : generation &+ 1)
    }

    /// After the rename (or after it failed), under the lock: the next even number. A writer that
    /// takes the lock and finds an odd one (a compaction that died between the two, or a lock file
    /// of an earlier version) calls it too, once it has looked at the path. Returns the new
    /// generation.
    @discardableResult
    static func endSwap(_ fd: Int32) -> UInt64 {
        let generation = fileGeneration(fd)
        return writeFileGeneration(fd, isSwapping(generation) ? generation &+ 1 : generation &+ 2)
    }

    private static func writeFileGeneration(_ fd: Int32, _ generation: UInt64) -> UInt64 {
        var bytes = generation.littleEndian
        _ = withUnsafeBytes(of: &bytes) { buffer in Syscall.valueOrErrno { pwrite(fd, buffer.baseAddress, 8, 0) } }
        return generation
    }

    // MARK: flock

    /// Takes the exclusive `flock` on `fd` (the lock file at `path`). With `waiting`, a busy lock
    /// is tried again every 10 ms until that much time has passed, then `storeLocked` is thrown
    /// (never blocking inside `flock`, so the deadline holds); with nil it waits in `flock` for as
    /// long as the holder keeps it (a process that dies lets go: the kernel releases its locks).
    static func takeFlock(_ fd: Int32, path: String, waiting: Duration?) throws {
        guard let waiting else {
            _ = try Syscall.check("flock", path: path) { flock(fd, LOCK_EX) }
            return
        }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: waiting)
        while true {
            switch Syscall.valueOrErrno({ flock(fd, LOCK_EX | LOCK_NB) }) {
            case .success:
                return
            case .failure(let error) where error.code == EWOULDBLOCK && clock.now < deadline:
                usleep(10_000)
            case .failure(let error):
                if error.code == EWOULDBLOCK { throw StorageError.storeLocked(path: path) }
                throw StorageError.io(operation: "flock", errno: error.code, path: path)
            }
        }
    }

    static func unlock(_ fd: Int32) {
        _ = Syscall.valueOrErrno { flock(fd, LOCK_UN) }
    }
}
