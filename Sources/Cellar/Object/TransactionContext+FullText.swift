import CellarStorage

/// Keeping full-text indexes up to date: the postings an object's new text adds and its old text
/// loses, and the index statistics, changed in memory and written at commit.
extension TransactionContext {
    /// The postings a put changes in the full-text index of `property`, from `old`'s text (nil: a
    /// new object) to `new`'s; nil when the words are the same.
    func fullTextIndexChange(_ property: PropertySchema, id: Id, new: RecordReader, old: RecordReader?) throws -> ElementIndexChange? {
        let newWords = FullTextIndex.words(try new.value(of: property, id: id))
        let oldWords = try old.map { FullTextIndex.words(try $0.value(of: property, id: id)) } ?? .none
        let stats = newWords.stats - oldWords.stats
        let (removed, added) = Self.difference(FullTextIndex.postingKeys(oldWords, id: id), FullTextIndex.postingKeys(newWords, id: id))
        if removed.isEmpty && added.isEmpty && stats == FullTextIndex.Stats() { return nil }
        return ElementIndexChange(index: property.index!, removed: removed, added: added, stats: stats)
    }

    /// Adds `delta` to what this transaction changed in the statistics of `index`.
    func noteFullTextChange(_ index: IndexSchema, _ delta: FullTextIndex.Stats) {
        let current = fullTextDeltas[index.id]?.delta ?? FullTextIndex.Stats()
        fullTextDeltas[index.id] = (index, current + delta)
    }

    /// The statistics of `index` as this transaction sees them (stored, plus its own changes).
    func fullTextStats(_ index: IndexSchema) throws -> FullTextIndex.Stats {
        let pending = fullTextDeltas[index.id]?.delta ?? FullTextIndex.Stats()
        guard let cursor = try cursor(indexTree: index) else { return pending }
        var stored = FullTextIndex.Stats()
        try cursor.scan(KeyRange(lower: FullTextIndex.statsKey, upper: FullTextIndex.statsKey, upperInclusive: true)) { _, value in
            stored = try FullTextIndex.Stats(decoding: value, index: index)
            return false
        }
        return stored + pending
    }

    /// Writes the changed statistics of the full-text indexes (before the commit).
    func writeFullTextStats() throws {
        guard let write, !fullTextDeltas.isEmpty else { return }
        for (index, delta) in fullTextDeltas.values where delta != FullTextIndex.Stats() {
            let stats = try fullTextStats(index)
            guard stats.documents >= 0, stats.words >= 0 else {
                throw CellarError.fileCorrupt("the statistics of full-text index \(index.id) would count \(stats.documents) objects with \(stats.words) words: the index does not match the objects; run `cellar verify`")
            }
            let tree = try indexTree(index)
            try FullTextIndex.statsKey.withUnsafeBytes { key in
                try stats.encoded.withUnsafeBytes { try write.put(tree, key: key, value: $0) }
            }
        }
        fullTextDeltas = [:]
    }
}
