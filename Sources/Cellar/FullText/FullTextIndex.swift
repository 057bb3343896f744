import CellarStorage

/// The keys of a full-text index (`// cellar: index = "fulltext"`) in the index's tree, and how
/// queries read them.
///
/// - **Postings**, per word, in blocks (`FullTextPostings`): the ids of the objects whose text has
///   the word, with how often. Key `word ‖ 0 ‖ first id`.
/// - **Lengths** under `[1] ‖ id` (8 bytes, big-endian): how many words an object's text has
///   (a varint), for objects with at least one; ranking by relevance divides by it.
/// - **Statistics** under `[0]`: how many objects have at least one word, and how many words they
///   have in all (two little-endian UInt64), for the average length ranking needs.
///
/// Words never start with a byte below `0` (0x30): they are letters and digits, so neither `[0]`
/// nor `[1]` is ever a word's prefix. A write transaction collects its changes to the index in
/// memory (`FullTextPending`) and writes them word by word at commit, or before anything in the
/// transaction reads the index: a bulk put rewrites each word's last block once, not once per object.
///
/// An object's text is tokenized again when it changes or is removed, to find the postings it
/// had: the index keeps no copy of the text, and no word positions.
enum FullTextIndex {
    static let statsKey: [UInt8] = [0]
    static let lengthPrefix: UInt8 = 1

    /// The key of object `id`'s length.
    static func lengthKey(_ id: Id) -> [UInt8] {
        var key: [UInt8] = [lengthPrefix]
        IndexKey.appendBigEndian(id, to: &key)
        return key
    }

    /// An object's length as stored under its `lengthKey`; `fileCorrupt` for a value that is not
    /// one varint of at most `Int32.max`.
    static func length(decoding value: UnsafeRawBufferPointer, index: IndexSchema) throws -> Int {
        var reader = FullTextPostings.VarintReader(bytes: value)
        guard let stored = reader.next(), reader.isAtEnd, stored <= UInt64(Int32.max) else {
            throw FullTextPostings.corrupt(index, "a length that does not decode")
        }
        return Int(stored)
    }

    /// The words of `value` (a string's bytes; nil: absent).
    static func words(_ value: FieldValue?) -> FullTextWords {
        guard case .bytes(let text)? = value else { return .none }
        return FullTextWords(text)
    }

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
            documents = Int64(bitPattern: bytes.loadLE(UInt64.self, at: 0))
            words = Int64(bitPattern: bytes.loadLE(UInt64.self, at: 8))
            guard documents >= 0, words >= documents else {
                throw CellarError.fileCorrupt("the statistics of full-text index \(index.id) count \(documents) objects with \(words) words")
            }
        }
    }

    // MARK: Reading postings

    /// Calls `body` with each posting of `word`, in id order.
    static func forEachPosting(of word: [UInt8], cursor: Cursor, index: IndexSchema,
                               _ body: (FullTextPostings.Entry) throws -> Void) throws {
        try forEachPosting(under: FullTextPostings.wordPrefix(word), cursor: cursor, index: index, body)
    }

    /// Calls `body` with each posting of every word starting with `prefix` (not empty): word by
    /// word, each in id order.
    static func forEachPosting(withPrefix prefix: [UInt8], cursor: Cursor, index: IndexSchema,
                               _ body: (FullTextPostings.Entry) throws -> Void) throws {
        try forEachPosting(under: prefix, cursor: cursor, index: index, body)
    }

    /// Calls `body` with each posting of the blocks whose keys start with `keyPrefix`.
    private static func forEachPosting(under keyPrefix: [UInt8], cursor: Cursor, index: IndexSchema,
                                       _ body: (FullTextPostings.Entry) throws -> Void) throws {
        try cursor.scan(.prefix(keyPrefix)) { key, block in
            let (_, firstId) = try FullTextPostings.split(key: key, index: index)
            try FullTextPostings.forEachEntry(block, firstId: firstId, index: index, body)
            return true
        }
    }

    /// The ids of the objects with `word`, in id order.
    static func ids(of word: [UInt8], cursor: Cursor, index: IndexSchema) throws -> [Id] {
        var ids: [Id] = []
        try forEachPosting(of: word, cursor: cursor, index: index) { ids.append($0.id) }
        return ids
    }

    /// The ids of the objects with a word starting with `prefix`, sorted, each once.
    static func prefixIds(_ prefix: [UInt8], cursor: Cursor, index: IndexSchema) throws -> [Id] {
        var ids: [Id] = []
        try forEachPosting(withPrefix: prefix, cursor: cursor, index: index) { ids.append($0.id) }
        ids.sort()
        return ids.uniqued()
    }

    /// How many objects have `word` (its document frequency), from the blocks' counts.
    static func documentFrequency(_ word: [UInt8], cursor: Cursor, index: IndexSchema) throws -> Int {
        var total = 0
        try cursor.scan(.prefix(FullTextPostings.wordPrefix(word))) { _, block in
            total += try FullTextPostings.count(block, index: index)
            return true
        }
        return total
    }

    // MARK: Matching

    /// The ids of the objects whose postings meet `query`, in id order: every required word,
    /// a word starting with each prefix, and none of the excluded terms.
    static func matchingIds(_ query: FullTextQuery, cursor: Cursor, index: IndexSchema) throws -> [Id] {
        var result = try idsHavingAll(words: query.required, prefixes: query.prefixes, cursor: cursor, index: index)
        for term in query.excluded where !result.isEmpty {
            // A single frequent word is not read whole: the few results are looked up in its blocks.
            if term.count == 1, try documentFrequency(term[0], cursor: cursor, index: index) > 16 * result.count {
                result = subtract(result, try filter(result, having: term[0], cursor: cursor, index: index))
                continue
            }
            result = subtract(result, try idsHavingAll(words: term, prefixes: [], cursor: cursor, index: index))
        }
        for term in query.excludedPrefixes where !result.isEmpty {
            result = subtract(result, try idsHavingAll(words: term.tokens, prefixes: [term.prefix], cursor: cursor, index: index))
        }
        return result
    }

    /// The ids of the objects with every one of `words` and a word starting with each of
    /// `prefixes` (at least one of either), in id order.
    static func idsHavingAll(words: [[UInt8]], prefixes: [[UInt8]], cursor: Cursor, index: IndexSchema) throws -> [Id] {
        // The rarest word first (document frequencies come from the blocks' counts); each prefix
        // gives a sorted list. A much more frequent word is not read whole: the few candidates
        // are looked up in its blocks.
        var frequencies: [(word: [UInt8], count: Int)] = []
        for word in words {
            let count = try documentFrequency(word, cursor: cursor, index: index)
            if count == 0 { return [] }
            frequencies.append((word, count))
        }
        frequencies.sort { $0.count < $1.count }
        var lists: [[Id]] = []
        for prefix in prefixes {
            let ids = try prefixIds(prefix, cursor: cursor, index: index)
            if ids.isEmpty { return [] }
            lists.append(ids)
        }
        if let rarest = frequencies.first { lists.append(try ids(of: rarest.word, cursor: cursor, index: index)) }
        lists.sort { $0.count < $1.count }
        guard var result = lists.first else { return [] }
        for list in lists.dropFirst() {
            result = intersect(result, list)
            if result.isEmpty { return [] }
        }
        for (word, count) in frequencies.dropFirst() {
            if count > 16 * result.count {
                result = try filter(result, having: word, cursor: cursor, index: index)
            } else {
                result = intersect(result, try ids(of: word, cursor: cursor, index: index))
            }
            if result.isEmpty { return [] }
        }
        return result
    }

    /// The ids of sorted `candidates` that `word` has a posting for, looked up block by block:
    /// for a few candidates against a frequent word, cheaper than reading all its postings.
    static func filter(_ candidates: [Id], having word: [UInt8], cursor: Cursor, index: IndexSchema) throws -> [Id] {
        var out: [Id] = []
        try lookUp(candidates, in: word, cursor: cursor, index: index) { c, _ in out.append(candidates[c]) }
        return out
    }

    /// Calls `found` with the position in sorted `candidates` and the posting of each candidate
    /// that `word` has a posting for, in order, reading only the blocks that may hold them: for
    /// each candidate past the block read last, the last block starting at or before it.
    static func lookUp(_ candidates: [Id], in word: [UInt8], cursor: Cursor, index: IndexSchema,
                       _ found: (Int, FullTextPostings.Entry) throws -> Void) throws {
        let prefix = FullTextPostings.wordPrefix(word)
        var block: (firstId: Id, entries: [FullTextPostings.Entry])?
        var at = 0
        for (c, id) in candidates.enumerated() {
            if block == nil || id > block!.entries.last!.id {
                // The last block starting at or before `id` (the same one again when `id` lies
                // between its last entry and the next block).
                var read: (firstId: Id, entries: [FullTextPostings.Entry])?
                try cursor.scan(KeyRange(lower: prefix, upper: FullTextPostings.key(word, firstId: id), upperInclusive: true), reverse: true) { key, value in
                    let firstId = try FullTextPostings.split(key: key, index: index).firstId
                    if let block, block.firstId == firstId { read = block; return false }
                    read = (firstId, try FullTextPostings.decode(value, firstId: firstId, index: index))
                    return false
                }
                guard let read else { continue }
                if block?.firstId != read.firstId { at = 0 }
                block = read
                if id > read.entries.last!.id { continue }
            }
            let entries = block!.entries
            while at < entries.count && entries[at].id < id { at += 1 }
            if at < entries.count && entries[at].id == id { try found(c, entries[at]) }
        }
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
