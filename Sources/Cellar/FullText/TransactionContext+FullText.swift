import CellarStorage

/// A write transaction's changes to one full-text index, kept in memory and written word by word
/// (`TransactionContext.flushFullText`) at commit or before anything in the transaction reads
/// the index.
final class FullTextPending {
    let index: IndexSchema
    /// The words changed, numbered as first seen.
    var words = FullTextWordTable()
    /// Every change, in arrival order: an object's new count of a word (by number), 0 when its
    /// text lost the word. One flat array, so that noting a word appends once; `changesByWord`
    /// groups it at the flush.
    var changes: [Change] = []
    /// Objects' new lengths (nil: no words any more), in arrival order.
    var lengths: [(id: Id, length: UInt32?)] = []
    var stats = FullTextIndex.Stats()

    struct Change {
        var word: Int32
        /// The new count; 0: the word is gone.
        var count: UInt32
        var id: Id
    }

    init(index: IndexSchema) { self.index = index }

    var isEmpty: Bool { changes.isEmpty && lengths.isEmpty && stats == FullTextIndex.Stats() }

    /// About the memory this holds: each change and length entry (an id and a count, and the
    /// array's share), each word (its bytes, its number, its slot).
    var estimatedBytes: Int { (changes.count &+ lengths.count) &* 24 &+ words.count &* 64 }

    /// The changes grouped by word number, each word's in arrival order (a counting sort of
    /// `changes` into one array): word `n`'s are `grouped[starts[n] ..< starts[n + 1]]`.
    func changesByWord() -> (grouped: [(id: Id, value: UInt32?)], starts: [Int]) {
        var starts = [Int](repeating: 0, count: words.count + 1)
        var grouped = [(id: Id, value: UInt32?)](repeating: (0, nil), count: changes.count)
        starts.withUnsafeMutableBufferPointer { starts in
            for change in changes { starts[Int(change.word) + 1] += 1 }
            for n in 0..<words.count { starts[n + 1] += starts[n] }
            var next = Array(starts.dropLast())
            next.withUnsafeMutableBufferPointer { next in
                grouped.withUnsafeMutableBufferPointer { grouped in
                    for change in changes {
                        let n = Int(change.word)
                        grouped[next[n]] = (change.id, change.count == 0 ? nil : change.count)
                        next[n] += 1
                    }
                }
            }
        }
        return (grouped, starts)
    }

    /// Notes the words object `id`'s text lost, gained or counts differently from `old` to `new`
    /// (both sorted by word: one pass), into `words` and `changes` passed in place, so that the
    /// loop pays no access check of this class's properties per word.
    static func note(id: Id, old: FullTextWords, new: FullTextWords, words: inout FullTextWordTable, changes: inout [Change]) {
        func note(_ word: UnsafeRawBufferPointer, _ count: UInt32) {
            changes.append(Change(word: Int32(words.number(of: word)), count: count, id: id))
        }
        old.arena.withUnsafeBytes { oldArena in
            new.arena.withUnsafeBytes { newArena in
                var (i, j) = (0, 0)
                while i < old.words.count || j < new.words.count {
                    let order = i == old.words.count ? 1 : j == new.words.count ? -1
                        : FullTextWords.compare(FullTextWords.bytes(oldArena, old.words[i]), FullTextWords.bytes(newArena, new.words[j]))
                    if order < 0 {
                        note(FullTextWords.bytes(oldArena, old.words[i]), 0)
                        i += 1
                    } else if order > 0 {
                        note(FullTextWords.bytes(newArena, new.words[j]), new.words[j].count)
                        j += 1
                    } else {
                        if old.words[i].count != new.words[j].count { note(FullTextWords.bytes(newArena, new.words[j]), new.words[j].count) }
                        i += 1
                        j += 1
                    }
                }
            }
        }
    }
}

/// Keeping full-text indexes up to date: what a put or remove changes, collected per word, and
/// the blocks rewritten from it.
extension TransactionContext {
    /// Notes that object `id`'s text went from `old` words to `new` ones in `index`.
    func noteFullTextChange(_ index: IndexSchema, id: Id, old: FullTextWords, new: FullTextWords) {
        let pending = fullTextPending[index.id] ?? {
            let made = FullTextPending(index: index)
            fullTextPending[index.id] = made
            return made
        }()
        FullTextPending.note(id: id, old: old, new: new, words: &pending.words, changes: &pending.changes)
        if old.total != new.total || old.isEmpty != new.isEmpty {
            pending.lengths.append((id, new.isEmpty ? nil : UInt32(clamping: new.total)))
        }
        pending.stats = pending.stats + new.stats - old.stats
    }

    /// The change of `property`'s text from `old`'s record (nil: a new object) to `new`'s, noted
    /// when applied; nil when the text is the same.
    func fullTextIndexChange(_ property: PropertySchema, id: Id, new: RecordReader, old: RecordReader?) throws -> ElementIndexChange? {
        let newValue = try new.value(of: property, id: id)
        let oldValue = try old?.value(of: property, id: id)
        if old != nil && oldValue == newValue { return nil }
        return ElementIndexChange(index: property.index!, removed: [], added: [],
                                  fullText: (id, FullTextIndex.words(oldValue), FullTextIndex.words(newValue)))
    }

    /// The statistics of `index` as this transaction sees them.
    func fullTextStats(_ index: IndexSchema) throws -> FullTextIndex.Stats {
        guard let cursor = try cursor(indexTree: index) else { return FullTextIndex.Stats() }
        var stored = FullTextIndex.Stats()
        try cursor.scan(KeyRange(lower: FullTextIndex.statsKey, upper: FullTextIndex.statsKey, upperInclusive: true)) { _, value in
            stored = try FullTextIndex.Stats(decoding: value, index: index)
            return false
        }
        return stored
    }

    /// Writes every full-text index's pending changes (before the commit).
    func flushAllFullText() throws {
        for pending in fullTextPending.values { try flushFullText(pending) }
    }

    /// Writes the pending changes of `index` once they hold more than the store's transaction
    /// memory budget (`StoreOptions.transactionMemoryBudget`, 64 MiB by default): a transaction
    /// that indexes millions of texts then holds a bounded part of them, and writes each word's
    /// blocks a few times instead of once. (A quarter of the budget made fts-bench's one
    /// transaction of 100,000 texts 1.5× slower; the whole budget, 0.9×.) Called after a put's
    /// index changes are applied, where nothing holds a record's bytes.
    func flushFullTextIfLarge(_ index: IndexSchema) throws {
        guard let pending = fullTextPending[index.id],
              pending.estimatedBytes > store.engine.options.transactionMemoryBudget else { return }
        try flushFullText(pending)
    }

    /// Writes the pending changes of `index`, if any (before a read of it in this transaction).
    func flushFullText(_ index: IndexSchema) throws {
        if let pending = fullTextPending[index.id] { try flushFullText(pending) }
    }

    private func flushFullText(_ pending: FullTextPending) throws {
        guard let write, !pending.isEmpty else { return }
        let index = pending.index
        let tree = try indexTree(index)
        let cursor = try write.cursor(tree)
        // Word by word in key order: the blocks are written where the tree's cursor already is.
        let table = pending.words
        let words = (0..<table.count).map { (table.word($0), $0) }.sorted { CompiledLeaf.lexicographic($0.0, $1.0) < 0 }
        let (grouped, starts) = pending.changesByWord()
        for (word, number) in words {
            try rewriteBlocks(of: word, changes: Self.lastPerId(grouped[starts[number]..<starts[number + 1]]), cursor: cursor, tree: tree, index: index)
        }
        for (id, length) in Self.lastPerId(pending.lengths.map { (id: $0.id, value: $0.length) }[...]) {
            if let length {
                var value: [UInt8] = []
                Varint.append(UInt64(length), to: &value)
                try write.put(tree, key: FullTextIndex.lengthKey(id), value: value)
            } else {
                _ = try write.delete(tree, key: FullTextIndex.lengthKey(id))
            }
        }
        if pending.stats != FullTextIndex.Stats() {
            var stored = FullTextIndex.Stats()
            if let bytes = try write.get(tree, key: FullTextIndex.statsKey) {
                stored = try bytes.withUnsafeBytes { try FullTextIndex.Stats(decoding: $0, index: index) }
            }
            let stats = stored + pending.stats
            guard stats.documents >= 0, stats.words >= stats.documents else {
                throw CellarError.fileCorrupt("the statistics of full-text index \(index.id) would count \(stats.documents) objects with \(stats.words) words: the index does not match the objects; run `cellar verify`")
            }
            if stats == FullTextIndex.Stats() {
                _ = try write.delete(tree, key: FullTextIndex.statsKey)
            } else {
                try write.put(tree, key: FullTextIndex.statsKey, value: stats.encoded)
            }
        }
        fullTextPending[index.id] = nil
    }

    /// The changes sorted by id, the last one of each id only (a put after a put of the same
    /// object in one transaction).
    static func lastPerId<V>(_ changes: ArraySlice<(id: Id, value: V)>) -> [(id: Id, value: V)] {
        // A bulk put of new objects gives them in id order, once each: nothing to sort.
        var ordered = true
        for k in changes.indices.dropFirst() where changes[k - 1].id >= changes[k].id { ordered = false; break }
        if ordered { return Array(changes) }
        let sorted = changes.enumerated().sorted { ($0.element.id, $0.offset) < ($1.element.id, $1.offset) }.map(\.element)
        var out: [(id: Id, value: V)] = []
        out.reserveCapacity(sorted.count)
        for change in sorted {
            if out.last?.id == change.id { out[out.count - 1] = change } else { out.append(change) }
        }
        return out
    }

    /// Applies `changes` (sorted by id, one per id; nil removes) to the blocks of `word`: each
    /// block the changes fall in is read, changed and written again, split when it grows past
    /// `FullTextPostings.maxEntries`.
    private func rewriteBlocks(of word: [UInt8], changes: [(id: Id, value: UInt32?)], cursor: Cursor, tree: Tree, index: IndexSchema) throws {
        let write = write!
        let prefix = FullTextPostings.wordPrefix(word)
        let wordRange = KeyRange.prefix(prefix)
        var next = 0
        while next < changes.count {
            let id = changes[next].id
            // The block holding `id`: the last one starting at or before it, else the word's first.
            var block: (firstId: Id, entries: [FullTextPostings.Entry])?
            try cursor.scan(KeyRange(lower: prefix, upper: FullTextPostings.key(word, firstId: id), upperInclusive: true), reverse: true) { key, value in
                let firstId = try FullTextPostings.split(key: key, index: index).firstId
                block = (firstId, try FullTextPostings.decode(value, firstId: firstId, index: index))
                return false
            }
            if block == nil {
                try cursor.scan(wordRange) { key, value in
                    let firstId = try FullTextPostings.split(key: key, index: index).firstId
                    block = (firstId, try FullTextPostings.decode(value, firstId: firstId, index: index))
                    return false
                }
            }
            // The changes up to the next block belong to this one.
            var limit = Id.max
            if let block {
                try cursor.scan(KeyRange(lower: FullTextPostings.key(word, firstId: block.firstId), lowerInclusive: false,
                                         upper: wordRange.upper, upperInclusive: false)) { key, _ in
                    limit = try FullTextPostings.split(key: key, index: index).firstId
                    return false
                }
            }
            var end = next
            while end < changes.count && changes[end].id < limit { end += 1 }
            let merged = Self.merge(block?.entries ?? [], changes[next..<end])
            if let block, merged.first?.id != block.firstId {
                _ = try write.delete(tree, key: FullTextPostings.key(word, firstId: block.firstId))
            }
            var start = 0
            while start < merged.count {
                let chunk = merged[start..<Swift.min(start + FullTextPostings.maxEntries, merged.count)]
                try write.put(tree, key: FullTextPostings.key(word, firstId: chunk.first!.id), value: FullTextPostings.encode(chunk))
                start += FullTextPostings.maxEntries
            }
            next = end
        }
    }

    /// `entries` (sorted) with `changes` (sorted, one per id) applied: a count sets or adds an
    /// entry, nil removes it.
    static func merge(_ entries: [FullTextPostings.Entry], _ changes: ArraySlice<(id: Id, value: UInt32?)>) -> [FullTextPostings.Entry] {
        var out: [FullTextPostings.Entry] = []
        out.reserveCapacity(entries.count + changes.count)
        var i = 0
        for change in changes {
            while i < entries.count && entries[i].id < change.id { out.append(entries[i]); i += 1 }
            if i < entries.count && entries[i].id == change.id { i += 1 }
            if let count = change.value { out.append(FullTextPostings.Entry(id: change.id, count: count)) }
        }
        out.append(contentsOf: entries[i...])
        return out
    }
}
