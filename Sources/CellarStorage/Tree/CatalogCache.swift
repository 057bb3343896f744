/// The catalog entries (root, count, bytes) of one commit's trees that write transactions found or
/// wrote, kept by the engine from one write transaction to the next: opening a tree the previous
/// transactions opened then costs a dictionary look-up instead of a descent of the catalog and a
/// decode. An app's write touches the same few trees every time (an entity's, its indexes'), and
/// a durable commit of one object spends most of its time in the sync: what each commit costs
/// beside it counts.
///
/// Valid for exactly one commit, `snapshot`: `StorageEngine.beginWrite` hands the entries to the
/// transaction only when it starts on that commit (`take(at:)`), and a commit leaves the entries
/// of the commit it made (`TreeMutator.knownTrees`: those of its base, those it looked up, the
/// trees it wrote with their new entries, without those it dropped). Any other move of the
/// engine's `tip` (a compaction's copy, another process's commits) empties it. Touched only
/// holding the writer gate.
struct CatalogCache {
    /// At most this many trees are remembered (a store with many more trees still works; trees
    /// past it are looked up in the catalog each time).
    static let limit = 1_024

    /// The commit the entries are of; nil: none yet.
    private(set) var snapshot: Snapshot?
    private var entries: [String: CatalogEntry] = [:]

    init() {}

    init(snapshot: Snapshot, entries: [String: CatalogEntry]) {
        self.snapshot = snapshot
        self.entries = entries
    }

    /// The entries, when they are of `snapshot` (none otherwise), handed over: the cache is left
    /// empty, so the transaction changes them without a copy. The engine takes them back when
    /// the transaction commits (those of the commit it made), or ends without writing a frame
    /// (those of the commit it started on: `StorageEngine.endWrite`).
    mutating func take(at snapshot: Snapshot) -> [String: CatalogEntry] {
        defer { self = CatalogCache() }
        return self.snapshot === snapshot ? entries : [:]
    }
}
