import CellarStorage

/// When a commit is on disk: `.full` (one sync per commit; survives power loss) or `.none`.
public typealias Durability = StorageOptions.Durability

/// What a compaction did (`Store.compact()`): bytes before and after, duration, writer wait.
public typealias CompactionReport = CellarStorage.CompactionReport

/// When a store compacts itself: see ``StoreOptions/automaticCompaction``.
public typealias AutomaticCompaction = StorageOptions.AutomaticCompaction

/// Which past commits a compaction keeps for ``Store/read(asOf:_:)``: see ``StoreOptions/pastRetention``.
public typealias PastRetention = StorageOptions.PastRetention

/// How a store compresses objects' records: `.none`, `.zstd(level:)`, or `.zstdDictionary(level:)`
/// (a dictionary per entity, trained by each compaction). See ``StoreOptions/compression``.
public typealias Compression = CellarStorage.Compression

/// The key a store is encrypted with: 32 bytes, or a passphrase (see ``StoreOptions/encryptionKey``).
public typealias EncryptionKey = CellarStorage.EncryptionKey

/// How a ``Store`` is opened.
public struct StoreOptions: Sendable {
    /// `.full` (default): a transaction that returned is on disk, through `kill -9` and power
    /// loss. `.none`: no sync per commit; a process crash loses nothing, a power loss may lose the
    /// latest commits but never leaves a broken store.
    public var durability: Durability
    /// Open without writing (and without the write lock). The database must exist and its model
    /// must already match the code's. Another process may write the database meanwhile: each read
    /// transaction starts on the newest transaction it committed, also across its compactions
    /// (`docs/engine.md`, "Several processes"); change observers and live results are told of that
    /// process's commits (within a few milliseconds where it writes with ``sharedWriting``, else
    /// within a second). The model is read once, at open: after the writing process changed it (a
    /// newer version of the app), open the store again.
    public var readOnly: Bool
    /// How long a writable open waits while another process has the database open for writing
    /// (trying again every few milliseconds) before it throws ``CellarError/Code/storage`` with
    /// `StorageError.storeLocked`. Zero (the default): that error at once.
    public var lockWaitTimeout: Duration
    /// Let several processes write the database: an app and its extensions (a widget, a share
    /// extension) on one store in an App Group container. The write lock is taken for each write
    /// transaction and let go once it is committed (and synced), instead of being held from open
    /// to close; a write transaction first catches up with what the other processes committed.
    /// Every process that writes the store must set it. A process whose model is older than the
    /// one another process stored since is refused before it writes (``CellarError/Code/schema``):
    /// open the store again with the newer model. While another process writes, a write
    /// transaction waits for it (for `lockWaitTimeout` when set). False by default
    /// (`docs/engine.md`, "Several processes").
    public var sharedWriting: Bool = false
    /// Permissions of a newly created data file.
    public var fileMode: UInt16
    /// When the store compacts itself, in the background on a utility-QoS queue: by default once
    /// half of a file of at least 64 MiB is garbage (replaced and removed objects). Nil: only when
    /// `Store.compact()` is called.
    public var automaticCompaction: AutomaticCompaction?
    /// How records are compressed (default `.none`). With `.zstd`, a record of at least
    /// `compressionThreshold` bytes is stored compressed when that saves an eighth of it: large
    /// text and data shrink, small objects stay as they are and are read in place. With
    /// `.zstdDictionary`, each compaction (`Store.compact()`, or the automatic one) also trains a
    /// dictionary per entity from a sample of its objects and recompresses them with it: then
    /// even small objects that share text shrink several times. Reading costs a decode per
    /// compressed record. Any store reads compressed records, whatever this says.
    public var compression: Compression
    /// Records shorter than this many bytes are never compressed (at least 16; default 64).
    public var compressionThreshold: Int
    /// How much memory one write transaction's changes may hold (default 64 MiB). Past half of
    /// it the transaction writes what it changed into the database file ahead of its commit (it
    /// counts only once the transaction commits), so that putting ten million objects in one
    /// transaction runs in this much memory. `Int.max`: hold every change in memory until the
    /// commit. At least 64 KiB.
    public var transactionMemoryBudget: Int
    /// Encrypts the database file with AES-256-GCM under this key (`docs/encryption.md`): every
    /// record (objects, indexes, the model) is encrypted and authenticated; the header holds only
    /// what checking the key needs. Nil (the default): a plain file. A new store is created
    /// encrypted when it is set; an encrypted store needs it (``CellarError/Code/encryptionKeyRequired``,
    /// ``CellarError/Code/wrongEncryptionKey``), a plain one refuses it
    /// (``CellarError/Code/notEncrypted``). `Store.compact(newKey:)` changes, adds or removes it.
    public var encryptionKey: EncryptionKey?
    /// How many bytes of an encrypted store's records are kept decrypted in memory for readers
    /// (default 512 MiB; at least 1 MiB): memory of the process's own. A store smaller than it never
    /// fills it; lower it on devices short of memory, at the price of decrypting again when the
    /// records read outgrow it (`docs/encryption.md`). Ignored for a plain store.
    public var decryptedCacheSize: Int
    /// Records the store's change history (default false; `docs/change-history.md`): each commit
    /// that changes objects appends an entry (a sequence number, a hybrid logical clock
    /// timestamp, and per object its entity, id, put or remove, and changed properties), read
    /// with ``Store/history(since:limit:)`` and dropped with ``Store/pruneHistory(before:)``.
    /// Once a store recorded history it goes on recording it, also when opened without this
    /// (``Store/recordsHistory``): a consumer never misses a change.
    public var changeHistory: Bool
    /// The version of the schema this app writes (`docs/migrations.md`). A store opened with a
    /// higher version than the one it holds runs ``migration`` once, then holds the new version;
    /// a store holding a higher version than this is refused (``CellarError/Code/schema``: a newer
    /// app wrote it). Nil (the default): the app does not version its schema — nothing is
    /// migrated or refused, and the stored version is kept.
    public var schemaVersion: UInt64?
    /// Runs once when the store's stored schema version is below ``schemaVersion``, inside the
    /// open's write transaction, before the new model's indexes are built and checked: it reads
    /// the objects as the old model stored them and writes them as the new model stores them
    /// (see ``Migration``). A throw, or a crash, leaves the store as it was, at the old version.
    /// Nil: a raised version needs no code (properties added, renamed by UID, or retired), but a
    /// property whose type changed is refused.
    public var migration: (@Sendable (Migration) throws -> Void)?
    /// The past ``Store/read(asOf:_:)`` can read after a compaction (`docs/time-travel.md`):
    /// `.commits(n)`, the newest n commits; `.duration(d)`, every commit of the last d and the
    /// state the store was in when that span began. Nil (the default): a compaction keeps the
    /// newest commit only. Between compactions every commit stays readable either way. The file
    /// holds the window's changes on top of the live objects.
    public var pastRetention: PastRetention?
    /// How many undoable writes (``Store/write(actionName:_:)``) the store keeps for
    /// ``Store/undo()``; older ones are dropped as new ones come. Default 100.
    public var undoDepth: Int = 100

    /// Options for opening a ``Store``; each parameter sets the property of the same name.
    public init(durability: Durability = .full, readOnly: Bool = false, fileMode: UInt16 = 0o644,
                automaticCompaction: AutomaticCompaction? = AutomaticCompaction(),
                compression: Compression = .none, compressionThreshold: Int = 64, lockWaitTimeout: Duration = .zero,
                transactionMemoryBudget: Int = 64 << 20, encryptionKey: EncryptionKey? = nil,
                decryptedCacheSize: Int = 512 << 20, changeHistory: Bool = false,
                schemaVersion: UInt64? = nil, migration: (@Sendable (Migration) throws -> Void)? = nil) {
        self.changeHistory = changeHistory
        self.schemaVersion = schemaVersion
        self.migration = migration
        self.lockWaitTimeout = lockWaitTimeout
        self.encryptionKey = encryptionKey
        self.decryptedCacheSize = decryptedCacheSize
        self.transactionMemoryBudget = transactionMemoryBudget
        self.durability = durability
        self.readOnly = readOnly
        self.fileMode = fileMode
        self.automaticCompaction = automaticCompaction
        self.compression = compression
        self.compressionThreshold = compressionThreshold
    }
}
