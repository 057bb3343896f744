@_spi(CellarGenerated) @_spi(Testing) import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// Checks a closed store the way `cellar verify` does: every record, every index entry against
/// the records, both trees of every relation.
func verifyStore(_ path: String) throws -> RecordCheck.Summary {
    let engine = try StorageEngine(directory: path, options: StorageOptions(readOnly: true))
    defer { engine.close() }
    return try RecordCheck.verify(engine)
}

/// Index maintenance and unique constraints.
@Suite struct IndexTests {
    static let options = StoreOptions(durability: .none)

    /// With QItem's string indexes left out, its indexes are all on numbers: new items then get
    /// their keys from the record bytes (`EntitySchema.fixedIndexKeys`).
    @Test(arguments: [true, false])
    func indexesFollowEveryChange(stringIndexes: Bool) throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let dir = TestDirectory("index-changes")
        defer { dir.remove() }
        for round in 0..<4 {
            let store = try Store(directoryPath: dir.path, model: queryModel(stringIndexes: stringIndexes), options: Self.options)
            let items = store.box(for: QItem.self)
            let authors = store.box(for: QAuthor.self)
            let authorIds = try authors.put((0..<3).map { QAuthor("r\(round) a\($0)", email: "r\(round)-\($0)@x") }).map(\.value)
            for step in 0..<30 {
                let rollBack = step % 7 == 3
                _ = try? store.runInTransaction {
                    for _ in 0..<Int.random(in: 1...20, using: &rng) {
                        switch Int.random(in: 0..<10, using: &rng) {
                        case 0..<5:
                            let item = QItem()
                            QueryDifferentialTests.randomItem(&rng, into: item, authors: authorIds)
                            try items.put(item)
                        case 5..<8:
                            let ids = try items.query().build().findIds()
                            guard let id = ids.randomElement(using: &rng), let item = try items.get(id) else { continue }
                            QueryDifferentialTests.randomItem(&rng, into: item, authors: authorIds)
                            try items.put(item)
                        case 8:
                            let ids = try items.query().build().findIds()
                            if let id = ids.randomElement(using: &rng) { try items.remove(id) }
                        default:
                            try items.query { QItem.score < 0 }.build().remove()
                        }
                    }
                    if rollBack { throw CellarError.illegalArgument("roll back") }
                }
            }
            if round == 2 { try authors.removeAll(); try items.removeAll() }
            store.close()
            let summary = try verifyStore(dir.path)
            #expect(summary.objects == (round == 2 ? 0 : summary.objects), "seed \(seed)")
            if round != 2 { #expect(summary.indexEntries > summary.objects, "seed \(seed)") }
        }
    }

    @Test func uniqueViolationWritesNothing() throws {
        let dir = TestDirectory("unique")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.path, model: queryModel(), options: Self.options)
        let authors = store.box(for: QAuthor.self)
        let ada = QAuthor("Ada")
        try authors.put(ada)
        #expect(throws: CellarError.uniqueViolation(property: "QAuthor.name", value: "\"Ada\"")) { try authors.put(QAuthor("Ada")) }
        #expect(try authors.count() == 1)
        // A batch is one transaction: nothing of it is kept.
        let bob = QAuthor("Bob")
        #expect(throws: CellarError.self) { try authors.put([bob, QAuthor("Ada")]) }
        #expect(bob.id == 0)
        #expect(try authors.count() == 1)
        #expect(try authors.query { QAuthor.name == "Bob" }.build().count() == 0)
        // Putting an object again with its own value is no conflict; taking another's is.
        ada.email = "ada@x"
        try authors.put(ada)
        let carl = QAuthor("Carl")
        try authors.put(carl)
        carl.name = "Ada"
        #expect(throws: CellarError.self) { try authors.put(carl) }
        #expect(try authors.get(carl.id)?.name == "Carl")
        #expect(try authors.query { QAuthor.name == "Carl" }.build().findIds().map(\.value) == [carl.id])
        // Inside a transaction the error rolls back all of it, even when the closure catches it.
        #expect(throws: CellarError.self) {
            try store.runInTransaction {
                try authors.put(QAuthor("Dora"))
                _ = try? authors.put(QAuthor("Ada"))
            }
        }
        #expect(try authors.query { QAuthor.name == "Dora" }.build().count() == 0)
        store.close()
        #expect(try verifyStore(dir.path).indexEntries == 3)   // name and email of Ada, name of Carl, and no more
    }

    @Test func uniqueReplaceRemovesTheHolder() throws {
        let dir = TestDirectory("unique-replace")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.path, model: queryModel(), options: Self.options)
        let authors = store.box(for: QAuthor.self)
        let first = QAuthor("First", email: "same@x")
        try authors.put(first)
        let second = QAuthor("Second", email: "same@x")
        try authors.put(second)
        #expect(try authors.get(first.id) == nil)
        #expect(try authors.all().map(\.name) == ["Second"])
        #expect(try authors.query { QAuthor.email == "same@x" }.build().findIds().map(\.value) == [second.id])
        #expect(try authors.query { QAuthor.name == "First" }.build().count() == 0)
        store.close()
        #expect(try verifyStore(dir.path).indexEntries == 2)
    }

    @Test func addingUniqueOverDuplicatesIsRefused() throws {
        let dir = TestDirectory("unique-added")
        defer { dir.remove() }
        var store = try Store(directoryPath: dir.path, model: queryModel(uniqueName: false), options: Self.options)
        let first = try store.box(for: QAuthor.self).put(QAuthor("Twin"))
        let second = try store.box(for: QAuthor.self).put(QAuthor("Twin"))
        store.close()
        do {
            _ = try Store(directoryPath: dir.path, model: queryModel(), options: Self.options)
            Issue.record("opened with a unique index over duplicates")
        } catch let error as CellarError where error.code == .schema {
            let message = error.message
            #expect(message.contains("QAuthor.name is now unique"))
            #expect(message.contains("objects \(first.value) and \(second.value) both hold \"Twin\""))
        }
        store = try Store(directoryPath: dir.path, model: queryModel(uniqueName: false), options: Self.options)
        try store.box(for: QAuthor.self).remove(second)
        store.close()
        store = try Store(directoryPath: dir.path, model: queryModel(), options: Self.options)
        #expect(throws: CellarError.self) { try store.box(for: QAuthor.self).put(QAuthor("Twin")) }
        store.close()
    }

    @Test func indexesAddedLaterAreBuiltAndRemovedOnesDropped() throws {
        let dir = TestDirectory("index-added")
        defer { dir.remove() }
        var store = try Store(directoryPath: dir.path, model: queryModel(indexes: false), options: Self.options)
        let authors = try store.box(for: QAuthor.self).put([QAuthor("A"), QAuthor("B")]).map(\.value)
        var items: [QItem] = []
        for i in 0..<300 {
            let item = QItem()
            item.title = "t\(i % 10)"
            item.score = i % 4 == 0 ? nil : Int32(i % 13)
            item.author = ToOne(targetId: authors[i % 2])
            items.append(item)
        }
        try store.box(for: QItem.self).put(items)
        store.close()
        #expect(try verifyStore(dir.path).indexEntries == 0)
        store = try Store(directoryPath: dir.path, model: queryModel(generation: 1), options: Self.options)
        #expect(store.modelChanges.contains(.addIndex(entity: "QItem", property: "score")))
        #expect(try store.box(for: QItem.self).query { QItem.score == 5 }.build().count() == items.filter { $0.score == 5 }.count)
        store.close()
        // title 300 + text 0 (all nil) + score 225 + author 300 + rank 300 + name 2 + email 0
        #expect(try verifyStore(dir.path).indexEntries == 300 + 225 + 300 + 300 + 2)
        store = try Store(directoryPath: dir.path, model: queryModel(indexes: false, generation: 1), options: Self.options)
        #expect(try store.box(for: QItem.self).query { QItem.score == 5 }.build().count() == items.filter { $0.score == 5 }.count)
        store.close()
        let engine = try StorageEngine(directory: dir.path, options: StorageOptions(readOnly: true))
        #expect(try engine.read { try $0.treeNames() }.filter { $0.hasPrefix("i") } == [])
        engine.close()
    }

    @Test func aStoreWhoseIndexesWereNeverBuiltAnswersReadOnly() throws {
        // As a store written before indexes were maintained: the model has the index, the file
        // has neither its tree nor its marker. Read-only, nothing is built; queries read records.
        let dir = TestDirectory("index-unbuilt")
        defer { dir.remove() }
        var store = try Store(directoryPath: dir.path, model: queryModel(), options: Self.options)
        for i in 0..<50 {
            let item = QItem()
            item.score = Int32(i % 5)
            item.title = "t\(i % 3)"
            try store.box(for: QItem.self).put(item)
        }
        store.close()
        let engine = try StorageEngine(directory: dir.path, options: StorageOptions(durability: .none))
        try engine.write { txn in
            let meta = try #require(try txn.tree("m", create: false))
            for name in try txn.treeNames() where name.hasPrefix("i") { try txn.dropTree(name) }
            var markers: [[UInt8]] = []
            try txn.cursor(meta).scan(.prefix(Array("index:".utf8))) { key, _ in markers.append(Array(key)); return true }
            for key in markers { try txn.delete(meta, key: key) }
        }
        engine.close()
        store = try Store(directoryPath: dir.path, model: queryModel(), options: StoreOptions(readOnly: true))
        let box = store.box(for: QItem.self)
        #expect(try box.query { QItem.score == 3 }.build().count() == 10)
        #expect(try box.query { QItem.score == 3 }.build().findIds().count == 10)
        #expect(try box.query { QItem.title == "t1" }.build().find().count == 17)
        #expect(try box.query { QItem.score.isIn([1, 2]) }.build().count() == 20)
        store.close()
        // Opened writable, the indexes are built and give the same answers.
        store = try Store(directoryPath: dir.path, model: queryModel(), options: Self.options)
        #expect(try store.box(for: QItem.self).query { QItem.score == 3 }.build().count() == 10)
        store.close()
        #expect(try verifyStore(dir.path).indexEntries > 0)
    }

    @Test func aUniquePropertyWithoutAnIndexIsRefused() throws {
        var model = queryModel()
        model.entities[1].properties[1].indexId = nil
        do {
            _ = try Store(directoryPath: "memory:unique-unindexed", model: model)
            Issue.record("a unique property without an index was accepted")
        } catch let error as CellarError where error.code == .schema {
            let message = error.message
            #expect(message.contains("QAuthor.name is unique but has no index"))
        }
    }

    @Test func aValueTooLongForAValueIndexIsRefused() throws {
        let store = try Store(directoryPath: "memory:long", model: queryModel())
        let item = QItem()
        item.title = String(repeating: "x", count: StorageLimits.maxKeySize)
        #expect(throws: CellarError.self) { try store.box(for: QItem.self).put(item) }
        #expect(try store.box(for: QItem.self).count() == 0)
        item.title = "short"
        item.text = String(repeating: "y", count: 2 * StorageLimits.maxKeySize)   // a hash index: fine
        try store.box(for: QItem.self).put(item)
        #expect(try store.box(for: QItem.self).query { QItem.text == item.text! }.build().findIds().map(\.value) == [item.id])
    }
}
