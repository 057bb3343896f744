import CellarStorage

/// The best few matches by relevance, without scoring every match in full or reading any record:
/// what `find(offset:limit:)` and `findIds(offset:limit:)` of a query ordered only by relevance
/// run.
///
/// 1. Each scored term's counts in the candidates (the query's matches, in id order) come from its
///    postings, merged with the candidates — or, for a few candidates against a frequent word,
///    looked up block by block. A candidate with none of the terms scores 0.
/// 2. Each candidate's score has an upper bound known before its length is read: BM25 falls as a
///    text grows, and a text has at least as many words as the query's words occur in it
///    (distinct words are distinct tokens; a prefix's tokens may be one of them, so the longest
///    count of a prefix bounds it too). The bound is the score at that length.
/// 3. The `k` candidates with the highest bounds are scored first (their lengths read), which
///    fills a heap of the best `k` so far; then every other candidate, in id order, whose bound is
///    not below the heap's worst score is scored; the rest cannot enter.
///
/// The result is exactly the first `k` of a full sort by BM25 score, highest first, ties in id
/// order (`CompiledOrder.sort`): a bound is computed with the same arithmetic as the score, at a
/// length no longer than the text's, so it is never below the score, and a candidate is left out
/// only when its bound is strictly below a score already among the best `k`.
extension FullTextRanking {
    /// The `k` best of `candidates` (ascending ids, each once) by BM25 score, best first, ties in
    /// id order.
    func best(_ k: Int, among candidates: [Id], _ context: TransactionContext) throws -> [Id] {
        guard k > 0, !candidates.isEmpty else { return [] }
        guard let cursor = try context.cursor(indexTree: index) else { return Array(candidates.prefix(k)) }
        let stats = try context.fullTextStats(index)
        let documents = Int(stats.documents)
        let averageLength = documents == 0 ? 0 : Double(stats.words) / Double(documents)

        // Per term: its idf and each candidate's count of it.
        var idfs: [Double] = []
        var counts: [[UInt32]] = []
        for word in words {
            let frequency = try FullTextIndex.documentFrequency(word, cursor: cursor, index: index)
            idfs.append(BM25.idf(documentFrequency: frequency, documentCount: documents))
            counts.append(try Self.counts(of: word, in: candidates, frequency: frequency, cursor: cursor, index: index))
        }
        for prefix in prefixes {
            let (perCandidate, frequency) = try Self.counts(withPrefix: prefix, in: candidates, cursor: cursor, index: index)
            idfs.append(BM25.idf(documentFrequency: frequency, documentCount: documents))
            counts.append(perCandidate)
        }

        /// The score of candidate `c` if its text had `length` words: `BM25.score`'s steps, so
        /// that equal inputs give the same bits.
        func score(_ c: Int, length: Int) -> Double {
            let norm = BM25.norm(documentLength: length, averageLength: averageLength)
            var sum = 0.0
            for t in counts.indices where counts[t][c] > 0 {
                sum += BM25.termScore(idf: idfs[t], frequency: Int(counts[t][c]), norm: norm)
            }
            return sum
        }
        /// The fewest words candidate `c`'s text can have (0: it has none of the terms).
        func shortest(_ c: Int) -> Int {
            var words = 0
            for t in 0..<self.words.count { words += Int(counts[t][c]) }
            for t in self.words.count..<counts.count { words = Swift.max(words, Int(counts[t][c])) }
            return words
        }

        var lengths = LengthReader(cursor: cursor, index: index)
        var heap = BestHeap(capacity: k)
        var bounds = [Double](repeating: 0, count: candidates.count)
        var seeds = BestHeap(capacity: k)
        for c in candidates.indices {
            let least = shortest(c)
            bounds[c] = least == 0 ? 0 : score(c, length: least)
            seeds.offer(score: bounds[c], id: candidates[c], position: c)
        }
        // The highest bounds first, to raise the bar early.
        var seeded = Set<Int>()
        for seed in seeds.entries {
            let c = seed.position
            seeded.insert(c)
            let exact = bounds[c] == 0 ? 0 : score(c, length: try lengths.length(of: candidates[c], ordered: false))
            heap.offer(score: exact, id: candidates[c], position: c)
        }
        for c in candidates.indices where !seeded.contains(c) {
            if heap.isFull, !heap.admits(score: bounds[c], id: candidates[c]) { continue }
            let exact = bounds[c] == 0 ? 0 : score(c, length: try lengths.length(of: candidates[c], ordered: true))
            heap.offer(score: exact, id: candidates[c], position: c)
        }
        return heap.sorted().map(\.id)
    }

    /// Each candidate's count of `word` (which `frequency` objects have): the word's postings
    /// merged with the candidates, or, when the word is far more frequent than the candidates are
    /// many, looked up block by block.
    static func counts(of word: [UInt8], in candidates: [Id], frequency: Int, cursor: Cursor,
                       index: IndexSchema) throws -> [UInt32] {
        var counts = [UInt32](repeating: 0, count: candidates.count)
        guard frequency > 0 else { return counts }
        if frequency <= 16 * candidates.count {
            var c = 0
            try FullTextIndex.forEachPosting(of: word, cursor: cursor, index: index) { entry in
                while c < candidates.count && candidates[c] < entry.id { c += 1 }
                if c < candidates.count && candidates[c] == entry.id { counts[c] = entry.count }
            }
            return counts
        }
        try FullTextIndex.lookUp(candidates, in: word, cursor: cursor, index: index) { c, entry in counts[c] = entry.count }
        return counts
    }

    /// Each candidate's count of words starting with `prefix`, and how many objects have one.
    static func counts(withPrefix prefix: [UInt8], in candidates: [Id], cursor: Cursor,
                       index: IndexSchema) throws -> (counts: [UInt32], frequency: Int) {
        var postings: [FullTextPostings.Entry] = []
        try FullTextIndex.forEachPosting(withPrefix: prefix, cursor: cursor, index: index) { postings.append($0) }
        // Word by word, each in id order: sorted by id, an object's entries are adjacent.
        postings.sort { $0.id < $1.id }
        var counts = [UInt32](repeating: 0, count: candidates.count)
        var frequency = 0
        var c = 0
        var p = 0
        while p < postings.count {
            let id = postings[p].id
            var total: UInt32 = 0
            while p < postings.count && postings[p].id == id {
                total &+= postings[p].count
                p += 1
            }
            frequency += 1
            while c < candidates.count && candidates[c] < id { c += 1 }
            if c < candidates.count && candidates[c] == id { counts[c] = total }
        }
        return (counts, frequency)
    }

    /// Reads objects' lengths (`FullTextIndex.lengthKey`), in ascending id order through one
    /// cursor (a seek in the current leaf when the next id is near), or one at a time.
    struct LengthReader {
        let cursor: Cursor
        let index: IndexSchema
        private var key: [UInt8] = FullTextIndex.lengthKey(0)

        init(cursor: Cursor, index: IndexSchema) {
            self.cursor = cursor
            self.index = index
        }

        /// The length of object `id`'s text; `fileCorrupt` when it is missing or does not
        /// decode. `ordered`: `id` is above every id read before (through `ordered` reads).
        mutating func length(of id: Id, ordered: Bool) throws -> Int {
            withUnsafeBytes(of: id.bigEndian) { bytes in
                for i in 0..<8 { key[1 + i] = bytes[i] }
            }
            let found = try key.withUnsafeBytes { key in
                try ordered ? cursor.seekForward(key) : cursor.seek(key)
            }
            guard found, cursor.key.elementsEqual(key) else {
                throw FullTextPostings.corrupt(index, "no length for object \(id), which has postings")
            }
            return try FullTextIndex.length(decoding: try cursor.value(), index: index)
        }
    }
}

/// The best `capacity` of the scores offered so far (highest score first, ties to the lower id),
/// as a binary heap whose root is the worst of them.
struct BestHeap {
    struct Entry {
        var score: Double
        var id: Id
        /// Where the entry came from (a candidate's position).
        var position: Int
    }

    let capacity: Int
    private(set) var entries: [Entry] = []

    init(capacity: Int) {
        self.capacity = capacity
        entries.reserveCapacity(Swift.min(capacity, 1024))
    }

    var isFull: Bool { entries.count >= capacity }

    /// Whether `a` ranks before `b`.
    @inline(__always)
    static func better(_ a: (score: Double, id: Id), than b: (score: Double, id: Id)) -> Bool {
        a.score > b.score || (a.score == b.score && a.id < b.id)
    }

    /// Whether an entry with `score` and `id` would enter the best `capacity`.
    func admits(score: Double, id: Id) -> Bool {
        !isFull || Self.better((score, id), than: (entries[0].score, entries[0].id))
    }

    mutating func offer(score: Double, id: Id, position: Int) {
        let entry = Entry(score: score, id: id, position: position)
        if !isFull {
            entries.append(entry)
            var child = entries.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard worse(child, than: parent) else { break }
                entries.swapAt(child, parent)
                child = parent
            }
            return
        }
        guard admits(score: score, id: id) else { return }
        entries[0] = entry
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < entries.count else { break }
            var worst = left
            if left + 1 < entries.count, worse(left + 1, than: left) { worst = left + 1 }
            guard worse(worst, than: parent) else { break }
            entries.swapAt(worst, parent)
            parent = worst
        }
    }

    /// Whether entry `i` ranks after entry `j`.
    private func worse(_ i: Int, than j: Int) -> Bool {
        Self.better((entries[j].score, entries[j].id), than: (entries[i].score, entries[i].id))
    }

    /// The entries, best first.
    func sorted() -> [Entry] {
        entries.sorted { Self.better(($0.score, $0.id), than: ($1.score, $1.id)) }
    }
}
