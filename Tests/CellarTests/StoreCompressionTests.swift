@_spi(CellarGenerated) @_spi(Testing) import Cellar
import CellarTestSupport
import Foundation
import Testing

/// `StoreOptions.compression`: a compressed store answers every read, query, index and relation
/// exactly as a plain one, through updates, removals, compaction (which trains the dictionaries)
/// and a reopen without compression.
@Suite struct StoreCompressionTests {
    static let lorem = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua."

    /// The same work on any store: items with long shared text, authors, tags; then updates that
    /// change indexed values, removals, and relation changes.
    static func work(_ store: Store) throws {
        let items = store.box(for: QItem.self), authors = store.box(for: QAuthor.self)
        let (people, even, odd) = try StoreCompactionTests.putAuthorsAndTags(store)
        var all: [QItem] = []
        for i in 0..<800 {
            let item = QItem()
            item.title = "item \(i)"
            item.text = "Body \(i % 97) \(lorem)"
            item.score = Int32(i % 50)
            item.created = Date(timeIntervalSince1970: 1_700_000_000 + Double(i))
            item.author.target = people[i % 5]
            item.tags.append(i % 2 == 0 ? even : odd)
            all.append(item)
        }
        try items.put(all)
        // Updates that move indexed values (the old record is read to fix the index entries).
        for item in all where item.id % 4 == 0 {
            item.text = "Changed \(item.id % 13) \(lorem)"
            item.score = (item.score ?? 0) + 100
        }
        try items.put(all.filter { $0.id % 4 == 0 })
        try items.remove(all.filter { $0.id % 7 == 0 }.map(\.id))
        // A to-one changed through the other side (rewrites the item's record in place).
        let author = try #require(try authors.get(people[1].id))
        for item in all.filter({ $0.id % 7 != 0 }).prefix(30) { author.notes.append(item) }
        try author.notes.applyToDb()
    }

    /// Everything a reader can ask, as lines to compare.
    static func summary(_ store: Store) throws -> [String] {
        let items = store.box(for: QItem.self)
        var lines = try items.all().map { item in
            "\(item.id) \(item.title) \(item.text ?? "-") \(item.score.map(String.init) ?? "-") author=\(item.author.target?.name ?? "-") tags=\(item.tags.map(\.label))"
        }
        lines.append("text: \(try items.query { QItem.text == "Changed 5 \(lorem)" }.build().findIds())")
        lines.append("ordered: \(try items.query { QItem.score > 40 }.ordered(by: QItem.text).ordered(by: QItem.score, flags: .descending).build().find().map(\.id))")
        lines.append("range: \(try items.query { QItem.title.startsWith("item 1") }.build().count())")
        lines.append("by author-3: \(try items.query().link(QItem.author) { QAuthor.name == "author-3" }.build().findIds())")
        lines.append("distinct texts: \(try items.query().build().property(QItem.text).distinct().find(String.self).count)")
        var visited = 0
        try items.query { QItem.score < 10 }.build().visit { view in visited += try view.utf8Count(QItem.text) ?? 0; return true }
        lines.append("visited: \(visited)")
        lines.append("contains: \(try items.contains(8)) \(try items.contains(7)) \(try items.contains([1, 2, 3]))")
        let visitedOne = try items.visit(id: 9) { try $0.utf8Count(QItem.text) }
        lines.append("visit 9: \(visitedOne.map { $0.map(String.init) ?? "nil" } ?? "absent")")
        let authors = store.box(for: QAuthor.self)
        lines.append("author-1 notes: \(try authors.query { QAuthor.name == "author-1" }.build().findFirst()?.notes.map(\.id).sorted() ?? [])")
        return lines
    }

    static func options(_ compression: Compression) -> StoreOptions {
        StoreOptions(durability: .none, automaticCompaction: nil, compression: compression)
    }

    /// A build without zstd (iOS, or Linux with the `Zstd` trait off) refuses compression at open
    /// with its own code and a message that says where zstd comes from; a build with it opens.
    @Test(arguments: [Compression.zstd(), .zstdDictionary()])
    func compressionIsRefusedWhereTheBuildHasNoZstd(_ compression: Compression) throws {
        let dir = TestDirectory("store-compression-available")
        defer { dir.remove() }
        guard !compression.isAvailable else {
            try Store(directoryPath: dir.path, model: queryModel(), options: Self.options(compression)).close()
            return
        }
        let error = #expect(throws: CellarError.self) {
            try Store(directoryPath: dir.path, model: queryModel(), options: Self.options(compression))
        }
        #expect(error?.code == .compressionUnavailable)
        #expect(error?.description.contains("libzstd") == true, "\(String(describing: error))")
        // The same directory opens without compression.
        try Store(directoryPath: dir.path, model: queryModel(), options: Self.options(.none)).close()
    }

    @Test(arguments: [Compression.zstd(), .zstdDictionary()].filter(\.isAvailable))
    func answersAsAPlainStoreDoes(_ compression: Compression) throws {
        let plainDir = TestDirectory("store-plain"), dir = TestDirectory("store-compressed")
        defer { plainDir.remove(); dir.remove() }
        let plain = try Store(directoryPath: plainDir.path, model: queryModel(), options: Self.options(.none))
        try Self.work(plain)
        let expected = try Self.summary(plain)
        try plain.compact()
        let plainSize = plain.fileSize.total
        plain.close()

        let store = try Store(directoryPath: dir.path, model: queryModel(), options: Self.options(compression))
        try Self.work(store)
        #expect(try Self.summary(store) == expected)
        try store.compact()
        #expect(try Self.summary(store) == expected)
        let size = store.fileSize.total
        if compression == .zstdDictionary() {
            // 800 items sharing their text: the dictionary holds it once.
            #expect(size * 10 < plainSize * 7, "\(size) vs \(plainSize) uncompressed")
        } else {
            #expect(size < plainSize, "\(size) vs \(plainSize) uncompressed")
        }
        // Writes after the compaction (with the dictionary, when trained), then read back.
        let items = store.box(for: QItem.self)
        let item = try #require(try items.get(10))
        let original = item.text
        item.text = "After \(Self.lorem)"
        try items.put(item)
        #expect(try items.get(10)?.text == "After \(Self.lorem)")
        #expect(try items.query { QItem.text == "After \(Self.lorem)" }.build().findIds() == [10])
        item.text = original
        try items.put(item)
        store.close()

        let reopened = try Store(directoryPath: dir.path, model: queryModel(), options: Self.options(.none))
        defer { reopened.close() }
        let last = try Self.summary(reopened)
        #expect(last == expected, "\(zip(last, expected).filter { $0 != $1 }.prefix(3))")
    }
}
