@_spi(CellarGenerated) @_spi(Testing) import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// `ObjectExport` and `ObjectImport` (`cellar export`, `cellar import`): a store written out and
/// read back into another has the same objects (ids, every value, relations), indexes that answer
/// the same queries, and the same next ids; bad files stop at their line with nothing of that
/// batch written.
@Suite struct ExportImportTests {
    /// The lines of the export of the store in `path`.
    static func exported(_ path: String, entity: String? = nil) throws -> [String] {
        let engine = try StorageEngine(directory: path, options: StorageOptions(readOnly: true))
        defer { engine.close() }
        var lines: [String] = []
        try ObjectExport.export(engine, entity: entity) { lines.append(String(decoding: $0, as: UTF8.self)) }
        return lines
    }

    /// The header line without what names the store and its commit (which an import does not copy).
    static func portableHeader(_ line: String) throws -> JSONValue {
        guard case .object(let members) = try JSONParser.parse(Array(line.utf8)) else { throw CellarError.illegalArgument("header") }
        return .object(members.filter { $0.name != "store" && $0.name != "commit" })
    }

    static func verify(_ path: String) throws -> RecordCheck.Summary {
        let engine = try StorageEngine(directory: path, options: StorageOptions(readOnly: true))
        defer { engine.close() }
        return try RecordCheck.verify(engine)
    }

    static func write(_ lines: [String], to dir: TestDirectory, name: String = "export.jsonl") throws -> String {
        let path = dir.path + "/" + name
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A store of the generated test model with objects of every kind of property: scalars at
    /// their extremes, decimals, collections, flex values of every type, embedded objects, to-one and
    /// to-many relations, primary keys, full-text, geo and vector indexes. Some objects are
    /// removed, so that next ids lie above the highest stored.
    static func fill(_ path: String, seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        func uniform() -> Double { Double(random.next() >> 11) / Double(1 << 53) }
        func word() -> String { ["cellar", "wine", "barrel", "oak", "cork", "vintage", "grape", "<b>&\"'"][Int(random.next() % 8)] }
        let store = try Store(directoryPath: path, model: cellarModel(), options: StoreOptions(durability: .none))
        defer { store.close() }
        try store.runInTransaction {
            let tags = (0..<5).map { index -> Tag in
                let tag = Tag()
                tag.name = "tag \(index)"
                return tag
            }
            try store.box(for: Tag.self).put(tags)
            for index in 0..<30 {
                let ticket = Ticket()
                ticket.title = "ticket \(index) \(word())"
                ticket.priority = index % 3 == 0 ? .high : .low
                ticket.precise = Date(timeIntervalSince1970: 1_700_000_000.123456 + Double(index))
                ticket.due = index % 2 == 0 ? nil : Date(timeIntervalSince1970: -86_400 * Double(index * 400))
                ticket.count = UInt16.max - UInt16(index)
                ticket.tiny = index % 4 == 0 ? Int8.min : nil
                for tag in tags where random.next() % 2 == 0 { ticket.tags.append(tag) }
                try store.box(for: Ticket.self).put(ticket)
                let comment = Comment()
                comment.text = "on \(index)"
                comment.ticket.target = ticket
                try store.box(for: Comment.self).put(comment)
            }
            for index in 0..<20 {
                let post = Post()
                post.title = "post \(index)"
                post.tags = [word(), word()]
                post.topics = [word()]
                post.scores = [Int.min, Int(index), Int.max]
                post.labels = [Int32(index), -1]
                post.flags = [true, index % 2 == 0]
                post.ratios = [0.1, -0.0, .infinity, 1e300]
                post.weights = [Float(index) / 3, .greatestFiniteMagnitude]
                post.shorts = [0, UInt16.max]
                post.bytes = [Int8.min, 0, Int8.max]
                post.stamps = [Date(timeIntervalSince1970: 0.001 * Double(index)), Date(timeIntervalSince1970: -62_135_596_800)]
                post.nanoStamps = [Date(timeIntervalSince1970: 1_600_000_000.000_001_5 + Double(index))]
                post.blobs = [Data([0, 255, UInt8(index)]), Data()]
                post.refs = [UUID(), UUID()]
                post.attributes = ["$weird": "key", "size": "L\n\t\u{1}"]
                post.measures = ["w": 1.25, "h": -0.0]
                post.notes = index % 3 == 0 ? nil : ["a", ""]
                post.counts = index % 2 == 0 ? nil : ["x": Int.max]
                post.ids = index % 2 == 0 ? [UUID()] : nil
                // Flex values of every type, those JSON has no type for among them.
                post.payload = .map([
                    "int": .integer(Int64.min), "whole double": .double(2), "nan": .double(.nan), "inf": .double(-.infinity),
                    "bytes": .bytes(Data([1, 2, 3])), "date": .date(Date(timeIntervalSince1970: 1_234_567.891)),
                    "uuid": .uuid(UUID()), "list": .list([.null, .bool(true), .string("s"), .double(-0.0)]),
                    "$tagged": .map(["$bytes": .string("not bytes")]), "nested": .map(["deep": .list([.map([:])])]),
                ])
                post.extra = index % 2 == 0 ? nil : .double(0.5)
                try store.box(for: Post.self).put(post)
            }
            for index in 0..<12 {
                let article = Article("\(word()) \(word()) \(word()) \(index)", title: index % 2 == 0 ? "\(word()) title" : nil, year: 2000 + index)
                try store.box(for: Article.self).put(article)
                try store.box(for: Place.self).put(Place("place \(index)", index % 5 == 0 ? nil : try GeoPoint(latitude: uniform() * 170 - 85, longitude: uniform() * 360 - 180)))
                try store.box(for: Passage.self).put(Passage("passage \(index)", (0..<8).map { _ in Float(uniform()) - 0.5 }, group: index % 3))
                try store.box(for: Account.self).put(Account(email: "user\(index)@example.org", name: "User \(index)", visits: index))
                try store.box(for: Invoice.self).put(Invoice(number: Int64(1000 + index), total: Double(index) * 9.99))
                let device = Device()
                device.name = "device \(index)"
                // Decimals a Double cannot hold: 39 digits, 0.1, and their negatives.
                device.price = Decimal(string: ["0.1", "-340282366920938463463374607431768211455", "12.50", "1e-128"][index % 4])!
                device.balance = index % 3 == 0 ? nil : Decimal(string: "-\(index).0\(index)")!
                try store.box(for: Device.self).put(device)
                let contact = Contact()
                contact.name = "contact \(index)"
                contact.address = index % 2 == 0 ? nil : Address(city: "City \(index)", zip: "\(10_000 + index)", geo: Geo(lat: 1.5, lon: -2.5))
                contact.billing = Address(city: "Billing", zip: "0\(index)", geo: nil)
                contact.previous = index % 3 == 0 ? nil : [Address(city: "Old", zip: "1", geo: Geo(lat: 0, lon: 0)), Address()]
                try store.box(for: Contact.self).put(contact)
                var order = Order()
                order.number = "order \(index)"
                let line = OrderLine(sku: "sku-\(index)", quantity: index)
                line.tags = ["x", word()]
                line.shipped = index % 2 == 0 ? nil : Date(timeIntervalSince1970: 1_000)
                line.origin = Geo(lat: 3, lon: 4)
                order.lines = [line, OrderLine()]
                try store.box(for: Order.self).put(order)
            }
            // Removed objects: their ids must not be handed out again after an import.
            try store.box(for: Post.self).remove(20)
            try store.box(for: Ticket.self).remove(29)
            try store.box(for: Ticket.self).remove(30)
        }
    }

    @Test func roundTripKeepsObjectsRelationsIndexesAndNextIds() throws {
        let dir = TestDirectory("export-round-trip")
        defer { dir.remove() }
        let (source, target) = (dir.path + "/source", dir.path + "/target")
        try Self.fill(source, seed: 7)
        let lines = try Self.exported(source)
        let file = try Self.write(lines, to: dir)
        let report = try ObjectImport.importFile(file, into: target, batchSize: 17)
        #expect(report.objects == lines.count - 2 && report.lines == lines.count)
        #expect(report.batches == (lines.count - 2) / 17 + 1)

        // The same objects, line for line (every value in its exact form), the same model and next ids.
        let again = try Self.exported(target)
        #expect(again.count == lines.count)
        #expect(try Self.portableHeader(again[0]) == Self.portableHeader(lines[0]))
        for (old, new) in zip(lines.dropFirst(), again.dropFirst()) where old != new {
            Issue.record("differs:\n\(old)\n\(new)")
            break
        }
        // Every index entry and relation link of the source, no more and no fewer.
        let (before, after) = (try Self.verify(source), try Self.verify(target))
        #expect(after.objects == before.objects && after.indexEntries == before.indexEntries && after.relationLinks == before.relationLinks)
        #expect(before.indexEntries > 100 && before.relationLinks > 10)

        // Queries that read the indexes answer alike, and new objects get ids above the removed ones.
        let stores = try [source, target].map { try Store(directoryPath: $0, model: cellarModel(), options: StoreOptions(durability: .none)) }
        defer { stores.forEach { $0.close() } }
        func answers(_ store: Store) throws -> [[Id]] {
            let articles = store.box(for: Article.self)
            let places = store.box(for: Place.self)
            let passages = store.box(for: Passage.self)
            let circle = try GeoCircle(center: GeoPoint(latitude: 10, longitude: 20), radius: .kilometers(8_000))
            return [
                try articles.query { Article.body.matches("wine") }.build().findIds().map(\.value),
                try places.query { Place.location.isWithin(circle) }.build().findIds().map(\.value),
                try passages.query { Passage.embedding.nearestNeighbors(to: [0.1, 0.2, -0.3, 0.4, 0, 0, 0.2, -0.1], maxCount: 5) }.build()
                    .findIds().map(\.value),
                try store.box(for: Account.self).query { Account.email == "user3@example.org" }.build().findIds().map(\.value),
                try store.box(for: Contact.self).query { Contact.billing.zip == "05" }.build().findIds().map(\.value),
                try store.box(for: Ticket.self).get(4).map { $0.tags.map(\.id).sorted() } ?? [],
                try store.box(for: Ticket.self).get(6).map { $0.comments.map(\.id).sorted() } ?? [],
                try store.box(for: Tag.self).query { Tag.name == "tag 2" }.build().findIds().map(\.value),
                try store.box(for: Device.self).query { Device.price == Decimal(string: "12.5")! }.build().findIds().map(\.value),
            ]
        }
        let (expected, imported) = (try answers(stores[0]), try answers(stores[1]))
        #expect(imported == expected)
        // Decimals come back exactly, not through a Double.
        #expect(try stores[1].box(for: Device.self).query().build().find().map(\.price)
                == stores[0].box(for: Device.self).query().build().find().map(\.price))
        #expect(try stores[1].box(for: Device.self).get(1)?.price == Decimal(string: "0.1")!)
        #expect(expected.allSatisfy { !$0.isEmpty }, "\(expected)")
        for store in stores {
            let post = Post()
            #expect(try store.box(for: Post.self).put(post).value == 21)
            #expect(try store.box(for: Ticket.self).put(Ticket()).value == 31)
        }
        // An upsert through the primary key finds the imported object.
        for store in stores {
            #expect(try store.box(for: Account.self).put(Account(email: "user3@example.org", name: "again"), mode: .upsert).value == 4)
            #expect(try store.box(for: Account.self).count() == 12)
        }
    }

    @Test func aBadLineStopsWithItsNumberAndNothingOfItsBatch() throws {
        let dir = TestDirectory("export-bad-line")
        defer { dir.remove() }
        try Self.fill(dir.path + "/source", seed: 11)
        let lines = try Self.exported(dir.path + "/source", entity: "Ticket")
        #expect(lines.count == 30)  // header, 28 tickets, end
        let cases: [(String, (String) -> String, String)] = [
            ("not JSON", { _ in "{\"entity\": \"Ticket\", " }, "line 15:"),
            ("a wrong type", { $0.replacingOccurrences(of: "\"count\":", with: "\"count\":\"x\",\"_\":") }, "Ticket.count: expected an integer"),
            ("out of range", { $0.replacingOccurrences(of: "\"count\":", with: "\"count\":70000,\"_\":") }, "from 0 to 65535"),
            ("an unknown property", { $0.replacingOccurrences(of: "\"count\":", with: "\"cuont\":") }, "Ticket has no property cuont"),
            ("an unknown entity", { $0.replacingOccurrences(of: "\"Ticket\"", with: "\"Ticker\"") }, "no entity Ticker"),
            ("a bad date", { $0.replacingOccurrences(of: "\"precise\":\"", with: "\"precise\":\"x") }, "ISO 8601"),
            ("a duplicate id", { _ in lines[3] }, "Ticket 3 appears twice"),
        ]
        for (name, breakLine, message) in cases {
            var broken = lines
            broken[14] = breakLine(lines[14])  // line 15: in the second batch of 10
            let file = try Self.write(broken, to: dir)
            let target = dir.path + "/target-\(name.replacingOccurrences(of: " ", with: "-"))"
            do {
                try ObjectImport.importFile(file, into: target, batchSize: 10)
                Issue.record("\(name): imported")
            } catch let error as CellarError {
                #expect(error.code == .illegalArgument && error.message.hasPrefix("line 15: ") && error.message.contains(message),
                        "\(name): \(error.message)")
            }
            // The first batch (lines 2 to 11) is in, nothing of the second.
            let store = try Store(directoryPath: target, model: cellarModel())
            #expect(try store.box(for: Ticket.self).count() == 10, "\(name)")
            #expect(try store.box(for: Ticket.self).all().map(\.id) == Array(1...10), "\(name)")
            store.close()
        }
    }

    @Test func aFileCutShortOrMiscountedIsRefused() throws {
        let dir = TestDirectory("export-cut")
        defer { dir.remove() }
        try Self.fill(dir.path + "/source", seed: 3)
        let lines = try Self.exported(dir.path + "/source", entity: "Tag")
        #expect(lines.count == 7)
        let cut = try Self.write(Array(lines.dropLast()), to: dir)
        #expect { try ObjectImport.importFile(cut, into: dir.path + "/cut", batchSize: 3) } throws: {
            ($0 as? CellarError)?.message.contains("without its end line") == true
        }
        // Two batches of 3 went in; the last, unfinished, did not.
        var store = try Store(directoryPath: dir.path + "/cut", model: cellarModel())
        #expect(try store.box(for: Tag.self).count() == 3)
        store.close()

        let miscounted = try Self.write(Array(lines[0...2] + lines[4...]), to: dir)
        #expect { try ObjectImport.importFile(miscounted, into: dir.path + "/missing") } throws: {
            ($0 as? CellarError)?.message.contains("the end line counts 5 objects, the file has 4") == true
        }
        store = try Store(directoryPath: dir.path + "/missing", model: cellarModel())
        #expect(try store.box(for: Tag.self).count() == 0)
        store.close()

        let trailing = try Self.write(lines + ["{}"], to: dir)
        #expect { try ObjectImport.importFile(trailing, into: dir.path + "/trailing") } throws: {
            ($0 as? CellarError)?.message.contains("line 8: a line after the end line") == true
        }
        let foreign = try Self.write(["{\"hello\": 1}"], to: dir)
        #expect { try ObjectImport.importFile(foreign, into: dir.path + "/foreign") } throws: {
            ($0 as? CellarError)?.message.contains("line 1: not a Cellar export file") == true
        }
    }

    @Test func aStoreHoldingObjectsOfTheFilesEntitiesIsLeftAlone() throws {
        let dir = TestDirectory("export-occupied")
        defer { dir.remove() }
        try Self.fill(dir.path + "/source", seed: 5)
        let file = try Self.write(try Self.exported(dir.path + "/source", entity: "Tag"), to: dir)
        let target = dir.path + "/target"
        do {
            let store = try Store(directoryPath: target, model: cellarModel())
            let tag = Tag()
            tag.name = "mine"
            try store.box(for: Tag.self).put(tag)
            try store.box(for: Article.self).put(Article("kept"))
        }
        #expect { try ObjectImport.importFile(file, into: target) } throws: {
            ($0 as? CellarError)?.message.contains("already holds 1 Tag objects") == true
        }
        let store = try Store(directoryPath: target, model: cellarModel())
        #expect(try store.box(for: Tag.self).all().map(\.name) == ["mine"])
        // A store with other entities' objects takes the file, and keeps them.
        try store.box(for: Tag.self).removeAll()
        store.close()
        try ObjectImport.importFile(file, into: target)
        let reopened = try Store(directoryPath: target, model: cellarModel())
        #expect(try reopened.box(for: Tag.self).count() == 5 && reopened.box(for: Article.self).count() == 1)
        reopened.close()
    }

    /// Random damage to an export's lines: every import either succeeds or stops with an error
    /// naming a line, and what it leaves verifies (records, indexes, relations agree).
    @Test func damagedFilesNeverCrashAndLeaveConsistentStores() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(seed: seed)
        let dir = TestDirectory("export-damaged")
        defer { dir.remove() }
        try Self.fill(dir.path + "/source", seed: 13)
        let lines = try Self.exported(dir.path + "/source")
        let pieces = ["\"", "{", "}", "[", "]", ",", ":", "null", "-1", "1e400", "\"$bytes\"", "\\u00", "0", "9999999999999999999999", "true"]
        var outcomes = (imported: 0, refused: 0)
        for round in 0..<40 {
            var damaged = lines
            for _ in 0..<(1 + Int(random.next() % 3)) {
                let index = Int(random.next() % UInt64(damaged.count))
                var bytes = Array(damaged[index].utf8)
                let at = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count))
                switch random.next() % 4 {
                case 0: if !bytes.isEmpty { bytes.remove(at: at) }
                case 1: bytes.insert(contentsOf: Array(pieces[Int(random.next() % UInt64(pieces.count))].utf8), at: at)
                case 2: if !bytes.isEmpty { bytes[at] = UInt8(truncatingIfNeeded: random.next() % 128) }
                default: if let digit = bytes.firstIndex(where: { (0x30...0x39).contains($0) }) { bytes[digit] = 0x30 + UInt8(random.next() % 10) }
                }
                damaged[index] = String(decoding: bytes, as: UTF8.self)
            }
            let file = try Self.write(damaged, to: dir, name: "damaged-\(round).jsonl")
            let target = dir.path + "/target-\(round)"
            do {
                try ObjectImport.importFile(file, into: target, batchSize: 1 + Int(random.next() % 40))
                outcomes.imported += 1
            } catch let error as CellarError {
                outcomes.refused += 1
                #expect(error.code != .fileCorrupt && (error.message.hasPrefix("line ") || error.code == .schema),
                        "seed \(seed), round \(round): \(error)")
            }
            if FileManager.default.fileExists(atPath: target) {
                #expect(throws: Never.self, "seed \(seed), round \(round)") { _ = try Self.verify(target) }
            }
        }
        #expect(outcomes.refused > 0, "seed \(seed): \(outcomes)")
    }

    @Test func isoTimesReadBackToTheUnit() {
        var random = SplitMix64(seed: 99)
        for perSecond: Int64 in [1_000, 1_000_000_000] {
            var values: [Int64] = [0, -1, 1, Int64.max / 4, Int64.min / 4, -9_000_000_000 * perSecond]
            for _ in 0..<2_000 { values.append(Int64(bitPattern: random.next()) / 4) }
            for value in values {
                let text = ObjectDump.iso8601(value, perSecond: perSecond)
                #expect(ISO8601Units.parse(text, perSecond: perSecond) == value, "\(value) → \(text)")
            }
        }
        #expect(ISO8601Units.parse("2024-05-01T12:00:00Z", perSecond: 1_000) == 1_714_564_800_000)
        #expect(ISO8601Units.parse("2024-05-01T12:00:00.1234Z", perSecond: 1_000) == nil)  // finer than the unit
        #expect(ISO8601Units.parse("2024-05-01T12:00:00+02:00", perSecond: 1_000) == nil)
        #expect(ISO8601Units.parse("2024-13-01T12:00:00Z", perSecond: 1_000) == nil)
        #expect(ISO8601Units.parse("2023-02-29T12:00:00Z", perSecond: 1_000) == nil)
        #expect(ISO8601Units.parse("2024-02-29T12:00:00Z", perSecond: 1_000) == 1_709_208_000_000)
        #expect(ISO8601Units.parse("2024-05-01T12:00:00.5Z", perSecond: 1_000) == 1_714_564_800_500)
        #expect(ISO8601Units.parse("2024-05-01T12:00:00.000000005Z", perSecond: 1_000_000_000) == 1_714_564_800_000_000_005)
        #expect(ISO8601Units.parse("-0001-01-01T00:00:00Z", perSecond: 1_000) == -62_198_755_200_000)
        for bad in ["2024-05-01T12:00:00.Z", "+2024-05-01T12:00:00Z", "2024-5-01T12:00:00Z", "2024-05-01T12:00:00Zx",
                    "２０２４-05-01T12:00:00Z", "2024-05-01 12:00:00Z", "2024-05-01T12:00:60Z", "1234567890123-01-01T00:00:00Z", ""] {
            #expect(ISO8601Units.parse(bad, perSecond: 1_000) == nil, "\(bad)")
        }
    }

    @Test func flexValuesKeepTheirTypes() throws {
        let values: [FlexValue] = [
            .integer(1), .double(1), .double(-0.0), .double(.nan), .double(.infinity), .double(.leastNonzeroMagnitude),
            .string("1"), .bytes(Data([0xFF])), .date(Date(timeIntervalSince1970: -0.001)), .uuid(UUID()),
            .map(["$bytes": .integer(1)]), .map(["$": .null, "a": .list([])]), .list([.map([:]), .bytes(Data())]),
        ]
        for value in values {
            let text = JSONWriter.compact(ObjectDump.exactJSON(value))
            let back = try ObjectRecordEncoder.flex(JSONParser.parse(Array(text.utf8)))
            if case .double(let double) = value, double.isNaN {
                guard case .double(let read) = back, read.isNaN else { Issue.record("\(text) → \(back)"); continue }
            } else {
                #expect(back == value, "\(text)")
                if case .double(let double) = value, case .double(let read) = back { #expect(double.sign == read.sign) }
            }
        }
    }
}
