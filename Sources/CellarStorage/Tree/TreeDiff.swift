/// The difference between two versions of a tree in one data file: the keys one commit put,
/// changed or deleted on the way from an older commit. Trees are copied on write, so a subtree
/// that did not change is the same node in both versions; the walk skips each such node without
/// reading below it, and reads only the paths the changes copied (and their neighbours' leaves
/// where a split or a merge moved entries). What a compaction that keeps a window of past commits
/// copies for each commit in it.
extension ReadTransaction {
    /// Calls `body` with each key of tree `name` whose value differs between `older` (a commit of
    /// the same data file) and this transaction, in key order, with its value here (decoded), or
    /// nil when this one has none. A tree neither has, or one only one of them has, counts as an
    /// empty one there. Values are compared as stored; two stored forms of the same bytes
    /// (compressed with another dictionary) are reported as a change.
    package func forEachDifference(in name: String, since older: ReadTransaction,
                                   _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?) throws -> Void) throws {
        var mine = try DiffSide(self, root: try tree(name)?.state.root ?? 0)
        var theirs = try DiffSide(older, root: try older.tree(name)?.state.root ?? 0)
        while true {
            mine.settle()
            theirs.settle()
            switch (theirs.item, mine.item) {
            case (.done, .done):
                return
            case (.subtree(let a, _), .subtree(let b, _)) where a == b:
                // The same node in both: the same entries below it, in the same place.
                theirs.pass()
                mine.pass()
            case (.entry, .entry):
                let (oldKey, newKey) = (theirs.key, mine.key)
                let order = KeyCompare.compare(oldKey, newKey)
                if order < 0 {
                    try body(oldKey, nil)
                    theirs.pass()
                } else if order > 0 {
                    try withBytes(of: try mine.value()) { try body(newKey, $0) }
                    mine.pass()
                } else {
                    let (old, new) = (try theirs.value(), try mine.value())
                    if !Self.sameStored(old, new) {
                        try withBytes(of: new) { try body(newKey, $0) }
                    }
                    theirs.pass()
                    mine.pass()
                }
            case (.entry, .done):
                try body(theirs.key, nil)
                theirs.pass()
            case (.done, .entry):
                try withBytes(of: try mine.value()) { try body(mine.key, $0) }
                mine.pass()
            default:
                // Different nodes, or a node beside an entry: open the taller side (entries have
                // no height), so that the two walks come down to the same level.
                if theirs.height >= mine.height { try theirs.open() } else { try mine.open() }
            }
        }
    }

    /// Whether two stored values hold the same bytes: the same value record, or equal bytes stored
    /// the same way.
    private static func sameStored(_ a: StoredValue, _ b: StoredValue) -> Bool {
        guard a.compressed == b.compressed, a.bytes.count == b.bytes.count else { return false }
        if a.bytes.baseAddress == b.bytes.baseAddress { return true }
        return a.bytes.elementsEqual(b.bytes)
    }
}

/// One tree's walk in `forEachDifference`: a path of open nodes, each with the index of the next
/// child (branch) or entry (leaf) to take, and at most one subtree taken but not opened yet.
private struct DiffSide {
    enum Item: Equatable {
        case subtree(ref: UInt64, height: Int)
        case entry
        case done
    }

    private struct Level {
        var node: NodeView
        var below: UInt64
        var index: Int
        var height: Int
    }

    private let source: ReadTransaction
    private var path: [Level] = []
    private(set) var item: Item

    init(_ source: ReadTransaction, root: UInt64) throws {
        self.source = source
        item = root == 0 ? .done : .subtree(ref: root, height: try source.height(root: root))
    }

    /// The height of the current item: a subtree's levels, 0 for an entry, -1 once done.
    var height: Int {
        switch item {
        case .subtree(_, let height): height
        case .entry: 0
        case .done: -1
        }
    }

    /// The current entry's key.
    var key: UnsafeRawBufferPointer {
        let leaf = path[path.count - 1]
        return leaf.node.keyBuffer(leaf.index)
    }

    /// The current entry's value as stored.
    func value() throws -> StoredValue {
        let leaf = path[path.count - 1]
        return try source.storedValue(of: leaf.node, at: leaf.index, below: leaf.below)
    }

    /// Moves past the current item: the subtree is skipped whole, the entry left behind.
    mutating func pass() {
        if item == .entry { path[path.count - 1].index += 1 }
        item = .done  // `settle` finds the next
    }

    /// Reads the current subtree's node: its children or entries become the next items.
    mutating func open() throws {
        guard case .subtree(let ref, let height) = item else { return }
        let below = path.last?.below ?? source.limit
        let node = try source.node(ref, below: below)
        path.append(Level(node: node, below: source.childBound(of: ref), index: 0, height: height))
        item = .done
        settle()
    }

    /// Makes `item` the next thing to look at: the entry at the open leaf's index, or the next
    /// child of the deepest branch with children left (a subtree, not opened), or done.
    mutating func settle() {
        guard item == .done else { return }
        while let level = path.last {
            if level.index < level.node.count {
                if level.node.isLeaf {
                    item = .entry
                } else {
                    item = .subtree(ref: level.node.child(level.index), height: level.height - 1)
                    path[path.count - 1].index += 1
                }
                return
            }
            path.removeLast()
        }
    }
}
