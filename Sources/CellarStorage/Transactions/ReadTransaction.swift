/// A consistent, read-only view of the store as of one commit.
///
/// Taking one costs one atomic load; reading takes no lock and is never blocked by the writer or
/// by other readers. Any number can be open on any threads; each is used from one thread at a
/// time. Bytes it returns point into the map and stay valid while the transaction is alive; a
/// compressed value is decoded into memory of the transaction's (see `withValue` for reads that
/// need it only for a moment).
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
    /// The records of the snapshot's map (which the snapshot keeps alive for as long as this
    /// transaction lives), held as a struct: reading a node then costs no reference counting.
    private let records: MappedRecords
    private let committedLength: UInt64
    private let codecs: ValueCodecs
    private var madeDecoder: ValueDecoder?
    /// In an encrypted store, where this transaction reads records decrypted: kept for its life,
    /// so that the bytes it returned stay valid.
    private let view: DecryptedView?
    private let views: DecryptedViews

    init(snapshot: Snapshot, codecs: ValueCodecs, views: DecryptedViews) throws {
        self.snapshot = snapshot
        self.codecs = codecs
        self.views = views
        view = try views.view(for: snapshot.generation)
        records = snapshot.generation.records.decrypting(through: view)
        committedLength = snapshot.committedLength
    }

    var catalogRootRef: UInt64 { snapshot.catalogRoot }

    func reservedTreeRoot(_ name: String) throws -> UInt64? { try catalogTreeRoot(name) }

    /// A reader's trees hold nothing back.
    func applyDeferred(_ tree: TreeState) throws {}

    var decoder: ValueDecoder {
        if let madeDecoder { return madeDecoder }
        let made = ValueDecoder(codecs: codecs)
        madeDecoder = made
        return made
    }

    /// Another read transaction on this one's snapshot: it reads exactly what this one reads, and
    /// can be used on another thread (each transaction is used from one thread at a time).
    package func onSameSnapshot() throws -> ReadTransaction {
        try ReadTransaction(snapshot: snapshot, codecs: codecs, views: views)
    }

    /// The id of the commit this transaction reads.
    public var transactionId: UInt64 { snapshot.txnId }

    var limit: UInt64 { snapshot.commitOffset }
    var mutationCount: Int { 0 }
    var isMutable: Bool { false }

    @inline(__always)
    func node(_ ref: UInt64, below: UInt64) throws -> NodeView {
        try records.node(at: ref, below: below, limit: committedLength)
    }

    func outOfLineValue(_ ref: UInt64, length: Int, below: UInt64) throws -> UnsafeRawBufferPointer {
        try records.value(at: ref, length: length, below: below, limit: committedLength)
    }

    /// The tree named `name`, or nil when there is none.
    public func tree(_ name: String) throws -> Tree? {
        try Dictionaries.refuseReserved(name)
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
            if key.first != 0 { names.append(String(decoding: key, as: UTF8.self)) }
            return true
        }
        return names
    }

    /// The value stored under `key`, pointing into the map; nil when absent.
    /// The names of the trees whose entries may differ between `older`'s snapshot and this one's,
    /// trees only one of them has among them: each tree whose catalog entry (its root record, count
    /// and size) changed. A tree whose root is the same record holds the same entries, so the set is
    /// exact between two commits of one file; across a compaction every root moved, and every
    /// tree is named.
    package func changedTrees(since older: ReadTransaction) throws -> Set<String> {
        let mine = try catalogEntries(), theirs = try older.catalogEntries()
        var changed = Set<String>()
        for (name, entry) in mine where theirs[name] != entry { changed.insert(name) }
        for name in theirs.keys where mine[name] == nil { changed.insert(name) }
        return changed
    }

    /// Each tree's name and catalog entry (the reserved trees left out).
    private func catalogEntries() throws -> [String: [UInt8]] {
        let cursor = Cursor(source: self, tree: TreeState(name: "", root: snapshot.catalogRoot, count: 0, bytes: 0))
        var entries: [String: [UInt8]] = [:]
        try cursor.scan { key, value in
            if key.first != 0 { entries[String(decoding: key, as: UTF8.self)] = Array(value) }
            return true
        }
        return entries
    }

    public func get(_ tree: Tree, key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        try check(tree)
        return try get(root: tree.state.root, key: key)
    }

    /// A copy of the value stored under `key`; nil when absent.
    public func get(_ tree: Tree, key: [UInt8]) throws -> [UInt8]? {
        try withValue(tree, key: key) { $0.map { Array($0) } }
    }

    /// Calls `body` with the value stored under `key` (nil when absent), valid during the call.
    /// The same as `get`, except that a compressed value is decoded into memory that lives for
    /// the call only: for reading many values in one transaction.
    public func withValue<R>(_ tree: Tree, key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        try check(tree)
        // The search is called here, outside any function generic in `R`: this way it is
        // specialized for a read transaction (its node reads inlined, not called as witnesses).
        return try withBytes(of: storedValue(root: tree.state.root, key: key), body)
    }

    /// Calls `body` with each of `keys`' positions in turn and the value stored under that key
    /// (nil when absent; valid during the call, as `withValue` gives it) until it returns false.
    /// Each key is the eight bytes of its number in big-endian order (as `withUnsafeBytes(of:
    /// number.bigEndian)` gives them). The keys are looked up a group at a time, each stage of
    /// the search for the whole group before the next, so that the cache misses of the group's
    /// leaves overlap: for many keys of a tree larger than the processor's cache, less waiting
    /// than one `withValue` after another. The values are the same.
    public func forEachValue(_ tree: Tree, keysOf numbers: [UInt64], _ body: (Int, UnsafeRawBufferPointer?) throws -> Bool) throws {
        try check(tree)
        let root = tree.state.root
        let height = try self.height(root: root)
        let group = Self.lookupGroup
        try withUnsafeTemporaryAllocation(of: UInt64.self, capacity: group) { keys in
            try withUnsafeTemporaryAllocation(of: StoredValue?.self, capacity: group) { found in
                var start = 0
                while start < numbers.count {
                    let count = min(group, numbers.count - start)
                    for slot in 0..<count { keys[slot] = numbers[start + slot].bigEndian }
                    let groupKeys = UnsafeBufferPointer(rebasing: UnsafeBufferPointer(keys)[0..<count])
                    let groupFound = UnsafeMutableBufferPointer(rebasing: found[0..<count])
                    groupFound.initialize(repeating: nil)
                    try storedValues(root: root, height: height, keys: groupKeys, into: groupFound)
                    for slot in 0..<count {
                        guard try withBytes(of: found[slot], { try body(start + slot, $0) }) else { return }
                    }
                    start += count
                }
            }
        }
    }

    /// The ids of the zstd dictionaries this snapshot holds (see `Dictionaries`), in order.
    package func dictionaryIds() throws -> [UInt32] {
        guard let root = try reservedTreeRoot(Dictionaries.treeName) else { return [] }
        var ids: [UInt32] = []
        try Cursor(source: self, tree: TreeState(name: Dictionaries.treeName, root: root, count: 0, bytes: 0))
            .scan(.prefix([1])) { key, _ in
                ids.append(key.loadUnaligned(fromByteOffset: 1, as: UInt32.self).bigEndian)
                return true
            }
        return ids
    }

    /// Whether `key` is stored (its value is not read).
    public func contains(_ tree: Tree, key: UnsafeRawBufferPointer) throws -> Bool {
        try check(tree)
        return try storedValue(root: tree.state.root, key: key) != nil
    }

    /// `withValue` with the key as an array.
    public func withValue<R>(_ tree: Tree, key: [UInt8], _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        try key.withUnsafeBytes { try withValue(tree, key: $0, body) }
    }

    /// The number of entries in `tree`.
    public func count(_ tree: Tree) throws -> Int {
        try check(tree)
        return tree.state.count
    }

    /// The number of levels of `tree` from its root to its leaves: 0 for an empty tree, 1 for a
    /// tree that is one leaf. The engine keeps every tree at most log2(count) + 1 levels deep;
    /// `cellar verify` reports a tree deeper than that (which only an older build could write,
    /// and which a compaction rebuilds).
    public func height(_ tree: Tree) throws -> Int {
        try check(tree)
        return try height(root: tree.state.root)
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
