@_spi(CellarGenerated) @_spi(Testing) import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// Object transactions far larger than their memory budget (`StoreOptions.transactionMemoryBudget`):
/// the storage engine writes their changes into the file ahead of the commit, and nothing of that
/// may show in what the objects, their indexes and relations say, inside the transaction or after.
@Suite struct TransactionBudgetTests {
    @Test("a transaction of thousands of puts, updates and removes within a 64 KiB budget: queries inside and after it match the objects, indexes verify")
    func queriesMatchAfterAHugeTransaction() throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let dir = TestDirectory("budget-objects")
        defer { dir.remove() }
        let options = StoreOptions(durability: .none, transactionMemoryBudget: 64 << 10)
        var model: [Id: QueryDifferentialTests.Item] = [:]
        do {
            let store = try Store(directoryPath: dir.path, model: queryModel(), options: options)
            defer { store.close() }
            let authorIds = try store.box(for: QAuthor.self).put((1...4).map { QAuthor("author \($0)") }).map(\.value)
            let box = store.box(for: QItem.self)
            // One rolled back, then one committed.
            for commit in [false, true] {
                var changed = model
                var ids = changed.keys.sorted()
                _ = try? store.runInTransaction {
                    for step in 0..<6_000 {
                        let choice = Int.random(in: 0..<10, using: &rng)
                        if choice < 6 || ids.isEmpty {
                            let item = QItem()
                            QueryDifferentialTests.randomItem(&rng, into: item, authors: authorIds)
                            try box.put(item)
                            changed[item.id] = QueryDifferentialTests.Item(item)
                            ids.append(item.id)
                        } else if choice < 9 {
                            let id = ids.randomElement(using: &rng)!
                            let item = try #require(try box.get(id))
                            QueryDifferentialTests.randomItem(&rng, into: item, authors: authorIds)
                            try box.put(item)
                            changed[id] = QueryDifferentialTests.Item(item)
                        } else {
                            let at = Int.random(in: 0..<ids.count, using: &rng)
                            try box.remove(ids[at])
                            changed[ids[at]] = nil
                            ids.swapAt(at, ids.count - 1)
                            ids.removeLast()
                        }
                        if step % 1_000 == 999 {
                            try Self.compare(box, changed, authors: authorIds, rng: &rng, context: "seed \(seed), inside, step \(step)")
                        }
                    }
                    if !commit { throw CellarError.illegalArgument("roll back") }
                }
                if commit { model = changed }
                try Self.compare(box, model, authors: authorIds, rng: &rng, context: "seed \(seed), after (committed: \(commit))")
            }
            #expect(model.count > 2_000)
        }
        let summary = try verifyStore(dir.path)
        #expect(summary.objects == model.count + 4, "seed \(seed)")
    }

    /// Runs random queries against `box` and the same filters over `model`.
    static func compare(_ box: Box<QItem>, _ model: [Id: QueryDifferentialTests.Item], authors: [Id],
                        rng: inout SplitMix64, context: String) throws {
        #expect(try box.count() == model.count, "\(context)")
        for _ in 0..<10 {
            let condition = QueryDifferentialTests.randomCondition(&rng, depth: 2, authors: authors)
            let query = try box.query { condition.condition }.build()
            let expected = model.values.filter(condition.matches).map(\.id).sorted()
            #expect(try query.findIds().map(\.value).sorted() == expected, "\(context): \(condition.text)")
        }
        for id in model.keys.shuffled(using: &rng).prefix(20) {
            #expect(try box.get(id).map(QueryDifferentialTests.Item.init) == model[id], "\(context): object \(id)")
        }
    }
}
