@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

/// Full-text search through the generated `Article` binding: `matches` with and without an index
/// (the same results), combined with other conditions, index upkeep through updates and
/// removals (checked by `RecordCheck`), the index built at open and dropped, ranking by
/// relevance, and malformed queries. A randomized comparison with a plain in-memory search over
/// documents made of real words runs last.
@Suite struct FullTextTests {
    /// `cellarModel()` without Article's full-text indexes.
    static func unindexedModel() -> Cellar.Model {
        var model = cellarModel()
        let at = model.entities.firstIndex { $0.name == "Article" }!
        for i in model.entities[at].properties.indices {
            model.entities[at].properties[i].flags.subtract([.indexed, .fullTextIndex])
            model.entities[at].properties[i].indexId = nil
        }
        return model
    }

    static func ids(_ query: Query<Article>) throws -> [Id] { try query.findIds().map(\.value) }

    @Test func matchesFindsEveryWordIgnoringCaseAndDiacritics() throws {
        let store = try Store(directoryPath: "memory:fts-basics", model: cellarModel())
        let box = store.box(for: Article.self)
        let a = try box.put(Article("Swift is a fast database language", year: 2020)).value
        let b = try box.put(Article("The Café serves SWIFT coffee", year: 2021)).value
        let c = try box.put(Article("SQLite is a database; so is Cellar", year: 2022)).value
        let d = try box.put(Article("datastore, dataset and data", year: 2023)).value
        func find(_ text: String) throws -> [Id] { try Self.ids(box.query { Article.body.matches(text) }.build()) }
        if case .fullText = try box.query({ Article.body.matches("x") }).build().compiled.plan.source {} else {
            Issue.record("the full-text index is not used")
        }
        #expect(try find("swift") == [a, b])
        #expect(try find("swift database") == [a])
        #expect(try find("database -sqlite") == [a])
        #expect(try find("cafe") == [b])
        #expect(try find("CAFÉ coffee") == [b])
        #expect(try find("data*") == [a, c, d])
        #expect(try find("data* -database") == [d])
        #expect(try find("dataset") == [d])
        #expect(try find("nothing") == [])
        // Combined with other conditions, and counted.
        #expect(try Self.ids(box.query { Article.body.matches("database") && Article.year > 2020 }.build()) == [c])
        #expect(try Self.ids(box.query { Article.body.matches("coffee") || Article.year == 2023 }.build()) == [b, d])
        #expect(try box.query { Article.body.matches("database") }.build().count() == 2)
        // A new query string for a built query.
        let query = try box.query { Article.body.matches("swift") }.build()
        query.setParameter(Article.body, to: "database")
        #expect(try Self.ids(query) == [a, c])
        // An optional indexed text: nil matches nothing.
        #expect(try box.query { Article.title.matches("x") }.build().count() == 0)
    }

    /// The index holds words, not whole values: a condition on the value (`==`, `startsWith`,
    /// `isIn`) is answered by reading the records, never by the words' keys.
    @Test func aConditionOnTheWholeTextReadsTheRecords() throws {
        let store = try Store(directoryPath: "memory:fts-whole-value", model: cellarModel())
        let box = store.box(for: Article.self)
        let bodies = ["red wine", "white wine", "red wine", "oak barrel", "red"]
        try box.put(bodies.map { Article($0) })
        let conditions: [(QueryCondition<Article>, (String) -> Bool)] = [
            (Article.body == "red wine", { $0 == "red wine" }),
            (Article.body.startsWith("red"), { $0.hasPrefix("red") }),
            (Article.body.isIn(["oak barrel", "red", "rosé"]), { ["oak barrel", "red"].contains($0) }),
            (Article.body == "red wine" && Article.body.matches("wine"), { $0 == "red wine" }),
        ]
        for (condition, test) in conditions {
            let query = try box.query { condition }.build()
            if case .index = try query.compiled.plan.source { Issue.record("\(condition) reads the full-text index's keys as values") }
            #expect(try Self.ids(query) == bodies.indices.filter { test(bodies[$0]) }.map { Id($0 + 1) }, "\(condition)")
            #expect(try query.count() == bodies.filter(test).count, "\(condition)")
        }
    }

    @Test func malformedQueriesAndWrongPropertiesAreRefused() throws {
        let store = try Store(directoryPath: "memory:fts-errors", model: cellarModel())
        let box = store.box(for: Article.self)
        try box.put(Article("text"))
        for bad in ["", "   ", "-", "*", "-*", "-text"] {
            #expect(throws: CellarError.self, "\"\(bad)\"") { try box.query { Article.body.matches(bad) }.build().find() }
            do {
                _ = try box.query { Article.body.matches(bad) }.build().count()
            } catch let error as CellarError {
                #expect(error.code == .illegalArgument)
            }
        }
        do {
            _ = try box.query { Article.year.matches("2020") }.build()
            Issue.record("matches on an Int was built")
        } catch let error as CellarError {
            #expect(error.code == .illegalArgument)
            #expect(error.message.contains("String"))
        }
        do {
            _ = try box.query { Article.summary.matches("x") }.ordered(byRelevanceTo: Article.summary).build()
            Issue.record("a relevance order without a full-text index was built")
        } catch let error as CellarError {
            #expect(error.message.contains("fulltext"))
        }
        do {
            _ = try box.query { Article.year > 1 }.ordered(byRelevanceTo: Article.body).build()
            Issue.record("a relevance order without words was built")
        } catch let error as CellarError {
            #expect(error.code == .illegalArgument)
        }
    }

    @Test func theModelRefusesAFullTextIndexOnAnythingButAString() throws {
        func refuses(_ change: (inout ModelProperty) -> Void, _ fragment: String) {
            var model = cellarModel()
            let at = model.entities.firstIndex { $0.name == "Article" }!
            let year = model.entities[at].properties.firstIndex { $0.name == "year" }!
            let body = model.entities[at].properties.firstIndex { $0.name == "body" }!
            model.entities[at].properties[year].indexId = model.entities[at].properties[body].indexId
            model.entities[at].properties[body].indexId = nil
            model.entities[at].properties[body].flags.subtract([.indexed, .fullTextIndex])
            change(&model.entities[at].properties[year])
            do {
                _ = try Store(directoryPath: "memory:fts-model", model: model)
                Issue.record("a store opened with \(fragment)")
            } catch let error as CellarError {
                #expect(error.code == .schema && error.message.contains(fragment), "\(error)")
            } catch {
                Issue.record("\(error)")
            }
        }
        refuses({ $0.flags.formUnion([.indexed, .fullTextIndex]) }, "has a full-text index but is a Long")
        refuses({ $0.type = .string; $0.flags.formUnion([.indexed, .fullTextIndex, .indexHash]) }, "has a full-text index and is also unique or hash-indexed")
    }

    @Test func theIndexFollowsUpdatesAndRemovals() throws {
        let store = try Store(directoryPath: "memory:fts-upkeep", model: cellarModel())
        let box = store.box(for: Article.self)
        let article = Article("alpha beta gamma", title: "First")
        let id = try box.put(article).value
        #expect(try box.query { Article.body.matches("beta") }.build().count() == 1)
        article.body = "alpha delta"
        try box.put(article)
        #expect(try box.query { Article.body.matches("beta") }.build().count() == 0)
        #expect(try Self.ids(box.query { Article.body.matches("delta") }.build()) == [id])
        #expect(try Self.ids(box.query { Article.title.matches("first") }.build()) == [id])
        #expect(try RecordCheck.verify(store.engine).indexEntries == 3)
        try store.runInTransaction {
            article.title = nil
            try box.put(article)
            try box.put(Article("alpha omega"))
            #expect(try box.query { Article.body.matches("alpha") }.build().count() == 2)
        }
        #expect(try box.remove(id))
        #expect(try box.query { Article.body.matches("alpha") }.build().count() == 1)
        #expect(try box.query { Article.title.matches("first") }.build().count() == 0)
        #expect(try RecordCheck.verify(store.engine).indexEntries == 2)
        try box.removeAll()
        #expect(try box.query { Article.body.matches("alpha") }.build().count() == 0)
        try box.put(Article("again"))
        #expect(try RecordCheck.verify(store.engine).indexEntries == 1)
    }

    @Test func postingBlocksSplitAndShrinkThroughBulkPutsUpdatesAndRemovals() throws {
        let store = try Store(directoryPath: "memory:fts-blocks", model: cellarModel())
        let box = store.box(for: Article.self)
        var random = SplitMix64(seed: 3)
        // One word in every text (many blocks), others in some, counts above one in a few.
        var texts: [Id: String] = [:]
        func text(_ k: Int) -> String { "common " + (k % 3 == 0 ? "third third " : "") + "w\(k % 17)" }
        let articles = (0..<1_000).map { Article(text($0)) }
        let ids = try box.put(articles).map(\.value)
        for (k, id) in ids.enumerated() { texts[id] = text(k) }
        func check(_ step: String) throws {
            #expect(try Self.ids(box.query { Article.body.matches("common") }.build()) == texts.keys.sorted(), "\(step)")
            let thirds = texts.filter { $0.value.contains("third") }.keys.sorted()
            #expect(try Self.ids(box.query { Article.body.matches("third") }.build()) == thirds, "\(step)")
            // A rare word beside one in every text: the few candidates are looked up in its blocks.
            let w3 = texts.filter { $0.value.split(separator: " ").contains("w3") }.keys.sorted()
            #expect(try Self.ids(box.query { Article.body.matches("common w3") }.build()) == w3, "\(step)")
            #expect(try Self.ids(box.query { Article.body.matches("w3 common -third") }.build())
                    == w3.filter { !texts[$0]!.contains("third") }, "\(step)")
            #expect(try RecordCheck.verify(store.engine).objects == texts.count, "\(step)")
        }
        try check("bulk put")
        for round in 0..<5 {
            try store.runInTransaction {
                for _ in 0..<120 {
                    let id = ids[Int(random.next() % UInt64(ids.count))]
                    guard let article = try box.get(id) else { continue }
                    if random.next() % 3 == 0 {
                        #expect(try box.remove(id))
                        texts[id] = nil
                    } else {
                        article.body = random.next() % 2 == 0 ? "common third" : "common w\(random.next() % 40) third third third"
                        try box.put(article)
                        texts[id] = article.body
                    }
                }
            }
            try check("round \(round)")
        }
        // Ranking reads the counts kept in the blocks: three "third"s first.
        let ranked = try box.query { Article.body.matches("third") }.ordered(byRelevanceTo: Article.body).build()
        let first = try #require(try ranked.find(offset: 0, limit: 1).first)
        #expect(first.body.components(separatedBy: "third").count - 1 == 3)
    }

    @Test func anIndexAddedLaterIsBuiltAtOpenAndDroppedWhenRemoved() throws {
        let directory = TestDirectory("fts-index-build")
        defer { directory.remove() }
        do {
            let store = try Store(directoryPath: directory.path, model: Self.unindexedModel())
            try store.box(for: Article.self).put([Article("one two"), Article("two three"), Article("three four")])
            store.close()
        }
        let index = try #require(cellarModel().entities.first { $0.name == "Article" }?.properties.first { $0.name == "body" }?.indexId)
        for (model, indexed) in [(cellarModel(), true), (Self.unindexedModel(), false)] {
            let store = try Store(directoryPath: directory.path, model: model)
            let box = store.box(for: Article.self)
            let hasTree = try store.engine.read { try $0.tree(StorageLayout.indexTree(index.id)) != nil }
            #expect(hasTree == indexed)
            #expect(try Self.ids(box.query { Article.body.matches("two") }.build()) == [1, 2])
            #expect(try Self.ids(box.query { Article.body.matches("t*") }.build()) == [1, 2, 3])
            #expect(try RecordCheck.verify(store.engine).objects == 3)
            store.close()
        }
    }

    @Test func compactionKeepsTheIndexAndObserversSeeNewMatches() async throws {
        let directory = TestDirectory("fts-compact-observe")
        defer { directory.remove() }
        let store = try Store(directoryPath: directory.path, model: cellarModel())
        let box = store.box(for: Article.self)
        try box.put((0..<200).map { Article("word\($0 % 7) filler text number \($0)") })
        try box.query { Article.body.matches("word3") }.build().remove()
        try await store.compact()
        #expect(try box.query { Article.body.matches("word3") }.build().count() == 0)
        #expect(try box.query { Article.body.matches("word4") }.build().count() == 28)
        #expect(try RecordCheck.verify(store.engine).objects == 171)
        let query = try box.query { Article.body.matches("fresh -stale") }.build()
        var iterator = try query.changes().makeAsyncIterator()
        #expect(try await iterator.next()?.count == 0)
        try box.put(Article("fresh news"))
        #expect(try await iterator.next()?.map(\.body) == ["fresh news"])
    }

    /// A frequent excluded word is looked up block by block for the few results, not read whole:
    /// the same answer either way.
    @Test func aFrequentExcludedWordRemovesItsObjects() throws {
        let store = try Store(directoryPath: "memory:fts-exclude-frequent", model: cellarModel())
        let box = store.box(for: Article.self)
        try box.put((0..<600).map { Article("common filler \($0 % 7)") })
        let both = try box.put([Article("rare common"), Article("common rare again"), Article("rare common x")]).map(\.value)
        let alone = try box.put([Article("rare only"), Article("only rare")]).map(\.value)
        #expect(try Self.ids(box.query { Article.body.matches("rare -common") }.build()) == alone)
        #expect(try Self.ids(box.query { Article.body.matches("rare -only") }.build()) == both)
        #expect(try Self.ids(box.query { Article.body.matches("rare -filler") }.build()) == both + alone)
        #expect(try box.query { Article.body.matches("rare -common") }.build().count() == 2)
    }

    @Test func rankingByRelevanceFollowsBM25() throws {
        let store = try Store(directoryPath: "memory:fts-rank", model: cellarModel())
        let box = store.box(for: Article.self)
        // "rare" is in two documents, "common" in all; the short text with "rare" twice first.
        let filler = (0..<20).map { "common word\($0)" }.joined(separator: " ")
        let long = try box.put(Article("rare " + filler)).value
        let short = try box.put(Article("rare rare common")).value
        let none = try box.put(Article("common only")).value
        let ranked = try box.query { Article.body.matches("common") }.ordered(byRelevanceTo: "rare", in: Article.body).build()
        #expect(try Self.ids(ranked) == [short, long, none])
        let byCondition = try box.query { Article.body.matches("rare") }.ordered(byRelevanceTo: Article.body).build()
        #expect(try Self.ids(byCondition) == [short, long])
        // Paging keeps the order.
        #expect(try byCondition.findIds(offset: 1, limit: 1).map(\.value) == [long])
    }

    @Test("a transaction indexing thousands of texts within a small budget writes its index changes as it goes; queries and verify agree")
    func aHugeTransactionWritesItsIndexChangesAsItGoes() throws {
        var random = SplitMix64(seed: 11)
        let vocabulary = Array(WordList.words.prefix(500))
        func document() -> String { (0..<Int(2 + random.next() % 10)).map { _ in vocabulary[Int(random.next() % 500)] }.joined(separator: " ") }
        let budget = 64 << 10
        let store = try Store(directoryPath: "memory:fts-budget", model: cellarModel(), options: StoreOptions(transactionMemoryBudget: budget))
        let box = store.box(for: Article.self)
        var model: [Id: String] = [:]
        var ids: [Id] = []  // in the order made: a dictionary's keys come in another order in each process
        var largestPending = 0
        try store.runInTransaction {
            for k in 0..<4_000 {
                if k % 5 == 4, let id = ids.randomElement(using: &random), let article = try box.get(id) {
                    article.body = document()
                    try box.put(article)
                    model[id] = article.body
                } else {
                    let article = Article(document())
                    let id = try box.put(article).value
                    model[id] = article.body
                    ids.append(id)
                }
                largestPending = max(largestPending, try store.inWriteContext { $0.fullTextPending.values.map(\.estimatedBytes).max() ?? 0 })
            }
        }
        // The budget, plus one put's words.
        #expect(largestPending <= budget + 2_048, "the pending changes grew to \(largestPending) bytes")
        #expect(try RecordCheck.verify(store.engine).objects == model.count)
        for _ in 0..<30 {
            let text = vocabulary[Int(random.next() % 500)] + (random.next() % 2 == 0 ? " " + vocabulary[Int(random.next() % 500)] : "")
            let reference = ReferenceSearch(text)
            #expect(try Self.ids(box.query { Article.body.matches(text) }.build()) == model.filter { reference.matches($0.value) }.keys.sorted(), "\(text)")
        }
    }

    @Test func aScanAndTheIndexAgreeOnRandomDocuments() throws {
        try differential(seed: 1, objects: 400, steps: 150)
    }

    /// Random documents of real words (some capitalized or accented, some words repeated),
    /// written, rewritten and removed at random; after each batch, random queries (words,
    /// exclusions, prefixes, with another condition) through the index, through a scan of the
    /// unindexed copy of the text, and through a plain in-memory search must agree.
    func differential(seed: UInt64, objects: Int, steps: Int) throws {
        var random = SplitMix64(seed: seed)
        let vocabulary = Array(WordList.words.prefix(300)) + ["Café", "cafe", "naïve", "NAIVE", "über"]
        func pick() -> String { vocabulary[Int(random.next() % UInt64(vocabulary.count))] }
        func document() -> String {
            (0..<Int(1 + random.next() % 12)).map { _ in pick() }.joined(separator: random.next() % 3 == 0 ? ", " : " ")
        }
        let store = try Store(directoryPath: "memory:fts-differential-\(seed)", model: cellarModel())
        let box = store.box(for: Article.self)
        var model: [Id: Article] = [:]
        for _ in 0..<objects {
            let text = document()
            let article = Article(text, summary: text, year: Int(random.next() % 4))
            model[try box.put(article).value] = article
        }
        func anyId() -> Id? {
            let ids = model.keys.sorted()
            return ids.isEmpty ? nil : ids[Int(random.next() % UInt64(ids.count))]
        }
        for step in 0..<steps {
            try store.runInTransaction {
                for _ in 0..<5 {
                    switch random.next() % 3 {
                    case 0:
                        let text = document()
                        let article = Article(text, summary: text, year: Int(random.next() % 4))
                        model[try box.put(article).value] = article
                    case 1:
                        guard let id = anyId() else { continue }
                        let article = model[id]!
                        article.body = document()
                        article.summary = article.body
                        try box.put(article)
                    default:
                        guard let id = anyId() else { continue }
                        #expect(try box.remove(id))
                        model[id] = nil
                    }
                }
            }
            var terms: [String] = [pick()]
            if random.next() % 2 == 0 { terms.append(pick()) }
            if random.next() % 3 == 0 { terms.append("-" + pick()) }
            if random.next() % 3 == 0 { terms.append(String(pick().prefix(2)) + "*") }
            let text = terms.joined(separator: " ")
            let reference = ReferenceSearch(text)
            let expected = model.filter { reference.matches($0.value.body) }.keys.sorted()
            #expect(try Self.ids(box.query { Article.body.matches(text) }.build()) == expected, "step \(step): \(text)")
            #expect(try Self.ids(box.query { Article.summary.matches(text) }.build()) == expected, "step \(step), scan: \(text)")
            #expect(try box.query { Article.body.matches(text) }.build().count() == expected.count)
            let recent = model.filter { reference.matches($0.value.body) && $0.value.year >= 2 }.keys.sorted()
            #expect(try Self.ids(box.query { Article.body.matches(text) && Article.year >= 2 }.build()) == recent, "\(text) && year")
        }
        #expect(try RecordCheck.verify(store.engine).objects == model.count)
    }
}

/// The search rules written plainly over Foundation strings, to compare with: words are runs of
/// letters and digits, lowercased, without diacritics; every plain term's words must be there,
/// an excluded term's words must not all be there, a `term*` needs a word starting with it.
struct ReferenceSearch {
    var required: [String] = []
    var prefixes: [String] = []
    var excluded: [[String]] = []

    static func words(_ text: String) -> [String] {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            .components(separatedBy: CharacterSet.alphanumerics.inverted).filter { !$0.isEmpty }
    }

    init(_ query: String) {
        for term in query.split(separator: " ") {
            if term.hasPrefix("-") {
                excluded.append(Self.words(String(term.dropFirst())))
            } else if term.hasSuffix("*") {
                var words = Self.words(String(term.dropLast()))
                if let last = words.popLast() { prefixes.append(last) }
                required += words
            } else {
                required += Self.words(String(term))
            }
        }
    }

    func matches(_ text: String) -> Bool {
        let words = Set(Self.words(text))
        return required.allSatisfy(words.contains)
            && prefixes.allSatisfy { prefix in words.contains { $0.hasPrefix(prefix) } }
            && !excluded.contains { !$0.isEmpty && $0.allSatisfy(words.contains) }
    }
}
