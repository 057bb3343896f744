/// The state of one named tree inside a transaction: its root and how many entries and live bytes
/// it holds. A write transaction keeps one per tree it opened and updates it as it goes.
final class TreeState {
    /// The mutable fields, behind a pointer: a class's stored `var`s cost a runtime exclusivity
    /// check on every access, and a put touches these several times.
    private struct Fields {
        var root: UInt64
        var count: Int
        var bytes: Int64
        var bytesDelta: Int64 = 0
        var modified = false
        var dropped = false
        var hasDeferred = false
        /// Deferred puts made at once before holding back began (see `DeferredPuts.holdBackAfter`).
        var immediatePuts = 0
        var finger = Finger()
    }

    let name: String
    private let fields: UnsafeMutablePointer<Fields>
    /// The dictionary this transaction compresses the tree's values with; looked up on the first
    /// compressed put (`dictionaryResolved`).
    var compressionDictionary: CompressionDictionary?
    var dictionaryResolved = false
    /// Small values of this tree that failed to shrink in a row, in this transaction (see
    /// `CompressionSampling`).
    var compressionFailures = 0
    /// Puts held back to be applied in key order (see `DeferredPuts`); made on the first.
    var deferred: DeferredPuts?
    /// Whether `deferred` holds entries: checked before every operation on the tree, so kept
    /// among the fields (no exclusivity check, no load of the buffer).
    var hasDeferred: Bool {
        get { fields.pointee.hasDeferred }
        set { fields.pointee.hasDeferred = newValue }
    }
    var immediatePuts: Int {
        get { fields.pointee.immediatePuts }
        set { fields.pointee.immediatePuts = newValue }
    }
    /// Where the last put landed (see `Finger`), inside `fields` (no allocation of its own: a read
    /// transaction makes a tree state per tree it opens).
    var finger: UnsafeMutablePointer<Finger> {
        (UnsafeMutableRawPointer(fields) + MemoryLayout<Fields>.offset(of: \Fields.finger)!).assumingMemoryBound(to: Finger.self)
    }

    /// Root reference: 0 for an empty tree, a file offset, or a dirty node's tagged index.
    var root: UInt64 {
        get { fields.pointee.root }
        set { fields.pointee.root = newValue }
    }
    var count: Int {
        get { fields.pointee.count }
        set { fields.pointee.count = newValue }
    }
    /// Bytes of this tree's records in the file (nodes and out-of-line values) as of the base commit.
    var bytes: Int64 {
        get { fields.pointee.bytes }
        set { fields.pointee.bytes = newValue }
    }
    /// How this transaction changed `bytes` (negative: records it replaced; positive: written at commit).
    var bytesDelta: Int64 {
        get { fields.pointee.bytesDelta }
        set { fields.pointee.bytesDelta = newValue }
    }
    /// Changed in this transaction (must be written and recorded in the catalog at commit).
    var modified: Bool {
        get { fields.pointee.modified }
        set { fields.pointee.modified = newValue }
    }
    var dropped: Bool {
        get { fields.pointee.dropped }
        set { fields.pointee.dropped = newValue }
    }

    init(name: String, root: UInt64, count: Int, bytes: Int64) {
        self.name = name
        fields = .allocate(capacity: 1)
        fields.initialize(to: Fields(root: root, count: count, bytes: bytes))
    }

    deinit {
        fields.deinitialize(count: 1)
        fields.deallocate()
    }
}
