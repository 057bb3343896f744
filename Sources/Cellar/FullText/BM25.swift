import Foundation

/// Okapi BM25, the relevance score of a document for a full-text query, computed as SQLite's
/// FTS5 computes it (with the sign turned: a higher score is a better match).
///
/// For a query of terms `q₁ … qₘ` and a document `D` of `|D|` tokens:
///
/// ```
/// score(D) = Σᵢ idf(qᵢ) · f(qᵢ, D) · (k1 + 1) / (f(qᵢ, D) + k1 · (1 − b + b · |D| / avgdl))
/// idf(q)   = max(log((N − n(q) + 0.5) / (n(q) + 0.5)), 1e-6)
/// ```
///
/// where `f(q, D)` is how often `q` occurs in `D`, `n(q)` is the number of documents containing
/// `q`, `N` the number of documents, `avgdl` the average document length in tokens, `log` the
/// natural logarithm, `k1` = 1.2 and `b` = 0.75. The idf of a term in more than half of the
/// documents would be zero or negative; like FTS5, it is clamped to a small positive
/// `minimumIDF`, so that such a term still adds a little and a match never scores below zero.
///
/// A prefix term (`data*`) is scored as one term: `f` is the number of tokens of the document that
/// start with the prefix (each matching token counts, `FullTextDocument.count(withPrefix:)`), and
/// `n` the number of documents with at least one such token. Excluded terms are not scored.
@_spi(Testing) public enum BM25 {
    /// Term-frequency saturation: how quickly more occurrences stop adding to the score.
    public static let k1 = 1.2
    /// Length normalization: 0 ignores the document's length, 1 divides fully by it.
    public static let b = 0.75
    /// The smallest idf: the idf of a term in half of the documents or more.
    public static let minimumIDF = 1e-6

    /// One query term's statistics for one document.
    public struct Term: Sendable, Equatable {
        /// How often the term occurs in the document (for a prefix: tokens starting with it).
        public var frequency: Int
        /// The number of documents containing the term.
        public var documentFrequency: Int

        /// A term occurring `frequency` times in the document and in `documentFrequency` documents.
        public init(frequency: Int, documentFrequency: Int) {
            self.frequency = frequency
            self.documentFrequency = documentFrequency
        }
    }

    /// The inverse document frequency of a term in `documentFrequency` of `documentCount`
    /// documents: `log((N − n + 0.5) / (n + 0.5))`, at least `minimumIDF`. `n` is clamped to
    /// `0...N`.
    public static func idf(documentFrequency: Int, documentCount: Int) -> Double {
        let total = Double(max(documentCount, 0))
        let containing = Double(min(max(documentFrequency, 0), max(documentCount, 0)))
        let value = log((total - containing + 0.5) / (containing + 0.5))
        return value > minimumIDF ? value : minimumIDF
    }

    /// The BM25 score of a document of `documentLength` tokens for the query terms `terms`, in a
    /// collection of `documentCount` documents averaging `averageLength` tokens. Terms with a
    /// frequency of 0 add nothing. When `averageLength` is not positive (an empty collection),
    /// length normalization is left out (as if the document had the average length).
    public static func score(_ terms: [Term], documentLength: Int, averageLength: Double, documentCount: Int) -> Double {
        let norm = norm(documentLength: documentLength, averageLength: averageLength)
        var sum = 0.0
        for term in terms where term.frequency > 0 {
            sum += termScore(idf: idf(documentFrequency: term.documentFrequency, documentCount: documentCount),
                             frequency: term.frequency, norm: norm)
        }
        return sum
    }

    /// `k1 · (1 − b + b · |D| / avgdl)` for a document of `documentLength` tokens (the average
    /// length itself when `averageLength` is not positive).
    @inline(__always)
    static func norm(documentLength: Int, averageLength: Double) -> Double {
        let relativeLength = averageLength > 0 ? Double(documentLength) / averageLength : 1
        return k1 * (1 - b + b * relativeLength)
    }

    /// One term's part of a score: `idf · f · (k1 + 1) / (f + norm)`. Every score is added up
    /// from these, so that the same inputs give the same bits wherever a score is computed.
    @inline(__always)
    static func termScore(idf: Double, frequency: Int, norm: Double) -> Double {
        let frequency = Double(frequency)
        return idf * frequency * (k1 + 1) / (frequency + norm)
    }
}
