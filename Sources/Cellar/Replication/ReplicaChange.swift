import Foundation

/// What one object's change looks like between a store and its replica: its entity and global
/// id, whether it was removed, and the values of the properties and to-many relations that
/// changed, each with the clock of its last change. For sync packages (`@_spi(Sync)`).
@_spi(Sync)
public struct ReplicaChange: Sendable, Equatable {
    /// A property's value with the clock of its last change (nil: unknown, older than any clock).
    public struct Value: Sendable, Equatable {
        public var uid: UInt64
        public var value: ReplicaValue
        public var clock: ReplicaClock?
        public init(uid: UInt64, value: ReplicaValue, clock: ReplicaClock?) {
            self.uid = uid
            self.value = value
            self.clock = clock
        }
    }

    /// A to-many relation's targets, by global id, with the clock of its last change.
    public struct Links: Sendable, Equatable {
        public var uid: UInt64
        public var targets: [UUID]
        public var clock: ReplicaClock?
        public init(uid: UInt64, targets: [UUID], clock: ReplicaClock?) {
            self.uid = uid
            self.targets = targets
            self.clock = clock
        }
    }

    public var entityUid: UInt64
    public var globalId: UUID
    /// When the object was removed: the removal's clock; nil for an object that is there.
    public var removed: ReplicaClock?
    public var values: [Value]
    public var relations: [Links]

    public init(entityUid: UInt64, globalId: UUID, removed: ReplicaClock? = nil, values: [Value] = [], relations: [Links] = []) {
        self.entityUid = entityUid
        self.globalId = globalId
        self.removed = removed
        self.values = values
        self.relations = relations
    }
}

/// The changes of the history entries after the last acknowledged one, merged per object (see
/// `Store.outgoingChanges(limit:objects:after:)`).
@_spi(Sync)
public struct OutgoingChanges: Sendable {
    public var changes: [ReplicaChange]
    /// The last history sequence they cover: acknowledge it once the replica holds them.
    public var through: UInt64
    /// The number of history entries they come from.
    public var entries: Int
    /// The timestamp of the entry at `through` (nil when there is none): with the sequence, it
    /// tells this store's entry from another one numbered the same (a store restored from an
    /// older copy numbers its new entries as the copy's original did).
    public var throughTimestamp: HybridTimestamp?
}

/// What applying a replica's changes did (see `Store.applyIncoming(_:through:removalsWin:)`).
@_spi(Sync)
public struct IncomingReport: Sendable, Equatable {
    /// Objects written or removed.
    public var applied = 0
    /// Changes that left the store as it was: the same values, or only values older than the
    /// store's own changes that are not sent yet.
    public var unchanged = 0
    /// Changes refused by a unique constraint (the object another holds the value), each with
    /// the reason. The object stays as it was here.
    public var refused: [String] = []
    /// Objects that left the store: they no longer match what it subscribed to.
    public var left = 0

    public init() {}
}
