/// Entry points into the full-text index's internals for tests and fuzzing (the `Fuzz` package
/// cannot see internal declarations).
@_spi(Testing) public enum FullTextIndexTesting {
    /// Reads stored full-text statistics (the value under the key `[0]` of a full-text index's
    /// tree) as `FullTextIndex.Stats(decoding:index:)` reads them, for an index of id 1.
    ///
    /// - Throws: `CellarError.fileCorrupt` for bytes that are not two counts (16 bytes, objects
    ///   at least 0, words at least the objects).
    public static func decodeStatistics(_ bytes: UnsafeRawBufferPointer) throws -> (documents: Int64, words: Int64) {
        let stats = try FullTextIndex.Stats(decoding: bytes, index: index)
        return (stats.documents, stats.words)
    }

    /// Decodes a posting block (the value of a `word ‖ 0 ‖ first id` key) starting at `firstId`
    /// as queries read it: the entries' ids and word counts.
    ///
    /// - Throws: `CellarError.fileCorrupt` for a block that does not decode (a count out of
    ///   1…128, ids not strictly increasing from `firstId`, a bad varint, bytes left over).
    public static func decodeBlock(_ bytes: UnsafeRawBufferPointer, firstId: UInt64) throws -> [(id: UInt64, count: UInt32)] {
        try FullTextPostings.decode(bytes, firstId: firstId, index: index).map { ($0.id, $0.count) }
    }

    /// Encodes entries (sorted by id, ids distinct, counts at least 1) as a posting block.
    public static func encodeBlock(_ entries: [(id: UInt64, count: UInt32)]) -> [UInt8] {
        FullTextPostings.encode(entries.map { FullTextPostings.Entry(id: $0.id, count: $0.count) }[...])
    }

    /// A full-text index on a string property, for the error messages of `decodeStatistics(_:)`.
    private static let index = IndexSchema(
        property: ModelProperty(name: "text", id: IdUid(id: 1, uid: 1), type: .string,
                                flags: [.indexed, .fullTextIndex], indexId: IdUid(id: 1, uid: 2)),
        kind: .string, ordinal: 0)
}
