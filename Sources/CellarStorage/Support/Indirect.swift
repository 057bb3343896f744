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
