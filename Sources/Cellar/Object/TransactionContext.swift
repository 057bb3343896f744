import CellarStorage

/// The object layer's side of one engine transaction: the trees it opened, the id sequences it
/// changed, and whether a nested transaction inside it failed. One per outermost
/// `runInTransaction` / `runInReadOnlyTransaction`; nested ones join it (see `ThreadTransactions`).
final class TransactionContext {
    let store: Store
    let read: ReadTransaction?
    let write: WriteTransaction?
    /// Entity trees opened so far, by entity ID (a read transaction caches "no tree" too).
    private var trees: [UInt32: Tree?] = [:]
    private var sequences: [UInt32: IdSequence] = [:]
    /// The first error thrown out of a nested transaction: the whole transaction rolls back.
    var failure: (any Error)?
    /// Undoes ids written into class objects by puts, when the transaction rolls back.
    var undoIds: [() -> Void] = []

    init(store: Store, read: ReadTransaction) {
        self.store = store
        self.read = read
        self.write = nil
    }

    init(store: Store, write: WriteTransaction) {
        self.store = store
        self.read = nil
        self.write = write
    }

    var isWrite: Bool { write != nil }

    // MARK: Reads (both kinds)

    /// The entity's tree; nil when no object of it was ever stored.
    func tree(_ schema: EntitySchema) throws -> Tree? {
        if let cached = trees[schema.id.id] { return cached }
        let tree: Tree?
        if let write {
            tree = try write.tree(schema.treeName, create: false)
        } else {
            tree = try read!.tree(schema.treeName)
        }
        trees[schema.id.id] = tree
        return tree
    }

    /// The record of object `id`, in place; nil when there is none.
    func record(_ schema: EntitySchema, _ id: Id) throws -> UnsafeRawBufferPointer? {
        guard let tree = try tree(schema) else { return nil }
        return try StorageLayout.withObjectKey(id) { key in
            if let write { return try write.get(tree, key: key) }
            return try read!.get(tree, key: key)
        }
    }

    func count(_ schema: EntitySchema) throws -> Int {
        guard let tree = try tree(schema) else { return 0 }
        if let write { return try write.count(tree) }
        return try read!.count(tree)
    }

    /// A cursor over the entity's objects; nil when there are none.
    func cursor(_ schema: EntitySchema) throws -> Cursor? {
        guard let tree = try tree(schema) else { return nil }
        if let write { return try write.cursor(tree) }
        return try read!.cursor(tree)
    }

    // MARK: Writes

    /// The entity's tree, created when missing.
    func writeTree(_ schema: EntitySchema) throws -> Tree {
        if let cached = trees[schema.id.id], let cached { return cached }
        let tree = try write!.tree(schema.treeName, create: true)!
        trees[schema.id.id] = tree
        return tree
    }

    /// Runs `body` on the entity's id sequence, loading it on first use in this transaction.
    func withSequence<T>(_ schema: EntitySchema, _ body: (inout IdSequence) throws -> T) throws -> T {
        if sequences[schema.id.id] == nil {
            var highest: Id = 0
            if let cursor = try cursor(schema), try cursor.last() {
                highest = try StorageLayout.objectId(cursor.key)
            }
            var floor: Id = 0
            if let meta = try write!.tree(StorageLayout.metaTree, create: false),
               let bytes = try write!.get(meta, key: StorageLayout.sequenceKey(schema.id.id)) {
                guard bytes.count == 8 else {
                    throw CellarError.fileCorrupt("the id sequence of entity \(schema.name) has \(bytes.count) bytes, expected 8")
                }
                floor = bytes.withUnsafeBytes { Id(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
            }
            sequences[schema.id.id] = IdSequence(highestInTree: highest, floor: floor)
        }
        return try body(&sequences[schema.id.id]!)
    }

    /// Removes every object of the entity (the tree is dropped; the next put creates it again).
    func removeAll(_ schema: EntitySchema) throws -> Int {
        guard let tree = try tree(schema) else { return 0 }
        let count = try write!.count(tree)
        if count > 0 {
            // Keep the ids of the removed objects from being handed out again.
            try withSequence(schema) { $0.noteRemoved($0.next &- 1) }
        }
        try write!.dropTree(schema.treeName)
        trees[schema.id.id] = .some(nil)
        return count
    }

    /// Writes what must outlast the transaction besides the records: the changed id floors.
    func prepareCommit() throws {
        guard let write else { return }
        for (entityId, sequence) in sequences where sequence.floorChanged {
            let meta = try write.tree(StorageLayout.metaTree, create: true)!
            var floor = sequence.floor.littleEndian
            try withUnsafeBytes(of: &floor) { value in
                try StorageLayout.sequenceKey(entityId).withUnsafeBytes { try write.put(meta, key: $0, value: value) }
            }
        }
    }

    /// After a rollback: the ids puts wrote into objects are set back to 0.
    func undo() {
        for undo in undoIds.reversed() { undo() }
        undoIds = []
    }
}
