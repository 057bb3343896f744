/// A value kept in memory of its own and reached through a pointer: for a class's stored
/// properties on hot paths. Each access to a class's stored `var` (an array's append, a subscript
/// write) costs a runtime exclusivity check; through `Indirect` it costs one pointer load. Only for
/// an owner used from one thread at a time (a write transaction), which calls `free()` once, in
/// its `deinit`.
struct Indirect<Value> {
    private let pointer: UnsafeMutablePointer<Value>

    init(_ value: Value) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: value)
    }

    var value: Value {
        @inline(__always) unsafeAddress { UnsafePointer(pointer) }
        @inline(__always) nonmutating unsafeMutableAddress { pointer }
    }

    func free() {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}

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
