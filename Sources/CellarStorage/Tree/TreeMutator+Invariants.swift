#if DEBUG
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether a write transaction checks its trees after every change (`TreeMutator.checkInvariants`):
/// only in a debug build, and there only when the environment variable `CELLAR_CHECK_INVARIANTS`
/// is set (`CELLAR_CHECK_INVARIANTS=1 swift test --filter …`). Release builds have no checks at all.
enum TreeInvariants {
    static let enabled = getenv("CELLAR_CHECK_INVARIANTS") != nil
}

/// The invariants of the copy-on-write B+tree, checked by walking a whole tree: slow (a walk per
/// change), for tests that hunt a bug in the mutation code, never for production.
extension TreeMutator {
    /// Walks `tree` and traps at the first broken invariant, naming it: keys strictly ascending in
    /// every node and inside the range their parent's separators give; every leaf at the same
    /// depth; no node but the root empty, and no branch but the root with fewer than two
    /// children; as many entries as `tree.count` says (but for the catalog, which keeps no
    /// count); the finger, when set, a dirty leaf.
    func checkInvariants(of tree: TreeState) {
        guard tree.root != 0 else {
            precondition(tree.name.isEmpty || tree.count == 0, "tree \(tree.name): no root but \(tree.count) entries")
            return
        }
        var leafDepth: Int?
        let entries = checkNode(tree.root, below: limit, low: nil, high: nil, depth: 0, isRoot: true,
                                leafDepth: &leafDepth, tree: tree)
        // The catalog (the tree without a name) keeps no count.
        precondition(tree.name.isEmpty || entries == tree.count, "tree \(tree.name): \(entries) entries, count says \(tree.count)")
        let finger = tree.finger.pointee.leaf
        precondition(finger == 0 || (finger & dirtyTag != 0 && dirtyView(finger).isLeaf),
                     "tree \(tree.name): the finger is not a dirty leaf")
    }

    /// Checks the subtree at `ref`, whose keys must lie in `low ..< high`; returns its entries.
    private func checkNode(_ ref: UInt64, below: UInt64, low: [UInt8]?, high: [UInt8]?, depth: Int, isRoot: Bool,
                           leafDepth: inout Int?, tree: TreeState) -> Int {
        guard let view = try? node(ref, below: below) else {
            preconditionFailure("tree \(tree.name): node \(ref & ~dirtyTag) cannot be read")
        }
        precondition(isRoot || view.count > 0, "tree \(tree.name): an empty node below the root")
        precondition(isRoot || view.isLeaf || view.count >= 2, "tree \(tree.name): a branch below the root with one child")
        var previous: [UInt8]?
        let first = view.isLeaf ? 0 : 1  // a branch's first key stands for everything below its second
        for i in first..<view.count {
            let key = Array(view.keyBuffer(i))
            if let previous {
                precondition(previous.lexicographicallyPrecedes(key), "tree \(tree.name): keys out of order in a node")
            }
            if let low { precondition(!key.lexicographicallyPrecedes(low), "tree \(tree.name): a key below its range") }
            if let high { precondition(key.lexicographicallyPrecedes(high), "tree \(tree.name): a key above its range") }
            previous = key
        }
        if view.isLeaf {
            if let leafDepth {
                precondition(leafDepth == depth, "tree \(tree.name): leaves at depths \(leafDepth) and \(depth)")
            } else {
                leafDepth = depth
            }
            return view.count
        }
        var entries = 0
        for i in 0..<view.count {
            let childLow = i == 0 ? low : Array(view.keyBuffer(i))
            let childHigh = i + 1 < view.count ? Array(view.keyBuffer(i + 1)) : high
            entries += checkNode(view.child(i), below: childBound(of: ref), low: childLow, high: childHigh,
                                 depth: depth + 1, isRoot: false, leafDepth: &leafDepth, tree: tree)
        }
        return entries
    }
}
#endif
