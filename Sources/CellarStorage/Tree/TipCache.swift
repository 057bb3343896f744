/// What the engine keeps of the commit it made, for the write transaction that starts on it: the
/// catalog entries (root, count, bytes) of the trees write transactions found or wrote, and the
/// nodes the commit wrote (`WrittenNodes`). An app's write touches the same few trees every time
/// (an entity's, its indexes'), mostly along the same paths, and a durable commit of one object
/// spends most of its time in the sync: what each commit costs beside it counts.
///
/// - With the entries, opening a tree the previous transactions opened costs a dictionary
///   look-up instead of a descent of the catalog and a decode.
/// - With the nodes, the next write reads the path the last commit wrote from memory, and takes
///   the nodes over when it changes them, instead of copying them from the file's mapping. The
///   log's newest pages are then never mapped by the writer: each page the kernel writes back
///   that a process maps costs a walk of its mappings in the sync (`docs/performance-log.md`).
///
/// Valid for exactly one commit, `snapshot`: `StorageEngine.beginWrite` hands it to the
/// transaction only when it starts on that commit (`take(at:)`), and a commit leaves what the
/// commit it made holds (`TreeMutator.knownTrees`: the entries of its base, those it looked up,
/// the trees it wrote with their new entries, without those it dropped; `TreeMutator.written`:
/// the nodes it wrote). Any other move of the engine's `tip` (a compaction's copy, another
/// process's commits) empties it. Touched only holding the writer gate.
struct TipCache {
    /// At most this many trees are remembered (a store with many more trees still works; trees
    /// past it are looked up in the catalog each time).
    static let limit = 1_024

    /// The commit the entries and nodes are of; nil: none yet.
    private(set) var snapshot: Snapshot?
    private var entries: [String: CatalogEntry] = [:]
    private var nodes = WrittenNodes()

    init() {}

    init(snapshot: Snapshot, entries: [String: CatalogEntry], nodes: WrittenNodes) {
        self.snapshot = snapshot
        self.entries = entries
        self.nodes = nodes
    }

    /// The entries and nodes, when they are of `snapshot` (none otherwise), handed over: the
    /// cache is left empty, so the transaction changes them without a copy. The engine takes them
    /// back when the transaction commits (those of the commit it made), or ends without writing
    /// a frame (those of the commit it started on, less the nodes it took over:
    /// `StorageEngine.endWrite`).
    mutating func take(at snapshot: Snapshot) -> (entries: [String: CatalogEntry], nodes: WrittenNodes) {
        defer { self = TipCache() }
        return self.snapshot === snapshot ? (entries, nodes) : ([:], WrittenNodes())
    }
}

/// The node records one commit wrote, as the writer built them (`DirtyNode`s whose references
/// were resolved when they were written, so each reads exactly as its record), by offset. Only a
/// commit of at most `limit` nodes and `byteLimit` bytes of their buffers keeps them, and only one
/// that did not spill (its nodes are then all in memory); a larger commit keeps none. Any subset
/// would be as correct: what is here reads as the file does.
struct WrittenNodes {
    /// A commit of more nodes keeps none: the next write starts on the file's mapping. (A look-up
    /// scans them.)
    static let limit = 64
    /// Nor does one whose nodes' buffers hold more (what the engine holds between writes: about
    /// 330 KiB at most with the default node size, whose limit is the count).
    static let byteLimit = 512 << 10

    struct Entry {
        let offset: UInt64
        /// The record's length (header and padding included): what the live bytes count.
        let recordLength: Int
        let node: DirtyNode
    }

    /// The lowest offset of a node here (`UInt64.max`: none): one comparison tells a reference
    /// that cannot be here.
    private(set) var start = UInt64.max
    private var entries: [Entry] = []
    /// The bytes of the kept nodes' buffers.
    private var bytes = 0
    /// More than `limit` nodes, or `byteLimit` bytes, were offered: none are kept.
    private var overflowed = false

    /// Keeps the node written at `offset`, unless the commit wrote too many already.
    mutating func keep(_ node: DirtyNode, at offset: UInt64, recordLength: Int) {
        guard !overflowed else { return }
        bytes &+= node.capacity
        guard entries.count < Self.limit, bytes <= Self.byteLimit else {
            entries = []
            start = .max
            overflowed = true
            return
        }
        if entries.isEmpty { entries.reserveCapacity(8) }
        entries.append(Entry(offset: offset, recordLength: recordLength, node: node))
        start = min(start, offset)
    }

    /// Where entry `ref` is; parents are written after their children, so the search starts at
    /// the newest (a descent reads the root first).
    @inline(__always)
    private func index(of ref: UInt64) -> Int? {
        guard ref >= start else { return nil }
        var i = entries.count
        while i > 0 {
            i &-= 1
            if entries[i].offset == ref { return i }
        }
        return nil
    }

    /// The body of the node written at `ref`, when it is here.
    func view(of ref: UInt64) -> NodeView? {
        guard let i = index(of: ref) else { return nil }
        return entries[i].node.view
    }

    /// The length of the record at `ref`, when its node is here.
    func recordLength(of ref: UInt64) -> Int? {
        guard let i = index(of: ref) else { return nil }
        return entries[i].recordLength
    }

    /// Takes the node written at `ref` out, to be changed by a write: it no longer reads as its
    /// record.
    mutating func take(_ ref: UInt64) -> Entry? {
        guard let i = index(of: ref) else { return nil }
        return entries.remove(at: i)
    }
}
