@_spi(Testing) import Cellar
import Foundation
import Testing

/// `BM25`: values computed by hand, and the orderings the score is for.
@Suite struct BM25Tests {
    private func close(_ a: Double, _ b: Double) -> Bool { abs(a - b) <= 1e-9 * max(1, abs(b)) }

    @Test func theParametersAreFTS5s() {
        #expect(BM25.k1 == 1.2)
        #expect(BM25.b == 0.75)
        #expect(BM25.minimumIDF == 1e-6)
    }

    @Test func idfByHand() {
        // log((10 - 1 + 0.5) / (1 + 0.5)) = log(9.5 / 1.5) = log(6.333…)
        #expect(close(BM25.idf(documentFrequency: 1, documentCount: 10), 1.8458266904983307))
        // log((100 - 10 + 0.5) / 10.5) = log(8.619047…)
        #expect(close(BM25.idf(documentFrequency: 10, documentCount: 100), 2.1539745935424026))
        // Half the documents or more: log ≤ 0, clamped.
        #expect(BM25.idf(documentFrequency: 5, documentCount: 10) == BM25.minimumIDF)
        #expect(BM25.idf(documentFrequency: 10, documentCount: 10) == BM25.minimumIDF)
        // Out-of-range frequencies are clamped to 0...N.
        #expect(BM25.idf(documentFrequency: 20, documentCount: 10) == BM25.minimumIDF)
        #expect(close(BM25.idf(documentFrequency: -3, documentCount: 10), log(10.5 / 0.5)))
    }

    @Test func oneTermByHand() {
        // N = 10, n = 1, f = 2, |D| = 8, avgdl = 10:
        // norm = 1.2 · (0.25 + 0.75 · 0.8) = 1.02; tf part = 2 · 2.2 / (2 + 1.02) = 4.4 / 3.02
        let score = BM25.score([BM25.Term(frequency: 2, documentFrequency: 1)],
                               documentLength: 8, averageLength: 10, documentCount: 10)
        #expect(close(score, 1.8458266904983307 * 4.4 / 3.02))
        #expect(close(score, 2.6892839199313427))
    }

    @Test func termsAdd() {
        let a = BM25.Term(frequency: 1, documentFrequency: 2)
        let b = BM25.Term(frequency: 3, documentFrequency: 40)
        let both = BM25.score([a, b], documentLength: 20, averageLength: 15, documentCount: 100)
        let sum = BM25.score([a], documentLength: 20, averageLength: 15, documentCount: 100)
            + BM25.score([b], documentLength: 20, averageLength: 15, documentCount: 100)
        #expect(close(both, sum))
        // By hand: norm = 1.2 · (0.25 + 0.75 · 20/15) = 1.5
        let expected = log(98.5 / 2.5) * 2.2 / 2.5 + log(60.5 / 40.5) * 6.6 / 4.5
        #expect(close(both, expected))
    }

    @Test func absentTermsAndAnEmptyCollectionAddNothingOdd() {
        #expect(BM25.score([], documentLength: 5, averageLength: 5, documentCount: 5) == 0)
        #expect(BM25.score([BM25.Term(frequency: 0, documentFrequency: 1)], documentLength: 5, averageLength: 5, documentCount: 5) == 0)
        // No average: length normalization is left out (norm = k1).
        let score = BM25.score([BM25.Term(frequency: 1, documentFrequency: 0)], documentLength: 5, averageLength: 0, documentCount: 0)
        #expect(close(score, BM25.minimumIDF * 2.2 / 2.2))
    }

    @Test func rarerTermsRankHigher() {
        let rare = BM25.score([BM25.Term(frequency: 1, documentFrequency: 2)], documentLength: 10, averageLength: 10, documentCount: 1000)
        let common = BM25.score([BM25.Term(frequency: 1, documentFrequency: 200)], documentLength: 10, averageLength: 10, documentCount: 1000)
        #expect(rare > common)
        #expect(common > 0)
    }

    @Test func shorterDocumentsRankHigher() {
        let term = [BM25.Term(frequency: 2, documentFrequency: 5)]
        let short = BM25.score(term, documentLength: 5, averageLength: 20, documentCount: 100)
        let average = BM25.score(term, documentLength: 20, averageLength: 20, documentCount: 100)
        let long = BM25.score(term, documentLength: 200, averageLength: 20, documentCount: 100)
        #expect(short > average && average > long)
    }

    @Test func moreOccurrencesRankHigherButSaturate() {
        func score(_ frequency: Int) -> Double {
            BM25.score([BM25.Term(frequency: frequency, documentFrequency: 5)], documentLength: 20, averageLength: 20, documentCount: 100)
        }
        #expect(score(1) < score(2) && score(2) < score(10))
        #expect(score(2) - score(1) > score(10) - score(9))
        #expect(score(1_000_000) < BM25.idf(documentFrequency: 5, documentCount: 100) * (BM25.k1 + 1))
    }

    @Test func scoresFromDocuments() throws {
        // A small collection scored through FullTextDocument: the document where the rare term
        // is denser ranks first.
        let texts = ["swift database engine", "a database", "swift swift", "the database of databases for swift apps"]
        let documents = texts.map { FullTextDocument(text: $0) }
        let average = Double(documents.map(\.length).reduce(0, +)) / Double(documents.count)
        let query = try FullTextQuery.parse("swift")
        let swift = query.required[0]
        let frequency = documents.filter { $0.count(of: swift) > 0 }.count
        let scores = documents.map {
            BM25.score([BM25.Term(frequency: $0.count(of: swift), documentFrequency: frequency)],
                       documentLength: $0.length, averageLength: average, documentCount: documents.count)
        }
        #expect(scores[2] > scores[0] && scores[0] > scores[3] && scores[1] == 0)
    }
}
