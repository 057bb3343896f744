#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Atomics

/// How an engine follows the other processes that write the store (`docs/engine.md`, "Several
/// processes"): a read-only engine's readers, and those of one of several writing processes
/// (`StorageOptions.sharedWriting`), whose writer also catches up through it before it writes. At
/// the start of each read transaction it looks whether a writer committed since, and whether a
/// compaction renamed a new data file over the one it reads. (Below, for a read-only engine.)
///
/// The check, without a lock: one `stat` of the data file's path (which file it leads to, and its
/// size) and a look at the 16 bytes that follow the newest known commit in the mapping. The writer
/// keeps the space ahead of its log zeroed, so zeros there mean nothing was appended since.
///
/// When something was, under this follower's own mutex (never a lock the writer takes): the
/// mapping is replaced by a larger one when the file outgrew it, and the new frames are walked
/// forward from the newest known commit exactly as recovery walks them (`Recovery.walk`): every
/// record must verify and every commit continue the chain, so a frame still being written (or torn
/// by a writer that died) is never taken; the newest whole commit becomes the engine's `current`.
/// The records of a frame not yet whole are remembered (`PendingRecords`), so that the next look
/// hashes only what was added since.
///
/// When the path leads to another file than the open descriptor (a compaction renamed its copy
/// over the data file), the new file is opened and recovered as a read-only open does, and read
/// from then on, provided it holds the same store (same UUID) at a commit at least as new. Read
/// transactions already open keep their snapshot of the old file: its mapping stays valid after
/// the rename and after its descriptor is closed.
final class LogFollower: @unchecked Sendable {
    // Thread safety: `state` is only touched under its lock; `switches` is atomic; the rest is
    // immutable. `current` (the engine's) is only stored to under `state`'s lock. The check
    // without the lock trusts the size `stat` gives only when the path leads to the file of the
    // snapshot's own mapping (`MapGeneration.fileIdentity`), so it never reads a mapping past its
    // file's end.
    private struct State {
        var file: any StorageFile
        var sealing: RecordSealing
        /// Which file `file` is; nil when it cannot say (a test's file): then no compaction is followed.
        var identity: FileIdentity?
        /// A file found at the path that holds another store: not moved to (see `refresh`).
        var refused: FileIdentity?
        /// What the last walk verified past the newest commit in `file` (a frame being written),
        /// not hashed again while unchanged.
        var pending = PendingRecords()
        var closed = false
    }

    private let directory: String
    private let path: String
    private let options: StorageOptions
    private let uuid: StoreUUID
    private let state: Locked<State>
    /// What the last look under the mutex found, for the next looks without it: the file read
    /// (its identity), its size then (a file only grows), and the data file's generation in the
    /// lock file (`SharedWriteLock.fileGeneration`).
    private let known = Locked<(identity: FileIdentity?, size: UInt64, generation: UInt64)>((nil, 0, 0))
    /// The lock file, read-only, for the data file's generation; -1 when it cannot be opened
    /// (then each look `stat`s the data file's path).
    private let lockFile: Int32
    /// In one of several writing processes: its write lock. While this process holds it, the
    /// commits past the newest published one are its own, not yet synced, and readers do not walk
    /// to them.
    private let writeLock: SharedWriteLock?
    /// Compactions followed since open (for tests and diagnostics).
    let switches = ManagedAtomic<Int>(0)
    /// Told of each move to newer commits (see `announce`); nil until set.
    private let announcement = Locked<(@Sendable (_ from: Snapshot, _ to: Snapshot) -> (@Sendable () -> Void)?)?>(nil)

    /// Calls `hook` before each move of `current` to newer commits (another process's), under the
    /// follower's mutex, so in order; what it returns runs right after the move.
    func announce(_ hook: @escaping @Sendable (_ from: Snapshot, _ to: Snapshot) -> (@Sendable () -> Void)?) {
        announcement.withLock { $0 = hook }
    }

    /// Stores `snapshot` as `current`, newer than `old`, telling the announcement's hook.
    private func move(_ current: ManagedAtomic<Snapshot>, from old: Snapshot, to snapshot: Snapshot) {
        let after = announcement.withLock { $0 }?(old, snapshot)
        current.store(snapshot, ordering: .releasing)
        after?()
    }

    /// Follows the store in `directory` from `file`, a descriptor of its own, opened read-only.
    /// `options` are those of a read-only open (a compacted file is opened with them).
    init(directory: String, options: StorageOptions, uuid: StoreUUID, file: any StorageFile, sealing: RecordSealing,
         writeLock: SharedWriteLock? = nil) throws {
        self.directory = directory
        path = directory + "/" + StorageEngine.dataFileName
        self.options = options
        self.writeLock = writeLock
        lockFile = (try? Syscall.open(directory + "/" + StorageEngine.lockFileName, flags: O_RDONLY)) ?? -1
        self.uuid = uuid
        let identity = try file.identity()
        state = Locked(State(file: file, sealing: sealing, identity: identity))
    }

    /// Makes `current` the newest whole commit of the store, when it changed since `current` was
    /// taken. Throws when a compacted file the path now leads to cannot be opened (then `current`
    /// stays as it was, and the next call tries again). Nothing while this process holds the
    /// shared write lock, unless `catchingUp`: its writer, which has just taken it.
    func refresh(_ current: ManagedAtomic<Snapshot>, catchingUp: Bool = false) throws {
        if !catchingUp, let writeLock, writeLock.isHeld.load(ordering: .acquiring) { return }
        // The look without a system call on the data file: the generation in the lock file says
        // no compaction replaced it since the last look, and the bytes after the newest commit,
        // within the size known then, are zeros. (No `stat`: see `SharedWriteLock.fileGeneration`.)
        let generation = lockFile >= 0 ? SharedWriteLock.fileGeneration(lockFile) : nil
        let seen = known.withLock { $0 }
        let identity: FileIdentity
        if let generation, generation == seen.generation, let same = seen.identity {
            // No compaction since: the path leads to the file read then. New frames, or a log that
            // reached the size known then, are looked at under the mutex.
            let last = current.load(ordering: .acquiring)
            if same == last.generation.fileIdentity, last.committedLength + UInt64(LogRecord.headerSize) <= seen.size,
               !hasBytes(after: last, fileSize: seen.size) {
                return
            }
            identity = same
        } else {
            guard let (found, size) = Syscall.identity(ofPath: path) else { return }
            let snapshot = current.load(ordering: .acquiring)
            // When the path leads to the file of the newest snapshot's mapping, `size` is that file's.
            if found == snapshot.generation.fileIdentity, !hasBytes(after: snapshot, fileSize: size) {
                remember(found, size, generation)
                return
            }
            identity = found
        }
        try state.withLock { state in
            guard !state.closed else { return }
            // Looked at again under the mutex: the writer takes it to catch up once it holds the
            // lock, so it appends nothing before this walk is over.
            if !catchingUp, let writeLock, writeLock.isHeld.load(ordering: .acquiring) { return }
            var identity = identity
            if let theirs = current.load(ordering: .acquiring).generation.fileIdentity, theirs != state.identity,
               let (found, _) = Syscall.identity(ofPath: path) {
                // The engine moved to another file by itself (its own compaction, or its writer
                // catching up with another's): where the path leads is looked at now.
                identity = found
            }
            if let mine = state.identity, identity != mine, identity != state.refused {
                if try follow(compactedFile: identity, state: &state, current: current) { return }
            }
            // The size of the file read, which the path may no longer lead to (a new file refused).
            let size = try state.file.size()
            remember(state.identity, size, generation)
            let snapshot = current.load(ordering: .acquiring)
            // A snapshot of another file than the one read here, or of a file it cannot name, has
            // no commits in it to walk to: its offsets mean nothing in this file.
            guard snapshot.generation.fileIdentity == state.identity else { return }
            guard hasBytes(after: snapshot, fileSize: size) || size > UInt64(snapshot.generation.region.length) else { return }
            var generation = snapshot.generation
            if size > UInt64(generation.region.length) {
                let length = MapGeneration.mappingLength(for: size, minimum: options.initialMapSize)
                generation = MapGeneration(region: try state.file.map(length: length), salt: state.sealing.salt,
                                           cipher: state.sealing.cipher, fileIdentity: state.identity)
            }
            var recovered = RecoveredState(txnId: snapshot.txnId, commitOffset: snapshot.commitOffset,
                                           catalogRoot: snapshot.catalogRoot, liveBytes: snapshot.liveBytes,
                                           end: snapshot.committedLength)
            _ = Recovery.walk(&recovered, base: generation.region.base, fileSize: size, sealing: state.sealing,
                              pending: &state.pending)
            // A step of a compaction's copy never reaches the data file's name; should one be found,
            // it is no state of the store: stay.
            if recovered.txnId > snapshot.txnId && !recovered.partial {
                move(current, from: snapshot, to: Snapshot(txnId: recovered.txnId, catalogRoot: recovered.catalogRoot,
                                                           committedLength: recovered.end, commitOffset: recovered.commitOffset,
                                                           liveBytes: recovered.liveBytes, generation: generation))
            } else if generation !== snapshot.generation {
                // The larger mapping is kept for the next look.
                current.store(Snapshot(txnId: snapshot.txnId, catalogRoot: snapshot.catalogRoot,
                                       committedLength: snapshot.committedLength, commitOffset: snapshot.commitOffset,
                                       liveBytes: snapshot.liveBytes, generation: generation), ordering: .releasing)
            }
        }
    }

    /// Keeps what a look found for the looks without a system call, unless the lock file's
    /// generation was odd: a compaction between counting its new file and renaming it (see
    /// `SharedWriteLock.isSwapping`), when the path may still lead to the old one.
    private func remember(_ identity: FileIdentity?, _ size: UInt64, _ generation: UInt64?) {
        guard let generation, !SharedWriteLock.isSwapping(generation) else { return }
        known.withLock { $0 = (identity, size, generation) }
    }

    /// Whether the file (of `fileSize` bytes) has anything but zeros in the 16 bytes after the
    /// newest commit `snapshot` knows, as far as its mapping reaches: a record header (a new
    /// frame, whole or not). Reads the mapping only, no system call.
    private func hasBytes(after snapshot: Snapshot, fileSize: UInt64) -> Bool {
        let end = snapshot.committedLength
        let header = UInt64(LogRecord.headerSize)
        guard end + header <= min(fileSize, UInt64(snapshot.generation.region.length)) else {
            // The mapping ends before the next header: only a larger mapping can tell.
            return end + header <= fileSize
        }
        let record = snapshot.generation.region.base + Int(end)
        return record.loadUnaligned(as: UInt64.self) != 0 || record.loadUnaligned(fromByteOffset: 8, as: UInt64.self) != 0
    }

    /// Moves to the file the data file's path leads to now (`identity`), the copy a compaction
    /// renamed over the data file: opened and recovered as a read-only open does. Returns false,
    /// staying on the old file, when the new one holds another store or an older commit.
    private func follow(compactedFile identity: FileIdentity, state: inout State,
                        current: ManagedAtomic<Snapshot>) throws -> Bool {
        let opened = try OpenedStore.open(directory: directory, options: options, compactionCopy: false)
        let newIdentity = try? opened.file.identity()
        let snapshot = current.load(ordering: .acquiring)
        guard opened.header.uuid == uuid, opened.recovered.txnId >= snapshot.txnId, let newIdentity else {
            // Another store put in this one's place, or a file behind what was read already:
            // never shown to readers, which stay on the file they have.
            opened.file.close()
            state.refused = newIdentity ?? identity
            return false
        }
        let recovered = opened.recovered
        state.file.close()  // mappings of it stay valid for the snapshots that hold them
        state.file = opened.file
        state.sealing = opened.sealing
        state.identity = newIdentity
        state.refused = nil
        state.pending = PendingRecords()
        switches.wrappingIncrement(ordering: .relaxed)
        let moved = Snapshot(txnId: recovered.txnId, catalogRoot: recovered.catalogRoot,
                             committedLength: recovered.end, commitOffset: recovered.commitOffset,
                             liveBytes: recovered.liveBytes, generation: opened.generation)
        if moved.txnId > snapshot.txnId {
            move(current, from: snapshot, to: moved)
        } else {
            current.store(moved, ordering: .releasing)
        }
        return true
    }

    /// Closes the file read now. Idempotent.
    func close() {
        state.withLock { state in
            guard !state.closed else { return }
            state.closed = true
            state.file.close()
            if lockFile >= 0 { Syscall.close(lockFile) }
        }
    }
}
