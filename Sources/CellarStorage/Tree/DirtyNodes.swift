/// The nodes a write transaction changed, by the index in their dirty reference, and beside each
/// its fields (where its body is), which reads and descents use without retaining the node or
/// loading the object. The two tables change together, only here. The table holds its nodes
/// retained by hand (as `Unmanaged`), so that `withNode` can lend one without a retain.
struct DirtyNodes {
    private let nodes = Indirect<[Unmanaged<DirtyNode>?]>([])
    private let fields = Indirect<[UnsafeMutablePointer<DirtyNode.Fields>?]>([])
    /// How many nodes the table holds (handed out and not released): what a transaction's
    /// memory budget counts (see `TreeMutator.spillIfOverBudget`).
    private let live = Indirect(0)

    /// How many indexes were handed out (released ones included).
    var count: Int { nodes.value.count }

    /// How many nodes the table holds.
    @inline(__always)
    var liveCount: Int { live.value }

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
        if nodes.value.capacity == 0 {
            // Room for a path of a few levels in two trees (the catalog's and one other) at once,
            // instead of growing from one.
            nodes.value.reserveCapacity(8)
            fields.value.reserveCapacity(8)
        }
        nodes.value.append(.passRetained(node))
        fields.value.append(node.fields)
        live.value &+= 1
        return nodes.value.count - 1
    }

    /// Forgets the node at `index` (it was replaced or merged away).
    func release(_ index: Int) {
        guard let node = nodes.value[index] else { return }
        node.release()
        nodes.value[index] = nil
        fields.value[index] = nil
        live.value &-= 1
    }

    func removeAll() {
        releaseAll()
        nodes.value = []
        fields.value = []
        live.value = 0
    }

    /// Empties the table without releasing its nodes: they are handed to the caller, who
    /// releases them (`release(retired:)`) once nothing can point into them any more. A spill
    /// (`TreeMutator.spill`) keeps the nodes it wrote alive that long.
    func takeAll() -> [Unmanaged<DirtyNode>?] {
        let taken = nodes.value
        nodes.value = []
        fields.value = []
        live.value = 0
        return taken
    }

    /// Releases nodes `takeAll` handed out.
    static func release(retired: [Unmanaged<DirtyNode>?]) {
        for node in retired { node?.release() }
    }

    func free() {
        releaseAll()
        nodes.free()
        fields.free()
        live.free()
    }

    private func releaseAll() {
        for node in nodes.value { node?.release() }
    }
}
