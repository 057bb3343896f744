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
        journal?.record(tree: tree.state.name, key: key)
        try mutator.putDeferred(tree.state, key: key, value: value)
    }

    /// `putDeferred` with arrays.
    public func putDeferred(_ tree: Tree, key: [UInt8], value: [UInt8]) throws {
        try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try putDeferred(tree, key: k, value: v) } }
    }
}
