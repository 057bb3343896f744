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
