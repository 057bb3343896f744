/// A consistent, read-only view of the store as of one commit.
///
/// Taking one costs one atomic load; reading takes no lock and is never blocked by the writer or
/// by other readers. Any number can be open on any threads. Bytes it returns point into the map and
/// stay valid while the transaction is alive.
///
/// ```swift
/// try engine.read { txn in
///     guard let users = try txn.tree("users") else { return }
///     let bytes = try txn.get(users, key: [0, 0, 0, 1])
/// }
/// ```
public final class ReadTransaction: NodeSource, @unchecked Sendable {
    // Immutable: a snapshot and its map, which nobody changes.
    let snapshot: Snapshot
    /// The snapshot's map, unretained (the snapshot holds it for as long as this transaction
    /// lives): reading a node then costs no reference counting.
    private unowned(unsafe) let generation: MapGeneration
    private let committedLength: UInt64

    init(snapshot: Snapshot) {
        self.snapshot = snapshot
        generation = snapshot.generation
        committedLength = snapshot.committedLength
    }

    /// The id of the commit this transaction reads.
    public var transactionId: UInt64 { snapshot.txnId }

    var limit: UInt64 { snapshot.commitOffset }
    var mutationCount: Int { 0 }
    var isMutable: Bool { false }

    @inline(__always)
    func node(_ ref: UInt64, below: UInt64) throws -> NodeView {
        try generation.node(at: ref, below: below, limit: committedLength)
    }

    func outOfLineValue(_ ref: UInt64, length: Int, below: UInt64) throws -> UnsafeRawBufferPointer {
        try generation.value(at: ref, length: length, below: below, limit: committedLength)
    }

    /// The tree named `name`, or nil when there is none.
    public func tree(_ name: String) throws -> Tree? {
        let catalog = TreeState(name: "", root: snapshot.catalogRoot, count: 0, bytes: 0)
        guard let value = try Array(name.utf8).withUnsafeBytes({ try get(root: catalog.root, key: $0) }) else { return nil }
        let entry = try CatalogEntry.decode(value, name: name, at: snapshot.catalogRoot)
        return Tree(state: TreeState(name: name, root: entry.root, count: entry.count, bytes: entry.bytes),
                    owner: ObjectIdentifier(self))
    }

    /// The names of all trees, in byte order.
    public func treeNames() throws -> [String] {
        let cursor = Cursor(source: self, tree: TreeState(name: "", root: snapshot.catalogRoot, count: 0, bytes: 0))
        var names: [String] = []
        try cursor.scan { key, _ in
            names.append(String(decoding: key, as: UTF8.self))
            return true
        }
        return names
    }

    /// The value stored under `key`, pointing into the map; nil when absent.
    public func get(_ tree: Tree, key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        try check(tree)
        return try get(root: tree.state.root, key: key)
    }

    /// A copy of the value stored under `key`; nil when absent.
    public func get(_ tree: Tree, key: [UInt8]) throws -> [UInt8]? {
        try key.withUnsafeBytes { try get(tree, key: $0).map { Array($0) } }
    }

    /// The number of entries in `tree`.
    public func count(_ tree: Tree) throws -> Int {
        try check(tree)
        return tree.state.count
    }

    /// A cursor over `tree`.
    public func cursor(_ tree: Tree) throws -> Cursor {
        try check(tree)
        return Cursor(source: self, tree: tree.state)
    }

    private func check(_ tree: Tree) throws {
        guard tree.owner == ObjectIdentifier(self) else {
            throw StorageError.illegalArgument("tree \"\(tree.name)\" was opened in another transaction")
        }
    }
}
