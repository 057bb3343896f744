import BenchSupport
import Foundation

/// One query of a query step, in both engines' syntax, with the rank band it was drawn from.
struct SearchQuery {
    /// Cellar's `matches` string: `word`, `a b`, `ab*`, `a -b`.
    let cellar: String
    /// FTS5's MATCH string: `"word"`, `"a" AND "b"`, `"ab"*`, `"a" NOT "b"` (quoted, so that no
    /// word is read as an operator).
    let fts5: String
    /// Which band the (first) word came from: `frequent`, `medium`, `rare`, or the prefix length;
    /// in the ranked step on real text, the query's kind (`word`, `and`, `prefix`, `not`).
    let band: String
}

/// The full-text benchmark's documents, queries and expected answers, built before any timer.
///
/// The documents are a `Corpus`'s: synthetic (Zipf over the word list) or real (the man pages'
/// paragraphs). The queries are drawn the same way from either, over the corpus's words by rank,
/// with seeds of their own (SplitMix64): a query step's words come in turn from three rank bands,
/// the 100 most frequent words, ranks 100 to 2,999, and the rest that can be drawn (every word of
/// the synthetic vocabulary; the real corpus's words in at least two documents). Their expected
/// answers come from the corpus's reference index.
struct Workload {
    /// Rank bands the query words are drawn from: ranks below 100, 100 to 2,999, and the rest.
    static let frequent = 0..<100
    static let medium = 100..<3_000

    let n: Int
    /// What the documents are, for the table's title.
    let title: String
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
    /// The ranked step's queries. Synthetic: single words and pairs, alternately, each labelled
    /// with its words' bands. Real text: one word, two words, a prefix and an exclusion in turn,
    /// each labelled with its kind (`word`, `and`, `prefix`, `not`).
    let ranked: [SearchQuery]
    /// The ids each query step's queries must find, in id order, from the reference index.
    let expected: [Step: [[Int64]]]

    init(_ corpus: Corpus, queries: Int, rankedQueries: Int) throws {
        let n = corpus.n, vocabulary = corpus.vocabulary, postings = corpus.postings
        self.n = n
        self.vocabulary = vocabulary
        self.postings = postings.reduce(0) { $0 + $1.count }
        title = corpus.title
        texts = corpus.texts
        totalWords = corpus.totalWords
        let v = vocabulary.count
        let bytes = vocabulary.map { Array($0.utf8) }

        // The bands: the medium band ends earlier when fewer words can be drawn (a small real
        // corpus), so that each band has words.
        let drawable = corpus.drawable
        try check("at least \(Self.frequent.upperBound + 2) words in two documents or more to draw queries from",
                  drawable >= Self.frequent.upperBound + 2, "\(drawable)")
        let mediumEnd = drawable > Self.medium.upperBound + 100 ? Self.medium.upperBound : (Self.frequent.upperBound + drawable) / 2
        if mediumEnd != Self.medium.upperBound {
            log("fts-bench: only \(drawable) words can be drawn: the medium band is ranks 100 to \(mediumEnd - 1), the rare band the rest")
        }
        func draw(_ rng: inout SplitMix64, _ band: Int) -> Int {
            switch band {
            case 0: Self.frequent.lowerBound + Int(rng.next() % UInt64(Self.frequent.count))
            case 1: Self.medium.lowerBound + Int(rng.next() % UInt64(mediumEnd - Self.medium.lowerBound))
            default: mediumEnd + Int(rng.next() % UInt64(drawable - mediumEnd))
            }
        }
        /// Two different ranks from the bands given.
        func pair(_ rng: inout SplitMix64, _ bandA: Int, _ bandB: Int) -> (Int, Int) {
            let a = draw(&rng, bandA)
            var b = draw(&rng, bandB)
            while b == a { b = draw(&rng, bandB) }
            return (a, b)
        }
        /// The first `length` letters of a word drawn uniformly among those longer than that.
        func prefixOf(_ rng: inout SplitMix64, _ length: Int) -> [UInt8] {
            var r = Int(rng.next() % UInt64(drawable))
            while bytes[r].count <= length { r = Int(rng.next() % UInt64(drawable)) }
            return Array(bytes[r].prefix(length))
        }
        let bandNames = ["frequent", "medium", "rare"]
        func word(_ r: Int) -> String { vocabulary[r] }
        func one(_ a: Int, _ band: String) -> SearchQuery { SearchQuery(cellar: word(a), fts5: "\"\(word(a))\"", band: band) }
        func both(_ p: (Int, Int), _ band: String) -> SearchQuery {
            SearchQuery(cellar: "\(word(p.0)) \(word(p.1))", fts5: "\"\(word(p.0))\" AND \"\(word(p.1))\"", band: band)
        }
        func starting(_ p: [UInt8], _ band: String) -> SearchQuery {
            let text = String(decoding: p, as: UTF8.self)
            return SearchQuery(cellar: text + "*", fts5: "\"\(text)\"*", band: band)
        }
        func without(_ p: (Int, Int), _ band: String) -> SearchQuery {
            SearchQuery(cellar: "\(word(p.0)) -\(word(p.1))", fts5: "\"\(word(p.0))\" NOT \"\(word(p.1))\"", band: band)
        }

        // The queries of the steps whose answers are checked.
        var q = SplitMix64(state: 11)
        let termRanks = (0..<queries).map { k in draw(&q, k % 3) }
        term = termRanks.enumerated().map { k, r in one(r, bandNames[k % 3]) }
        q = SplitMix64(state: 12)
        let andRanks = (0..<queries).map { k in pair(&q, k % 3, (k / 3) % 3) }
        and = andRanks.enumerated().map { k, p in both(p, bandNames[k % 3] + "+" + bandNames[(k / 3) % 3]) }
        q = SplitMix64(state: 13)
        let prefixes = (0..<queries).map { k in prefixOf(&q, 2 + k % 3) }
        prefix = prefixes.map { starting($0, "\($0.count) letters") }
        q = SplitMix64(state: 14)
        let notRanks = (0..<queries).map { k in pair(&q, k % 3, (k / 3) % 2) }
        not = notRanks.enumerated().map { k, p in without(p, bandNames[k % 3] + "-" + bandNames[(k / 3) % 2]) }

        // The ranked step's queries.
        q = SplitMix64(state: 15)
        switch corpus.source {
        case .synthetic:
            ranked = (0..<rankedQueries).map { k in
                if k % 2 == 0 { return one(draw(&q, k % 3), bandNames[k % 3]) }
                return both(pair(&q, k % 3, (k / 2) % 3), bandNames[k % 3] + "+" + bandNames[(k / 2) % 3])
            }
        case .man:
            ranked = (0..<rankedQueries).map { k in
                let band = (k / 4) % 3
                switch k % 4 {
                case 0: return one(draw(&q, band), "word")
                case 1: return both(pair(&q, band, (k / 12) % 3), "and")
                case 2: return starting(prefixOf(&q, 2 + band), "prefix")
                default: return without(pair(&q, band, (k / 12) % 2), "not")
                }
            }
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
