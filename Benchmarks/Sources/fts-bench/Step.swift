/// The timed steps, in the order they run on each engine.
enum Step: String, CaseIterable {
    case index
    case term
    case and
    case prefix
    case not
    case ranked = "top10"

    /// The query steps whose answers are compared, id list for id list.
    static let queries: [Step] = [.term, .and, .prefix, .not]

    var title: String {
        switch self {
        case .index: "insert N documents, one txn (docs/s)"
        case .term: "one word: ids of the documents having it (q/s)"
        case .and: "two words, both required (q/s)"
        case .prefix: "a 2-4 letter prefix (q/s)"
        case .not: "a word and not another (q/s)"
        case .ranked: "ranked by BM25, top 10 ids (q/s)"
        }
    }

    /// What the ratio cellar/sqlite should reach: indexing as fast as FTS5, each query kind twice as fast.
    var target: Double? {
        switch self {
        case .index: 1
        case .term, .and, .prefix, .not: 2
        case .ranked: nil
        }
    }

    /// Operations the step's rate counts: documents, or queries.
    func ops(_ w: Workload) -> Int {
        self == .index ? w.n : w.queries(self).count
    }
}

/// What one run of one engine measured, and what it answered (compared between the engines).
struct RunResult {
    var seconds: [Step: Double] = [:]
    /// Each query step's time per query (within the step's timer), for the breakdown by band.
    var perQuery: [Step: [Double]] = [:]
    /// Each query step's answers: each query's ids in id order.
    var answers: [Step: [[Int64]]] = [:]
    /// The ranked step's answers: each query's ten (or fewer) ids, best first.
    var top10: [[Int64]] = []
    /// FTS5 only: each ranked query's first `GRDBEngine.scoredLimit` rowids with their bm25 scores
    /// (lower is better), ties in rowid order.
    var scored: [[(id: Int64, score: Double)]] = []
    /// Bytes after compaction (Cellar) or VACUUM (SQLite): the store with the index, and the same
    /// texts stored without it.
    var indexedBytes = 0
    var plainBytes = 0
    var indexBytes: Int { indexedBytes - plainBytes }
    /// A breakdown of the indexed store's bytes, for the log.
    var sizeNote = ""
}
