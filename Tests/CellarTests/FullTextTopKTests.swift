@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Testing

/// The best few by relevance (`find`/`findIds` with a limit on a query ordered by relevance),
/// which skips scoring candidates that cannot enter, against a full BM25 sort computed here from
/// the texts alone, on random corpora small enough that many scores tie: the same ids in the same
/// order, ties in id order, at every offset and limit.
@Suite struct FullTextTopKTests {
    /// A corpus of `count` texts over a vocabulary of `vocabulary` words, some repeated in a text.
    static func corpus(_ random: inout SplitMix64, count: Int, vocabulary: Int) -> [String] {
        (0..<count).map { _ in
            let length = 1 + Int(random.next() % 12)
            return (0..<length).map { _ in
                // Skewed: low word numbers are frequent.
                let r = Int(random.next() % UInt64(vocabulary))
                return "w\(Int(random.next() % UInt64(r + 1)))"
            }.joined(separator: " ")
        }
    }

    /// The ids of `texts` matching `required` words, a word starting with each of `prefixes`, and
    /// none of `excluded`, best first by BM25 over the required words and prefixes, ties by id.
    static func reference(_ texts: [Id: String], required: [String], prefixes: [String], excluded: [String],
                          filter: (Id) -> Bool = { _ in true }) -> [Id] {
        let tokens = texts.mapValues { $0.split(separator: " ").map(String.init) }
        let documents = tokens.values.filter { !$0.isEmpty }.count
        let totalWords = tokens.values.reduce(0) { $0 + $1.count }
        let average = documents == 0 ? 0 : Double(totalWords) / Double(documents)
        func frequency(_ words: [String], _ term: String, prefix: Bool) -> Int {
            words.filter { prefix ? $0.hasPrefix(term) : $0 == term }.count
        }
        let terms = required.map { ($0, false) } + prefixes.map { ($0, true) }
        let documentFrequencies = terms.map { term in tokens.values.filter { frequency($0, term.0, prefix: term.1) > 0 }.count }
        var scored: [(id: Id, score: Double)] = []
        for (id, words) in tokens where filter(id) {
            guard terms.allSatisfy({ frequency(words, $0.0, prefix: $0.1) > 0 }),
                  excluded.allSatisfy({ frequency(words, $0, prefix: false) == 0 }) else { continue }
            let bm25Terms = terms.indices.map { BM25.Term(frequency: frequency(words, terms[$0].0, prefix: terms[$0].1), documentFrequency: documentFrequencies[$0]) }
            scored.append((id, BM25.score(bm25Terms, documentLength: words.count, averageLength: average, documentCount: documents)))
        }
        scored.sort { $0.score > $1.score || ($0.score == $1.score && $0.id < $1.id) }
        return scored.map(\.id)
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6])
    func theBestFewEqualAFullSortTiesIncluded(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let store = try Store(directoryPath: "memory:fts-top-k-\(seed)", model: cellarModel())
        let box = store.box(for: Article.self)
        let vocabulary = 6 + Int(random.next() % 30)
        var texts: [Id: String] = [:]
        var years: [Id: Int] = [:]
        for text in Self.corpus(&random, count: 40 + Int(random.next() % 400), vocabulary: vocabulary) {
            let year = Int(random.next() % 4)
            let id = try box.put(Article(text, year: year)).value
            texts[id] = text
            years[id] = year
        }
        // Some texts rewritten and some removed, so that the statistics move.
        for id in texts.keys.sorted() where random.next() % 5 == 0 {
            if random.next() % 2 == 0 {
                #expect(try box.remove(id))
                texts[id] = nil
            } else {
                let article = try #require(try box.get(id))
                article.body = Self.corpus(&random, count: 1, vocabulary: vocabulary)[0]
                try box.put(article)
                texts[id] = article.body
            }
        }
        func word() -> String { "w\(Int(random.next() % UInt64(vocabulary / 2 + 1)))" }
        for round in 0..<40 {
            var required: [String] = []
            var prefixes: [String] = []
            var excluded: [String] = []
            switch round % 4 {
            case 0: required = [word()]
            case 1: required = Array(Set([word(), word()])).sorted()
            case 2: prefixes = ["w\(Int(random.next() % 3) + 1)"]
            default:
                required = [word()]
                let other = word()
                if other != required[0] { excluded = [other] }
            }
            let text = (required + prefixes.map { $0 + "*" } + excluded.map { "-" + $0 }).joined(separator: " ")
            let expected = Self.reference(texts, required: required, prefixes: prefixes, excluded: excluded)
            let query = try box.query { Article.body.matches(text) }.ordered(byRelevanceTo: Article.body).build()
            #expect(try query.findIds().map(\.value) == expected, "\(text): the full sort")
            for (offset, limit) in [(0, 1), (0, 3), (0, 10), (2, 5), (7, 10), (0, expected.count + 3), (expected.count, 4)] {
                let end = min(expected.count, offset + limit)
                let want = offset < end ? Array(expected[offset..<end]) : []
                #expect(try query.findIds(offset: offset, limit: limit).map(\.value) == want, "\(text) offset \(offset) limit \(limit)")
            }
            #expect(try query.find(offset: 0, limit: 10).map(\.id) == Array(expected.prefix(10)), "\(text): objects")
            // Ranked by words of its own, among the objects of one year (which may have none of them: they score 0).
            let year = Int(random.next() % 4)
            let byText = try box.query { Article.year == year }.ordered(byRelevanceTo: text.replacingOccurrences(of: " -", with: " "), in: Article.body).build()
            let scoredWords = required + excluded
            let scoredExpected = Self.rankAll(texts, words: scoredWords, prefixes: prefixes) { years[$0] == year }
            #expect(try byText.findIds(offset: 0, limit: 10).map(\.value) == Array(scoredExpected.prefix(10)), "\(text) in \(year)")
        }
        // Inside a write transaction, with changes not yet written to the index.
        try store.runInTransaction {
            for _ in 0..<20 {
                let text = Self.corpus(&random, count: 1, vocabulary: vocabulary)[0]
                texts[try box.put(Article(text)).value] = text
            }
            let expected = Self.reference(texts, required: ["w0"], prefixes: [], excluded: [])
            let query = try box.query { Article.body.matches("w0") }.ordered(byRelevanceTo: Article.body).build()
            #expect(try query.findIds(offset: 0, limit: 10).map(\.value) == Array(expected.prefix(10)))
        }
    }

    /// Two words, one far more frequent than the matches are many: its counts come from block
    /// look-ups, not from reading it whole, and still rank as a full sort does.
    @Test func aFrequentWordBesideARareOneIsCountedFromItsBlocks() throws {
        let store = try Store(directoryPath: "memory:fts-top-k-frequent", model: cellarModel())
        let box = store.box(for: Article.self)
        var texts: [Id: String] = [:]
        for k in 0..<700 {
            let text = Array(repeating: "w0", count: 1 + k % 3).joined(separator: " ") + " filler"
            texts[try box.put(Article(text)).value] = text
        }
        for k in 0..<9 {
            let text = "w9 " + Array(repeating: "w0", count: 1 + k % 4).joined(separator: " ") + (k % 2 == 0 ? " long tail words" : "")
            texts[try box.put(Article(text)).value] = text
        }
        let expected = Self.reference(texts, required: ["w0", "w9"], prefixes: [], excluded: [])
        let query = try box.query { Article.body.matches("w0 w9") }.ordered(byRelevanceTo: Article.body).build()
        #expect(try query.findIds(offset: 0, limit: 5).map(\.value) == Array(expected.prefix(5)))
        #expect(try query.findIds(offset: 0, limit: 20).map(\.value) == expected)
    }

    /// Every object passing `filter`, scored by `words` and `prefixes` (0 without them), best
    /// first, ties by id.
    static func rankAll(_ texts: [Id: String], words: [String], prefixes: [String], filter: (Id) -> Bool) -> [Id] {
        let matching = reference(texts, required: [], prefixes: [], excluded: [], filter: filter)
        // Score each alone: a text missing a word still scores by the others.
        let tokens = texts.mapValues { $0.split(separator: " ").map(String.init) }
        let documents = tokens.values.filter { !$0.isEmpty }.count
        let average = documents == 0 ? 0 : Double(tokens.values.reduce(0) { $0 + $1.count }) / Double(documents)
        let terms = Array(Set(words)).sorted().map { ($0, false) } + Array(Set(prefixes)).sorted().map { ($0, true) }
        func frequency(_ words: [String], _ term: (String, Bool)) -> Int { words.filter { term.1 ? $0.hasPrefix(term.0) : $0 == term.0 }.count }
        let documentFrequencies = terms.map { term in tokens.values.filter { frequency($0, term) > 0 }.count }
        let scored = matching.map { id in
            (id: id, score: BM25.score(terms.indices.map { BM25.Term(frequency: frequency(tokens[id]!, terms[$0]), documentFrequency: documentFrequencies[$0]) },
                                       documentLength: tokens[id]!.count, averageLength: average, documentCount: documents))
        }
        return scored.sorted { $0.score > $1.score || ($0.score == $1.score && $0.id < $1.id) }.map(\.id)
    }
}
