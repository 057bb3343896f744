import CellarStorage

/// When a commit is on disk: `.full` (one sync per commit; survives power loss) or `.none`.
public typealias Durability = StorageOptions.Durability

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

    public init(durability: Durability = .full, readOnly: Bool = false, fileMode: UInt16 = 0o644) {
        self.durability = durability
        self.readOnly = readOnly
        self.fileMode = fileMode
    }
}
