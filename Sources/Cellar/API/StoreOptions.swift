import CellarStorage

/// When a commit is on disk: `.full` (one sync per commit; survives power loss) or `.none`.
public typealias Durability = StorageOptions.Durability

/// What a compaction did (`Store.compact()`): bytes before and after, duration, writer wait.
public typealias CompactionReport = CellarStorage.CompactionReport

/// When a store compacts itself: see `StoreOptions.automaticCompaction`.
public typealias AutomaticCompaction = StorageOptions.AutomaticCompaction

/// How a `Store` is opened.
public struct StoreOptions: Sendable {
    /// `.full` (default): a transaction that returned is on disk, through `kill -9` and power
    /// loss. `.none`: no sync per commit; a process crash loses nothing, a power loss may lose the
    /// latest commits but never leaves a broken store.
    public var durability: Durability
    /// Open without writing (and without the write lock). The database must exist and its model
    /// must already match the code's.
    public var readOnly: Bool
    /// Permissions of a newly created data file.
    public var fileMode: UInt16
    /// When the store compacts itself, in the background on a utility-QoS queue: by default once
    /// half of a file of at least 64 MiB is garbage (replaced and removed objects). Nil: only when
    /// `Store.compact()` is called.
    public var automaticCompaction: AutomaticCompaction?

    public init(durability: Durability = .full, readOnly: Bool = false, fileMode: UInt16 = 0o644,
                automaticCompaction: AutomaticCompaction? = AutomaticCompaction()) {
        self.durability = durability
        self.readOnly = readOnly
        self.fileMode = fileMode
        self.automaticCompaction = automaticCompaction
    }
}
