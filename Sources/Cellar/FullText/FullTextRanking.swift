import CellarStorage

/// An order by relevance (`QueryBuilder.ordered(byRelevanceTo:)`): the words to score, and the
/// full-text index whose statistics the score needs (how many objects have text, their average
/// length, how many have each word).
struct FullTextRanking {
    let index: IndexSchema
    /// Words scored where they occur.
    let words: [[UInt8]]
    /// Prefixes: every word of the text starting with one is scored as an occurrence of it.
    let prefixes: [[UInt8]]

    /// The scores of one transaction's objects: every object with one of the words has one.
    struct Scorer {
        let scores: [Id: Double]

        /// The BM25 score of object `id`: 0 when its text has none of the words.
        func score(_ id: Id) -> Double { scores[id] ?? 0 }
    }

    /// The BM25 score of every object whose text has one of the words, from the index alone:
    /// the postings give each word's objects and counts, the lengths and statistics the rest.
    func scorer(_ context: TransactionContext) throws -> Scorer {
        guard let cursor = try context.cursor(indexTree: index) else { return Scorer(scores: [:]) }
        let stats = try context.fullTextStats(index)
        let documents = Int(stats.documents)
        let averageLength = documents == 0 ? 0 : Double(stats.words) / Double(documents)
        // Per term (word or prefix): each object's count of it.
        var counts: [[Id: Int]] = []
        for word in words {
            var perObject: [Id: Int] = [:]
            try FullTextIndex.forEachPosting(of: word, cursor: cursor, index: index) { perObject[$0.id] = Int($0.count) }
            counts.append(perObject)
        }
        for prefix in prefixes {
            var perObject: [Id: Int] = [:]
            try FullTextIndex.forEachPosting(withPrefix: prefix, cursor: cursor, index: index) { perObject[$0.id, default: 0] += Int($0.count) }
            counts.append(perObject)
        }
        var ids = Set<Id>()
        for perObject in counts { ids.formUnion(perObject.keys) }
        var scores: [Id: Double] = [:]
        scores.reserveCapacity(ids.count)
        for id in ids {
            var length = 0
            try cursor.scan(KeyRange(lower: FullTextIndex.lengthKey(id), upper: FullTextIndex.lengthKey(id), upperInclusive: true)) { _, value in
                length = try FullTextIndex.length(decoding: value, index: index)
                return false
            }
            let terms = counts.map { BM25.Term(frequency: $0[id] ?? 0, documentFrequency: $0.count) }
            scores[id] = BM25.score(terms, documentLength: length, averageLength: averageLength, documentCount: documents)
        }
        return Scorer(scores: scores)
    }
}

extension CompiledOrder {
    /// An order by relevance of `property` to `terms` (the query's `matches` conditions on it, or
    /// a query string of its own), most relevant first.
    init<E>(relevanceOf property: Property<E>, terms: QueryBuilder<E>.RelevanceTerms, condition: CompiledCondition?,
            schema: EntitySchema) throws {
        let what = "ordered(byRelevanceTo: \(property))"
        guard property.pathNumber == 0 else {
            throw CellarError.illegalArgument("\(what): the property is in an embedded object; relevance is ranked with a full-text index, which is on an entity's own String property")
        }
        let schemaProperty = try schema.property(property.id, named: property.name)
        guard let index = schemaProperty.index, index.kind == .fullText else {
            throw CellarError.illegalArgument("\(what): the property has no full-text index, whose statistics ranking needs; add `// cellar: index = \"fulltext\"` to it")
        }
        var words: Set<[UInt8]> = []
        var prefixes: Set<[UInt8]> = []
        switch terms {
        case .text(let text):
            let query = try FullTextQuery.parse(text)
            words.formUnion(query.required)
            prefixes.formUnion(query.prefixes)
        case .conditions:
            func collect(_ condition: CompiledCondition) {
                switch condition {
                case .fullText(let leaf) where leaf.property.id == schemaProperty.id:
                    words.formUnion(leaf.query.required)
                    prefixes.formUnion(leaf.query.prefixes)
                case .all(let conditions), .any(let conditions):
                    conditions.forEach(collect)
                default:
                    break
                }
            }
            condition.map(collect)
            guard !words.isEmpty || !prefixes.isEmpty else {
                throw CellarError.illegalArgument("\(what): the query has no `matches` condition on \(property) to rank by; add one, or give the words: ordered(byRelevanceTo: \"…\", in: \(property))")
            }
        }
        self.init(property: schemaProperty, flags: .descending)
        relevance = FullTextRanking(index: index, words: words.sorted { CompiledLeaf.lexicographic($0, $1) < 0 },
                                    prefixes: prefixes.sorted { CompiledLeaf.lexicographic($0, $1) < 0 })
    }
}
