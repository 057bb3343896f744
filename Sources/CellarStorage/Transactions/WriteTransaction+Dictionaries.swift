/// Compaction's calls for the compression dictionaries (see `Dictionaries`), on an open
/// transaction of the copy.
extension WriteTransaction {
    /// The id the next dictionary gets.
    func nextDictionaryId() throws -> UInt32 {
        try checkOpen()
        return try mutator.nextDictionaryId()
    }

    /// Stores `dictionary` (made by `Zstd.trainDictionary` with the id `nextDictionaryId()` gave)
    /// and makes it the one `tree`'s values are compressed with from the next transaction on.
    func installDictionary(_ dictionary: [UInt8], id: UInt32, for tree: String) throws {
        try checkOpen()
        try mutator.installDictionary(dictionary, id: id, for: tree)
    }

    /// Records that ids below `id` are taken (a compacted copy goes on from the store it copies).
    func setNextDictionaryId(_ id: UInt32) throws {
        try checkOpen()
        try mutator.setNextDictionaryId(id)
    }
}
