import CellarStorage

/// The object layer's side of one engine transaction: the trees it opened, the id sequences it
/// changed, and whether a nested transaction inside it failed. One per outermost
/// `runInTransaction` / `runInReadOnlyTransaction`; nested ones join it (see `ThreadTransactions`).
@usableFromInline
final class TransactionContext {
    /// What the transaction knows of one entity; one slot per entity of the store's model.
    @usableFromInline
    struct EntitySlot {
        /// Whether `tree` was looked up (it stays nil when the entity has no tree yet).
        @usableFromInline var treeKnown = false
        @usableFromInline var tree: Tree?
        @usableFromInline var sequence: IdSequence?
    }

    @usableFromInline let store: Store
    @usableFromInline let read: ReadTransaction?
    @usableFromInline let write: WriteTransaction?
    /// Per-entity state by `EntitySchema.index`, behind a pointer (no exclusivity checks, no
    /// copy-on-write: a put touches it several times).
    @usableFromInline let slots: UnsafeMutablePointer<EntitySlot>
    /// The index trees looked up so far, by `IndexSchema.ordinal` (nil: not looked up, or none).
    let indexSlots: UnsafeMutablePointer<Tree?>
    /// The first error thrown out of a nested transaction: the whole transaction rolls back.
    var failure: (any Error)?
    /// Cursors kept for point look-ups in unique value indexes (`object(holding:)`), by index
    /// ordinal: a primary key's holder is looked up once per put, and a cursor costs allocations.
    /// Every use starts with a `seek`, which is valid after the tree changed.
    var keyCursors: [Int: Cursor] = [:]
    /// Undoes ids written into class objects by puts, when the transaction rolls back.
    @usableFromInline var undoIds: [() -> Void] = []
    /// What this transaction changed in full-text indexes, by index ID: written word by word at
    /// commit (`prepareCommit`), or before the transaction reads the index.
    var fullTextPending: [UInt32: FullTextPending] = [:]
    /// What this transaction changed in HNSW indexes, by index ID (applied at commit, or before
    /// it searches the index), and the indexes whose in-memory graph it changed.
    var vectorPending: [UInt32: VectorPending] = [:]
    var vectorTouched: Set<UInt32> = []
    // `changeLog` and `history` are read on every put; one transaction (one thread) owns the
    // context, so their accesses go unchecked (a dynamic exclusivity check a put each otherwise).
    /// The objects this write transaction puts and removes, recorded when an observer needs them
    /// (see ChangeLog); nil otherwise.
    @exclusivity(unchecked) @usableFromInline var changeLog: ChangeLog?
    /// Records the change history of this write transaction when the store keeps one
    /// (``StoreOptions/changeHistory``); nil otherwise.
    @exclusivity(unchecked) @usableFromInline var history: HistoryRecorder? {
        didSet { historyUnretained = history.map { Unmanaged.passUnretained($0) } }
    }
    /// `history` without a reference count (the context holds it): a put that records its
    /// change through it neither retains nor releases it.
    @exclusivity(unchecked) @usableFromInline var historyUnretained: Unmanaged<HistoryRecorder>?
    /// A read of a past commit (``Store/read(asOf:_:)``): nothing the store keeps in memory for
    /// its newest commits (the vector graphs) is used.
    var readsThePast = false
    /// The trees of global ids (`GlobalIds.globalTree`, `GlobalIds.localTree`) once this write
    /// transaction found them: sync looks one up per object it moves.
    var globalIdTrees: (global: Tree?, local: Tree?)

    private init(store: Store, read: ReadTransaction?, write: WriteTransaction?) {
        self.store = store
        self.read = read
        self.write = write
        let count = max(store.entityCount, 1)
        slots = .allocate(capacity: count)
        slots.initialize(repeating: EntitySlot(), count: count)
        indexSlots = .allocate(capacity: max(store.indexCount, 1))
        indexSlots.initialize(repeating: nil, count: max(store.indexCount, 1))
    }

    convenience init(store: Store, read: ReadTransaction) { self.init(store: store, read: read, write: nil) }
    convenience init(store: Store, write: WriteTransaction) { self.init(store: store, read: nil, write: write) }

    deinit {
        slots.deinitialize(count: max(store.entityCount, 1))
        slots.deallocate()
        indexSlots.deinitialize(count: max(store.indexCount, 1))
        indexSlots.deallocate()
    }

    var isWrite: Bool { write != nil }

    // MARK: Reads (both kinds)

    /// The entity's tree; nil when no object of it was ever stored.
    @inlinable
    func tree(_ schema: EntitySchema) throws -> Tree? {
        let slot = slots + schema.index
        if slot.pointee.treeKnown { return slot.pointee.tree }
        return try lookUpTree(schema)
    }

    @usableFromInline
    func lookUpTree(_ schema: EntitySchema) throws -> Tree? {
        let slot = slots + schema.index
        let tree: Tree?
        if let write {
            tree = try write.tree(schema.treeName, create: false)
        } else {
            tree = try read!.tree(schema.treeName)
        }
        slot.pointee.tree = tree
        slot.pointee.treeKnown = true
        return tree
    }

    /// Calls `body` with the record of object `id` (nil when there is none), valid during the
    /// call: in place, or decoded when stored compressed.
    @inlinable
    func withRecord<R>(_ schema: EntitySchema, _ id: Id, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        guard let tree = try tree(schema) else { return try body(nil) }
        return try StorageLayout.withObjectKey(id) { key in
            if let write { return try write.withValue(tree, key: key, body) }
            return try read!.withValue(tree, key: key, body)
        }
    }

    /// Whether object `id` is stored (its record is not read).
    @usableFromInline
    func contains(_ schema: EntitySchema, _ id: Id) throws -> Bool {
        guard let tree = try tree(schema) else { return false }
        return try StorageLayout.withObjectKey(id) { key in
            if let write { return try write.contains(tree, key: key) }
            return try read!.contains(tree, key: key)
        }
    }

    /// Calls `body` with the record of each of `ids` that exists, in the order given, until it
    /// returns false (the tree and transaction looked up once for all of them). Each record is
    /// valid during its call, or, when `stable`, until the transaction ends.
    @usableFromInline
    func forEachRecord(_ schema: EntitySchema, ids: [Id], stable: Bool,
                       _ body: (Id, UnsafeRawBufferPointer) throws -> Bool) throws {
        guard let tree = try tree(schema) else { return }
        if !stable, write == nil, let read {
            try read.forEachValue(tree, keysOf: ids) { i, record in try record.map { try body(ids[i], $0) } ?? true }
            return
        }
        for id in ids {
            let goOn = try StorageLayout.withObjectKey(id) { key -> Bool in
                if stable {
                    let record = try write.map { try $0.get(tree, key: key) } ?? read!.get(tree, key: key)
                    return try record.map { try body(id, $0) } ?? true
                }
                return try write!.withValue(tree, key: key) { try $0.map { try body(id, $0) } ?? true }
            }
            guard goOn else { return }
        }
    }

    @usableFromInline
    func count(_ schema: EntitySchema) throws -> Int {
        guard let tree = try tree(schema) else { return 0 }
        if let write { return try write.count(tree) }
        return try read!.count(tree)
    }

    /// A cursor over the entity's objects; nil when there are none.
    @usableFromInline
    func cursor(_ schema: EntitySchema) throws -> Cursor? {
        guard let tree = try tree(schema) else { return nil }
        if let write { return try write.cursor(tree) }
        return try read!.cursor(tree)
    }

    // MARK: Writes

    /// The entity's tree, created when missing.
    @usableFromInline
    func writeTree(_ schema: EntitySchema) throws -> Tree {
        if let tree = try tree(schema) { return tree }
        let tree = try write!.tree(schema.treeName, create: true)!
        slots[schema.index].tree = tree
        return tree
    }

    /// Notes an id an object came with (not 0) as assigned; throws `illegalArgument` for an id
    /// `put` never handed out, unless the entity's ids are assignable.
    @inlinable
    func noteGivenId(_ id: Id, of schema: EntitySchema) throws {
        try withSequence(schema) { sequence in
            guard id < sequence.next || schema.idAssignable else {
                throw CellarError.illegalArgument("\(schema.name) id \(id) was never handed out by put (the next is \(sequence.next)); put objects with id 0 to insert them, or make the id assignable with `// cellar: id = { \"assignable\": true }`")
            }
            sequence.noteAssigned(id)
        }
    }

    /// Runs `body` on the entity's id sequence, loading it on first use in this transaction: from
    /// the store when it saved one at the commit this transaction starts from, else from the tree.
    @inlinable
    func withSequence<T>(_ schema: EntitySchema, _ body: (inout IdSequence) throws -> T) throws -> T {
        let slot = slots + schema.index
        if slot.pointee.sequence == nil { slot.pointee.sequence = try loadSequence(schema) }
        return try body(&slot.pointee.sequence!)
    }

    @usableFromInline
    func loadSequence(_ schema: EntitySchema) throws -> IdSequence {
        let write = write!
        if let saved = store.savedSequences[schema.index], saved.txnId == write.transactionId - 1 {
            return saved.sequence
        }
        var highest: Id = 0
        if let cursor = try cursor(schema), try cursor.last() {
            highest = try StorageLayout.objectId(cursor.key)
        }
        let bytes = try write.tree(StorageLayout.metaTree, create: false).flatMap { try write.get($0, key: StorageLayout.sequenceKey(schema.id.id)) }
        return IdSequence(highestInTree: highest, floor: try IdSequence.floor(stored: bytes, entity: schema.name))
    }

    /// Removes every object of the entity (the tree is dropped; the next put creates it again).
    @usableFromInline
    func removeAll(_ schema: EntitySchema) throws -> Int {
        guard let tree = try tree(schema) else { return 0 }
        if !schema.deleteActions.isEmpty {
            // Each object's delete rules apply: one by one (ids first: the tree changes).
            guard let cursor = try cursor(schema) else { return 0 }
            var ids: [Id] = []
            try cursor.scan { key, _ in ids.append(try StorageLayout.objectId(key)); return true }
            // An object a cascade from another removed already counts as removed too.
            for id in ids { _ = try removeObject(schema, id: id) }
            return ids.count
        }
        let count = try write!.count(tree)
        if count > 0 {
            // Keep the ids of the removed objects from being handed out again.
            try withSequence(schema) { $0.noteRemoved($0.next &- 1) }
        }
        if let history { try history.noteRemoveAll(schema, context: self) }
        try write!.dropTree(schema.treeName)
        changeLog?.noteWhole(schema.id.id)
        slots[schema.index].tree = nil
        for property in schema.indexed {
            let index = property.index!
            try dropIndexTree(index)
        }
        for compound in schema.compoundIndexes { try dropIndexTree(compound.index) }
        if let embedded = schema.embeddedIndexes {
            // Shared with the other entities embedding the type: only this entity's keys go.
            for property in embedded.indexed {
                let index = property.index!
                guard let cursor = try cursor(indexTree: index) else { continue }
                var keys: [[UInt8]] = []
                try cursor.scan(.prefix(embedded.prefix)) { key, _ in keys.append(Array(key)); return true }
                let tree = try indexTree(index)
                for key in keys { _ = try key.withUnsafeBytes { try write!.delete(tree, key: $0) } }
            }
        }
        for relation in schema.relations + schema.incomingRelations {
            try write!.dropTree(StorageLayout.relationTree(relation.id.id))
            try write!.dropTree(StorageLayout.backlinkTree(relation.id.id))
        }
        return count
    }

    /// Writes what must outlast the transaction besides the records: the changed id floors.
    func prepareCommit() throws {
        guard let write else { return }
        try flushAllFullText()
        try flushAllVectors()
        for index in 0..<store.entityCount {
            guard let sequence = slots[index].sequence, sequence.floorChanged else { continue }
            let meta = try write.tree(StorageLayout.metaTree, create: true)!
            var floor = sequence.floor.littleEndian
            let entityId = store.model.entities[index].id.id
            try withUnsafeBytes(of: &floor) { value in
                try StorageLayout.sequenceKey(entityId).withUnsafeBytes { try write.put(meta, key: $0, value: value) }
            }
        }
        try history?.write(into: write, store: store)
    }

    /// After a successful commit, before the engine lets the next write transaction begin (see
    /// `WriteTransaction.commit(beforeRelease:)`): the store keeps the sequences for it. A commit
    /// that fails before its frame is written saves nothing. In `.full` durability this runs
    /// before the commit's sync (group commit); should that sync fail, the store refuses every
    /// further commit, so no later transaction commits ids taken from what was saved here.
    func saveSequences() {
        guard let write else { return }
        for index in 0..<store.entityCount {
            guard var sequence = slots[index].sequence else { continue }
            sequence.floorChanged = false
            store.savedSequences[index] = (write.transactionId, sequence)
        }
    }

    /// After a rollback: the ids puts wrote into objects are set back to 0.
    func undo() {
        undoVectors()
        for undo in undoIds.reversed() { undo() }
        undoIds = []
    }
}
