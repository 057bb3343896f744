import BenchSupport
import Foundation

/// One query of a query step, in both engines' syntax, with the rank band it was drawn from.
struct SearchQuery {
    /// Cellar's `matches` string: `word`, `a b`, `ab*`, `a -b`.
    let cellar: String
    /// FTS5's MATCH string: `"word"`, `"a" AND "b"`, `"ab"*`, `"a" NOT "b"` (quoted, so that no
    /// word is read as an operator).
    let fts5: String
    /// Which band the (first) word came from: `frequent`, `medium`, `rare`, or the prefix length.
    let band: String
}

/// The full-text benchmark's documents, queries and expected answers, built before any timer.
///
/// The vocabulary is the system word list (`/usr/share/dict/words`, Debian's wamerican) filtered
/// to words of lowercase ASCII letters only, so that both engines' tokenizers split and fold every
/// text the same way, shuffled with SplitMix64 seeded with 1: the word at position r has rank r,
/// so that frequent words are not all short or all early in the alphabet. Document i (id and rowid
/// i, 1...N) has 40 to 80 words (uniform), each drawn Zipf-distributed (s = 1) over the ranks with
/// SplitMix64 seeded with 2026, joined by single spaces. Queries are drawn with seeds of their own.
struct Workload {
    /// Rank bands the query words are drawn from: ranks below 100, 100 to 2,999, and the rest.
    static let frequent = 0..<100
    static let medium = 100..<3_000
    static let minWords = 40
    static let maxWords = 80

    let n: Int
    let vocabulary: [String]
    /// Document i's text at index i − 1.
    let texts: [String]
    /// Words in all documents (with repeats).
    let totalWords: Int
    /// Distinct words of each document, summed: the postings an index without positions holds.
    let postings: Int
    let term: [SearchQuery]
    let and: [SearchQuery]
    let prefix: [SearchQuery]
    let not: [SearchQuery]
    /// The ranked step's queries: single words and pairs, alternately.
    let ranked: [SearchQuery]
    /// The ids each query step's queries must find, in id order, from an index built here.
    let expected: [Step: [[Int64]]]

    static let wordList = "/usr/share/dict/words"

    /// The word list's words of lowercase ASCII letters, shuffled (SplitMix64, seed 1).
    static func loadVocabulary() throws -> [String] {
        guard let data = FileManager.default.contents(atPath: wordList) else {
            throw BenchError("cannot read \(wordList): install Debian's wamerican (scripts/ensure-deps.sh --bench)")
        }
        var words: [String] = []
        for line in data.split(separator: UInt8(ascii: "\n")) where !line.isEmpty && line.allSatisfy({ $0 >= 0x61 && $0 <= 0x7A }) {
            words.append(String(decoding: line, as: UTF8.self))
        }
        words = Array(Set(words)).sorted()
        guard words.count >= 10_000 else { throw BenchError("\(wordList) has only \(words.count) lowercase words") }
        var rng = SplitMix64(state: 1)
        var k = words.count - 1
        while k >= 1 {
            words.swapAt(k, Int(rng.next() % UInt64(k + 1)))
            k -= 1
        }
        return words
    }

    init(n: Int, queries: Int, rankedQueries: Int) throws {
        self.n = n
        let vocabulary = try Self.loadVocabulary()
        self.vocabulary = vocabulary
        let v = vocabulary.count
        let bytes = vocabulary.map { Array($0.utf8) }

        // Zipf (s = 1): P(rank r) proportional to 1 / (r + 1); drawn by binary search in the CDF.
        var cdf = [Double](repeating: 0, count: v)
        var sum = 0.0
        for r in 0..<v {
            sum += 1 / Double(r + 1)
            cdf[r] = sum
        }
        var rng = SplitMix64(state: 2026)
        func zipf() -> Int {
            let u = Double(rng.next() >> 11) * 0x1p-53 * sum
            var lo = 0, hi = v - 1
            while lo < hi {
                let mid = (lo + hi) / 2
                if cdf[mid] < u { lo = mid + 1 } else { hi = mid }
            }
            return lo
        }

        // The documents, and the reference index: each rank's ids in id order.
        var postings = [[Int32]](repeating: [], count: v)
        var lastId = [Int32](repeating: 0, count: v)
        var texts: [String] = []
        texts.reserveCapacity(n)
        var total = 0
        var buffer: [UInt8] = []
        for i in 1...n {
            let count = Self.minWords + Int(rng.next() % UInt64(Self.maxWords - Self.minWords + 1))
            total += count
            buffer.removeAll(keepingCapacity: true)
            for k in 0..<count {
                let r = zipf()
                if k > 0 { buffer.append(UInt8(ascii: " ")) }
                buffer.append(contentsOf: bytes[r])
                if lastId[r] != Int32(i) {
                    lastId[r] = Int32(i)
                    postings[r].append(Int32(i))
                }
            }
            texts.append(String(decoding: buffer, as: UTF8.self))
        }
        self.texts = texts
        totalWords = total
        self.postings = postings.reduce(0) { $0 + $1.count }

        // The queries.
        func draw(_ rng: inout SplitMix64, _ band: Int) -> Int {
            switch band {
            case 0: Self.frequent.lowerBound + Int(rng.next() % UInt64(Self.frequent.count))
            case 1: Self.medium.lowerBound + Int(rng.next() % UInt64(Self.medium.count))
            default: Self.medium.upperBound + Int(rng.next() % UInt64(v - Self.medium.upperBound))
            }
        }
        let bandNames = ["frequent", "medium", "rare"]
        func word(_ r: Int) -> String { vocabulary[r] }

        var q = SplitMix64(state: 11)
        var termRanks: [Int] = []
        term = (0..<queries).map { k in
            let r = draw(&q, k % 3)
            termRanks.append(r)
            return SearchQuery(cellar: word(r), fts5: "\"\(word(r))\"", band: bandNames[k % 3])
        }
        q = SplitMix64(state: 12)
        var andRanks: [(Int, Int)] = []
        and = (0..<queries).map { k in
            let a = draw(&q, k % 3)
            var b = draw(&q, (k / 3) % 3)
            while b == a { b = draw(&q, (k / 3) % 3) }
            andRanks.append((a, b))
            return SearchQuery(cellar: "\(word(a)) \(word(b))", fts5: "\"\(word(a))\" AND \"\(word(b))\"",
                               band: bandNames[k % 3] + "+" + bandNames[(k / 3) % 3])
        }
        q = SplitMix64(state: 13)
        var prefixes: [[UInt8]] = []
        prefix = (0..<queries).map { k in
            let length = 2 + k % 3
            var r = Int(q.next() % UInt64(v))
            while bytes[r].count <= length { r = Int(q.next() % UInt64(v)) }
            let p = String(decoding: bytes[r].prefix(length), as: UTF8.self)
            prefixes.append(Array(bytes[r].prefix(length)))
            return SearchQuery(cellar: p + "*", fts5: "\"\(p)\"*", band: "\(length) letters")
        }
        q = SplitMix64(state: 14)
        var notRanks: [(Int, Int)] = []
        not = (0..<queries).map { k in
            let a = draw(&q, k % 3)
            var b = draw(&q, (k / 3) % 2)
            while b == a { b = draw(&q, (k / 3) % 2) }
            notRanks.append((a, b))
            return SearchQuery(cellar: "\(word(a)) -\(word(b))", fts5: "\"\(word(a))\" NOT \"\(word(b))\"",
                               band: bandNames[k % 3] + "-" + bandNames[(k / 3) % 2])
        }
        q = SplitMix64(state: 15)
        ranked = (0..<rankedQueries).map { k in
            let a = draw(&q, k % 3)
            if k % 2 == 0 { return SearchQuery(cellar: word(a), fts5: "\"\(word(a))\"", band: bandNames[k % 3]) }
            var b = draw(&q, (k / 2) % 3)
            while b == a { b = draw(&q, (k / 2) % 3) }
            return SearchQuery(cellar: "\(word(a)) \(word(b))", fts5: "\"\(word(a))\" AND \"\(word(b))\"",
                               band: bandNames[k % 3] + "+" + bandNames[(k / 2) % 3])
        }

        // The expected answers, from the reference index.
        func ids(_ list: [Int32]) -> [Int64] { list.map(Int64.init) }
        func intersect(_ a: [Int32], _ b: [Int32]) -> [Int32] {
            var out: [Int32] = []
            var i = 0, j = 0
            while i < a.count && j < b.count {
                if a[i] < b[j] { i += 1 } else if a[i] > b[j] { j += 1 } else { out.append(a[i]); i += 1; j += 1 }
            }
            return out
        }
        func subtract(_ a: [Int32], _ b: [Int32]) -> [Int32] {
            var out: [Int32] = []
            var j = 0
            for x in a {
                while j < b.count && b[j] < x { j += 1 }
                if j == b.count || b[j] != x { out.append(x) }
            }
            return out
        }
        var marks = [Bool](repeating: false, count: n + 1)
        func union(_ p: [UInt8]) -> [Int64] {
            for i in marks.indices { marks[i] = false }
            for r in 0..<v where bytes[r].starts(with: p) {
                for id in postings[r] { marks[Int(id)] = true }
            }
            return (1...n).compactMap { marks[$0] ? Int64($0) : nil }
        }
        expected = [
            .term: termRanks.map { ids(postings[$0]) },
            .and: andRanks.map { ids(intersect(postings[$0.0], postings[$0.1])) },
            .prefix: prefixes.map(union),
            .not: notRanks.map { ids(subtract(postings[$0.0], postings[$0.1])) },
        ]
    }

    func queries(_ step: Step) -> [SearchQuery] {
        switch step {
        case .index: []
        case .term: term
        case .and: and
        case .prefix: prefix
        case .not: not
        case .ranked: ranked
        }
    }

    /// Documents having at least one of the query step's hits, averaged over its queries.
    func averageHits(_ step: Step) -> Double {
        guard let lists = expected[step], !lists.isEmpty else { return 0 }
        return Double(lists.reduce(0) { $0 + $1.count }) / Double(lists.count)
    }
}
