#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a store is opened.
public struct StorageOptions: Sendable {
    /// When a commit is on disk.
    public enum Durability: Sendable, Equatable {
        /// `commit` returns after one data sync (`fdatasync`; `F_FULLFSYNC` on Apple platforms):
        /// a commit that returned survives `kill -9` and power loss.
        case full
        /// No sync per commit: the operating system writes the data when it likes. A process crash
        /// loses nothing; power loss or an OS crash may lose the latest commits, never leaving a
        /// broken store. The engine still syncs every `superblockInterval` commits and at close.
        case none
    }

    /// When a store compacts itself (`StorageEngine.compact()`, on a utility-QoS queue of the
    /// store's): after a commit that leaves at least `garbageShare` of the log garbage (bytes no
    /// commit reaches any more: replaced and deleted records), once the log is at least
    /// `minimumFileSize` bytes. A compaction that fails leaves the store as it was and is tried
    /// again once the log has grown by `minimumFileSize`.
    ///
    /// With `atOpen`, a writable open whose log already passes the policy compacts before it
    /// returns (on the opening thread): a process that never lives long enough for a background
    /// compaction to finish still gets its file back. Open then takes as long as copying the live
    /// data. Commits never wait for a compaction to finish.
    public struct AutomaticCompaction: Sendable, Equatable {
        /// The share of the log (0 to 1) that must be garbage before a compaction starts; 0.5 by default.
        public var garbageShare: Double
        /// The smallest log, in bytes, that compacts itself; 64 MiB by default.
        public var minimumFileSize: UInt64
        /// Whether a writable open compacts first when the log already passes the policy; true by
        /// default.
        public var atOpen: Bool

        /// A policy that compacts once `garbageShare` of a log of at least `minimumFileSize` bytes is
        /// garbage, and, with `atOpen`, at a writable open whose log already passes it.
        public init(garbageShare: Double = 0.5, minimumFileSize: UInt64 = 64 << 20, atOpen: Bool = true) {
            self.garbageShare = garbageShare
            self.minimumFileSize = minimumFileSize
            self.atOpen = atOpen
        }
    }

    /// The window of past commits a compaction keeps (`docs/time-travel.md`, "The window"). A
    /// commit is never dropped before a compaction; a compaction copies the window's first commit
    /// whole and each later one as the keys it changed, with its own id and time, and drops what
    /// came before. With a window the file holds the live data plus the window's changes, and the
    /// automatic policy compacts only once what lies before the window pays for it.
    public enum PastRetention: Sendable, Equatable {
        /// The newest `n` commits (at least 1).
        case commits(Int)
        /// Every commit of the last `duration` (by the time each commit record holds), and the
        /// one the store was at when that span began: a read at any moment of it answers. Longer
        /// than zero.
        case duration(Duration)
    }

    /// When a commit returns: after its frame is synced (``Durability/full``, the default) or once it
    /// is written (``Durability/none``).
    public var durability: Durability
    /// Open without the write lock; no writes. A missing store is an error. Another process may
    /// write the store meanwhile: each read transaction starts on the newest commit it made, and
    /// a compaction that replaces the data file is followed (`docs/engine.md`, "Several processes").
    public var readOnly: Bool
    /// How long a writable open waits for the store's write lock while another process holds it,
    /// trying again every few milliseconds, before it throws `storeLocked`. Zero (the default):
    /// `storeLocked` at once (after a short grace for a forked child that still shares the lock).
    public var lockWaitTimeout: Duration
    /// Let several processes write the store (an app and its extensions, say): the write lock is
    /// taken for each write transaction (and each compaction) and let go once its commit is
    /// synced, instead of being held from open to close. A write transaction first catches up with
    /// the commits other processes made since (and the file another one compacted), so that it
    /// starts on the newest commit in the file; read transactions see other processes' commits as
    /// a read-only open does. Every process that writes the store must set it: one that does not
    /// holds the lock from open to close, and the others wait for it. While another process
    /// writes, a write transaction waits for its lock (for `lockWaitTimeout`, when that is set;
    /// without end otherwise). False by default (`docs/engine.md`, "Several processes").
    public var sharedWriting: Bool
    /// Keep the store in memory only: no directory, no lock, nothing left after `close`. Every
    /// engine opened this way is a new, empty, private store. Commits skip the sync.
    public var inMemory: Bool
    /// Permissions of a newly created data file.
    public var fileMode: UInt16
    /// Bytes mapped at open; the map grows (by new, larger mappings) as the file does. No limit.
    public var initialMapSize: Int
    /// Target size of a B+tree node in bytes; nodes split above it.
    public var nodeSize: Int
    /// Commits between two superblock updates (which let open skip reading the whole log).
    public var superblockInterval: Int
    /// When the store compacts itself; nil: only when `compact()` is called. Ignored in memory.
    public var automaticCompaction: AutomaticCompaction?
    /// Which past commits a compaction keeps readable with ``StorageEngine/beginRead(asOf:)``:
    /// nil (the default) keeps the newest only; see ``PastRetention``.
    public var pastRetention: PastRetention?
    /// How new values are compressed (see `Compression`); every store reads compressed values.
    public var compression: Compression
    /// Values shorter than this many bytes are never compressed (at least 16).
    public var compressionThreshold: Int
    /// How much memory a write transaction's changes may hold (64 MiB by default). Past half of
    /// it, the transaction writes the nodes it changed into the log ahead of its commit (a
    /// *spill*; they become part of the store only with the commit record), so that one
    /// transaction may write far more than memory holds: an import of ten million objects runs
    /// in this much memory. The other half holds what the last spill wrote, which stays readable
    /// by pointers taken before it until the next one. `Int.max`: never spill (every change is
    /// held in memory until the commit). At least 64 KiB. Ignored in memory.
    public var transactionMemoryBudget: Int
    /// The key the store is encrypted with (AES-256-GCM; `docs/encryption.md`); nil for a plain
    /// store. A new store is created encrypted when it is set. Opening an encrypted store needs
    /// its key (`encryptionKeyRequired`, `wrongEncryptionKey`); a plain store refuses one
    /// (`notEncrypted`): compaction adds, changes or removes encryption
    /// (``StorageEngine/compact(newKey:)``).
    public var encryptionKey: EncryptionKey?
    /// How many bytes of an encrypted store's records readers keep decrypted (512 MiB by
    /// default, at least 1 MiB). This is memory of the process's own, on top of the page cache:
    /// a store smaller than it never fills it; on a device short of memory, lower it (reads of a
    /// working set larger than the cache decrypt again and again). Past it, new transactions start on an empty cache; those that
    /// began before finish on the old one, which is freed when the last of them ends. A single
    /// transaction keeps every record it reads decrypted until it ends. Ignored when plain.
    public var decryptedCacheSize: Int
    /// How many values above the threshold a tree needs for compaction to train its dictionary
    /// (`Dictionaries.minimumSamples`); lowered by tests whose trees are small.
    package var dictionaryMinimumSamples = Dictionaries.minimumSamples
    /// The object layer opens the engine with this set and calls `compactAtOpenIfDue` itself,
    /// once it has told the engine how to rewrite its records (`setCompactionRewrites`).
    package var deferCompactionAtOpen = false
    /// The test seam: opens the data file. Nil means the real `PosixFile`.
    package var openFile: (@Sendable (_ path: String, _ create: Bool, _ readOnly: Bool) throws -> any StorageFile)?

    /// Options for ``StorageEngine/init(directory:options:)``; every parameter sets the property of
    /// the same name, and the defaults suit most stores.
    public init(durability: Durability = .full, readOnly: Bool = false, inMemory: Bool = false, fileMode: UInt16 = 0o644,
                initialMapSize: Int = 64 << 20, nodeSize: Int = 4096, superblockInterval: Int = 256,
                compression: Compression = .none, compressionThreshold: Int = 64, lockWaitTimeout: Duration = .zero,
                transactionMemoryBudget: Int = 64 << 20, encryptionKey: EncryptionKey? = nil,
                decryptedCacheSize: Int = 512 << 20) {
        self.lockWaitTimeout = lockWaitTimeout
        self.encryptionKey = encryptionKey
        self.decryptedCacheSize = decryptedCacheSize
        self.transactionMemoryBudget = transactionMemoryBudget
        self.durability = durability
        self.readOnly = readOnly
        self.inMemory = inMemory
        self.fileMode = fileMode
        self.initialMapSize = initialMapSize
        self.nodeSize = nodeSize
        self.superblockInterval = superblockInterval
        self.automaticCompaction = AutomaticCompaction()
        self.compression = compression
        self.compressionThreshold = compressionThreshold
        self.openFile = nil
        self.sharedWriting = false
    }

    /// How long a write transaction of several writing processes waits for the lock another one
    /// holds: `lockWaitTimeout`, or without end when that is zero.
    var sharedLockWait: Duration? { lockWaitTimeout == .zero ? nil : lockWaitTimeout }
}

extension StorageOptions {
    /// Opens a data file: through the test seam when one is set, else as a `PosixFile` created
    /// with `fileMode`.
    func openDataFile(_ path: String, create: Bool, readOnly: Bool) throws -> any StorageFile {
        if let openFile { return try openFile(path, create, readOnly) }
        return try PosixFile(path: path, create: create, readOnly: readOnly, mode: mode_t(fileMode))
    }
}
