/// The nodes a write transaction changed, by the index in their dirty reference, and beside each
/// its fields (where its body is), which reads and descents use without retaining the node or
/// loading the object. The two tables change together, only here. The table holds its nodes
/// retained by hand (as `Unmanaged`), so that `withNode` can lend one without a retain.
struct DirtyNodes {
    private let nodes = Indirect<[Unmanaged<DirtyNode>?]>([])
    private let fields = Indirect<[UnsafeMutablePointer<DirtyNode.Fields>?]>([])

    /// How many indexes were handed out (released ones included).
    var count: Int { nodes.value.count }

    @inline(__always)
    func node(_ index: Int) -> DirtyNode { nodes.value[index]!.takeUnretainedValue() }

    /// Calls `body` with the node at `index`, which the table keeps alive during the call (it
    /// must not release it): no retain and release around the call, unlike `node`.
    @inline(__always)
    func withNode<R>(_ index: Int, _ body: (DirtyNode) throws -> R) rethrows -> R {
        try nodes.value[index]!._withUnsafeGuaranteedRef(body)
    }

    @inline(__always)
    func fields(_ index: Int) -> UnsafeMutablePointer<DirtyNode.Fields> { fields.value[index]! }

    /// Adds `node`; returns its index.
    func append(_ node: DirtyNode) -> Int {
        nodes.value.append(.passRetained(node))
        fields.value.append(node.fields)
        return nodes.value.count - 1
    }

    /// Forgets the node at `index` (it was replaced or merged away).
    func release(_ index: Int) {
        nodes.value[index]?.release()
        nodes.value[index] = nil
        fields.value[index] = nil
    }

    func removeAll() {
        releaseAll()
        nodes.value = []
        fields.value = []
    }

    func free() {
        releaseAll()
        nodes.free()
        fields.free()
    }

    private func releaseAll() {
        for node in nodes.value { node?.release() }
    }
}
