/// A handle on a named tree, valid in the transaction that returned it.
///
/// Get one from `ReadTransaction.tree(_:)` or `WriteTransaction.tree(_:create:)`.
public struct Tree {
    /// The tree's name.
    public var name: String { state.name }
    let state: TreeState
    let owner: ObjectIdentifier

    /// The most levels (`ReadTransaction.height(_:)`) the engine lets a tree of `count` entries
    /// have: every branch below the root has two children at least, so log2(count) + 1, rounded
    /// up. A deeper tree was written by an older build (`cellar verify` names it).
    public static func maximumHeight(count: Int) -> Int {
        count <= 1 ? 1 : Int.bitWidth - (count - 1).leadingZeroBitCount + 1
    }
}
