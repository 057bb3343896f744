/// Looking up many keys of one tree, a group at a time, each stage of the search for the whole
/// group before the next: the branches down to each key's leaf, then each leaf's first bytes (its
/// record's kind and the word saying whether it was verified), then each key's entry in its leaf.
/// One lookup after another waits for each leaf's cache miss in turn; in stages the misses of a
/// group are in flight together. The answers are `storedValue(root:key:)`'s.
extension NodeSource {
    /// How many keys one group holds: enough misses in flight to fill the processor's queue of
    /// outstanding loads, few enough that the group's leaves stay in the cache until read.
    static var lookupGroup: Int { 16 }

    /// The value stored under each of `keys` (nil when absent) into `found`, as many. Each key is
    /// eight bytes, a `UInt64` in big-endian byte order in memory. `height` is the tree's
    /// (`height(root:)`).
    func storedValues(root: UInt64, height: Int, keys: UnsafeBufferPointer<UInt64>,
                      into found: UnsafeMutableBufferPointer<StoredValue?>) throws {
        guard root != 0, let base = keys.baseAddress.map(UnsafeRawPointer.init) else {
            for slot in keys.indices { found[slot] = nil }
            return
        }
        try withUnsafeTemporaryAllocation(of: Descent.self, capacity: keys.count) { descents in
            // The branches: the upper levels are read by every key and stay in the cache.
            for slot in keys.indices {
                let search = SearchKey(base + 8 * slot, 8)
                var descent = Descent(ref: root, below: limit, range: .unbounded)
                for _ in 1..<max(height, 1) {
                    let node = try self.node(descent.ref, below: descent.below)
                    if node.isLeaf { break }   // a path shorter than the leftmost: this leaf is the key's
                    let guess = descent.range.guess(search, count: node.count)
                    let index = if let guess { node.childIndex(search, guess: guess) } else { node.childIndex(search) }
                    descent = Descent(ref: node.child(index), below: childBound(of: descent.ref),
                                      range: descent.range.narrowed(to: index, of: node))
                }
                (descents.baseAddress! + slot).initialize(to: descent)
            }
            // The leaves' first bytes: independent loads, one per key, in flight together.
            try withUnsafeTemporaryAllocation(of: NodeView.self, capacity: keys.count) { leaves in
                for slot in keys.indices {
                    (leaves.baseAddress! + slot).initialize(to: try self.node(descents[slot].ref, below: descents[slot].below))
                }
                // The entries.
                for slot in keys.indices {
                    let key = UnsafeRawBufferPointer(start: base + 8 * slot, count: 8)
                    found[slot] = try storedValue(in: leaves[slot], descents[slot], key: key)
                }
            }
        }
    }

    /// Ends the search for `key` at `node`, reached by `descent`: in it when it is a leaf, else
    /// further down as `storedValue(root:key:)` goes.
    @inline(__always)
    private func storedValue(in node: NodeView, _ descent: Descent, key: UnsafeRawBufferPointer) throws -> StoredValue? {
        guard node.isLeaf else { return try storedValue(root: descent.ref, key: key) }
        let search = SearchKey(key.baseAddress!, 8)
        let guess = descent.range.guess(search, count: node.count)
        let (index, present) = if let guess { node.lowerBound(search, guess: guess) } else { node.lowerBound(search) }
        guard present else { return nil }
        return try storedValue(of: node, at: index, below: childBound(of: descent.ref))
    }
}

/// A search on its way down: the node it reaches next, the bound of that node's offset, and the
/// range of keys its parent's separators give it.
private struct Descent {
    var ref: UInt64
    var below: UInt64
    var range: HeadRange
}
