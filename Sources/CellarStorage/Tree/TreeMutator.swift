/// The copy-on-write B+tree of one write transaction: the layer under `WriteTransaction`'s API
/// (as SQLite's btree is under its VDBE, LMDB's cursor code under `MDB_txn`). It holds the trees
/// the transaction opened (`TreeState`, the catalog among them), the nodes it changed
/// (`DirtyNodes`) and the out-of-line values waiting for the commit (`PendingValue`), and it is
/// the `NodeSource` the transaction's reads and cursors go through, so they see its changes.
///
/// - `TreeMutator+Mutation.swift`: puts and deletes (path copying, splits, merges).
/// - `TreeMutator+Compression.swift`: which values are stored compressed, and with which dictionary.
/// - `TreeMutator+DeferredPuts.swift`: held-back puts, applied in key order.
/// - `TreeMutator+Frame.swift`: the frame a commit writes (`StorageEngine.commit` calls it).
/// - `TreeMutator+Spill.swift`: past its memory budget, a transaction writes its finished nodes
///   into the log ahead of its commit record.
///
/// It knows nothing of the engine: what it needs (the options, the compressor, the dictionary
/// cache, the decoding contexts) is handed to it. Not thread-safe, like its transaction.
final class TreeMutator: NodeSource {
    /// The commit this transaction started from.
    let base: Snapshot
    /// The records of the base snapshot's map (kept alive by `base`), held as a struct: reading a
    /// committed node then costs no reference counting.
    let baseRecords: MappedRecords
    /// In an encrypted store, where `baseRecords` are read decrypted; kept for the transaction's life.
    let baseView: DecryptedView?
    /// The base snapshot's committed length: a reference at or past it is to a record this
    /// transaction spilled (see `TreeMutator+Spill.swift`).
    let baseLength: UInt64
    /// What a node of a dirty parent is bounded by (`NodeSource.limit`): the base commit's
    /// offset, then the end of what this transaction spilled.
    let readLimit: Indirect<UInt64>
    /// Where a spill writes (the log's frame stream and the file's mappings); nil: this
    /// transaction never spills (an in-memory store, or an unlimited budget).
    let spillLog: LogWriter?
    /// The memory estimate (see `dirtyMemory`) from which a change spills. Half the budget: the
    /// nodes a spill wrote stay allocated until the next spill (see `SpillState.retired`).
    let spillThreshold: Int
    /// What this transaction spilled so far; nil until its first spill.
    var spillState: SpillState?
    /// Why a spill failed: the transaction can no longer commit.
    var spillFailure: (any Error)?
    /// Bytes of the out-of-line values in `pending`.
    let pendingBytes = Indirect(0)
    let nodeSize: Int
    /// Values at most this long are stored inside their leaf; longer ones in a record of their own.
    let inlineLimit: Int
    /// Values at least this long are offered to the compressor (`Int.max`: no compression).
    let compressionThreshold: Int
    /// Compresses values; nil when the store does not.
    let compressor: ValueCompressor?
    /// Whether compaction trains dictionaries for the store's trees (see `dictionary(for:level:)`).
    let trainsDictionaries: Bool
    /// The engine's compression dictionaries, shared by its write transactions.
    let dictionaries: CompressionDictionaryCache
    private let codecs: ValueCodecs
    private var madeDecoder: ValueDecoder?

    /// The nodes this transaction changed, by the index in their dirty reference.
    let dirty = DirtyNodes()
    /// Out-of-line values waiting for the commit, by the index in their dirty reference.
    let pending = Indirect<[PendingValue?]>([])
    /// The trees this transaction opened, by name.
    var trees: [String: TreeState] = [:]
    /// Catalog entries known without a look-up: the base commit's as the engine kept them (see
    /// `TipCache`) and those this transaction looked up; `writeFrame` then records those it
    /// writes, for the commit it makes.
    var knownTrees: [String: CatalogEntry]
    /// The nodes the base commit wrote, as the engine kept them (see `TipCache`): read from
    /// memory, and taken over when this transaction changes them (`makeDirty`).
    var baseNodes: WrittenNodes
    /// `baseNodes.start` as it was handed over (a reference below it is not there): a constant, so
    /// that every read of a committed node tests it without an access to a stored variable.
    let baseNodesStart: UInt64
    /// The nodes this transaction's commit wrote (`writeFrame`), for the engine to keep.
    var written = WrittenNodes()
    /// `writeFrame` began: `knownTrees` may hold entries of the commit being made.
    var frameWritten = false
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

    init(base: Snapshot, view: DecryptedView?, options: StorageOptions, compressor: ValueCompressor?,
         dictionaries: CompressionDictionaryCache, codecs: ValueCodecs, spillLog: LogWriter? = nil,
         knownTrees: [String: CatalogEntry] = [:], baseNodes: WrittenNodes = WrittenNodes()) {
        self.base = base
        self.knownTrees = knownTrees
        self.baseNodes = baseNodes
        self.baseNodesStart = baseNodes.start
        self.baseView = view
        self.baseRecords = base.generation.records.decrypting(through: view)
        self.baseLength = base.committedLength
        self.readLimit = Indirect(base.commitOffset)
        let spills = spillLog != nil && options.transactionMemoryBudget < Int.max
        self.spillLog = spills ? spillLog : nil
        self.spillThreshold = spills ? options.transactionMemoryBudget / 2 : Int.max
        self.nodeSize = options.nodeSize
        self.inlineLimit = options.nodeSize / 4
        self.compressor = compressor
        self.compressionThreshold = compressor == nil ? Int.max : options.compressionThreshold
        self.trainsDictionaries = options.compression.trainsDictionaries
        self.dictionaries = dictionaries
        self.codecs = codecs
        self.catalog = TreeState(name: "", root: base.catalogRoot, count: 0, bytes: 0)
    }

    deinit {
        spillState?.releaseRetired()
        mutations.free()
        dirty.free()
        pending.free()
        pendingBytes.free()
        readLimit.free()
    }

    /// Forgets every change (the transaction ended: committed or aborted).
    func reset() {
        dirty.removeAll()
        pending.value = []
        pendingBytes.value = 0
        spillState?.releaseRetired()
        spillState = nil
        trees = [:]
        droppedTrees = []
    }

    func noteMutation() { mutations.value &+= 1 }

    /// Records `entry` as `name`'s in `knownTrees`, within `TipCache.limit` trees.
    func know(_ entry: CatalogEntry, of name: String) {
        if knownTrees[name] != nil || knownTrees.count < TipCache.limit { knownTrees[name] = entry }
    }

    /// `knownTrees`, and the nodes of the commit this transaction made, handed back to the
    /// engine (see `TipCache`).
    func takeCommitted() -> (entries: [String: CatalogEntry], nodes: WrittenNodes) {
        defer { knownTrees = [:]; written = WrittenNodes() }
        return (knownTrees, written)
    }

    /// `knownTrees` and `baseNodes` (those not taken over) of a transaction that ended without
    /// writing a frame: still those of its base.
    func takeBase() -> (entries: [String: CatalogEntry], nodes: WrittenNodes) {
        defer { knownTrees = [:]; baseNodes = WrittenNodes() }
        return (knownTrees, baseNodes)
    }

    // MARK: NodeSource

    var limit: UInt64 { readLimit.value }
    var isMutable: Bool { true }

    @inline(__always)
    func node(_ ref: UInt64, below: UInt64) throws -> NodeView {
        if ref & dirtyTag != 0 { return dirtyView(ref) }
        if ref >= baseLength { return try spilledNode(ref, below: below) }
        if ref >= baseNodesStart, let view = baseNodes.view(of: ref) { return view }
        return try baseRecords.node(at: ref, below: below, limit: baseLength)
    }

    func outOfLineValue(_ ref: UInt64, length: Int, below: UInt64) throws -> UnsafeRawBufferPointer {
        if ref & dirtyTag != 0 { return pending.value[Int(ref & ~dirtyTag)]!.bytes }
        if ref >= baseLength { return try spilledValue(ref, length: length, below: below) }
        return try baseRecords.value(at: ref, length: length, below: below, limit: baseLength)
    }

    /// The length of the written record at `ref` (committed, or spilled by this transaction).
    func writtenRecordLength(_ ref: UInt64) -> Int {
        if ref >= baseLength, let spillState { return spillState.records.recordLength(at: ref) }
        if ref >= baseNodesStart, let length = baseNodes.recordLength(of: ref) { return length }
        return baseRecords.recordLength(at: ref)
    }

    var catalogRootRef: UInt64 { catalog.root }

    func reservedTreeRoot(_ name: String) throws -> UInt64? {
        if let state = trees[name] { return state.root }
        return try catalogTreeRoot(name)
    }

    var decoder: ValueDecoder {
        if let madeDecoder { return madeDecoder }
        let made = ValueDecoder(codecs: codecs)
        madeDecoder = made
        return made
    }

    // MARK: Trees

    /// The tree named `name` (the engine's own trees too); created (empty) when missing and
    /// `create` is true, else nil. `created`: it was.
    func openTree(_ name: String, create: Bool) throws -> (state: TreeState, created: Bool)? {
        if let state = trees[name] { return (state, false) }
        if let known = knownTrees[name] {
            let state = TreeState(name: name, root: known.root, count: known.count, bytes: known.bytes)
            trees[name] = state
            return (state, false)
        }
        let nameBytes = Array(name.utf8)
        guard nameBytes.count <= StorageLimits.maxTreeNameSize else {
            throw StorageError.tooLarge(what: "tree name", size: nameBytes.count, limit: StorageLimits.maxTreeNameSize)
        }
        let state: TreeState
        var created = false
        if let value = try nameBytes.withUnsafeBytes({ try get(root: catalog.root, key: $0) }) {
            let entry = try CatalogEntry.decode(value, name: name, at: base.catalogRoot)
            state = TreeState(name: name, root: entry.root, count: entry.count, bytes: entry.bytes)
            know(entry, of: name)
        } else {
            guard create else { return nil }
            created = true
            state = TreeState(name: name, root: 0, count: 0, bytes: 0)
            state.modified = true
            // Record it in the catalog now, so that `treeNames` sees it; the root is filled in at commit.
            try nameBytes.withUnsafeBytes { name in
                try CatalogEntry(root: 0, count: 0, bytes: 0).withEncoded { try put(state: catalog, key: name, value: $0) }
            }
        }
        trees[name] = state
        return (state, created)
    }

    /// Removes the tree of `state` and everything in it.
    func dropTree(_ state: TreeState) throws {
        let name = state.name
        droppedBytes = droppedBytes &+ state.bytes
        state.finger.pointee.forget()
        state.deferred = nil
        state.hasDeferred = false
        state.dropped = true
        state.root = 0
        state.count = 0
        trees[name] = nil
        knownTrees[name] = nil
        droppedTrees.insert(name)
        _ = try Array(name.utf8).withUnsafeBytes { try delete(state: catalog, key: $0) }
        noteMutation()
    }

    /// The names of the trees changed so far: created, written to (a put, or a delete that found
    /// its key) or dropped.
    var changedTreeNames: Set<String> {
        var names = droppedTrees
        for (name, state) in trees where state.modified { names.insert(name) }
        return names
    }

    /// The names of all trees, including those created and without those dropped so far.
    func treeNames() throws -> [String] {
        var names: [String] = []
        try Cursor(source: self, tree: catalog).scan { key, _ in
            if key.first != 0 { names.append(String(decoding: key, as: UTF8.self)) }
            return true
        }
        return names
    }

    // MARK: Reads

    /// The value stored under `key` in `tree`, as stored; the tree's finger is tried first.
    @inline(__always)
    func storedValue(in tree: TreeState, key: UnsafeRawBufferPointer) throws -> StoredValue? {
        let finger = tree.finger
        if let leaf = finger.pointee.leaf(for: key.nonNullBase, key.count) {
            let view = dirtyView(leaf)
            let (index, found) = view.lowerBound(key.nonNullBase, key.count, hint: finger.pointee.hint)
            guard found else { return nil }
            finger.pointee.hint = index
            return try storedValue(of: view, at: index, below: limit)
        }
        return try storedValue(root: tree.root, key: key)
    }
}
