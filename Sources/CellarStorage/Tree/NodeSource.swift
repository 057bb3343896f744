/// Marks a reference to a node or a value that lives in a write transaction's memory rather than
/// in the file (file offsets never reach 2^63).
let dirtyTag: UInt64 = 1 << 63

/// Where tree reads get their nodes: a read transaction from its snapshot's map, a write transaction
/// from its dirty nodes and, below them, the map of its base snapshot.
protocol NodeSource: AnyObject {
    /// Everything below this offset is committed in the source's base snapshot.
    var limit: UInt64 { get }
    /// Increases whenever the trees change; cursors re-seek when it moved under them.
    var mutationCount: Int { get }
    /// Whether trees can change under a cursor (a write transaction).
    var isMutable: Bool { get }
    /// The node at `ref`. `below` bounds a committed node's offset (see `MapGeneration.node`).
    func node(_ ref: UInt64, below: UInt64) throws -> NodeView
    /// The bytes of an out-of-line value.
    func outOfLineValue(_ ref: UInt64, length: Int, below: UInt64) throws -> UnsafeRawBufferPointer
    /// The catalog's root as this source sees it.
    var catalogRootRef: UInt64 { get }
    /// Decodes the compressed values this source reads (made on the first).
    var decoder: ValueDecoder { get }
    /// The root of the engine's tree `name` as this source sees it; nil when there is none.
    func reservedTreeRoot(_ name: String) throws -> UInt64?
    /// Applies `tree`'s held-back puts (a write transaction's `putDeferred`); a cursor calls it
    /// before it positions itself.
    func applyDeferred(_ tree: TreeState) throws
}

extension NodeSource {
    /// The bound for the children of the node at `ref`: its own offset when committed (children
    /// are written first, so they lie below it), the source's limit when dirty.
    @inline(__always)
    func childBound(of ref: UInt64) -> UInt64 { ref & dirtyTag != 0 ? limit : ref }

    /// Finds `key` in the tree rooted at `root`; returns its value's bytes, valid until the
    /// source ends (a compressed value is decoded into its arena).
    func get(root: UInt64, key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        try storedValue(root: root, key: key).map(keptBytes)
    }

    /// The levels from `root` down its leftmost path to a leaf (every leaf is at the same depth);
    /// 0 when `root` is 0.
    func height(root: UInt64) throws -> Int {
        var ref = root
        var below = limit
        var levels = 0
        while ref != 0 {
            let node = try self.node(ref, below: below)
            levels += 1
            if node.isLeaf { break }
            below = childBound(of: ref)
            ref = node.child(0)
        }
        return levels
    }

    /// `stored`'s bytes, valid until the source ends: in place, or decoded into its arena.
    func keptBytes(_ stored: StoredValue) throws -> UnsafeRawBufferPointer {
        stored.compressed ? try decoder.decodeKept(stored, source: self) : stored.bytes
    }

    /// Calls `body` with `stored`'s bytes (nil: none), valid during the call: in place, or
    /// decoded into memory that lives for the call only.
    func withBytes<R>(of stored: StoredValue?, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        guard let stored else { return try body(nil) }
        guard stored.compressed else { return try body(stored.bytes) }
        return try decoder.withDecoded(stored, source: self) { try body($0) }
    }

    /// Finds `key` in the tree rooted at `root`; returns its value as stored.
    func storedValue(root: UInt64, key: UnsafeRawBufferPointer) throws -> StoredValue? {
        guard root != 0 else { return nil }
        let search = SearchKey(key.nonNullBase, key.count)
        var ref = root
        var below = limit
        // Each node's searches start where its range says the key should be (see `HeadRange`).
        var range = HeadRange.unbounded
        while true {
            let node = try self.node(ref, below: below)
            below = childBound(of: ref)
            let guess = range.guess(search, count: node.count)
            if node.isLeaf {
                let (index, found) = if let guess { node.lowerBound(search, guess: guess) } else { node.lowerBound(search) }
                guard found else { return nil }
                return try storedValue(of: node, at: index, below: below)
            }
            let index = if let guess { node.childIndex(search, guess: guess) } else { node.childIndex(search) }
            range = range.narrowed(to: index, of: node)
            // No depth bound is needed: `node(_:below:)` refuses a reference that does not point
            // below its parent, so the walk ends.
            ref = node.child(index)
        }
    }

    /// The value of leaf entry `index` as stored. `below` is the leaf's own offset when committed.
    @inline(__always)
    func storedValue(of leaf: NodeView, at index: Int, below: UInt64) throws -> StoredValue {
        switch leaf.value(index) {
        case .inline(let bytes, let compressed):
            return StoredValue(bytes: bytes, compressed: compressed, offset: below & ~dirtyTag)
        case .outOfLine(let ref, let length, let compressed):
            return StoredValue(bytes: try outOfLineValue(ref, length: length, below: below), compressed: compressed,
                               offset: ref & dirtyTag != 0 ? 0 : ref)
        }
    }
}
