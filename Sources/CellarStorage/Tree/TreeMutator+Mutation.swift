/// Copy-on-write changes to a tree: the path from the root to the leaf is copied into dirty nodes
/// (committed nodes are never changed), then the leaf changes; an overfull node splits and pushes
/// a separator into its parent, an underfull one merges with a neighbour when the two fit in one.
extension TreeMutator {
    /// What a split hands up to the parent: the right half and its smallest key.
    struct Split {
        var key: [UInt8]
        var right: UInt64
    }

    @inline(__always)
    func dirtyNode(_ ref: UInt64) -> DirtyNode { dirty.node(Int(ref & ~dirtyTag)) }

    /// The buffer a dirty node starts with: a full node and the largest inline entry fit (a split
    /// follows as soon as a node passes `nodeSize`); a node that needs more grows.
    var dirtyCapacity: Int { nodeSize + nodeSize / 4 + 64 }

    /// A dirty node's body, read through the fields table (no retain, no load of the object).
    @inline(__always)
    func dirtyView(_ ref: UInt64) -> NodeView {
        NodeView(body: UnsafeRawPointer(dirty.fields(Int(ref & ~dirtyTag)).pointee.buffer))
    }

    func register(_ node: DirtyNode) -> UInt64 {
        UInt64(dirty.append(node)) | dirtyTag
    }

    private func release(_ ref: UInt64, of tree: TreeState) {
        if ref & dirtyTag != 0 {
            dirty.release(Int(ref & ~dirtyTag))
        } else {
            tree.bytesDelta -= Int64(writtenRecordLength(ref))
        }
    }

    /// The dirty version of the node at `ref`, copying it first when it is committed (or taking
    /// it over when the engine kept it from the base commit: `baseNodes`).
    private func makeDirty(_ ref: UInt64, of tree: TreeState) throws -> UInt64 {
        if ref & dirtyTag != 0 { return ref }
        if ref >= baseNodesStart, let kept = baseNodes.take(ref) {
            tree.bytesDelta -= Int64(kept.recordLength)
            kept.node.forgetInsertHistory()
            return register(kept.node)
        }
        let view = try node(ref, below: limit)
        tree.bytesDelta -= Int64(writtenRecordLength(ref))
        return register(DirtyNode(copying: view, capacity: dirtyCapacity))
    }

    /// Forgets the out-of-line value of leaf entry `index` (its record becomes garbage).
    private func releaseValue(of leaf: NodeView, at index: Int, tree: TreeState) {
        if case .outOfLine(let ref, let length, _) = leaf.value(index) {
            if ref & dirtyTag != 0 {
                let index = Int(ref & ~dirtyTag)
                if let value = pending.value[index] { pendingBytes.value &-= value.bytes.count }
                pending.value[index] = nil
            } else {
                tree.bytesDelta -= Int64(baseRecords.recordLength(body: length))
            }
        }
    }

    // MARK: Put

    /// Puts `value` under `key`; `flags` is `NodeView.compressedBit` when `value` is a zstd frame.
    func put(state tree: TreeState, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt32 = 0) throws {
        #if DEBUG
        defer { if TreeInvariants.enabled { checkInvariants(of: tree) } }
        #endif
        try StorageLimits.check(key: key, value: value)
        noteMutation()
        tree.modified = true
        if let leaf = tree.finger.pointee.leaf(for: key.nonNullBase, key.count),
           dirty.withNode(Int(leaf & ~dirtyTag), { putInPlace($0, tree: tree, key: key, value: value, flags: flags) }) {
            return
        }
        if tree.root == 0 {
            tree.root = register(DirtyNode(isLeaf: true, capacity: dirtyCapacity))
        } else {
            tree.root = try makeDirty(tree.root, of: tree)
        }
        var bounds = Bounds()
        if let split = try insert(into: tree.root, tree: tree, key: key, value: value, flags: flags, bounds: &bounds) {
            let root = DirtyNode(isLeaf: false, capacity: dirtyCapacity)
            root.insertBranch(at: 0, key: UnsafeRawBufferPointer(start: nil, count: 0), child: tree.root)
            split.key.withUnsafeBytes { root.insertBranch(at: 1, key: $0, child: split.right) }
            tree.root = register(root)
        }
    }

    /// The range of keys below the node a descent has reached, as pointers into the dirty nodes
    /// above it (valid until one of them changes).
    struct Bounds {
        var low: UnsafeRawBufferPointer?
        var high: UnsafeRawBufferPointer?

        /// Narrows the range to child `index` of `branch`.
        @inline(__always)
        mutating func narrow(to index: Int, of branch: NodeView) {
            if index > 0 { low = branch.keyBuffer(index) }
            if index + 1 < branch.count { high = branch.keyBuffer(index + 1) }
        }
    }

    /// Puts into `leaf` (the finger's, whose range holds `key`) when the entry fits without a
    /// split; false when it does not (the caller descends from the root and splits).
    private func putInPlace(_ leaf: DirtyNode, tree: TreeState, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
                            flags: UInt32) -> Bool {
        let view = leaf.view
        let (index, found) = view.lowerBound(key.nonNullBase, key.count, hint: tree.finger.pointee.hint)
        let entrySize = value.count <= inlineLimit ? 8 &+ key.count &+ value.count : 16 &+ key.count
        var size = leaf.encodedSize &+ 4 &+ entrySize
        if found { size &-= 4 &+ view.entrySize(index) }
        guard size <= nodeSize else { return false }
        putInLeaf(leaf, at: index, found: found, tree: tree, key: key, value: value, flags: flags)
        tree.finger.pointee.hint = index
        return true
    }

    /// Puts the entry at `index` of a leaf, replacing the one there when `found`.
    @inline(__always)
    private func putInLeaf(_ node: DirtyNode, at index: Int, found: Bool, tree: TreeState,
                           key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt32) {
        if found {
            // An update that keeps the value's length and form (the common one) is written over
            // the old bytes.
            if value.count <= inlineLimit, node.view.valueWord(index) == UInt32(truncatingIfNeeded: value.count) | flags,
               case .inline(let old, _) = node.view.value(index) {
                if value.count > 0 {
                    UnsafeMutableRawPointer(mutating: old.baseAddress!).copyMemory(from: value.baseAddress!, byteCount: value.count)
                }
                return
            }
            releaseValue(of: node.view, at: index, tree: tree)
            node.remove(at: index)
        } else {
            tree.count &+= 1
        }
        if value.count <= inlineLimit {
            node.insertLeaf(at: index, key: key, value: value, flags: flags)
        } else {
            pending.value.append(PendingValue(copying: value))
            pendingBytes.value &+= value.count
            node.insertLeaf(at: index, key: key, outOfLine: UInt64(pending.value.count - 1) | dirtyTag, length: value.count, flags: flags)
        }
    }

    /// Inserts into the dirty subtree at `ref`; returns the split when the node had to split.
    /// A leaf reached without a split becomes the tree's finger; any split forgets it.
    private func insert(into ref: UInt64, tree: TreeState, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
                        flags: UInt32, bounds: inout Bounds) throws -> Split? {
        let view = dirtyView(ref)
        let keyBase = key.nonNullBase
        if view.isLeaf {
            let node = dirtyNode(ref)
            let (index, found) = view.lowerBound(keyBase, key.count)
            putInLeaf(node, at: index, found: found, tree: tree, key: key, value: value, flags: flags)
            if let split = splitIfNeeded(node, inserted: index) {
                tree.finger.pointee.forget()
                return split
            }
            remember(ref, bounds, at: index, in: tree)
            return nil
        }
        let index = view.childIndex(keyBase, key.count)
        bounds.narrow(to: index, of: view)
        let child = view.child(index)
        let dirtyChild = try makeDirty(child, of: tree)
        if dirtyChild != child { DirtyNode.setChild(index, dirtyChild, in: view) }
        guard let split = try insert(into: dirtyChild, tree: tree, key: key, value: value, flags: flags, bounds: &bounds) else { return nil }
        tree.finger.pointee.forget()
        let node = dirtyNode(ref)
        split.key.withUnsafeBytes { node.insertBranch(at: index + 1, key: $0, child: split.right) }
        return splitIfNeeded(node, inserted: index + 1)
    }

    /// Makes `leaf`, whose range is `bounds`, the tree's finger.
    @inline(__always)
    private func remember(_ leaf: UInt64, _ bounds: Bounds, at index: Int, in tree: TreeState) {
        tree.finger.pointee = Finger(leaf: leaf, low: bounds.low, high: bounds.high, hint: index)
    }

    /// Splits `node` when it is over `nodeSize` and can be split: a leaf into two non-empty
    /// halves, a branch only into two halves of at least two children each. A branch of two or
    /// three children stays whole however large its keys are (a key may be up to 1 MiB, far over
    /// a node): splitting it would make a one-child branch, which adds a level to the tree and no
    /// fan-out, and a tree that grew a level at every such split could grow without bound. So
    /// every branch but the root has at least two children, and a tree of n entries is at most
    /// log2(n) + 1 levels deep.
    private func splitIfNeeded(_ node: DirtyNode, inserted: Int) -> Split? {
        let minimumHalf = node.isLeaf ? 1 : 2
        guard node.encodedSize > nodeSize, node.count >= 2 * minimumHalf else { return nil }
        let at = min(max(node.splitIndex(inserted: inserted, limit: nodeSize), minimumHalf), node.count - minimumHalf)
        let right = node.splitOff(from: at, capacity: dirtyCapacity)
        let key = Array(right.view.keyBuffer(0))
        return Split(key: key, right: register(right))
    }

    // MARK: Delete

    func delete(state tree: TreeState, key: UnsafeRawBufferPointer) throws -> Bool {
        #if DEBUG
        defer { if TreeInvariants.enabled { checkInvariants(of: tree) } }
        #endif
        // Look first, so that deleting a missing key copies nothing.
        guard tree.root != 0, try get(root: tree.root, key: key) != nil else { return false }
        tree.finger.pointee.forget()
        noteMutation()
        tree.modified = true
        tree.root = try makeDirty(tree.root, of: tree)
        _ = try remove(from: tree.root, tree: tree, key: key)
        tree.count &-= 1
        // Shrink the root: an empty leaf means an empty tree, a branch with one child is replaced by it.
        while tree.root != 0 {
            let root = dirtyNode(tree.root)
            if root.isLeaf {
                if root.count == 0 { release(tree.root, of: tree); tree.root = 0 }
                break
            }
            guard root.count == 1 else { break }
            let only = root.view.child(0)
            release(tree.root, of: tree)
            tree.root = try makeDirty(only, of: tree)
        }
        return true
    }

    /// Removes `key` (known to be present) from the dirty subtree at `ref`; returns whether the
    /// node is now underfull.
    private func remove(from ref: UInt64, tree: TreeState, key: UnsafeRawBufferPointer) throws -> Bool {
        let node = dirtyNode(ref)
        let keyBase = key.nonNullBase
        if node.isLeaf {
            let (index, found) = node.view.lowerBound(keyBase, key.count)
            precondition(found, "delete lost its key between lookup and removal")
            releaseValue(of: node.view, at: index, tree: tree)
            node.remove(at: index)
            return node.encodedSize < nodeSize / 4
        }
        let index = node.view.childIndex(keyBase, key.count)
        let child = node.view.child(index)
        let dirtyChild = try makeDirty(child, of: tree)
        if dirtyChild != child { node.setChild(index, dirtyChild) }
        if try remove(from: dirtyChild, tree: tree, key: key) {
            try rebalance(node, childAt: index, tree: tree)
        }
        // A branch left with one child is underfull whatever its size (see `splitIfNeeded`).
        return node.encodedSize < nodeSize / 4 || node.count < 2
    }

    /// Child `index` of `parent` is underfull: drop it when empty, or merge it with a neighbour
    /// when both fit in one node, or when it is a branch left with one child (then the merged
    /// branch splits again if it is too large, each half keeping two children at least).
    /// Otherwise it stays as it is (underfull nodes are allowed).
    private func rebalance(_ parent: DirtyNode, childAt index: Int, tree: TreeState) throws {
        let childRef = parent.view.child(index)
        let child = dirtyNode(childRef)
        if child.count == 0 {
            release(childRef, of: tree)
            parent.remove(at: index)
            return
        }
        if index + 1 < parent.count {
            try merge(parent, left: index, tree: tree)
        } else if index > 0 {
            try merge(parent, left: index - 1, tree: tree)
        }
    }

    /// Merges child `left + 1` of `parent` into child `left` when they fit in one node, or when
    /// either is a branch with a single child; a merged branch over `nodeSize` splits again.
    private func merge(_ parent: DirtyNode, left: Int, tree: TreeState) throws {
        let leftRef = parent.view.child(left)
        let rightRef = parent.view.child(left + 1)
        let rightView = try node(rightRef, below: limit)
        let leftView = try node(leftRef, below: limit)
        let lonelyBranch = !leftView.isLeaf && (leftView.count < 2 || rightView.count < 2)
        guard lonelyBranch || leftView.compactSize + rightView.compactSize - 8 <= nodeSize else { return }
        let dirtyLeft = try makeDirty(leftRef, of: tree)
        let leftNode = dirtyNode(dirtyLeft)
        if leftNode.isLeaf || rightView.count == 0 {
            leftNode.appendEntries(of: rightView, from: 0, to: rightView.count)
        } else {
            // The right node's first key stands for "everything below entry 1"; inside the merged
            // node it needs the real separator, which the parent holds.
            let separator = Array(parent.view.keyBuffer(left + 1))
            separator.withUnsafeBytes { leftNode.insertBranch(at: leftNode.count, key: $0, child: rightView.child(0)) }
            leftNode.appendEntries(of: rightView, from: 1, to: rightView.count)
        }
        parent.setChild(left, dirtyLeft)
        release(rightRef, of: tree)
        parent.remove(at: left + 1)
        if let split = splitIfNeeded(leftNode, inserted: 0) {
            split.key.withUnsafeBytes { parent.insertBranch(at: left + 1, key: $0, child: split.right) }
        }
    }
}
