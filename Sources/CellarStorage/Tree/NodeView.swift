/// A B+tree node's body, read in place: from the map for a committed node, from the dirty buffer
/// for one a write transaction is changing. The layout is the same in both:
///
/// ```
/// 0  1  kind: 1 leaf, 2 branch
/// 1  3  zero
/// 4  4  entry count n
/// 8  4n slot i: offset of entry i from the start of the body; entries in key order
///
/// leaf entry:   u32 key length, u32 value word, key bytes, then
///               the value bytes (inline) or a u64 offset of a value record (out of line)
///               value word: bit 31 = out of line, bit 30 = compressed (a zstd frame),
///               bits 0…29 = the stored value's length
/// branch entry: u64 child reference, u32 key length, key bytes
///               entry 0's key is ignored (it stands for "everything below entry 1")
/// ```
/// Every accessor is unchecked: a committed node passes `NodeView.validate` once (with its record
/// checksum) before any view of it is made, and a dirty node is built by the engine itself.
struct NodeView {
    static let leafKind: UInt8 = 1
    static let branchKind: UInt8 = 2
    static let outOfLineBit: UInt32 = 1 << 31
    static let compressedBit: UInt32 = 1 << 30
    /// The stored length's bits of a value word.
    static let lengthMask: UInt32 = (1 << 30) - 1

    let body: UnsafeRawPointer
    let count: Int
    let isLeaf: Bool

    @inline(__always)
    init(body: UnsafeRawPointer) {
        self.body = body
        self.count = Int(body.loadLE(UInt32.self, at: 4))
        self.isLeaf = body.load(as: UInt8.self) == Self.leafKind
    }

    @inline(__always)
    func entry(_ i: Int) -> UnsafeRawPointer { body + Int(body.loadLE(UInt32.self, at: 8 &+ 4 &* i)) }

    /// Key `i` as a pointer and a length.
    @inline(__always)
    func key(_ i: Int) -> (UnsafeRawPointer, Int) { isLeaf ? leafKey(i) : branchKey(i) }

    /// Key `i` of a leaf (the searches know the kind; `key` tests it).
    @inline(__always)
    func leafKey(_ i: Int) -> (UnsafeRawPointer, Int) {
        let e = entry(i)
        return (e + 8, Int(e.loadLE(UInt32.self, at: 0)))
    }

    /// Key `i` of a branch.
    @inline(__always)
    func branchKey(_ i: Int) -> (UnsafeRawPointer, Int) {
        let e = entry(i)
        return (e + 12, Int(e.loadLE(UInt32.self, at: 8)))
    }

    @inline(__always)
    func keyBuffer(_ i: Int) -> UnsafeRawBufferPointer {
        let (p, n) = key(i)
        return UnsafeRawBufferPointer(start: p, count: n)
    }

    /// A leaf's value `i`: its bytes when inline, or where its record is.
    @inline(__always)
    func value(_ i: Int) -> LeafValue {
        let e = entry(i)
        let keyLength = Int(e.loadLE(UInt32.self, at: 0))
        let word = e.loadLE(UInt32.self, at: 4)
        let length = Int(word & Self.lengthMask)
        let compressed = word & Self.compressedBit != 0
        if word & Self.outOfLineBit != 0 {
            return .outOfLine(ref: e.loadLE(UInt64.self, at: 8 &+ keyLength), length: length, compressed: compressed)
        }
        return .inline(UnsafeRawBufferPointer(start: e + 8 + keyLength, count: length), compressed: compressed)
    }

    /// The value word of leaf entry `i` (see the layout above).
    @inline(__always)
    func valueWord(_ i: Int) -> UInt32 { entry(i).loadLE(UInt32.self, at: 4) }

    /// A branch's child reference `i` (an offset, or a dirty node's tagged index).
    @inline(__always)
    func child(_ i: Int) -> UInt64 { entry(i).loadLE(UInt64.self, at: 0) }

    /// The size of entry `i` in bytes (its slot not counted).
    @inline(__always)
    func entrySize(_ i: Int) -> Int {
        let e = entry(i)
        if !isLeaf { return 12 &+ Int(e.loadLE(UInt32.self, at: 8)) }
        let word = e.loadLE(UInt32.self, at: 4)
        let valueBytes = word & Self.outOfLineBit != 0 ? 8 : Int(word & Self.lengthMask)
        return 8 &+ Int(e.loadLE(UInt32.self, at: 0)) &+ valueBytes
    }

    /// The size of this body written compactly: header, slots and entries.
    var compactSize: Int {
        var size = 8
        for i in 0..<count { size &+= 4 &+ entrySize(i) }
        return size
    }

    /// Leaf search (of a leaf only): the first index whose key is ≥ `key`, and whether it is equal.
    @inline(__always)
    func lowerBound(_ key: UnsafeRawPointer, _ keyCount: Int) -> (index: Int, found: Bool) {
        lowerBound(SearchKey(key, keyCount))
    }

    @inline(__always)
    func lowerBound(_ key: SearchKey) -> (index: Int, found: Bool) {
        lowerBound(key, from: 0, to: count)
    }

    /// `lowerBound` when the answer is known to lie in `lo...hi`.
    @inline(__always)
    func lowerBound(_ key: SearchKey, from lo: Int, to hi: Int) -> (index: Int, found: Bool) {
        assert(isLeaf)
        var lo = lo
        var hi = hi
        while lo < hi {
            let mid = (lo &+ hi) >> 1
            let (p, n) = leafKey(mid)
            let c = key.order(of: p, n)
            if c < 0 { lo = mid &+ 1 } else if c > 0 { hi = mid } else { return (mid, true) }
        }
        return (lo, false)
    }

    /// `lowerBound`, trying first the entry at `hint` and its neighbours (see
    /// `lowerBound(_:guess:)`): keys read or written in ascending order (new ids, updates in id
    /// order, a sorted batch) land there, and cost one or two comparisons instead of a binary
    /// search. Any `hint` is safe; a wrong one costs the comparisons.
    @inline(__always)
    func lowerBound(_ keyBase: UnsafeRawPointer, _ keyCount: Int, hint: Int) -> (index: Int, found: Bool) {
        let key = SearchKey(keyBase, keyCount)
        guard hint >= 0 && hint < count else { return lowerBound(key) }
        return lowerBound(key, guess: hint)
    }

    /// Branch search (of a branch only): the index of the child whose range holds `key`.
    @inline(__always)
    func childIndex(_ keyBase: UnsafeRawPointer, _ keyCount: Int) -> Int {
        childIndex(SearchKey(keyBase, keyCount))
    }

    @inline(__always)
    func childIndex(_ key: SearchKey) -> Int {
        childIndex(key, from: 1, to: count)
    }

    /// `childIndex` when the first entry from 1 on whose key sorts after `key` is known to lie in
    /// `lo...hi` (the child is the one before it).
    @inline(__always)
    func childIndex(_ key: SearchKey, from lo: Int, to hi: Int) -> Int {
        assert(!isLeaf)
        var lo = lo
        var hi = hi
        while lo < hi {
            let mid = (lo &+ hi) >> 1
            let (p, n) = branchKey(mid)
            if key.order(of: p, n) <= 0 { lo = mid &+ 1 } else { hi = mid }
        }
        return lo &- 1
    }

    /// Checks a node body of `length` bytes read from disk: kind, count, every slot and every entry
    /// inside the body, a branch not empty, out-of-line value lengths in range. Returns a reason when
    /// something is wrong. Child and value references are checked when they are followed.
    static func validate(_ body: UnsafeRawPointer, length: Int) -> String? {
        guard length >= 8 else { return "node shorter than its header" }
        let kind = body.load(as: UInt8.self)
        guard kind == leafKind || kind == branchKind else { return "unknown node kind \(kind)" }
        guard body.loadLE(UInt32.self, at: 0) >> 8 == 0 else { return "node header padding is not zero" }
        let count = Int(body.loadLE(UInt32.self, at: 4))
        guard count <= (length - 8) / 4 else { return "entry count \(count) does not fit the node" }
        if kind == branchKind && count == 0 { return "empty branch node" }
        let slotsEnd = 8 + 4 * count
        for i in 0..<count {
            let start = Int(body.loadLE(UInt32.self, at: 8 + 4 * i))
            guard start >= slotsEnd, start <= length else { return "entry \(i) outside the node" }
            let room = length - start
            if kind == leafKind {
                guard room >= 8 else { return "entry \(i) header outside the node" }
                let keyLength = Int(body.loadLE(UInt32.self, at: start))
                let word = body.loadLE(UInt32.self, at: start + 4)
                let valueBytes = word & outOfLineBit != 0 ? 8 : Int(word & lengthMask)
                guard keyLength <= room - 8, valueBytes <= room - 8 - keyLength else {
                    return "entry \(i) key or value outside the node"
                }
            } else {
                guard room >= 12 else { return "entry \(i) header outside the node" }
                let keyLength = Int(body.loadLE(UInt32.self, at: start + 8))
                guard keyLength <= room - 12 else { return "entry \(i) key outside the node" }
            }
        }
        return nil
    }
}

/// Where a leaf value is, and whether it is stored compressed.
enum LeafValue {
    /// The bytes, inside the node.
    case inline(UnsafeRawBufferPointer, compressed: Bool)
    /// In a value record of its own: a file offset, or a write transaction's pending value.
    case outOfLine(ref: UInt64, length: Int, compressed: Bool)
}
