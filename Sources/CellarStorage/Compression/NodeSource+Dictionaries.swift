extension NodeSource {
    /// The bytes of dictionary `id` as this source sees them; nil when it holds no such dictionary.
    func dictionaryBytes(_ id: UInt32) throws -> UnsafeRawBufferPointer? {
        try dictionaryTreeValue(Dictionaries.dictionaryKey(id))
    }

    /// The next dictionary id this source records; nil when it records none (no dictionary was
    /// ever made).
    func storedNextDictionaryId() throws -> UInt32? {
        try dictionaryTreeValue(Dictionaries.nextIdKey).map { try Dictionaries.decodeId($0, key: "next id") }
    }

    /// The id of the dictionary `tree`'s new values are compressed with; nil when none.
    func currentDictionaryId(of tree: String) throws -> UInt32? {
        try dictionaryTreeValue(Dictionaries.treeKey(tree)).map { try Dictionaries.decodeId($0, key: "for \"\(tree)\"") }
    }

    /// The value under `key` in the dictionaries' tree as this source sees it; nil when absent.
    private func dictionaryTreeValue(_ key: [UInt8]) throws -> UnsafeRawBufferPointer? {
        guard let root = try reservedTreeRoot(Dictionaries.treeName) else { return nil }
        return try key.withUnsafeBytes { try get(root: root, key: $0) }
    }

    /// The root of the engine's tree `name` in the catalog; nil when there is none.
    func catalogTreeRoot(_ name: String) throws -> UInt64? {
        guard let value = try Array(name.utf8).withUnsafeBytes({ try get(root: catalogRootRef, key: $0) }) else { return nil }
        return try CatalogEntry.decode(value, name: name, at: catalogRootRef).root
    }
}
