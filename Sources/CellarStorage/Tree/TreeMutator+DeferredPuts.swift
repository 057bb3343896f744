/// Held-back puts (`WriteTransaction.putDeferred`): buffered per tree in `DeferredPuts`, applied
/// in key order before anything else touches the tree, and at commit.
extension TreeMutator {
    /// Holds back the put of `value` under `key` in `state` (its arguments checked already), or
    /// makes it at once while the tree has had only a few. Inlined into
    /// `WriteTransaction.putDeferred`, a hot path of bulk puts (a secondary index's keys).
    @inline(__always)
    func putDeferred(_ state: TreeState, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws {
        if state.deferred == nil && state.immediatePuts < DeferredPuts.holdBackAfter {
            // A transaction that writes a handful of keys gains nothing from sorting them, and
            // would pay the buffer's allocations: its first puts go in at once.
            state.immediatePuts &+= 1
            try putNow(state, key: key, value: value)
            return
        }
        let buffer = state.deferred ?? {
            let made = DeferredPuts()
            state.deferred = made
            return made
        }()
        buffer.append(key: key, value: value)
        state.hasDeferred = true
        state.modified = true
        // Cursors re-seek (and so apply the buffer) when they move next.
        noteMutation()
        if buffer.isFull { try applyDeferred(state) }
    }

    /// Applies `tree`'s held-back puts (see `putDeferred`), in key order.
    func applyDeferred(_ tree: TreeState) throws {
        guard tree.hasDeferred, let buffer = tree.deferred else { return }
        defer { tree.hasDeferred = !buffer.isEmpty }
        // A spill between two puts touches none of the buffer's memory.
        try buffer.forEachSorted { key, value in
            try putNow(tree, key: key, value: value)
            try spillIfOverBudget()
        }
    }

    /// Applies every tree's held-back puts (before a commit).
    func applyAllDeferred() throws {
        for tree in trees.values where tree.hasDeferred { try applyDeferred(tree) }
    }
}
