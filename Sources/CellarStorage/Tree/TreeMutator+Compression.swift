/// Which values a transaction stores compressed, and with which dictionary; the dictionaries
/// compaction installs.
extension TreeMutator {
    /// Puts `value` under `key` in `tree`, compressed when the options say so: what every put
    /// of the transaction comes to.
    @inline(__always)
    func putNow(_ tree: TreeState, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws {
        if value.count >= compressionThreshold, let frame = try compressed(value, for: tree) {
            try put(state: tree, key: key, value: frame, flags: NodeView.compressedBit)
            return
        }
        try put(state: tree, key: key, value: value, flags: 0)
    }

    /// `value` compressed for `tree` (valid until the next put), or nil to store it as it is.
    ///
    /// zstd spends tens of thousands of instructions on a small value without a dictionary (its
    /// per-frame entropy tables), so a tree whose small values keep failing to shrink stops being
    /// offered them: after `CompressionSampling.giveUpAfter` failures in a row in this
    /// transaction, only one small value in `CompressionSampling.retryEvery` is tried, and one
    /// that shrinks starts trying them all again. Values of at least `CompressionSampling.smallValue`
    /// bytes are always tried.
    func compressed(_ value: UnsafeRawBufferPointer, for tree: TreeState) throws -> UnsafeRawBufferPointer? {
        guard let compressor, value.count <= StorageLimits.maxValueSize else { return nil }
        let small = value.count < CompressionSampling.smallValue
        if small {
            // Counts every small value until one shrinks; past the limit only every
            // `retryEvery`-th is tried.
            tree.compressionFailures &+= 1
            if tree.compressionFailures > CompressionSampling.giveUpAfter
                && tree.compressionFailures % CompressionSampling.retryEvery != 0 { return nil }
        }
        let frame = compressor.compress(value, dictionary: try dictionary(for: tree, level: compressor.level))
        if small && frame != nil { tree.compressionFailures = 0 }
        return frame
    }

    /// The dictionary `tree`'s new values are compressed with: none unless the store trains
    /// dictionaries and compaction made one for the tree.
    private func dictionary(for tree: TreeState, level: Int32) throws -> CompressionDictionary? {
        if tree.dictionaryResolved { return tree.compressionDictionary }
        tree.dictionaryResolved = true
        guard trainsDictionaries, let id = try currentDictionaryId(of: tree.name) else { return nil }
        if let made = dictionaries[id] {
            tree.compressionDictionary = made
            return made
        }
        guard let bytes = try dictionaryBytes(id) else {
            throw StorageError.fileCorrupt(offset: 0, reason: "tree \"\(tree.name)\" names dictionary \(id), which the store does not hold")
        }
        guard let made = try CompressionDictionary(id: id, bytes: bytes, level: level) else {
            throw StorageError.fileCorrupt(offset: 0, reason: "dictionary \(id) is not a zstd dictionary")
        }
        dictionaries[id] = made
        tree.compressionDictionary = made
        return made
    }

    /// The id the next dictionary gets (see `Dictionaries`).
    func nextDictionaryId() throws -> UInt32 {
        try storedNextDictionaryId() ?? 1
    }

    /// Stores `dictionary` (made by `Zstd.trainDictionary` with the id `nextDictionaryId()` gave)
    /// and makes it the one `tree`'s values are compressed with from the next transaction on.
    func installDictionary(_ dictionary: [UInt8], id: UInt32, for tree: String) throws {
        try setNextDictionaryId(id + 1)
        let state = try openTree(Dictionaries.treeName, create: true)!.state
        try Dictionaries.dictionaryKey(id).withUnsafeBytes { key in
            try dictionary.withUnsafeBytes { try put(state: state, key: key, value: $0) }
        }
        try Dictionaries.treeKey(tree).withUnsafeBytes { key in
            try withUnsafeBytes(of: id.littleEndian) { try put(state: state, key: key, value: $0) }
        }
    }

    /// Records that ids below `id` are taken (a compacted copy goes on from the store it copies).
    func setNextDictionaryId(_ id: UInt32) throws {
        let state = try openTree(Dictionaries.treeName, create: true)!.state
        try Dictionaries.nextIdKey.withUnsafeBytes { key in
            try withUnsafeBytes(of: id.littleEndian) { try put(state: state, key: key, value: $0) }
        }
    }
}
