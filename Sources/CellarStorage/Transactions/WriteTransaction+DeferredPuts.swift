extension WriteTransaction {
    /// Stores `value` under `key` like `put`, but possibly later: the entry is held back and the
    /// tree's held-back entries are applied in key order, all at once, before any other operation
    /// on `tree` (a read, a cursor, a put, a delete, a count) and at commit. What any of those sees
    /// is exactly what it would see had the put been made at once; only the work is cheaper when
    /// many keys that are far apart are written into one tree (a secondary index during a bulk
    /// put). Errors a put would throw for its own arguments (a key or value too large) are thrown
    /// here; errors of the tree's storage, when the entries are applied.
    public func putDeferred(_ tree: Tree, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws {
        // The handle's checks without applying what the tree holds back (that is what we add to).
        try checkHandle(tree)
        try StorageLimits.check(key: key, value: value)
        let state = tree.state
        journal?.record(tree: state.name, key: key)
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

    /// `putDeferred` with arrays.
    public func putDeferred(_ tree: Tree, key: [UInt8], value: [UInt8]) throws {
        try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try putDeferred(tree, key: k, value: v) } }
    }

    /// Applies `tree`'s held-back puts (see `putDeferred`), in key order.
    func applyDeferred(_ tree: TreeState) throws {
        guard tree.hasDeferred, let buffer = tree.deferred else { return }
        defer { tree.hasDeferred = !buffer.isEmpty }
        try buffer.forEachSorted { key, value in try putNow(tree, key: key, value: value) }
    }

    /// Applies every tree's held-back puts (before a commit).
    func applyAllDeferred() throws {
        for tree in trees.values where tree.hasDeferred { try applyDeferred(tree) }
    }
}
