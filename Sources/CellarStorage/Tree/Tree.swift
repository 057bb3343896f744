/// A handle on a named tree, valid in the transaction that returned it.
///
/// Get one from `ReadTransaction.tree(_:)` or `WriteTransaction.tree(_:create:)`.
public struct Tree {
    /// The tree's name.
    public var name: String { state.name }
    let state: TreeState
    let owner: ObjectIdentifier
}
