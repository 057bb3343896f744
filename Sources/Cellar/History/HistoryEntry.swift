/// One commit in a store's change history (``StoreOptions/changeHistory``): its sequence number,
/// its timestamp, and what it changed, object by object. Read with ``Store/history(since:limit:)``.
public struct HistoryEntry: Sendable, Equatable {
    /// The commit's place in the history: 1 for the first commit recorded, then one more for
    /// each commit that changed objects. Never reused, also after ``Store/pruneHistory(before:)``.
    public var sequence: UInt64
    /// When the commit was made, as a hybrid logical clock: larger than every earlier entry's.
    public var timestamp: HybridTimestamp
    /// The objects the commit changed, each once, by entity UID and then by id.
    public var changes: [HistoryChange]

    /// An entry; the store makes them (tests and tools may build their own).
    public init(sequence: UInt64, timestamp: HybridTimestamp, changes: [HistoryChange]) {
        self.sequence = sequence
        self.timestamp = timestamp
        self.changes = changes
    }
}

/// What a commit did to one object (see ``HistoryEntry``).
public struct HistoryChange: Sendable, Equatable {
    /// What happened to an object.
    public enum Operation: UInt8, Sendable {
        /// Stored: inserted, replaced, or its relations changed.
        case put
        /// Removed (by `remove`, `removeAll`, a query's `remove`, or a unique constraint's `replace`).
        case remove
    }

    /// The UID of the object's entity: stable through renames.
    public var entityUid: UInt64
    /// The entity's name in the model the store was opened with; nil when that model no longer
    /// has the entity (it was retired since).
    public var entityName: String?
    /// The object's id.
    public var id: Id
    /// Put or remove.
    public var operation: Operation
    /// The IDs of the properties whose stored value changed, ascending: every property (but the
    /// id) of an object that was new in the commit, those whose stored bytes differ for a
    /// replaced one, none for a removal.
    public var changedPropertyIds: [UInt32]
    /// The names of ``changedPropertyIds`` in the model the store was opened with (a property
    /// it no longer has is left out).
    public var changedPropertyNames: [String]
    /// The IDs of the object's standalone to-many relations (``ToMany``) whose links the commit
    /// changed, ascending; none for a removal.
    public var changedRelationIds: [UInt32]

    /// A change; the store makes them (tests and tools may build their own).
    public init(entityUid: UInt64, entityName: String?, id: Id, operation: Operation,
                changedPropertyIds: [UInt32] = [], changedPropertyNames: [String] = [], changedRelationIds: [UInt32] = []) {
        self.entityUid = entityUid
        self.entityName = entityName
        self.id = id
        self.operation = operation
        self.changedPropertyIds = changedPropertyIds
        self.changedPropertyNames = changedPropertyNames
        self.changedRelationIds = changedRelationIds
    }
}
