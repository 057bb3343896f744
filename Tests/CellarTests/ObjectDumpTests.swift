@_spi(CellarGenerated) @_spi(Testing) import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// `ObjectDump` (what `cellar dump` prints): objects decoded with the stored model alone, each
/// property type as documented.
@Suite struct ObjectDumpTests {
    /// Every object the store in `path` holds, by entity, as `ObjectDump` gives them.
    static func dumped(_ path: String, entity: String? = nil, limit: Int = .max) throws -> [(String, [String: JSONValue])] {
        let engine = try StorageEngine(directory: path, options: StorageOptions(readOnly: true))
        defer { engine.close() }
        var objects: [(String, [String: JSONValue])] = []
        try ObjectDump.forEachObject(in: engine, entity: entity, limit: limit) { name, object in
            guard case .object(let members) = object else { Issue.record("not an object"); return }
            objects.append((name, Dictionary(uniqueKeysWithValues: members.map { ($0.name, $0.value) })))
        }
        return objects
    }

    @Test func scalarsAtTheirExtremesAndAbsentOptionals() throws {
        let dir = TestDirectory("dump-scalars")
        defer { dir.remove() }
        do {
            let store = try Store(directoryPath: dir.path, model: testModel([AllTypes.modelEntity]),
                                  options: StoreOptions(durability: .none))
            try store.box(for: AllTypes.self).put(BoxTests.extremes())
            try store.box(for: AllTypes.self).put(AllTypes())
        }
        let objects = try Self.dumped(dir.path)
        #expect(objects.count == 2)
        let e = objects[0].1
        #expect(objects[0].0 == "AllTypes" && e["id"] == .number("1"))
        #expect(e["bool"] == .bool(true) && e["int8"] == .number("-128") && e["int16"] == .number("-32768"))
        #expect(e["int64"] == .number(String(Int64.min)) && e["uint8"] == .number("255") && e["uint64"] == .number(String(UInt64.max)))
        #expect(e["float"] == .string("NaN") && e["double"] == .string("-Infinity"))
        #expect(e["string"] == .string("Grüße, 世界 🧀 \u{0}end"))
        #expect(e["date"] == .string("0000-12-31T23:59:59.877Z"))
        #expect(e["data"] == .string("q6ur") && e["bytes"] == .string(""))
        #expect(e["optBool"] == .bool(false) && e["optInt8"] == .number("127") && e["optUInt64"] == .number("0"))
        #expect(e["optFloat"] == .number("-0") && e["optDouble"] == .number("1.7976931348623157e+308"))
        #expect(e["optDate"] == .string("2100-01-01T00:00:00.500Z") && e["optBytes"] == .string("AP8="))
        // What the Date held, to the nanosecond the store kept (a Double has no more).
        #expect(e["nanoDate"] == .string("2023-11-14T22:13:20.123456717Z"), "\(String(describing: e["nanoDate"]))")
        // A fresh object: the optionals are null, the rest their zero values.
        let fresh = objects[1].1
        #expect(fresh["optString"] == .null && fresh["optDate"] == .null && fresh["int32"] == .number("0") && fresh["string"] == .string(""))
    }

    @Test func collectionsAndFlexValues() throws {
        let dir = TestDirectory("dump-collections")
        defer { dir.remove() }
        do {
            let store = try Store(directoryPath: dir.path, model: cellarModel(), options: StoreOptions(durability: .none))
            let post = Post()
            post.title = "first"
            post.tags = ["b", "a", "b"]
            post.scores = [3, -1]
            post.labels = [7]
            post.flags = [true, false]
            post.weights = [0.5]
            post.attributes = ["size": "L", "color": "red"]
            post.measures = ["w": 1.25]
            post.payload = .map(["n": .integer(2), "list": .list([.string("x"), .double(0.5), .null])])
            try store.box(for: Post.self).put(post)
        }
        let post = try #require(try Self.dumped(dir.path, entity: "Post").first).1
        #expect(post["title"] == .string("first"))
        #expect(post["tags"] == .array([.string("b"), .string("a"), .string("b")]))
        #expect(post["scores"] == .array([.number("3"), .number("-1")]) && post["labels"] == .array([.number("7")]))
        #expect(post["flags"] == .array([.bool(true), .bool(false)]) && post["weights"] == .array([.number("0.5")]))
        #expect(post["attributes"] == .object([JSONMember("color", .string("red")), JSONMember("size", .string("L"))]))
        #expect(post["measures"] == .object([JSONMember("w", .number("1.25"))]))
        #expect(post["notes"] == .null && post["extra"] == .null)
        #expect(post["payload"] == .object([JSONMember("list", .array([.string("x"), .number("0.5"), .null])), JSONMember("n", .number("2"))]))
    }

    @Test func embeddedObjectsAndRelationsAsIds() throws {
        let dir = TestDirectory("dump-embedded")
        defer { dir.remove() }
        do {
            let store = try Store(directoryPath: dir.path, model: embeddedModel(), options: StoreOptions(durability: .none))
            var line = ELine()
            line.sku = "A-1"
            line.quantity = 2
            try store.box(for: EOrder.self).put(EOrder(7, [line, ELine()]))
        }
        let order = try #require(try Self.dumped(dir.path, entity: "EOrder").first).1
        guard case .array(let lines) = order["lines"], lines.count == 2, case .object(let first) = lines[0] else {
            Issue.record("lines: \(String(describing: order["lines"]))")
            return
        }
        #expect(first.first { $0.name == "sku" }?.value == .string("A-1") && first.first { $0.name == "shipTo" }?.value == .null)

        // A to-one relation as the target's id, a standalone to-many as the array of ids.
        let relations = TestDirectory("dump-relations")
        defer { relations.remove() }
        do {
            let store = try Store(directoryPath: relations.path, model: queryModel(), options: StoreOptions(durability: .none))
            let (people, even, _) = try StoreCompactionTests.putAuthorsAndTags(store)
            let item = QItem()
            item.title = "linked"
            item.author.target = people[2]
            item.tags.append(even)
            try store.box(for: QItem.self).put(item)
        }
        let item = try #require(try Self.dumped(relations.path, entity: "QItem").first).1
        #expect(item["author"] == .number("3"))
        #expect(item["tags"] == .array([.number("1")]))
        #expect(throws: CellarError.self) { try Self.dumped(relations.path, entity: "Nope") }
        #expect(try Self.dumped(relations.path, limit: 4).count == 4)
    }
}
