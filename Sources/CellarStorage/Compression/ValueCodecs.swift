/// What the engine's transactions share for compressed values: the dictionaries readers decoded
/// with (by id; ids are unique in a store's life, so an entry never goes stale, and an entry a
/// compaction made useless is only memory) and a pool of decoding contexts.
final class ValueCodecs: Sendable {
    private let dictionaries = Locked<[UInt32: DecompressionDictionary]>([:])
    /// Decoding contexts (about 100 KB each), kept between transactions.
    private let contexts = Locked<[Zstd.DecodingContext]>([])

    /// Dictionary `id`, read through `source` the first time.
    func decompressionDictionary(_ id: UInt32, source: NodeSource, offset: UInt64) throws -> DecompressionDictionary {
        if let found = dictionaries.withLock({ $0[id] }) { return found }
        guard let bytes = try source.dictionaryBytes(id) else {
            throw StorageError.fileCorrupt(offset: offset, reason: "compressed value names dictionary \(id), which the store does not hold")
        }
        guard let dictionary = try DecompressionDictionary(id: id, bytes: bytes) else {
            throw StorageError.fileCorrupt(offset: offset, reason: "dictionary \(id) is not a zstd dictionary")
        }
        return dictionaries.withLock { table in
            if let raced = table[id] { return raced }
            table[id] = dictionary
            return dictionary
        }
    }

    /// A decoding context; give it back with `recycle`.
    func takeContext() throws -> Zstd.DecodingContext {
        if let kept = contexts.withLock({ $0.popLast() }) { return kept }
        return try Zstd.DecodingContext()
    }

    /// Keeps `context` for the next transaction (a few at most; the rest are freed).
    func recycle(_ context: Zstd.DecodingContext) {
        contexts.withLock { pool in
            if pool.count < 8 { pool.append(context) }
        }
    }
}
