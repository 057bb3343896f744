/// The one write transaction of a store: changes trees, sees its own changes, and either commits
/// them all (one frame appended to the log, one sync in `.full` durability) or none.
///
/// Only one is open at a time per store; `StorageEngine.beginWrite` waits for the previous one to
/// end. Readers are never blocked by it. Not thread-safe: use it from one thread at a time.
///
/// ```swift
/// try engine.write { txn in
///     let users = try txn.tree("users")!
///     try txn.put(users, key: [0, 0, 0, 1], value: Array("Ada".utf8))
/// }
/// ```
public final class WriteTransaction: NodeSource {
    let engine: StorageEngine
    let base: Snapshot
    /// The records of the base snapshot's map (kept alive by `base`), held as a struct: reading a
    /// committed node then costs no reference counting.
    let baseRecords: MappedRecords
    let nodeSize: Int
    /// Values at most this long are stored inside their leaf; longer ones in a record of their own.
    let inlineLimit: Int
    /// Values at least this long are offered to the compressor (`Int.max`: no compression).
    private let compressionThreshold: Int
    private var madeDecoder: ValueDecoder?

    /// The nodes this transaction changed, by the index in their dirty reference.
    let dirty = DirtyNodes()
    /// Out-of-line values waiting for the commit, by the index in their dirty reference.
    let pending = Indirect<[PendingValue?]>([])
    /// The trees this transaction opened, by name.
    var trees: [String: TreeState] = [:]
    let catalog: TreeState
    /// Offsets of the node and value records this transaction's commit wrote.
    var writtenRecords: [UInt64] = []
    /// Live bytes of trees dropped in this transaction (subtracted from the total at commit).
    var droppedBytes: Int64 = 0
    /// The trees dropped in this transaction, by name (see `changedTreeNames`).
    private var droppedTrees: Set<String> = []
    /// Counts changes (see `NodeSource.mutationCount`); indirect, as it changes on every put.
    private let mutations = Indirect(0)
    var mutationCount: Int { mutations.value }
    private(set) var isOpen = true
    /// Where changes are recorded while a compaction runs (see `ChangeJournal`); nil otherwise.
    let journal: ChangeJournal?

    init(engine: StorageEngine, base: Snapshot, nodeSize: Int, journal: ChangeJournal?) {
        self.engine = engine
        self.base = base
        self.baseRecords = base.generation.records
        self.journal = journal
        self.nodeSize = nodeSize
        self.inlineLimit = nodeSize / 4
        self.compressionThreshold = engine.compressor == nil ? Int.max : engine.options.compressionThreshold
        self.catalog = TreeState(name: "", root: base.catalogRoot, count: 0, bytes: 0)
    }

    deinit {
        if isOpen { engine.endWrite(self) }
        mutations.free()
        dirty.free()
        pending.free()
    }

    /// The id this transaction's commit will have.
    public var transactionId: UInt64 { base.txnId + 1 }

    // MARK: NodeSource

    var limit: UInt64 { base.commitOffset }
    var isMutable: Bool { true }

    @inline(__always)
    func node(_ ref: UInt64, below: UInt64) throws -> NodeView {
        if ref & dirtyTag != 0 { return dirtyView(ref) }
        return try baseRecords.node(at: ref, below: below, limit: base.committedLength)
    }

    func outOfLineValue(_ ref: UInt64, length: Int, below: UInt64) throws -> UnsafeRawBufferPointer {
        if ref & dirtyTag != 0 { return pending.value[Int(ref & ~dirtyTag)]!.bytes }
        return try baseRecords.value(at: ref, length: length, below: below, limit: base.committedLength)
    }

    var catalogRootRef: UInt64 { catalog.root }

    func reservedTreeRoot(_ name: String) throws -> UInt64? {
        if let state = trees[name] { return state.root }
        return try catalogTreeRoot(name)
    }

    var decoder: ValueDecoder {
        if let madeDecoder { return madeDecoder }
        let made = ValueDecoder(codecs: engine.codecs)
        madeDecoder = made
        return made
    }

    // MARK: Trees

    /// The tree named `name`; created (empty) when missing and `create` is true, else nil.
    public func tree(_ name: String, create: Bool = true) throws -> Tree? {
        try Dictionaries.refuseReserved(name)
        return try openTree(name, create: create)
    }

    /// `tree`, for the engine's own trees too.
    func openTree(_ name: String, create: Bool) throws -> Tree? {
        try checkOpen()
        if let state = trees[name] { return Tree(state: state, owner: ObjectIdentifier(self)) }
        let nameBytes = Array(name.utf8)
        guard nameBytes.count <= StorageLimits.maxTreeNameSize else {
            throw StorageError.tooLarge(what: "tree name", size: nameBytes.count, limit: StorageLimits.maxTreeNameSize)
        }
        let state: TreeState
        if let value = try nameBytes.withUnsafeBytes({ try get(root: catalog.root, key: $0) }) {
            let entry = try CatalogEntry.decode(value, name: name, at: base.catalogRoot)
            state = TreeState(name: name, root: entry.root, count: entry.count, bytes: entry.bytes)
        } else {
            guard create else { return nil }
            journal?.recordCreated(tree: name)
            state = TreeState(name: name, root: 0, count: 0, bytes: 0)
            state.modified = true
            // Record it in the catalog now, so that `treeNames` sees it; the root is filled in at commit.
            try nameBytes.withUnsafeBytes { name in
                try CatalogEntry.encode(root: 0, count: 0, bytes: 0).withUnsafeBytes { try put(state: catalog, key: name, value: $0) }
            }
        }
        trees[name] = state
        return Tree(state: state, owner: ObjectIdentifier(self))
    }

    /// Removes the tree named `name` and everything in it; false when there was none.
    @discardableResult
    public func dropTree(_ name: String) throws -> Bool {
        try Dictionaries.refuseReserved(name)
        guard let tree = try tree(name, create: false) else { return false }
        let state = tree.state
        droppedBytes = droppedBytes &+ state.bytes
        state.finger.pointee.forget()
        state.deferred = nil
        state.hasDeferred = false
        state.dropped = true
        state.root = 0
        state.count = 0
        trees[name] = nil
        droppedTrees.insert(name)
        journal?.recordDropped(tree: name)
        _ = try Array(name.utf8).withUnsafeBytes { try delete(state: catalog, key: $0) }
        noteMutation()
        return true
    }

    /// The names of the trees this transaction changed so far: created, written to (a put, or a
    /// delete that found its key) or dropped. What a commit makes visible to readers; read it before
    /// `commit()`, which ends the transaction.
    public var changedTreeNames: Set<String> {
        var names = droppedTrees
        for (name, state) in trees where state.modified { names.insert(name) }
        return names
    }

    /// The names of all trees, including those created and without those dropped in this transaction.
    public func treeNames() throws -> [String] {
        try checkOpen()
        var names: [String] = []
        try Cursor(source: self, tree: catalog).scan { key, _ in
            if key.first != 0 { names.append(String(decoding: key, as: UTF8.self)) }
            return true
        }
        return names
    }

    // MARK: Reads

    /// The value stored under `key` (this transaction's own changes included); nil when absent.
    /// The bytes are valid until the next change in this transaction (a compressed value's,
    /// decoded into memory of the transaction's, until it ends).
    public func get(_ tree: Tree, key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        try storedValue(tree, key: key).map(keptBytes)
    }

    /// A copy of the value stored under `key`; nil when absent.
    public func get(_ tree: Tree, key: [UInt8]) throws -> [UInt8]? {
        try withValue(tree, key: key) { $0.map { Array($0) } }
    }

    /// Calls `body` with the value stored under `key` (nil when absent), valid during the call;
    /// a compressed value is decoded into memory that lives for the call only.
    public func withValue<R>(_ tree: Tree, key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        try withBytes(of: storedValue(tree, key: key), body)
    }

    /// Whether `key` is stored (its value is not read).
    public func contains(_ tree: Tree, key: UnsafeRawBufferPointer) throws -> Bool {
        try storedValue(tree, key: key) != nil
    }

    /// What `lookup` found under a key.
    public enum Lookup {
        case absent
        /// Stored as it is: the bytes in place, valid until the next change in the transaction.
        case plain(UnsafeRawBufferPointer)
        /// Stored compressed: read it with `withValue` (or `get`).
        case compressed
    }

    /// Looks `key` up without decoding: for a hot path that reads values in place and takes the
    /// slower `withValue` only for compressed ones (an update's old record).
    public func lookup(_ tree: Tree, key: UnsafeRawBufferPointer) throws -> Lookup {
        guard let stored = try storedValue(tree, key: key) else { return .absent }
        return stored.compressed ? .compressed : .plain(stored.bytes)
    }

    /// `withValue` with the key as an array.
    public func withValue<R>(_ tree: Tree, key: [UInt8], _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        try key.withUnsafeBytes { try withValue(tree, key: $0, body) }
    }

    @inline(__always)
    private func storedValue(_ tree: Tree, key: UnsafeRawBufferPointer) throws -> StoredValue? {
        try check(tree)
        let finger = tree.state.finger
        if let leaf = finger.pointee.leaf(for: key.nonNullBase, key.count) {
            let view = dirtyView(leaf)
            let (index, found) = view.lowerBound(key.nonNullBase, key.count, hint: finger.pointee.hint)
            guard found else { return nil }
            finger.pointee.hint = index
            return try storedValue(of: view, at: index, below: limit)
        }
        return try storedValue(root: tree.state.root, key: key)
    }

    /// The number of entries in `tree`.
    public func count(_ tree: Tree) throws -> Int {
        try check(tree)
        return tree.state.count
    }

    /// A cursor over `tree` that sees this transaction's changes.
    public func cursor(_ tree: Tree) throws -> Cursor {
        try check(tree)
        return Cursor(source: self, tree: tree.state)
    }

    // MARK: Writes

    /// Stores `value` under `key`, replacing what was there. With compression on, a value of at
    /// least the threshold is stored compressed when that saves an eighth of it.
    public func put(_ tree: Tree, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws {
        try check(tree)
        journal?.record(tree: tree.state.name, key: key)
        try putNow(tree.state, key: key, value: value)
    }

    /// `put` after the checks and the journal: compresses when the options say so.
    @inline(__always)
    func putNow(_ tree: TreeState, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws {
        if value.count >= compressionThreshold, let frame = try compressed(value, for: tree) {
            try put(state: tree, key: key, value: frame, flags: NodeView.compressedBit)
            return
        }
        try put(state: tree, key: key, value: value, flags: 0)
    }

    /// Stores `value` under `key`, replacing what was there.
    public func put(_ tree: Tree, key: [UInt8], value: [UInt8]) throws {
        try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try put(tree, key: k, value: v) } }
    }

    /// Removes `key`; false when it was not there.
    @discardableResult
    public func delete(_ tree: Tree, key: UnsafeRawBufferPointer) throws -> Bool {
        try check(tree)
        journal?.record(tree: tree.state.name, key: key)
        return try delete(state: tree.state, key: key)
    }

    /// Removes `key`; false when it was not there.
    @discardableResult
    public func delete(_ tree: Tree, key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { try delete(tree, key: $0) }
    }

    // MARK: End

    /// Makes every change of this transaction durable (in `.full` durability) and visible to new
    /// readers, as one commit. When it throws, nothing of this transaction is visible; after a
    /// failed sync the store refuses further commits until it is reopened.
    public func commit() throws {
        try commit(beforeRelease: {})
    }

    /// `commit()`, then `committed` before the transaction ends: on this thread, while it still
    /// holds the store's one writer slot, so the next write transaction begins after `committed`
    /// returns and sees what it wrote (in memory; nothing it does is part of the commit). Not
    /// called when the commit throws. For state a layer above keeps beside the store and hands
    /// from one write transaction to the next.
    public func commit(beforeRelease committed: () -> Void) throws {
        try checkOpen()
        defer { finish() }
        try applyAllDeferred()
        try engine.commit(self)
        committed()
    }

    /// Discards every change of this transaction.
    public func abort() {
        guard isOpen else { return }
        finish()
    }

    private func finish() {
        isOpen = false
        dirty.removeAll()
        pending.value = []
        trees = [:]
        droppedTrees = []
        engine.endWrite(self)
    }

    func checkOpen() throws {
        guard isOpen else { throw StorageError.transactionClosed }
    }

    /// Checks `tree`'s handle, then applies the puts it holds back (see `putDeferred`): what
    /// every operation on a tree does first.
    private func check(_ tree: Tree) throws {
        try checkHandle(tree)
        if tree.state.hasDeferred { try applyDeferred(tree.state) }
    }

    /// Throws unless this transaction is open and `tree` is a live handle of it.
    func checkHandle(_ tree: Tree) throws {
        try checkOpen()
        guard tree.owner == ObjectIdentifier(self) else {
            throw StorageError.illegalArgument("tree \"\(tree.name)\" was opened in another transaction")
        }
        guard !tree.state.dropped else { throw StorageError.treeNotFound(tree.name) }
    }

    func noteMutation() { mutations.value &+= 1 }
}
