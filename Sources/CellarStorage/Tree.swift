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

/// A write transaction's memory of the dirty leaf its last put to a tree went to, and of the
/// range of keys that leaf holds (the separators met on the way down). A put or get whose key lies
/// in that range goes straight to the leaf instead of descending from the root: keys written in
/// order (new ids, updates in id order) descend once per leaf instead of once per key.
///
/// It is valid while the path to the leaf is dirty and the tree's shape has not changed: any split
/// and any removal forget it, and it dies with its transaction. The bounds point into the dirty
/// branch nodes above the leaf; those change only by an insert (after a split), a removal or a
/// merge, all of which forget the finger first (`setChild` rewrites a child reference in place,
/// never a key), so the pointers stay valid as long as the finger does.
struct Finger {
    /// The leaf's dirty reference; 0 when there is none.
    var leaf: UInt64 = 0
    /// The range is `low ..< high`; a missing bound is open.
    var low: UnsafeRawBufferPointer?
    var high: UnsafeRawBufferPointer?
    /// Where in the leaf the last put or read through the finger landed: the next one in key
    /// order looks there first (`NodeView.lowerBound(_:_:hint:)`).
    var hint = 0

    /// The leaf whose range holds `key`, if any.
    @inline(__always)
    func leaf(for key: UnsafeRawPointer, _ count: Int) -> UInt64? {
        guard leaf != 0 else { return nil }
        if let low, KeyCompare.compare(low.nonNullBase, low.count, key, count) > 0 { return nil }
        if let high, KeyCompare.compare(key, count, high.nonNullBase, high.count) >= 0 { return nil }
        return leaf
    }

    mutating func forget() { leaf = 0 }
}

/// A handle on a named tree, valid in the transaction that returned it.
///
/// Get one from `ReadTransaction.tree(_:)` or `WriteTransaction.tree(_:create:)`.
public struct Tree {
    /// The tree's name.
    public var name: String { state.name }
    let state: TreeState
    let owner: ObjectIdentifier
}

/// The catalog tree maps each tree's name (its UTF-8 bytes) to this 24-byte value.
enum CatalogEntry {
    static let size = 24

    static func encode(root: UInt64, count: Int, bytes: Int64) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: size)
        out.withUnsafeMutableBytes { b in
            b.baseAddress!.storeLE(root, at: 0)
            b.baseAddress!.storeLE(UInt64(count), at: 8)
            b.baseAddress!.storeLE(UInt64(bitPattern: bytes), at: 16)
        }
        return out
    }

    static func decode(_ value: UnsafeRawBufferPointer, name: String, at offset: UInt64) throws -> (root: UInt64, count: Int, bytes: Int64) {
        guard value.count == size else {
            throw StorageError.fileCorrupt(offset: offset, reason: "catalog entry for \"\(name)\" has \(value.count) bytes, expected \(size)")
        }
        let count = value.loadLE(UInt64.self, at: 8)
        guard count <= UInt64(Int.max) else {
            throw StorageError.fileCorrupt(offset: offset, reason: "catalog entry for \"\(name)\" has an impossible count")
        }
        return (value.loadLE(UInt64.self, at: 0), Int(count), Int64(bitPattern: value.loadLE(UInt64.self, at: 16)))
    }
}

/// Limits on what the engine stores.
public enum StorageLimits {
    /// The largest key, in bytes.
    public static let maxKeySize = 1 << 20
    /// The largest value, in bytes.
    public static let maxValueSize = (1 << 30) - 64
    /// The longest tree name, in UTF-8 bytes.
    public static let maxTreeNameSize = 1024

    /// Throws `tooLarge` for a key or value over its limit.
    @inline(__always)
    static func check(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws {
        guard key.count <= maxKeySize else {
            throw StorageError.tooLarge(what: "key", size: key.count, limit: maxKeySize)
        }
        guard value.count <= maxValueSize else {
            throw StorageError.tooLarge(what: "value", size: value.count, limit: maxValueSize)
        }
    }
}
