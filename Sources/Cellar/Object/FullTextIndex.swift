import CellarStorage

/// The keys of a full-text index (`// cellar: index = "fulltext"`) in the index's tree, and how
/// queries read them.
///
/// - A **posting** per distinct word of an object's text: the word's folded UTF-8 bytes (see
///   `FullTextTokenizer`; a word never holds a zero byte), a zero byte, then the object id
///   (8 bytes, big-endian). Empty value. The postings of one word are contiguous and in id order,
///   and the postings of every word starting with `data` lie under the prefix `data`.
/// - The **statistics** under the key `[0]` (it sorts before every posting): the number of
///   objects whose text has at least one word, and the number of words of all of them (two
///   little-endian UInt64), which ranking by relevance needs (`BM25`). A write transaction keeps
///   its changes of them in `TransactionContext.fullTextDeltas` and writes them once, at commit.
///
/// An object's text is tokenized again when it changes or is removed, to find the postings it
/// had: the index keeps no copy of the text.
enum FullTextIndex {
    static let statsKey: [UInt8] = [0]

    /// An object's words: the distinct ones in byte order, and how many there are in all.
    struct Words {
        var distinct: [[UInt8]]
        var count: Int

        static let none = Words(distinct: [], count: 0)

        init(distinct: [[UInt8]], count: Int) {
            self.distinct = distinct
            self.count = count
        }

        /// The words of `text` (UTF-8).
        init(_ text: UnsafeRawBufferPointer) {
            var seen = Set<[UInt8]>()
            var count = 0
            FullTextTokenizer.forEachToken(in: text) { token in
                count += 1
                seen.insert(Array(token))
            }
            distinct = seen.sorted { CompiledLeaf.lexicographic($0, $1) < 0 }
            self.count = count
        }

        /// What this text adds to the statistics.
        var stats: Stats { distinct.isEmpty ? Stats() : Stats(documents: 1, words: Int64(count)) }
    }

    /// The words of `value` (a string's bytes; nil: absent).
    static func words(_ value: FieldValue?) -> Words {
        guard case .bytes(let text)? = value else { return .none }
        return Words(text)
    }

    /// The posting of `word` for object `id`.
    static func postingKey(_ word: [UInt8], id: Id) -> [UInt8] {
        var key = word
        key.reserveCapacity(word.count + 9)
        key.append(0)
        IndexKey.appendBigEndian(id, to: &key)
        return key
    }

    /// The postings of `words` for object `id`, in key order.
    static func postingKeys(_ words: Words, id: Id) -> [[UInt8]] {
        words.distinct.map { postingKey($0, id: id) }
    }

    /// The keys of every posting of `word`.
    static func wordRange(_ word: [UInt8]) -> KeyRange { .prefix(word + [0]) }

    /// The keys of every posting of a word that starts with `prefix` (not empty).
    static func prefixRange(_ prefix: [UInt8]) -> KeyRange { .prefix(prefix) }

    // MARK: Statistics

    /// How many objects have words in the index, and how many words they have in all.
    struct Stats: Equatable {
        var documents: Int64 = 0
        var words: Int64 = 0

        static func + (a: Stats, b: Stats) -> Stats { Stats(documents: a.documents + b.documents, words: a.words + b.words) }
        static func - (a: Stats, b: Stats) -> Stats { Stats(documents: a.documents - b.documents, words: a.words - b.words) }

        var encoded: [UInt8] {
            var bytes: [UInt8] = []
            withUnsafeBytes(of: UInt64(bitPattern: documents).littleEndian) { bytes += $0 }
            withUnsafeBytes(of: UInt64(bitPattern: words).littleEndian) { bytes += $0 }
            return bytes
        }

        init(documents: Int64 = 0, words: Int64 = 0) {
            self.documents = documents
            self.words = words
        }

        /// Reads stored statistics; `fileCorrupt` for a value that is not two counts.
        init(decoding bytes: UnsafeRawBufferPointer, index: IndexSchema) throws {
            guard bytes.count == 16 else {
                throw CellarError.fileCorrupt("the statistics of full-text index \(index.id) have \(bytes.count) bytes, expected 16")
            }
            documents = Int64(bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)))
            words = Int64(bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
            guard documents >= 0, words >= documents else {
                throw CellarError.fileCorrupt("the statistics of full-text index \(index.id) count \(documents) objects with \(words) words")
            }
        }
    }

    // MARK: Matching

    /// The ids of the objects whose postings meet `query`, in id order: every required word,
    /// a word starting with each prefix, and none of the excluded terms.
    static func matchingIds(_ query: FullTextQuery, cursor: Cursor) throws -> [Id] {
        var result = try idsHavingAll(words: query.required, prefixes: query.prefixes, cursor: cursor)
        for term in query.excluded where !result.isEmpty {
            result = subtract(result, try idsHavingAll(words: term, prefixes: [], cursor: cursor))
        }
        for term in query.excludedPrefixes where !result.isEmpty {
            result = subtract(result, try idsHavingAll(words: term.tokens, prefixes: [term.prefix], cursor: cursor))
        }
        return result
    }

    /// The ids of the objects with every one of `words` and a word starting with each of
    /// `prefixes` (at least one of either), in id order.
    static func idsHavingAll(words: [[UInt8]], prefixes: [[UInt8]], cursor: Cursor) throws -> [Id] {
        // Each word and prefix gives a sorted list; the shortest first, so that each
        // intersection is at most as long as it.
        var lists: [[Id]] = []
        for word in words {
            var ids: [Id] = []
            try cursor.appendKeySuffixes(wordRange(word), to: &ids)
            if ids.isEmpty { return [] }
            lists.append(ids)
        }
        for prefix in prefixes {
            let ids = try prefixIds(prefix, cursor: cursor)
            if ids.isEmpty { return [] }
            lists.append(ids)
        }
        lists.sort { $0.count < $1.count }
        guard var result = lists.first else { return [] }
        for list in lists.dropFirst() {
            result = intersect(result, list)
            if result.isEmpty { return [] }
        }
        return result
    }

    /// The ids of the objects with a word starting with `prefix`, sorted, each once.
    static func prefixIds(_ prefix: [UInt8], cursor: Cursor) throws -> [Id] {
        var ids: [Id] = []
        try cursor.appendKeySuffixes(prefixRange(prefix), to: &ids)
        ids.sort()
        return ids.uniqued()
    }

    /// How many objects have `word` (its document frequency).
    static func documentFrequency(_ word: [UInt8], cursor: Cursor) throws -> Int {
        try cursor.countKeys(wordRange(word))
    }

    /// The ids in both sorted lists.
    static func intersect(_ a: [Id], _ b: [Id]) -> [Id] {
        var out: [Id] = []
        out.reserveCapacity(Swift.min(a.count, b.count))
        var (i, j) = (0, 0)
        while i < a.count && j < b.count {
            if a[i] == b[j] {
                out.append(a[i]); i += 1; j += 1
            } else if a[i] < b[j] {
                i += 1
            } else {
                j += 1
            }
        }
        return out
    }

    /// The ids of sorted `a` that are not in sorted `b`.
    static func subtract(_ a: [Id], _ b: [Id]) -> [Id] {
        guard !b.isEmpty else { return a }
        var out: [Id] = []
        out.reserveCapacity(a.count)
        var j = 0
        for id in a {
            while j < b.count && b[j] < id { j += 1 }
            if j < b.count && b[j] == id { continue }
            out.append(id)
        }
        return out
    }
}
