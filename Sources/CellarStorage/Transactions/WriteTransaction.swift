/// The one write transaction of a store: changes trees, sees its own changes, and either commits
/// them all (one frame appended to the log, synced in `.full` durability, with the commits of
/// other threads that come at the same time: group commit) or none.
///
/// Only one is open at a time per store; `StorageEngine.beginWrite` waits for the previous one to
/// end. Readers are never blocked by it. Not thread-safe: use it from one thread at a time.
///
/// A thin API: it checks its handles and its state, records changed keys in the compaction
/// journal, and hands every read and change to its `TreeMutator`; `commit` hands the mutator to
/// `StorageEngine.commit`.
///
/// ```swift
/// try engine.write { txn in
///     let users = try txn.tree("users")!
///     try txn.put(users, key: [0, 0, 0, 1], value: Array("Ada".utf8))
/// }
/// ```
public final class WriteTransaction {
    let engine: StorageEngine
    /// The transaction's trees and their changes.
    let mutator: TreeMutator
    private(set) var isOpen = true
    /// Where changes are recorded while a compaction runs (see `ChangeJournal`); nil otherwise.
    let journal: ChangeJournal?

    init(engine: StorageEngine, mutator: TreeMutator, journal: ChangeJournal?) {
        self.engine = engine
        self.mutator = mutator
        self.journal = journal
    }

    deinit {
        if isOpen { engine.endWrite(self) }
    }

    /// The id this transaction's commit will have.
    public var transactionId: UInt64 { mutator.base.txnId + 1 }

    /// A read transaction on the commit this transaction started from (none of its changes): for
    /// state a layer above rebuilds from that commit while it writes (with several writing
    /// processes, a commit this process never saw).
    public func readBase() throws -> ReadTransaction {
        try checkOpen()
        return try ReadTransaction(snapshot: mutator.base, codecs: engine.codecs, views: engine.decryptedViews)
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
        guard let (state, created) = try mutator.openTree(name, create: create) else { return nil }
        if created { journal?.recordCreated(tree: name) }
        return Tree(state: state, owner: ObjectIdentifier(self))
    }

    /// Removes the tree named `name` and everything in it; false when there was none.
    @discardableResult
    public func dropTree(_ name: String) throws -> Bool {
        try Dictionaries.refuseReserved(name)
        guard let tree = try tree(name, create: false) else { return false }
        journal?.recordDropped(tree: name)
        try mutator.dropTree(tree.state)
        return true
    }

    /// The names of the trees this transaction changed so far: created, written to (a put, or a
    /// delete that found its key) or dropped. What a commit makes visible to readers; read it before
    /// `commit()`, which ends the transaction.
    public var changedTreeNames: Set<String> { mutator.changedTreeNames }

    /// The names of all trees, including those created and without those dropped in this transaction.
    public func treeNames() throws -> [String] {
        try checkOpen()
        return try mutator.treeNames()
    }

    // MARK: Reads

    /// The value stored under `key` (this transaction's own changes included); nil when absent.
    /// The bytes are valid until the next change in this transaction (a compressed value's,
    /// decoded into memory of the transaction's, until it ends).
    public func get(_ tree: Tree, key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        try storedValue(tree, key: key).map(mutator.keptBytes)
    }

    /// A copy of the value stored under `key`; nil when absent.
    public func get(_ tree: Tree, key: [UInt8]) throws -> [UInt8]? {
        try withValue(tree, key: key) { $0.map { Array($0) } }
    }

    /// Calls `body` with the value stored under `key` (nil when absent), valid during the call;
    /// a compressed value is decoded into memory that lives for the call only.
    public func withValue<R>(_ tree: Tree, key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        try mutator.withBytes(of: storedValue(tree, key: key), body)
    }

    /// Whether `key` is stored (its value is not read).
    public func contains(_ tree: Tree, key: UnsafeRawBufferPointer) throws -> Bool {
        try storedValue(tree, key: key) != nil
    }

    /// What `lookup` found under a key.
    public enum Lookup {
        /// No value is stored under the key.
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
        return try mutator.storedValue(in: tree.state, key: key)
    }

    /// The number of entries in `tree`.
    public func count(_ tree: Tree) throws -> Int {
        try check(tree)
        return tree.state.count
    }

    /// A cursor over `tree` that sees this transaction's changes.
    public func cursor(_ tree: Tree) throws -> Cursor {
        try check(tree)
        return Cursor(source: mutator, tree: tree.state)
    }

    // MARK: Writes

    /// Stores `value` under `key`, replacing what was there. With compression on, a value of at
    /// least the threshold is stored compressed when that saves an eighth of it.
    public func put(_ tree: Tree, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws {
        try check(tree)
        journal?.record(tree: tree.state.name, key: key)
        try mutator.putNow(tree.state, key: key, value: value)
        try mutator.spillIfOverBudget()
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
        let found = try mutator.delete(state: tree.state, key: key)
        try mutator.spillIfOverBudget()
        return found
    }

    /// Removes `key`; false when it was not there.
    @discardableResult
    public func delete(_ tree: Tree, key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { try delete(tree, key: $0) }
    }

    // MARK: Memory

    /// How many times this transaction wrote its changes into the log ahead of its commit (see
    /// `StorageOptions.transactionMemoryBudget`); for tests and diagnostics.
    package var spillCount: Int { mutator.spillCount }

    /// The memory this transaction's changes hold as the budget counts it, including what the
    /// last spill wrote and keeps until the next; for tests and diagnostics.
    package var heldChangeMemory: Int { mutator.heldMemory }

    // MARK: End

    /// Makes every change of this transaction durable (in `.full` durability) and visible to new
    /// readers, as one commit. When it throws, nothing of this transaction is visible; after a
    /// failed sync the store refuses further commits until it is reopened.
    ///
    /// In `.full` durability the transaction ends (the next write transaction may begin, on this
    /// commit's state) once the frame is written, and `commit` then waits for the sync: one sync
    /// covers every commit written while the one before it was in flight (group commit). It
    /// returns once this commit is durable and visible.
    public func commit() throws {
        try commit(beforeRelease: {})
    }

    /// `commit()`, then `committed` before the transaction ends: on this thread, while it still
    /// holds the store's one writer slot, so the next write transaction begins after `committed`
    /// returns and sees what it wrote (in memory; nothing it does is part of the commit). Not
    /// called when the commit throws before its frame is written. For state a layer above keeps
    /// beside the store and hands from one write transaction to the next.
    ///
    /// In `.full` durability `committed` runs once the frame is written, before its sync (the
    /// writer slot is handed on then: group commit). Should that sync fail, `commit` throws after
    /// `committed` ran; the store then refuses every further commit, so nothing committed builds
    /// on what `committed` handed on.
    public func commit(beforeRelease committed: () -> Void) throws {
        try commit(beforePublish: { _ in }, beforeRelease: committed)
    }

    /// `commit(beforeRelease:)`, with `publishing` called once the commit is in the log (and
    /// synced, in `.full` durability) but before any reader can see it, with the commit's id (the
    /// `transactionId` of the read transactions that see it first). Called exactly once per
    /// commit, in commit order; not called when the commit throws or changes nothing. A layer
    /// above uses it to record what each commit changed, in commit order, before a reader can
    /// meet the commit: a reader at commit N then knows that every commit up to N was recorded.
    ///
    /// In `.none` durability `publishing` is called before `committed`, on this thread, holding
    /// the writer slot. In `.full` durability it is called after `committed`, without the writer
    /// slot, once the commit is synced, by the thread that led that sync (this one or another
    /// committer's: group commit), right after the hooks of the commits before it returned: so
    /// still once per commit, in commit order, before the commit is visible, and before `commit`
    /// returns, but possibly on another thread and while the next write transaction runs.
    public func commit(beforePublish publishing: (UInt64) -> Void, beforeRelease committed: () -> Void) throws {
        try checkOpen()
        // `publishing` waits in the engine's group commit queue, but never outlives this call.
        try withoutActuallyEscaping(publishing) { publishing in
            let pending: GroupCommit.Waiter?
            do {
                defer { finish() }
                try mutator.applyAllDeferred()
                pending = try engine.commit(mutator, beforePublish: publishing)
                committed()
            }
            // The writer slot is free again: wait for the sync (shared with the commits of other
            // threads) and for the commit to be published.
            if let pending { try engine.awaitDurable(pending) }
        }
    }

    /// Discards every change of this transaction (and what it wrote ahead of its commit: see
    /// `StorageOptions.transactionMemoryBudget`).
    public func abort() {
        guard isOpen else { return }
        mutator.discardSpilled()
        finish()
    }

    private func finish() {
        isOpen = false
        mutator.reset()
        engine.endWrite(self)
    }

    func checkOpen() throws {
        guard isOpen else { throw StorageError.transactionClosed }
    }

    /// Checks `tree`'s handle, then applies the puts it holds back (see `putDeferred`): what
    /// every operation on a tree does first.
    private func check(_ tree: Tree) throws {
        try checkHandle(tree)
        if tree.state.hasDeferred { try mutator.applyDeferred(tree.state) }
    }

    /// Throws unless this transaction is open and `tree` is a live handle of it.
    func checkHandle(_ tree: Tree) throws {
        try checkOpen()
        guard tree.owner == ObjectIdentifier(self) else {
            throw StorageError.illegalArgument("tree \"\(tree.name)\" was opened in another transaction")
        }
        guard !tree.state.dropped else { throw StorageError.treeNotFound(tree.name) }
    }
}
