@_spi(CellarGenerated) @_spi(Testing) @_spi(Tools) @testable import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// `StoreInspector`, what the data browser reads a store through: entities and counts, pages in
/// id and property order with filters, single objects with their links, health, and a writer's
/// commits seen by an inspector that stays open.
@Suite struct StoreInspectorTests {
    /// A store of `queryModel()`: 5 authors, tags "even" and "odd", and `count` items titled
    /// "item i", scored `i % 7` (none for every tenth), by author `i % 5`, tagged by parity.
    static func makeStore(_ dir: TestDirectory, items count: Int = 30, key: EncryptionKey? = nil) throws {
        let store = try Store(directoryPath: dir.path, model: queryModel(),
                              options: StoreOptions(durability: .none, automaticCompaction: nil, encryptionKey: key))
        let (people, even, odd) = try StoreCompactionTests.putAuthorsAndTags(store)
        var items: [QItem] = []
        for i in 0..<count {
            let item = QItem()
            item.title = "item \(i)"
            item.score = i % 10 == 0 ? nil : Int32(i % 7)
            item.author.target = people[i % 5]
            item.tags.append(i % 2 == 0 ? even : odd)
            items.append(item)
        }
        try store.box(for: QItem.self).put(items)
    }

    static func titles(_ page: StoreInspector.ObjectPage?) -> [String] {
        (page?.objects ?? []).map { if case .string(let title) = $0["title"] { return title } else { return "?" } }
    }

    @Test func entitiesCountsAndModel() throws {
        let dir = TestDirectory("inspector-entities")
        defer { dir.remove() }
        try Self.makeStore(dir)
        let inspector = try StoreInspector(directoryPath: dir.path)
        defer { inspector.close() }
        let entities = try inspector.entities()
        #expect(entities.map(\.name) == ["QItem", "QAuthor", "QTag"])
        #expect(entities.map(\.objectCount) == [30, 5, 2])
        let item = entities[0]
        #expect(item.columns.first == "id" && item.columns.last == "tags" && item.columns.contains("author"))
        #expect(item.properties.first { $0.name == "author" }?.target == "QAuthor")
        #expect(item.properties.first { $0.name == "title" }?.isIndexed == true)
        #expect(item.relations == [StoreInspector.Relation(name: "tags", target: "QTag")])
        #expect(try inspector.entity(named: "QTag")?.objectCount == 2)
        #expect(try inspector.entity(named: "Nope") == nil)
        let json = try #require(try inspector.modelJSON())
        #expect(json.contains("\"QItem\"") && json.contains("\"QAuthor\""))
        #expect(try inspector.model()?.entities.count == 3)
    }

    @Test func pagesInIdOrderWithOffsetCursorAndDescending() throws {
        let dir = TestDirectory("inspector-id-pages")
        defer { dir.remove() }
        try Self.makeStore(dir)
        let inspector = try StoreInspector(directoryPath: dir.path)
        defer { inspector.close() }
        let first = try #require(try inspector.page(of: "QItem", .init(limit: 10)))
        #expect(first.objects.map(\.id) == Array(1...10))
        #expect(first.hasMore && first.matched == 30 && !first.scanCapped && first.scanned == 10)
        let third = try #require(try inspector.page(of: "QItem", .init(limit: 10, offset: 20)))
        #expect(third.objects.map(\.id) == Array(21...30) && !third.hasMore)
        let afterCursor = try #require(try inspector.page(of: "QItem", .init(limit: 5, after: 25)))
        #expect(afterCursor.objects.map(\.id) == Array(26...30) && !afterCursor.hasMore && afterCursor.matched == nil)
        let descending = try #require(try inspector.page(of: "QItem", .init(descending: true, limit: 3, after: 10)))
        #expect(descending.objects.map(\.id) == [9, 8, 7])
        #expect(try inspector.page(of: "QItem", .init(descending: true, limit: 2))?.objects.map(\.id) == [30, 29])
        #expect(try inspector.page(of: "Nope", .init()) == nil)
        #expect(throws: CellarError.self) { try inspector.page(of: "QItem", .init(limit: 0)) }
        #expect(throws: CellarError.self) { try inspector.page(of: "QItem", .init(offset: -1)) }
    }

    @Test func filtersCountMatchesAndReportBadConditions() throws {
        let dir = TestDirectory("inspector-filter")
        defer { dir.remove() }
        try Self.makeStore(dir)
        let inspector = try StoreInspector(directoryPath: dir.path)
        defer { inspector.close() }
        // "item 1", "item 10" … "item 19": 11 titles.
        let page = try #require(try inspector.page(of: "QItem", .init(filter: "title startsWith \"item 1\"", limit: 20)))
        #expect(page.matched == 11 && page.objects.count == 11 && !page.hasMore && page.scanned == 30)
        #expect(Self.titles(page).allSatisfy { $0.hasPrefix("item 1") })
        // A page of a filtered scan stops once it knows another match follows.
        let short = try #require(try inspector.page(of: "QItem", .init(filter: "score is null", limit: 1)))
        #expect(short.objects.map(\.id) == [1] && short.hasMore && short.matched == nil)
        let second = try #require(try inspector.page(of: "QItem", .init(filter: "score is null", limit: 2, offset: 1)))
        #expect(second.objects.map(\.id) == [11, 21] && !second.hasMore && second.matched == 3)
        // Blank filters are no filter.
        #expect(try inspector.page(of: "QItem", .init(filter: "  "))?.matched == 30)
        do {
            _ = try inspector.page(of: "QItem", .init(filter: "title startsWith"))
            Issue.record("a filter without a value parsed")
        } catch let error as CellarError {
            #expect(error.code == .illegalArgument && error.message.contains("character"))
        }
        #expect(throws: CellarError.self) { try inspector.page(of: "QItem", .init(filter: "colour == 1")) }
    }

    @Test func sortsByAPropertyWithNullsFirstAndTiesById() throws {
        let dir = TestDirectory("inspector-sort")
        defer { dir.remove() }
        try Self.makeStore(dir, items: 15)
        let inspector = try StoreInspector(directoryPath: dir.path)
        defer { inspector.close() }
        // Scores: id 1 and 11 have none, the others (id - 1) % 7.
        let ascending = try #require(try inspector.page(of: "QItem", .init(sort: .property("score"), limit: 5)))
        #expect(ascending.objects.map(\.id) == [1, 11, 8, 15, 2])
        #expect(ascending.hasMore && ascending.matched == 15 && ascending.scanned == 15)
        let descending = try #require(try inspector.page(of: "QItem", .init(sort: .property("score"), descending: true, limit: 3)))
        #expect(descending.objects.map(\.id) == [7, 14, 6])
        let titles = try #require(try inspector.page(of: "QItem", .init(filter: "score > 3", sort: .property("title"), limit: 10, offset: 1)))
        #expect(Self.titles(titles) == ["item 12", "item 13", "item 4", "item 5", "item 6"] && titles.matched == 6)
        // By id through the property order too.
        #expect(try inspector.page(of: "QItem", .init(sort: .property("id"), descending: true, limit: 1))?.objects.map(\.id) == [15])
        // A capped scan says so: the order then covers the first objects only.
        let capped = try #require(try inspector.page(of: "QItem", .init(sort: .property("title"), descending: true, limit: 3, scanLimit: 4)))
        #expect(capped.scanCapped && capped.scanned == 4 && Self.titles(capped) == ["item 3", "item 2", "item 1"])
        #expect(throws: CellarError.self) { try inspector.page(of: "QItem", .init(sort: .property("tags"))) }
        #expect(throws: CellarError.self) { try inspector.page(of: "QItem", .init(sort: .property("title"), after: 3)) }
    }

    @Test func objectsWithTheirLinks() throws {
        let dir = TestDirectory("inspector-object")
        defer { dir.remove() }
        try Self.makeStore(dir, items: 4)
        let inspector = try StoreInspector(directoryPath: dir.path)
        defer { inspector.close() }
        let item = try #require(try inspector.object(of: "QItem", id: 3))
        #expect(item["title"] == .string("item 2") && item["author"] == .number("3"))
        #expect(item.links == [
            StoreInspector.Link(name: "author", target: "QAuthor", ids: [3], isToMany: false),
            StoreInspector.Link(name: "tags", target: "QTag", ids: [1], isToMany: true),
        ])
        #expect(try inspector.object(of: "QAuthor", id: 3)?["name"] == .string("author-2"))
        #expect(try inspector.object(of: "QItem", id: 99) == nil)
        #expect(try inspector.object(of: "Nope", id: 1) == nil)
    }

    @Test func healthOfAnEncryptedStore() throws {
        let dir = TestDirectory("inspector-health")
        defer { dir.remove() }
        let key = EncryptionKey(passphrase: "inspector")
        try Self.makeStore(dir, items: 3, key: key)
        #expect(throws: CellarError.self) { try StoreInspector(directoryPath: dir.path) }
        let inspector = try StoreInspector(directoryPath: dir.path, encryptionKey: key)
        defer { inspector.close() }
        let health = try inspector.health()
        #expect(health.isEncrypted && health.hasModel && health.lastCommit > 0)
        #expect(health.fileBytes > 0 && health.liveBytes <= health.fileBytes && (0...1).contains(health.garbageShare))
        #expect(health.storeUUID.count >= 32)
        #expect(try inspector.entity(named: "QItem")?.objectCount == 3)
    }

    @Test func anOpenInspectorFollowsAWriter() throws {
        let dir = TestDirectory("inspector-follow")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.path, model: queryModel(), options: StoreOptions(durability: .none, automaticCompaction: nil))
        let authors = store.box(for: QAuthor.self)
        try authors.put(QAuthor("first"))
        let inspector = try StoreInspector(directoryPath: dir.path)
        defer { inspector.close() }
        let before = try inspector.health().lastCommit
        #expect(try inspector.entity(named: "QAuthor")?.objectCount == 1)
        try authors.put([QAuthor("second"), QAuthor("third")])
        #expect(try inspector.entity(named: "QAuthor")?.objectCount == 3)
        #expect(try inspector.health().lastCommit > before)
        #expect(try inspector.object(of: "QAuthor", id: 3)?["name"] == .string("third"))
        // The writer goes on writing while the inspector is open.
        _ = try authors.remove(1)
        #expect(try inspector.page(of: "QAuthor", .init())?.objects.map(\.id) == [2, 3])
    }
}
