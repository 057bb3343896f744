@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

/// Lists, sets and maps through the generated `Post` binding: round trips of every element type,
/// nil against empty, sets' order, queries on elements, counts and map keys (compared with the
/// same filter over the objects in memory, with and without element indexes), index upkeep on
/// update and remove, and corrupt or oversized collections.
@Suite struct CollectionPropertyTests {
    /// `cellarModel()` without Post's indexes (the same properties, nothing indexed).
    static func unindexedModel() -> Cellar.Model {
        var model = cellarModel()
        let at = model.entities.firstIndex { $0.name == "Post" }!
        for i in model.entities[at].properties.indices {
            model.entities[at].properties[i].flags.subtract([.indexed, .indexHash, .indexHash64])
            model.entities[at].properties[i].indexId = nil
        }
        return model
    }

    static func post(_ random: inout SplitMix64, vocabulary: [String]) -> Post {
        let post = Post()
        post.title = "p\(random.next() % 1000)"
        post.tags = (0..<Int(random.next() % 6)).map { _ in vocabulary[Int(random.next() % UInt64(vocabulary.count))] }
        post.topics = (0..<Int(random.next() % 4)).map { _ in vocabulary[Int(random.next() % UInt64(vocabulary.count))] }
        post.scores = (0..<Int(random.next() % 5)).map { _ in Int(Int64(bitPattern: random.next()) % 50) }
        post.labels = Set((0..<Int(random.next() % 4)).map { _ in Int32(Int64(bitPattern: random.next()) % 8) })
        post.flags = (0..<Int(random.next() % 3)).map { _ in random.next() % 2 == 0 }
        post.attributes = Dictionary(uniqueKeysWithValues: ["color", "size", "shape"].filter { _ in random.next() % 2 == 0 }
            .map { ($0, ["red", "blue", "Red", "large"][Int(random.next() % 4)]) })
        post.measures = random.next() % 3 == 0 ? [:] : ["w": Double(random.next() % 10), "h": Double(random.next() % 10) / 2]
        if random.next() % 3 != 0 { post.notes = random.next() % 2 == 0 ? [] : ["n\(random.next() % 3)"] }
        return post
    }

    @Test func everyElementTypeRoundTrips() throws {
        let store = try Store(directoryPath: "memory:collections-roundtrip", model: cellarModel())
        let box = store.box(for: Post.self)
        let post = Post()
        post.title = "all"
        post.tags = ["swift", "", "ünïcode ✓", "swift", "nul\u{0}byte"]
        post.scores = [Int.min, -1, 0, 1, Int.max]
        post.labels = [3, -7, Int32.max]
        post.flags = [true, false, true]
        post.ratios = [0, -0.0, .infinity, -.infinity, 1.5, .greatestFiniteMagnitude]
        post.weights = [1.5, -2, .infinity]
        post.shorts = [0, 1, UInt16.max]
        post.bytes = [Int8.min, -1, 0, Int8.max]
        post.stamps = [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: -86_400.5), Date(timeIntervalSince1970: 1_700_000_000.123)]
        post.nanoStamps = [Date(timeIntervalSince1970: 1_700_000_000.123456)]
        post.blobs = [Data(), Data([0, 1, 2, 255])]
        post.refs = [UUID(), UUIDEncoding.zero]
        post.attributes = ["color": "red", "": "empty key", "ß": "sharp"]
        post.measures = ["w": 2.5, "h": -1]
        post.notes = []
        post.counts = ["a": 1, "b": -2]
        post.ids = [UUID(), UUID()]
        let id = try box.put(post).value
        let back = try #require(try box.get(id))
        #expect(back.title == "all")
        #expect(back.tags == post.tags)                  // order and duplicates kept
        #expect(back.scores == post.scores)
        #expect(back.labels == post.labels)
        #expect(back.flags == post.flags)
        #expect(back.ratios.map(\.bitPattern) == post.ratios.map(\.bitPattern))
        #expect(back.weights == post.weights)
        #expect(back.shorts == post.shorts && back.bytes == post.bytes)
        #expect(back.stamps == post.stamps.map { Date(timeIntervalSince1970: ($0.timeIntervalSince1970 * 1000).rounded() / 1000) })
        #expect(abs(back.nanoStamps[0].timeIntervalSince1970 - post.nanoStamps[0].timeIntervalSince1970) < 1e-6)
        #expect(back.blobs == post.blobs && back.refs == post.refs)
        #expect(back.attributes == post.attributes && back.measures == post.measures)
        #expect(back.notes == [] && back.counts == post.counts && back.ids == post.ids)

        // Nil optionals stay nil; non-optional collections absent from a record read empty.
        let empty = Post()
        let emptyId = try box.put(empty).value
        let emptyBack = try #require(try box.get(emptyId))
        #expect(emptyBack.notes == nil && emptyBack.counts == nil && emptyBack.ids == nil)
        #expect(emptyBack.tags.isEmpty && emptyBack.attributes.isEmpty)
        let nilNotes = try box.query { Post.notes.isNil() }.build().findIds().map(\.value)
        let someNotes = try box.query { Post.notes.isNotNil() }.build().findIds().map(\.value)
        #expect(nilNotes == [emptyId] && someNotes == [id])
    }

    @Test func modelChangesOfCollections() throws {
        let directory = TestDirectory("collections-model-change")
        defer { directory.remove() }
        do {
            let store = try Store(directoryPath: directory.path, model: cellarModel())
            let box = store.box(for: Post.self)
            // A record written before the collections existed (only the title): they read empty,
            // the optional ones nil, and the Flex value null.
            let schema = try box.schema.get()
            let record = RecordBuilder()
            record.begin(slotCount: 2)
            record.add("old", slot: 1)
            try store.engine.write { txn in
                try StorageLayout.withObjectKey(7) { try txn.put(txn.tree(schema.treeName, create: true)!, key: $0, value: record.bytes) }
            }
            let old = try #require(try box.get(7 as Id))
            #expect(old.title == "old" && old.tags.isEmpty && old.labels.isEmpty && old.attributes.isEmpty && old.payload == .null)
            #expect(old.notes == nil && old.counts == nil && old.ids == nil && old.extra == nil)
            let emptyTags = try box.query { Post.tags.isEmpty() && Post.tags.count == 0 }.build().findIds().map(\.value)
            #expect(emptyTags == [7])
            store.close()
        }
        // [Int] to [String] under the same UID: refused, as every type change.
        var changed = cellarModel()
        let post = changed.entities.firstIndex { $0.name == "Post" }!
        let scores = changed.entities[post].properties.firstIndex { $0.name == "scores" }!
        changed.entities[post].properties[scores].type = .stringVector
        do {
            _ = try Store(directoryPath: directory.path, model: changed)
            Issue.record("a type change of a collection was accepted")
        } catch let error as CellarError where error.code == .schema {
            let message = error.message
            #expect(message.contains("scores") && message.contains("LongVector") && message.contains("StringVector"), "\(message)")
        }
    }

    @Test func setsAreStoredInAscendingOrderWithoutDuplicates() throws {
        let builder = RecordBuilder()
        builder.begin(slotCount: 3)
        try builder.add(Set<Int32>([5, -3, 0, 2]), slot: 0)
        try builder.add(Set(["b", "a", "ab", ""]), slot: 1)
        try builder.add(["z": 1, "a": 2, "m": 3] as [String: Int16], slot: 2)
        let reader = try RecordReader(builder.bytes)
        let numbers = try #require(try reader.bytes(slot: 0))
        #expect(stride(from: 0, to: 16, by: 4).map { Int32(littleEndian: numbers.loadUnaligned(fromByteOffset: $0, as: Int32.self)) } == [-3, 0, 2, 5])
        // Strings: a count, then length-prefixed elements in byte order.
        #expect(Array(try #require(try reader.bytes(slot: 1))) == [4, 0, 0, 0,  0, 0, 0, 0,  1, 0, 0, 0, 97,  2, 0, 0, 0, 97, 98,  1, 0, 0, 0, 98])
        let map = try #require(try reader.bytes(slot: 2))
        #expect(Array(map) == [3, 0, 0, 0,  1, 0, 0, 0, 97, 2, 0,  1, 0, 0, 0, 109, 3, 0,  1, 0, 0, 0, 122, 1, 0])
        #expect(try reader.set(Int32.self, slot: 0) == [5, -3, 0, 2])
        #expect(try reader.map(Int16.self, slot: 2) == ["z": 1, "a": 2, "m": 3])
        try reader.verify(types: [.set(of: .int)!, .set(of: .string)!, .map(of: .short)!])
    }

    @Test func queriesOnElementsMatchFilteringInMemory() throws {
        for indexed in [true, false] {
            let store = try Store(directoryPath: "memory:collections-query-\(indexed)", model: indexed ? cellarModel() : Self.unindexedModel())
            let box = store.box(for: Post.self)
            var random = SplitMix64(seed: 21)
            let vocabulary = ["swift", "Swift", "db", "ios", "linux", "ünï", ""]
            try box.put((0..<400).map { _ in Self.post(&random, vocabulary: vocabulary) })
            // Updates and removals, so the element index has entries to drop.
            let all = try box.all()
            for post in all.prefix(60) { post.tags = post.tags.reversed() + ["late"]; post.labels.insert(9) }
            try box.put(Array(all.prefix(60)))
            for post in all.suffix(30) { try box.remove(post.id) }
            let objects = try box.all()
            // What `cellar verify` checks: every record against the model, every element index
            // entry against the records.
            let summary = try RecordCheck.verify(store.engine)
            #expect(summary.objects == objects.count && (!indexed || summary.indexEntries > objects.count))

            func check(_ name: String, _ condition: QueryCondition<Post>, _ filter: (Post) -> Bool) throws {
                let query = try box.query { condition }.build()
                let expected = objects.filter(filter).map(\.id)
                #expect(try query.findIds().map(\.value) == expected, "\(name) (indexed: \(indexed))")
                #expect(try query.count() == expected.count, "\(name) count (indexed: \(indexed))")
                if name != "containsAll of none" {
                    #expect(!expected.isEmpty && expected.count < objects.count, "\(name): \(expected.count) of \(objects.count)")
                }
            }
            try check("contains", Post.tags.contains("swift")) { $0.tags.contains("swift") }
            try check("contains, ignoring case", Post.tags.contains("SWIFT", caseSensitive: false)) { $0.tags.contains { $0.lowercased() == "swift" } }
            try check("contains empty string", Post.tags.contains("")) { $0.tags.contains("") }
            try check("contains updated", Post.tags.contains("late")) { $0.tags.contains("late") }
            try check("contains, hash index", Post.topics.contains("db")) { $0.topics.contains("db") }
            try check("containsAny, hash index", Post.topics.containsAny(["ios", "ünï"])) { $0.topics.contains("ios") || $0.topics.contains("ünï") }
            try check("containsAny", Post.tags.containsAny(["db", "linux"])) { $0.tags.contains("db") || $0.tags.contains("linux") }
            try check("containsAll", Post.tags.containsAll(["db", "ios"])) { $0.tags.contains("db") && $0.tags.contains("ios") }
            try check("containsAll of none", Post.tags.containsAll([String]())) { _ in true }
            try check("isEmpty", Post.tags.isEmpty()) { $0.tags.isEmpty }
            try check("count", Post.tags.count >= 3) { $0.tags.count >= 3 }
            try check("count between", Post.scores.count.isBetween(1, and: 2)) { (1...2).contains($0.scores.count) }
            try check("int contains", Post.scores.contains(-7)) { $0.scores.contains(-7) }
            try check("set contains", Post.labels.contains(Int32(9))) { $0.labels.contains(9) }
            try check("set containsAny", Post.labels.containsAny([1, -2])) { $0.labels.contains(1) || $0.labels.contains(-2) }
            try check("bool contains", Post.flags.contains(true)) { $0.flags.contains(true) }
            try check("map key", Post.attributes["color"] == "red") { $0.attributes["color"] == "red" }
            try check("map key ignoring case", Post.attributes["color"].isEqual(to: "RED", caseSensitive: false)) { $0.attributes["color"]?.lowercased() == "red" }
            try check("map key missing", Post.attributes["color"].isNil()) { $0.attributes["color"] == nil }
            try check("map key prefix", Post.attributes["size"].startsWith("lar")) { $0.attributes["size"]?.hasPrefix("lar") == true }
            try check("containsKey", Post.attributes.containsKey("shape")) { $0.attributes["shape"] != nil }
            try check("map numeric", Post.measures["h"] > 2) { ($0.measures["h"] ?? -1) > 2 }
            try check("map count", Post.measures.count == 0) { $0.measures.isEmpty }
            try check("optional isEmpty", Post.notes.isEmpty()) { $0.notes?.isEmpty ?? true }
            try check("combined", Post.tags.contains("db") && Post.attributes["color"] != "blue" || Post.labels.count > 2) {
                ($0.tags.contains("db") && $0.attributes["color"] != nil && $0.attributes["color"] != "blue") || $0.labels.count > 2
            }
            if indexed {
                // The element index serves contains and containsAny; a tag lookup must not scan.
                let tagQuery = try box.query { Post.tags.contains("db") }.build()
                guard case .index = try tagQuery.compiled.plan.source else {
                    Issue.record("contains on an indexed list scans"); continue
                }
                // A value index on the elements answers a single contains by itself.
                #expect(try tagQuery.compiled.plan.exact)
                let topicQuery = try box.query { Post.topics.contains("db") }.build()
                guard case .index = try topicQuery.compiled.plan.source else {
                    Issue.record("contains on a hash-indexed list scans"); continue
                }
                let labelQuery = try box.query { Post.labels.containsAny([Int32(1), 2]) }.build()
                guard case .index = try labelQuery.compiled.plan.source else {
                    Issue.record("containsAny on an indexed set scans"); continue
                }
            }
        }
    }

    @Test func anElementIndexAddedLaterIsBuiltAtOpenAndDroppedWhenRemoved() throws {
        let directory = TestDirectory("collections-index-build")
        defer { directory.remove() }
        var random = SplitMix64(seed: 5)
        let vocabulary = ["a", "b", "c", "d"]
        do {
            let store = try Store(directoryPath: directory.path, model: Self.unindexedModel())
            try store.box(for: Post.self).put((0..<300).map { _ in Self.post(&random, vocabulary: vocabulary) })
            store.close()
        }
        let indexTree = try #require(cellarModel().entities.first { $0.name == "Post" }?.properties.first { $0.name == "tags" }?.indexId)
        for (model, indexed) in [(cellarModel(), true), (Self.unindexedModel(), false)] {
            let store = try Store(directoryPath: directory.path, model: model)
            let box = store.box(for: Post.self)
            let hasTree = try store.engine.read { try $0.tree(StorageLayout.indexTree(indexTree.id)) != nil }
            #expect(hasTree == indexed)
            let objects = try box.all()
            for tag in vocabulary {
                let query = try box.query { Post.tags.contains(tag) }.build()
                #expect(try query.findIds().map(\.value) == objects.filter { $0.tags.contains(tag) }.map(\.id))
                #expect(try query.count() == objects.filter { $0.tags.contains(tag) }.count)
            }
            store.close()
        }
    }

    @Test func removingAnObjectDropsItsElementKeys() throws {
        let store = try Store(directoryPath: "memory:collections-index-upkeep", model: cellarModel())
        let box = store.box(for: Post.self)
        let post = Post()
        post.tags = ["a", "b", "a"]
        post.refs = [UUIDEncoding.zero]
        let id = try box.put(post).value
        let schema = try box.schema.get()
        let tags = try #require(schema.indexed.first { $0.name == "tags" }?.index)
        func entries() throws -> Int {
            try store.engine.read { txn in
                guard let tree = try txn.tree(tags.treeName) else { return 0 }
                return try txn.cursor(tree).countKeys(.all)
            }
        }
        #expect(try entries() == 2)                       // one key per distinct element
        post.tags = ["b", "c", "d"]
        try box.put(post)
        #expect(try entries() == 3)
        let withA = try box.query { Post.tags.contains("a") }.build().count()
        let withD = try box.query { Post.tags.contains("d") }.build().findIds().map(\.value)
        #expect(withA == 0 && withD == [id])
        try box.remove(id)
        #expect(try entries() == 0)
        let withZero = try box.query { Post.refs.contains(UUIDEncoding.zero) }.build().count()
        #expect(withZero == 0)
    }

    @Test func parametersOfCollectionConditionsChangeWithoutRebuilding() throws {
        let store = try Store(directoryPath: "memory:collections-parameters", model: cellarModel())
        let box = store.box(for: Post.self)
        let a = Post(), b = Post()
        a.tags = ["x", "y"]; a.attributes = ["color": "red"]
        b.tags = ["y", "z"]; b.attributes = ["color": "blue"]
        let ids = try box.put([a, b]).map(\.value)
        let byTag = try box.query { Post.tags.contains("x") }.build()
        #expect(try byTag.findIds().map(\.value) == [ids[0]])
        byTag.setParameter(Post.tags, to: "z")
        #expect(try byTag.findIds().map(\.value) == [ids[1]])
        let byColor = try box.query { Post.attributes["color"] == "red" }.build()
        byColor.setParameter(Post.attributes, to: "blue")
        #expect(try byColor.findIds().map(\.value) == [ids[1]])
        let anyTag = try box.query { Post.tags.containsAny(["q"]).alias("tags") }.build()
        anyTag.setParameter("tags", to: ["x", "z"])
        #expect(try anyTag.findIds().map(\.value) == ids)
    }

    @Test func visitReadsCollectionsInPlace() throws {
        let store = try Store(directoryPath: "memory:collections-visit", model: cellarModel())
        let box = store.box(for: Post.self)
        let post = Post()
        post.tags = ["a", "b"]; post.labels = [2, 1]; post.measures = ["w": 1.5]; post.payload = ["k": 1]
        try box.put(post)
        var seen: [([String]?, Set<Int32>?, [String: Double]?, FlexValue?)] = []
        try box.query().build().visit { view in
            seen.append((try view.list(Post.tags, of: String.self), try view.set(Post.labels, of: Int32.self),
                         try view.map(Post.measures, of: Double.self), try view.flex(Post.payload)))
            #expect(throws: CellarError.self) { try view.list(Post.tags, of: Int64.self) }
            #expect(throws: CellarError.self) { try view.set(Post.tags, of: String.self) }
            #expect(throws: CellarError.self) { try view.list(Post.flags, of: UInt8.self) }
            return true
        }
        #expect(seen.count == 1 && seen[0].0 == ["a", "b"] && seen[0].1 == [1, 2] && seen[0].2 == ["w": 1.5] && seen[0].3 == ["k": 1])
    }

    @Test func misusedConditionsAreRefusedWithTheirReason() throws {
        let store = try Store(directoryPath: "memory:collections-refused", model: cellarModel())
        let box = store.box(for: Post.self)
        func refused(_ condition: QueryCondition<Post>, _ part: String) {
            do {
                _ = try box.query { condition }.build()
                Issue.record("built: \(part)")
            } catch let error as CellarError where error.code == .illegalArgument {
                let message = error.message
                #expect(message.contains(part), "\(message)")
            } catch {
                Issue.record("\(error)")
            }
        }
        refused(Post.tags == "swift", "a list is queried with contains")
        refused(Post.tags.contains(3), "not one")
        refused(Post.title.containsAny(["a"]), "for list, set and map properties")
        refused(Post.title.count > 1, "count is for list, set and map properties")
        refused(Post.attributes.contains("x"), "containsKey")
        refused(Post.tags["x"] == "y", "a key is for map properties")
        refused(Post.measures["w"] == "heavy", "not a number")
        #expect(throws: CellarError.self) { try box.query().ordered(by: Post.tags).build() }
        #expect(throws: CellarError.self) { try box.query().build().property(Post.tags).find() }
    }

    @Test func corruptCollectionsThrowFileCorrupt() throws {
        let cases: [(PropertyType, [UInt8])] = [
            (.list(of: .long)!, [1, 2, 3]),                                  // not a multiple of 8
            (.list(of: .bool)!, [0, 1, 2]),                                  // a Bool of 2
            (.list(of: .string)!, [0xFF, 0xFF, 0xFF, 0xFF]),                  // a huge count
            (.list(of: .string)!, [1, 0, 0, 0, 9, 0, 0, 0, 97]),              // a length past the end
            (.list(of: .string)!, [1, 0, 0, 0, 1, 0, 0, 0, 0xC3]),            // not UTF-8
            (.list(of: .string)!, [0, 0, 0, 0, 7]),                          // bytes after the last
            (.set(of: .string)!, [2, 0, 0, 0, 1, 0, 0, 0, 98, 1, 0, 0, 0, 97]), // out of order
            (.map(of: .int)!, [2, 0, 0, 0, 1, 0, 0, 0, 97, 1, 0, 0, 0, 1, 0, 0, 0, 97, 2, 0, 0, 0]), // a key twice
            (.map(of: .int)!, [1, 0, 0, 0, 1, 0, 0, 0, 97, 1, 0]),            // a value cut short
            (.map(of: .string)!, [0xFF, 0xFF, 0xFF, 0x7F]),                   // a huge count
        ]
        for (type, payload) in cases {
            let builder = RecordBuilder()
            builder.begin(slotCount: 1)
            payload.withUnsafeBytes { builder.add(bytes: $0, slot: 0) }
            let reader = try RecordReader(builder.bytes)
            do {
                try reader.verify(types: [type])
                Issue.record("\(type) \(payload) verified")
            } catch CellarError.Code.fileCorrupt {
            } catch {
                Issue.record("\(type) \(payload): \(error)")
            }
        }
        // The typed readers agree with verify.
        let builder = RecordBuilder()
        builder.begin(slotCount: 1)
        ([0xFF, 0xFF, 0xFF, 0xFF] as [UInt8]).withUnsafeBytes { builder.add(bytes: $0, slot: 0) }
        let reader = try RecordReader(builder.bytes)
        #expect(throws: CellarError.self) { try reader.list(String.self, slot: 0) }
        #expect(throws: CellarError.self) { try reader.map(Int.self, slot: 0) }
        #expect(throws: CellarError.self) { try reader.list(Data.self, slot: 0) }
        #expect(throws: CellarError.self) { try reader.list(Int64.self, slot: 0) == nil }   // 4 bytes: not a multiple of 8
    }

    @Test func randomPayloadsNeverTrap() throws {
        var random = SplitMix64(seed: 77)
        let types: [PropertyType] = [.list(of: .string)!, .list(of: .int)!, .set(of: .uuid)!, .map(of: .string)!, .map(of: .double)!,
                                     .list(of: .byteVector)!, .list(of: .bool)!]
        for _ in 0..<20_000 {
            let count = Int(random.next() % 40)
            let payload = (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next() % 5 == 0 ? random.next() : random.next() % 4) }
            let builder = RecordBuilder()
            builder.begin(slotCount: 1)
            payload.withUnsafeBytes { builder.add(bytes: $0, slot: 0) }
            let reader = try RecordReader(builder.bytes)
            for type in types {
                let verified = (try? reader.verify(types: [type])) != nil
                let read: Bool = switch type {
                case .list(of: .string)!: (try? reader.list(String.self, slot: 0)) != nil
                case .list(of: .int)!: (try? reader.list(Int32.self, slot: 0)) != nil
                case .set(of: .uuid)!: (try? reader.set(UUID.self, slot: 0)) != nil
                case .map(of: .string)!: (try? reader.map(String.self, slot: 0)) != nil
                case .map(of: .double)!: (try? reader.map(Double.self, slot: 0)) != nil
                case .list(of: .byteVector)!: (try? reader.list(Data.self, slot: 0)) != nil
                default: (try? reader.list(Bool.self, slot: 0)) != nil
                }
                // What verifies reads (a set's order is checked by verify only).
                if verified { #expect(read, "\(type) \(payload)") }
            }
        }
    }

    @Test func limitsAreEnforcedOnWrite() throws {
        let builder = RecordBuilder()
        builder.begin(slotCount: 1)
        let tooMany = [Bool](repeating: false, count: CollectionEncoding.maxElements + 1)
        #expect(throws: CellarError.self) { try builder.add(tooMany, slot: 0) }
        #expect(throws: CellarError.self) { try builder.add([Date(timeIntervalSince1970: 1e20)], slot: 0) }
    }
}
