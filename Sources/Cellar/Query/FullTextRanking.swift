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

    /// Scores texts with the statistics of one transaction.
    struct Scorer {
        let ranking: FullTextRanking
        let documents: Int
        let averageLength: Double
        /// Per word, then per prefix: how many objects have it.
        let frequencies: [Int]

        /// The BM25 score of `text` (UTF-8): 0 when it has none of the words.
        func score(_ text: UnsafeRawBufferPointer) -> Double {
            let document = FullTextDocument(utf8: text)
            var terms: [BM25.Term] = []
            for (position, word) in ranking.words.enumerated() {
                terms.append(BM25.Term(frequency: document.count(of: word), documentFrequency: frequencies[position]))
            }
            for (position, prefix) in ranking.prefixes.enumerated() {
                terms.append(BM25.Term(frequency: document.count(withPrefix: prefix),
                                       documentFrequency: frequencies[ranking.words.count + position]))
            }
            return BM25.score(terms, documentLength: document.length, averageLength: averageLength, documentCount: documents)
        }
    }

    /// A scorer reading the statistics `context` sees.
    func scorer(_ context: TransactionContext) throws -> Scorer {
        let stats = try context.fullTextStats(index)
        var frequencies: [Int] = []
        if let cursor = try context.cursor(indexTree: index) {
            for word in words { frequencies.append(try FullTextIndex.documentFrequency(word, cursor: cursor)) }
            for prefix in prefixes { frequencies.append(try FullTextIndex.prefixIds(prefix, cursor: cursor).count) }
        } else {
            frequencies = Array(repeating: 0, count: words.count + prefixes.count)
        }
        let documents = Int(stats.documents)
        return Scorer(ranking: self, documents: documents,
                      averageLength: documents == 0 ? 0 : Double(stats.words) / Double(documents), frequencies: frequencies)
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
