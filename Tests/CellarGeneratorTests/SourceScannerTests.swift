@_spi(CellarGenerated) @_spi(Testing) import Cellar
@testable import CellarGenerator
import Testing

// MARK: - Helpers

/// Scans one file named `M.swift`.
private func scan(_ source: String) throws -> [EntityDescription] {
    try SourceScanner.scan(files: [(path: "M.swift", contents: source)])
}

/// Scans one file that declares one entity and returns it.
private func entity(_ source: String, _ name: String? = nil) throws -> EntityDescription {
    let entities = try scan(source)
    if let name { return try #require(entities.first { $0.typeName == name }) }
    return try #require(entities.first)
}

/// The error lines (`file:line:column: error: message`) a scan throws; empty when it succeeds.
private func errors(_ files: [(path: String, contents: String)]) -> [String] {
    do {
        _ = try SourceScanner.scan(files: files)
        return []
    } catch let error as GeneratorError {
        return [error.description]
    } catch let error as GeneratorErrors {
        return error.messages
    } catch {
        return ["unexpected \(error)"]
    }
}

private func errors(_ source: String) -> [String] { errors([(path: "M.swift", contents: source)]) }

/// Expects exactly one error, at `position` (`line:column` in M.swift), containing `fragment`.
private func expectError(_ source: String, at position: String, _ fragment: String,
                         sourceLocation: Testing.SourceLocation = #_sourceLocation) {
    let found = errors(source)
    #expect(found.count == 1, "expected one error, got \(found)", sourceLocation: sourceLocation)
    guard let first = found.first else { return }
    #expect(first.hasPrefix("M.swift:\(position): error: "), "\(first)", sourceLocation: sourceLocation)
    #expect(first.contains(fragment), "\(first)", sourceLocation: sourceLocation)
}

private extension EntityDescription {
    func property(_ name: String) -> PropertyDescription? { properties.first { $0.name == name } }
}

private let relationFlags: PropertyFlags = [.indexed, .indexPartialSkipZero]

// MARK: - Examples from the API's documentation and ObjectBox's

@Suite struct SourceScannerTests {
    /// The Author/Note example of the API's documentation, with Status and Color declared (the scanner needs the
    /// enum's raw type); Author's backlink is in `apiExampleBacklink`.
    static let apiExample = """
    import Cellar

    class Author: Entity {
        var id: Id = 0                    // `Id` is UInt64; 0 means "not yet stored"
        // cellar: unique
        var name: String = ""
        required init() {}
    }

    class Note: Entity {
        var id: EntityId<Note> = 0        // typed id
        // cellar: index
        var title: String = ""
        var text: String?                 // optional: stored as absent when nil
        // cellar: default = "2024-01-01T00:00:00Z"
        var creationDate: Date = Date()
        var author: ToOne<Author> = nil   // stored as an indexed relation property
        // cellar: convert = { "default": ".unknown" }
        var status: Status = .unknown     // RawRepresentable enum
        // cellar: convert = { "dbType": "String", "converter": "ColorConverter" }
        var color: Color = .black
        // cellar: transient
        var cachedPreview: String = ""
        // cellar: name = "body_v2"
        var body: String = ""
        required init() {}
    }

    enum Status: Int { case unknown = 0, open = 1, done = 2 }
    struct Color { static let black = Color() }
    """

    @Test func apiExample() throws {
        let entities = try scan(Self.apiExample)
        #expect(entities.map(\.typeName) == ["Author", "Note"])
        let author = entities[0]
        #expect(author.kind == .class && author.modelName == "Author" && author.uid == nil && !author.isPublic)
        #expect(author.location == SourceLocation(file: "M.swift", line: 3, column: 1))
        #expect(author.properties.map(\.name) == ["id", "name"])
        let authorId = try #require(author.idProperty)
        #expect(authorId.name == "id" && authorId.propertyType == .long && authorId.flags == .id && !authorId.isTypedId)
        #expect(authorId.storedSwiftType == "Id" && authorId.swiftType == "Id")
        let name = try #require(author.property("name"))
        // A String's index is a hash index by default, as in ObjectBox.
        #expect(name.flags == [.unique, .indexed, .indexHash] && name.flags.rawValue == 2088 && name.unique && name.index == .hash)

        let note = entities[1]
        #expect(note.properties.map(\.name) == ["id", "title", "text", "creationDate", "author", "status", "color", "body"])
        let id = try #require(note.idProperty)
        #expect(id.isTypedId && id.swiftType == "EntityId<Note>" && id.flags.rawValue == 1 && id.propertyType.rawValue == 6)
        let title = try #require(note.property("title"))
        #expect(title.propertyType == .string && title.flags == [.indexed, .indexHash] && title.flags.rawValue == 2056 && title.index == .hash)
        let text = try #require(note.property("text"))
        #expect(text.isOptional && text.swiftType == "String" && text.propertyType.rawValue == 9 && text.flags == [])
        #expect(text.location == SourceLocation(file: "M.swift", line: 14, column: 5))
        #expect(note.property("creationDate")?.propertyType.rawValue == 10)
        #expect(note.property("creationDate")?.defaultValue == .date(seconds: 1_704_067_200, sinceReferenceDate: false))
        let relation = try #require(note.property("author"))
        #expect(relation.propertyType.rawValue == 11 && relation.flags.rawValue == 520 && relation.relationTarget == "Author")
        #expect(relation.storedSwiftType == "Id" && !relation.isOptional)
        let status = try #require(note.property("status"))
        #expect(status.conversion == .rawValue(defaultCase: ".unknown") && status.propertyType == .long)
        #expect(status.storedSwiftType == "Int" && status.swiftType == "Status")
        let color = try #require(note.property("color"))
        #expect(color.conversion == .converter(type: "ColorConverter", dbType: "String"))
        #expect(color.propertyType == .string && color.storedSwiftType == "String" && color.swiftType == "Color")
        let body = try #require(note.property("body"))
        #expect(body.modelName == "body_v2" && body.name == "body")
    }

    @Test func apiExampleBacklink() throws {
        let source = Self.apiExample.replacingOccurrences(of: "    var name: String = \"\"\n",
                                                          with: "    var name: String = \"\"\n    // cellar: backlink = \"author\"\n    var notes: ToMany<Note> = nil\n")
        let entities = try scan(source)
        let author = entities[0]
        #expect(author.properties.map(\.name) == ["id", "name"])
        #expect(author.relations == [RelationDescription(name: "notes", modelName: "notes", target: "Note", backlink: .toOne(property: "author"),
                                                         location: SourceLocation(file: "M.swift", line: 8, column: 5))])
        #expect(author.standaloneRelations.isEmpty && author.hasRelations && entities[1].hasRelations)
    }

    /// ObjectBox's converter example, verbatim (its `case default = 0` is not valid Swift, which does not
    /// matter: Role is read through a converter).
    @Test func seedEnumsAndConverters() throws {
        let source = """
        enum TestEnum: Int {
            case unknown = 0
            case first = 100
            case second = 200
            case third = 300
        }

        class EnumEntity: Entity {
            var id: Id = 0
            // objectbox: convert = { "default": ".unknown" }
            var custom: TestEnum
        }

        class RoleConverter {
            static func convert(_ enumerated: Role) -> Int {
                return enumerated.rawValue
            }
            static func convert(_ num: Int?) -> Role {
                guard let num = num else { return Role.default }
                return TestEnum(rawValue: num) ?? Role.default
            }
        }

        enum Role: Int {
            case default = 0
            case author = 1
            case admin = 2
        }

        class User: Entity, CustomDebugStringConvertible {
            var id: Id = 0
            // objectbox: convert = { "dbType": "Int", "converter": "RoleConverter" }
            var role = Role.default
        }
        """
        let entities = try scan(source)
        #expect(entities.map(\.typeName) == ["EnumEntity", "User"])
        let custom = try #require(entities[0].property("custom"))
        #expect(custom.conversion == .rawValue(defaultCase: ".unknown") && custom.propertyType == .long)
        #expect(custom.storedSwiftType == "Int" && custom.swiftType == "TestEnum" && !custom.isOptional)
        let role = try #require(entities[1].property("role"))
        #expect(role.conversion == .converter(type: "RoleConverter", dbType: "Int") && role.swiftType == "Role")
        #expect(role.propertyType == .long && role.storedSwiftType == "Int" && role.flags == [])
    }

    @Test func enumRawTypesAndDefaults() throws {
        let source = """
        enum Small: UInt8 { case a = 1 }
        enum Word: String { case `default`, other }
        class E: Entity {
            var id: Id = 0
            // cellar: convert = { "default": ".a" }
            var small: Small = .a
            // cellar: convert = { "default": ".default" }
            var word: Word = .other
            // cellar: convert
            var maybe: Word?
            // cellar: convert = {}
            var maybeToo: Optional<Small>
            // cellar: convert = { "dbType": "Int16", "default": ".x" }
            var external: External = .x
            // cellar: convert = { "default": ".on" }
            var nested: Kind = .on
            enum Kind: Int32 { case on = 1, off = 0 }
        }
        extension E { enum Other: Int64 { case z = 0 } }
        """
        let e = try entity(source)
        let small = try #require(e.property("small"))
        #expect(small.propertyType == .byte && small.flags == .unsigned && small.storedSwiftType == "UInt8")
        #expect(e.property("word")?.propertyType == .string)
        #expect(e.property("word")?.conversion == .rawValue(defaultCase: ".default"))
        #expect(e.property("maybe")?.conversion == .rawValue(defaultCase: nil))
        #expect(e.property("maybe")?.isOptional == true)
        #expect(e.property("maybeToo")?.isOptional == true && e.property("maybeToo")?.swiftType == "Small")
        #expect(e.property("external")?.propertyType == .short && e.property("external")?.storedSwiftType == "Int16")
        #expect(e.property("nested")?.propertyType == .int && e.property("nested")?.storedSwiftType == "Int32")
    }

    // MARK: Types

    @Test func primaryKeys() throws {
        let string = try entity("class E: Entity {\n    var id: Id = 0\n    // cellar: primaryKey\n    var email: String = \"\"\n}")
        #expect(string.property("email")?.flags == [.primaryKey, .unique, .indexed] && string.property("email")?.unique == true)
        let hashed = try entity("class E: Entity {\n    var id: Id = 0\n    // cellar: primaryKey\n    // cellar: index = \"hash64\"\n    var email: String = \"\"\n}")
        #expect(hashed.property("email")?.flags == [.primaryKey, .unique, .indexed, .indexHash64])
        let uuid = try entity("class E: Entity {\n    var id: Id = 0\n    // cellar: primaryKey\n    var code: UUID?\n}")
        #expect(uuid.property("code")?.flags == [.primaryKey, .unique, .indexed])
        let number = try entity("class E: Entity {\n    var id: Id = 0\n    // cellar: primaryKey\n    // cellar: index = \"value\"\n    var n: UInt32 = 0\n}")
        #expect(number.property("n")?.flags == [.primaryKey, .unique, .indexed, .unsigned])
    }

    @Test func everyCollectionType() throws {
        // ObjectBox's vector codes where it has one; Cellar's extension codes (1000 + element for
        // other lists, 2000 + element for sets, 3000 + value for maps) elsewhere.
        let types: [(String, Int, PropertyFlags, String)] = [
            ("[Bool]", 22, [], "Bool"), ("[Int16]", 24, [], "Int16"), ("[UInt16]", 24, .unsigned, "UInt16"),
            ("[Int32]", 26, [], "Int32"), ("[Int]", 27, [], "Int"), ("Array<UInt64>", 27, .unsigned, "UInt64"),
            ("[Float]", 28, [], "Float"), ("[Double]", 29, [], "Double"), ("[String]", 30, [], "String"),
            ("[Date]", 31, [], "Date"), ("[Int8]", 1002, [], "Int8"), ("[Data]", 1023, [], "Data"), ("[UUID]", 1100, [], "UUID"),
            ("Set<String>", 2009, [], "String"), ("Set<UInt8>", 2002, .unsigned, "UInt8"), ("Swift.Set<UUID>", 2100, [], "UUID"),
            ("[String: Double]", 3008, [], "Double"), ("Dictionary<String, Int>", 3006, [], "Int"), ("[String: Data]", 3023, [], "Data"),
            ("[String: Bool]", 3001, [], "Bool"), ("[Id]", 27, .unsigned, "UInt64"),
        ]
        for (swift, code, flags, element) in types {
            for optional in [false, true] {
                let declared = optional ? "\(swift)?" : swift
                let found = try entity("class E: Entity {\n    var id: Id = 0\n    var x: \(declared)\n}")
                let x = try #require(found.property("x"))
                #expect(x.propertyType.rawValue == code && x.flags == flags && x.elementSwiftType == element && x.isOptional == optional, "\(declared)")
                #expect(x.propertyType.collection != nil, "\(declared)")
            }
        }
        let nano = try entity("class E: Entity {\n    var id: Id = 0\n    // cellar: date-nano\n    var x: Set<Date> = []\n}")
        #expect(nano.property("x")?.propertyType.rawValue == 2012)
        let indexed = try entity("class E: Entity {\n    var id: Id = 0\n    // cellar: index\n    var tags: [String] = []\n    // cellar: index\n    var ns: Set<Int> = []\n}")
        #expect(indexed.property("tags")?.flags == [.indexed] && indexed.property("ns")?.flags == [.indexed])
        let hashed = try entity("class E: Entity {\n    var id: Id = 0\n    // cellar: index = \"hash64\"\n    var tags: [String] = []\n}")
        #expect(hashed.property("tags")?.flags == [.indexed, .indexHash64])
        let flex = try entity("class E: Entity {\n    var id: Id = 0\n    var a: FlexValue = .null\n    var b: Cellar.FlexValue?\n}")
        #expect(flex.property("a")?.propertyType == .flex && flex.property("a")?.isFlex == true && flex.property("b")?.isOptional == true)
        #expect(errors([(path: "M.swift", contents: "class E: Entity {\n    var id: Id = 0\n    // cellar: index\n    var a: FlexValue = .null\n}")])
            .first?.contains("a flexible value can be neither indexed, unique nor a primary key") == true)
        // Inferred from an initializer.
        let inferred = try entity("class E: Entity {\n    var id: Id = 0\n    var a = [String]()\n    var b = Set<Int>()\n    var c = [String: Double]()\n}")
        #expect(inferred.property("a")?.propertyType.rawValue == 30 && inferred.property("b")?.propertyType.rawValue == 2006
            && inferred.property("c")?.propertyType.rawValue == 3008)
    }

    @Test func everyPropertyType() throws {
        let types: [(String, PropertyType, PropertyFlags, String)] = [
            ("Bool", .bool, [], "Bool"), ("Int8", .byte, [], "Int8"), ("UInt8", .byte, .unsigned, "UInt8"),
            ("Int16", .short, [], "Int16"), ("UInt16", .short, .unsigned, "UInt16"), ("Int32", .int, [], "Int32"),
            ("UInt32", .int, .unsigned, "UInt32"), ("Int64", .long, [], "Int64"), ("Int", .long, [], "Int"),
            ("UInt64", .long, .unsigned, "UInt64"), ("UInt", .long, .unsigned, "UInt"), ("Float", .float, [], "Float"),
            ("Double", .double, [], "Double"), ("String", .string, [], "String"), ("Date", .date, [], "Date"),
            ("Data", .byteVector, [], "Data"), ("[UInt8]", .byteVector, [], "[UInt8]"),
            ("Array<UInt8>", .byteVector, [], "[UInt8]"), ("Foundation.Date", .date, [], "Date"),
            ("Swift.Int32", .int, [], "Int32"), ("Id", .long, .unsigned, "UInt64"),
            ("UUID", .uuid, [], "UUID"), ("Foundation.UUID", .uuid, [], "UUID"),
        ]
        var source = "class All: Entity {\n    var id: Id = 0\n"
        for (index, (type, _, _, _)) in types.enumerated() {
            source += "    var p\(index): \(type)\n    var q\(index): \(type)?\n    var r\(index): Optional<\(type)>\n"
        }
        source += "}\n"
        let all = try entity(source)
        #expect(all.properties.count == 1 + 3 * types.count)
        for (index, (type, code, flags, stored)) in types.enumerated() {
            for prefix in ["p", "q", "r"] {
                let property = try #require(all.property("\(prefix)\(index)"))
                #expect(property.propertyType == code && property.flags == flags && property.storedSwiftType == stored, "\(type)")
                #expect(property.swiftType == type && property.isOptional == (prefix != "p") && property.conversion == .none, "\(type)")
                #expect(!property.isId && property.index == nil && property.relationTarget == nil, "\(type)")
            }
        }
        #expect(all.property("p0")?.location == SourceLocation(file: "M.swift", line: 3, column: 5))
    }

    @Test func dateNano() throws {
        let e = try entity("""
        class E: Entity {
            var id: Id = 0
            // cellar: date-nano
            // cellar: default = 1.5
            var at: Date = Date()
            // objectbox: date-nano
            var maybe: Date?
            // cellar: date-nano
            // cellar: convert = { "dbType": "Date", "converter": "DayConverter" }
            var day: Day
        }
        """)
        #expect(e.property("at")?.propertyType.rawValue == 12 && e.property("at")?.dateNano == true)
        #expect(e.property("at")?.defaultValue == .date(seconds: 1.5, sinceReferenceDate: false))
        #expect(e.property("maybe")?.propertyType == .dateNano && e.property("maybe")?.isOptional == true)
        #expect(e.property("day")?.propertyType == .dateNano && e.property("day")?.storedSwiftType == "Date")
    }

    @Test func uuidProperties() throws {
        let e = try entity("""
        class E: Entity {
            var id: Id = 0
            // cellar: unique
            // cellar: default = "e621e1f8-c36c-495a-93fc-0c247a3e6e5f"
            var id2: UUID = UUID()
            // cellar: index
            var ref: UUID?
            // cellar: default = "00000000-0000-0000-0000-000000000000"
            var plain = UUID()
        }
        """)
        let id2 = try #require(e.property("id2"))
        #expect(id2.propertyType == .uuid && id2.propertyType.rawValue == 100 && id2.storedSwiftType == "UUID" && !id2.isOptional)
        #expect(id2.index == .value && id2.unique && id2.flags == [.indexed, .unique], "a UUID's index is a value index")
        let ref = try #require(e.property("ref"))
        #expect(ref.propertyType == .uuid && ref.isOptional && ref.index == .value && ref.flags == .indexed)
        #expect(e.property("plain")?.propertyType == .uuid, "the type inferred from `UUID()`")
        #expect(id2.defaultValue == .uuid("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
    }

    @Test func idForms() throws {
        let typed = try entity("struct S: Entity { var id: EntityId<S> = 0 }")
        #expect(typed.kind == .struct && typed.idProperty?.isTypedId == true)
        #expect(try entity("struct S: Entity { var id: EntityId<Self> = 0 }").idProperty?.isTypedId == true)
        let plain = try entity("class C: Entity { var id: UInt64 = 0 }").idProperty
        #expect(plain?.flags == .id && plain?.swiftType == "UInt64" && plain?.propertyType == .long)
        let qualified = try entity("class C: Cellar.Entity { var id: Cellar.Id = 0 }").idProperty
        #expect(qualified?.swiftType == "Cellar.Id")
        let annotated = try entity("""
        class C: Entity {
            // cellar: id = { "assignable": true }
            var key: Int64 = 0
            var id: String = ""
        }
        """)
        let key = try #require(annotated.idProperty)
        #expect(key.name == "key" && key.flags == [.id, .idSelfAssignable] && key.flags.rawValue == 129 && key.idAssignable)
        #expect(annotated.property("id")?.isId == false && annotated.property("id")?.propertyType == .string)
        let notAssignable = try entity("""
        class C: Entity {
            // objectbox: id = { "assignable": false }
            var id: Id = 0
        }
        """)
        #expect(notAssignable.idProperty?.flags == .id && notAssignable.idProperty?.idAssignable == false)
        let nested = try entity("enum NS { final class Inner: Entity { var id: EntityId<NS.Inner> = 0 } }")
        #expect(nested.idProperty?.isTypedId == true)
    }

    @Test func relations() throws {
        let entities = try scan("""
        enum App {
            class Author: Entity { var id: Id = 0 }
            class Book: Entity {
                var id: Id = 0
                var author: ToOne<Author> = nil
                // cellar: name = "writer2"
                var other: Cellar.ToOne<App.Author> = nil
                var sameAgain = ToOne<Author>()
            }
        }
        """)
        let book = try #require(entities.first { $0.typeName == "App.Book" })
        for name in ["author", "other", "sameAgain"] {
            let property = try #require(book.property(name))
            #expect(property.propertyType == .relation && property.flags == relationFlags && property.relationTarget == "App.Author")
            #expect(property.storedSwiftType == "Id" && property.index == .value)
        }
        #expect(book.property("other")?.modelName == "writer2")
    }

    // MARK: Annotations

    @Test(arguments: ["cellar", "objectbox"])
    func everyAnnotation(prefix: String) throws {
        let source = """
        // \(prefix): entity
        // \(prefix): uid = 123
        // \(prefix): name = "Renamed"
        public final class Thing {
            // \(prefix): id
            // \(prefix): uid
            var key: Id = 0
            // \(prefix): uid = 9223372036854775807
            // \(prefix): name = "label_v2"
            var label = ""
            // \(prefix): transient
            var skipped = 0
            // \(prefix): index
            var plain: Int32 = 0
            // \(prefix): index = "hash"
            var hashed = ""
            // \(prefix): index = "hash64"
            var hashed64 = ""
            // \(prefix): index = "value"
            var valued: String?
            // \(prefix): unique
            var code: UInt16 = 0
            // \(prefix): unique = { "onConflict": "replace" }
            // \(prefix): index = "hash"
            var email = ""
            // \(prefix): unique = { "onConflict": "fail" }
            var serial: UInt64 = 0
            // \(prefix): convert = { "dbType": "[UInt8]", "converter": "Blob" }
            var blob: Blob?
            // \(prefix): date-nano
            var at: Date?
            init() {}
        }
        """
        let thing = try entity(source)
        #expect(thing.typeName == "Thing" && thing.modelName == "Renamed" && thing.uid == .some(.some(123)) && thing.isPublic)
        #expect(thing.properties.map(\.name) == ["key", "label", "plain", "hashed", "hashed64", "valued", "code", "email", "serial", "blob", "at"])
        let key = try #require(thing.idProperty)
        #expect(key.name == "key" && key.uid == .some(nil) && key.flags == .id)
        let label = try #require(thing.property("label"))
        #expect(label.modelName == "label_v2" && label.uid == .some(.some(UInt64(Int64.max))))
        #expect(thing.property("plain")?.flags == .indexed && thing.property("plain")?.index == .value)
        let searched = try entity("class S: Entity {\n    var id: Id = 0\n    // cellar: index = \"fulltext\"\n    var text: String?\n}")
        #expect(searched.property("text")?.flags == [.indexed, .fullTextIndex] && searched.property("text")?.index == .fullText)
        #expect(searched.property("text")?.flags.rawValue == 536_870_920)
        let vectors = try entity("class V: Entity {\n    var id: Id = 0\n    // cellar: hnsw = { \"dimensions\": 3, \"distanceType\": \"cosine\" }\n    var a: [Float] = []\n    // objectbox: hnswIndex: {\"dimensions\": 2, \"distanceType\": \"geo\"}\n    var b: [Float]?\n}")
        #expect(vectors.property("a")?.flags == [.indexed] && vectors.property("a")?.index == .hnsw && vectors.property("a")?.propertyType == .floatVector)
        #expect(vectors.property("a")?.hnswParams == .object([JSONMember("dimensions", .number("3")), JSONMember("distanceType", .string("cosine"))]))
        #expect(vectors.property("b")?.hnswParams == .object([JSONMember("dimensions", .number("2")), JSONMember("distanceType", .string("geo"))]))
        let located = try entity("class P: Entity {\n    var id: Id = 0\n    // cellar: index\n    var at: GeoPoint?\n    var other: GeoPoint = try! GeoPoint(latitude: 1, longitude: 2)\n}")
        #expect(located.property("at")?.flags == [.indexed, .geoIndex] && located.property("at")?.index == .geo)
        #expect(located.property("at")?.propertyType == .geoPoint && located.property("other")?.propertyType == .geoPoint)
        #expect(located.property("other")?.flags == [.notNull] || located.property("other")?.flags == [])
        #expect(thing.property("hashed")?.flags == [.indexed, .indexHash] && thing.property("hashed")?.index == .hash)
        #expect(thing.property("hashed")?.flags.rawValue == 2056)
        #expect(thing.property("hashed64")?.flags == [.indexed, .indexHash64] && thing.property("hashed64")?.index == .hash64)
        #expect(thing.property("valued")?.flags == .indexed && thing.property("valued")?.index == .value)
        let code = try #require(thing.property("code"))
        #expect(code.flags == [.unique, .indexed, .unsigned] && code.unique && !code.uniqueOnConflictReplace)
        let email = try #require(thing.property("email"))
        #expect(email.flags == [.unique, .indexed, .indexHash, .uniqueOnConflictReplace] && email.uniqueOnConflictReplace)
        #expect(email.index == .hash)
        #expect(thing.property("serial")?.flags == [.unique, .indexed, .unsigned])
        let blob = try #require(thing.property("blob"))
        #expect(blob.conversion == .converter(type: "Blob", dbType: "[UInt8]") && blob.propertyType == .byteVector && blob.isOptional)
        #expect(thing.property("at")?.propertyType == .dateNano)
        #expect(thing.property("label")?.uid == .some(.some(9_223_372_036_854_775_807)))
        #expect(thing.property("plain")?.uid == nil)
    }

    @Test func annotationPlacement() throws {
        // Attributes before the annotation, annotations between attributes and the keyword, a
        // blank line and other comments in between, doc comments ignored.
        let e = try entity("""
        /// A doc comment: cellar: index
        @available(macOS 15, *)
        // cellar: name = "Moved"

        // a plain comment
        @MainActor
        // objectbox: entity
        final class Moved {
            var id: Id = 0
            /// objectbox: index (a doc comment, not an annotation)
            @available(*, deprecated)
            // cellar: index
            public var weight: Int = 0
            /* cellar: unique — a block comment, not an annotation */
            var other: Int = 0
            required init() {}
        }
        """)
        #expect(e.modelName == "Moved" && e.location == SourceLocation(file: "M.swift", line: 2, column: 1))
        #expect(e.property("weight")?.flags == .indexed)
        #expect(e.property("weight")?.location == SourceLocation(file: "M.swift", line: 11, column: 5))
        #expect(e.property("other")?.flags == [])
    }

    // MARK: Properties

    @Test func inferredTypes() throws {
        let e = try entity("""
        enum Mood: Int { case calm = 0, angry = 1 }
        class E: Entity {
            var id: Id = 0
            var s = "text", i = 42, d = 1.5, b = true
            var negative = -7, negativeDouble = -0.5
            // Initial values the type is inferred from but that the generator cannot evaluate
            // (a new value for each object, a conversion, a constant) need `default`.
            // cellar: default = 0
            var date = Date()
            var data = Data(), bytes = [UInt8](), generic = Array<UInt8>()
            var i64 = Int64(5), big = UInt32(7)
            // cellar: default = "12"
            var text = String(12)
            var max = UInt8.max
            // cellar: default = 0
            var now = Date.now
            // cellar: default = 3.141592653589793
            var pi = Double.pi
            var cast = 5 as Int16
            var multi = \"\"\"
                lines
                \"\"\"
            var c, e: Int8
            // cellar: convert = { "default": ".calm" }
            var mood = Mood.angry
            // cellar: convert = { "default": ".calm" }
            var qualifiedMood = E.Feeling.sad
            enum Feeling: String { case calm, sad }
            // cellar: uid = 77
            // cellar: default = 0
            var createdAt = Foundation.Date()
        }
        """)
        let expected: [(String, String)] = [
            ("s", "String"), ("i", "Int"), ("d", "Double"), ("b", "Bool"), ("negative", "Int"), ("negativeDouble", "Double"),
            ("date", "Date"), ("data", "Data"), ("bytes", "[UInt8]"), ("generic", "Array<UInt8>"), ("i64", "Int64"),
            ("big", "UInt32"), ("text", "String"), ("max", "UInt8"), ("now", "Date"), ("pi", "Double"), ("cast", "Int16"),
            ("multi", "String"), ("c", "Int8"), ("e", "Int8"), ("mood", "Mood"), ("qualifiedMood", "E.Feeling"),
            ("createdAt", "Foundation.Date"),
        ]
        #expect(e.properties.map(\.name) == ["id"] + expected.map(\.0))
        for (name, type) in expected {
            #expect(e.property(name)?.swiftType == type, "\(name)")
        }
        #expect(e.property("bytes")?.propertyType == .byteVector && e.property("generic")?.storedSwiftType == "[UInt8]")
        #expect(e.property("qualifiedMood")?.propertyType == .string)
        #expect(e.property("createdAt")?.uid == .some(.some(77)))
        #expect(e.property("i64")?.defaultValue == .integer(5) && e.property("big")?.defaultValue == .unsigned(7))
        #expect(e.property("max")?.defaultValue == .unsigned(255) && e.property("cast")?.defaultValue == .integer(5))
        #expect(e.property("text")?.defaultValue == .string("12") && e.property("pi")?.defaultValue == .floatingPoint(Double.pi))
        #expect(e.property("multi")?.defaultValue == .string("lines"))
        // Each binding of a multi-binding declaration is located at its name.
        #expect(e.property("i")?.location == SourceLocation(file: "M.swift", line: 4, column: 21))
    }

    @Test func skippedMembers() throws {
        let e = try entity("""
        class E: Entity {
            static var shared = E()
            class var kind: String { "E" }
            static let limit = 5
            var id: Id = 0
            var computed: Int { 42 }
            var both: Int {
                get { 1 }
                set { }
            }
            var observed: Int = 0 {
                willSet { }
                didSet { print(oldValue) }
            }
            // cellar: transient
            lazy var cache: [String] = []
            // objectbox: transient
            var memo: [String: Int] = [:]
            func compute() -> Int { 1 }
            init() {}
            enum Inner { case a }
            struct Helper { var x: [String] = [] }
            typealias Alias = Int
        }
        """)
        #expect(e.properties.map(\.name) == ["id", "observed"])
    }

    @Test func nestedAndStructEntities() throws {
        let entities = try scan("""
        class Outer: Entity {
            var id: Id = 0
            struct Inner: Entity {
                var id: Id = 0
                let fixed: Int
                var optional: String?
                // cellar: transient
                let constant = 5
                // cellar: transient
                var cache: String?
            }
        }
        enum Namespace {
            // cellar: name = "NamespacedThing"
            public struct Thing: Entity { var id: Id = 0 }
            struct NotAnEntity { var list: [String] = [] }
        }
        struct Plain { var list: [String] = [] }
        extension Plain { struct Helper { } }
        """)
        #expect(entities.map(\.typeName) == ["Outer", "Outer.Inner", "Namespace.Thing"])
        #expect(entities.map(\.modelName) == ["Outer", "Inner", "NamespacedThing"])
        #expect(entities[1].kind == .struct && entities[1].properties.map(\.name) == ["id", "fixed", "optional"])
        #expect(entities[1].location == SourceLocation(file: "M.swift", line: 3, column: 5))
        #expect(entities[2].isPublic && !entities[1].isPublic)
    }

    @Test func filesInOrder() throws {
        let entities = try SourceScanner.scan(files: [
            (path: "B.swift", contents: "class B: Entity { var id: Id = 0; var a: ToOne<A> = nil }"),
            (path: "A.swift", contents: "class A: Entity { var id: Id = 0 }\nclass A2: Entity { var id: Id = 0 }"),
        ])
        #expect(entities.map(\.typeName) == ["B", "A", "A2"])
        #expect(entities[0].location.file == "B.swift" && entities[2].location == SourceLocation(file: "A.swift", line: 2, column: 1))
        #expect(entities[0].property("a")?.relationTarget == "A")
    }

    @Test func noEntities() throws {
        #expect(try scan("struct P { var x: [String] }\nfunc f() {}").isEmpty)
        #expect(try scan("").isEmpty)
    }
}

// MARK: - Errors

@Suite struct SourceScannerErrorTests {
    @Test func unknownAnnotation() {
        let source = """
        class E: Entity {
            var id: Id = 0
            // cellar: indexed
            var name = ""
        }
        """
        expectError(source, at: "3:5", "`// cellar: indexed`: `indexed` is not an annotation Cellar knows. On a property it accepts: uid, uid = N, name = \"…\", id, id = { \"assignable\": true }, transient, index")
        expectError("// objectbox: entiti\nclass E: Entity { var id: Id = 0 }", at: "1:1",
                    "`entiti` is not an annotation Cellar knows. On a class or struct it accepts: entity, embedded, asymmetric, uid, uid = N, name = \"…\"")
        expectError("class E: Entity {\n    var id: Id = 0\n    // cellar:\n    var x = 0\n}", at: "3:5", "names no annotation")
    }

    @Test func annotationsInTheWrongPlace() {
        expectError("// cellar: index\nclass E: Entity { var id: Id = 0 }", at: "1:1",
                    "`// cellar: index`: on a type, `index` takes the properties of an index over several, two or more in key order: `index = [\"lastName\", \"firstName\"]` (to index one property, annotate the property itself)")
        expectError("// cellar: transient\nclass E: Entity { var id: Id = 0 }", at: "1:1",
                    "`// cellar: transient` is a property annotation and cannot be used on a type; on a class or struct Cellar accepts: entity, embedded, asymmetric, uid")
        expectError("class E: Entity {\n    var id: Id = 0\n    // objectbox: entity\n    var x = 0\n}", at: "3:5",
                    "`// objectbox: entity` belongs on a class or struct, not on a property")
        expectError("class E: Entity {\n    var id: Id = 0\n    var x = 0 // cellar: index\n}", at: "3:15",
                    "is at the end of a line, where it is not read: put it on its own line above the declaration")
        expectError("class E: Entity {\n    var id: Id = 0\n    // cellar: index\n    var x: Int { 1 }\n}", at: "3:5",
                    "is on a computed property, which is not stored; remove the annotation")
        expectError("class E: Entity {\n    var id: Id = 0\n    // cellar: index\n    static var x = 1\n}", at: "3:5",
                    "is on a static property")
        expectError("class E: Entity {\n    var id: Id = 0\n    // cellar: transient\n    func f() {}\n}", at: "3:5",
                    "is on a declaration that is not a stored property")
        expectError("// cellar: uid = 5\nclass E { var id: Id = 0 }", at: "1:1",
                    "is on `E`, which is not an entity: conform it to `Entity` or annotate it `// cellar: entity`")
        expectError("struct S {\n    // cellar: index\n    var x = 0\n}", at: "2:5", "is in `S`, which is not an entity")
        expectError("class E: Entity {\n    var id: Id = 0\n    // cellar: transient\n    // cellar: index\n    var x = 0\n}", at: "4:5",
                    "is transient (not stored), so the annotation has no effect")
    }

    @Test func malformedValues() {
        func check(_ annotation: String, _ fragment: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
            expectError("class E: Entity {\n    var id: Id = 0\n    // cellar: \(annotation)\n    var x: String = \"\"\n}",
                        at: "3:5", fragment, sourceLocation: sourceLocation)
        }
        check("uid = 0", "0 is not a UID; write `uid` (the generator then tells the UID to use) or `uid = N`")
        check("uid = 9223372036854775808", "9223372036854775808 is not a UID")
        check("uid = abc", "abc is not a UID")
        check("name = Foo", "the value is not valid JSON")
        check("name = \"\"", "the name must be non-empty")
        check("name", "the new name is missing")
        check("index = \"btree\"", "the index kind must be \"value\", \"hash\", \"hash64\", \"fulltext\" or \"geo\"; write `index`, `index = \"hash\"`")
        check("index = hash", "the value is not valid JSON")
        check("id = { \"assignable\": 1 }", "\"assignable\" must be true or false")
        check("id = { \"other\": true }", "\"other\" is not a key it knows (keys: \"assignable\")")
        check("unique = { \"onConflict\": \"ignore\" }", "\"onConflict\" must be \"replace\"")
        check("unique = \"replace\"", "the value must be a JSON object")
        check("convert = { \"dbType\": 5 }", "\"dbType\" must be a non-empty string")
        check("convert = { \"type\": \"Int\" }", "\"type\" is not a key it knows (keys: \"dbType\", \"converter\", \"default\")")
        check("convert = { \"default\": \"unknown\" }", "\"default\" must name an enum case with a leading dot")
        check("convert = { \"dbType\": \"Int\", \"converter\": \"my converter\" }", "\"converter\" must name a type")
        check("transient = true", "`transient` takes no value")
        check("date-nano = 1", "`date-nano` takes no value")
        check("index, unique", "expected `=` or the end of the line after `index`; write one annotation per line")
        check("index =", "the value after `=` is missing")
        check("backlink = \"\"", "the name must be non-empty")
        check("backlink = author", "the value is not valid JSON")
        expectError("class E: Entity {\n    var id: Id = 0\n    // cellar: index\n    // cellar: index\n    var x = 0\n}", at: "4:5",
                    "`// cellar: index`: `index` is given twice for the same declaration; keep one")
        expectError("// cellar: entity = true\nclass E { var id: Id = 0 }", at: "1:1", "`entity` takes no value")
    }

    @Test func propertyErrors() {
        let prefix = "class E: Entity {\n    var id: Id = 0\n"
        func check(_ body: String, at position: String, _ fragment: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
            expectError(prefix + body + "\n}\nenum Plain: Int { case a = 1 }\nenum NoRaw { case a }\nenum Real: Double { case a = 1 }\nstruct Point { }",
                        at: position, fragment, sourceLocation: sourceLocation)
        }
        check("    // cellar: transient\n    lazy var x = 0\n    lazy var y = 0", at: "5:5",
              "`E.y`: lazy properties cannot be stored, mark it transient")
        check("    var x = compute()", at: "3:5", "the type of `E.x` cannot be inferred from `compute()` without type checking: add a type annotation")
        check("    var x = nil as Int?, y = Int(\"5\")", at: "3:26", "the type of `E.y` cannot be inferred")
        check("    var x = Plain(rawValue: 1)", at: "3:5", "add a type annotation")
        check("    var x = Other.value", at: "3:5", "add a type annotation")
        check("    // cellar: backlink = \"x\"\n    var x: Int = 0", at: "3:5",
              "`// cellar: backlink = \"x\"` is on `E.x`, a Int: a backlink is a ToMany (`var x: ToMany<Target> = nil`); remove the annotation or make the property a ToMany")
        // Collections of what a record cannot hold element by element.
        check("    var tags: [Plain] = []", at: "3:5",
              "`E.tags` is a [Plain]: a list can hold Bool, the integer types, Float, Double, String, Date, Data and UUID, not types with a converter; store their raw values (e.g. `[Int]` or `[String]`) and map them in code, convert the whole collection to one built-in value (such as a JSON String) with `// cellar: convert`, or replace it with a relation to a new entity for the elements")
        check("    var set: Set<Point> = []", at: "3:5", "`E.set` is a Set<Point>: a set can hold Bool")
        check("    var map: [Int: String] = [:]", at: "3:5", "`E.map` is a [Int: String]: a map's keys must be String")
        check("    var nested: [[String]] = []", at: "3:5", "`E.nested` is a [[String]]: a list can hold Bool, the integer types, Float, Double, String, Date, Data and UUID; use a relation (`ToMany<T>`) for objects, or a `FlexValue` for nested, mixed data")
        check("    var bytes: [[UInt8]] = []", at: "3:5", "write its elements as `Data` (`[Data]`)")
        check("    var es: [E] = []", at: "3:5", "not objects of the entity E; use a relation, `var es: ToMany<E> = nil`")
        check("    // cellar: unique\n    var tags: [String] = []", at: "3:5", "a collection cannot be unique")
        check("    // cellar: index\n    var m: [String: Int] = [:]", at: "3:5", "lists and sets can be indexed (a key per element), maps cannot")
        check("    // cellar: index\n    var d: [Double] = []", at: "3:5", "cannot index Float, Double or byte vector (Data) values")
        check("    // cellar: date-nano\n    var d: [Int] = []", at: "3:5", "date-nano is for Date elements")
        check("    var tags: [String] = [\"a\"]", at: "3:5", "`E.tags` starts as `[\"a\"]`, but records written before the property existed read an empty list, not that value; start it as `[]` and fill it in code, or make it optional")
        check("    var m: [String: Int] = [\"a\": 1]", at: "3:5", "read an empty map, not that value; start it as `[:]`")
        check("    var f: FlexValue = [:]", at: "3:5", "read `.null`, not that value; start it as `.null`")
        check("    // cellar: default = 1\n    var f: [Int] = []", at: "3:5", "read an empty list (nil when optional); remove the annotation")
        // Primary keys.
        check("    // cellar: primaryKey\n    var a: String = \"\"\n    // cellar: primaryKey\n    var b: Int = 0", at: "6:5",
              "`E.b` is a second primary key (`E.a` is one): an entity has at most one; remove one of the annotations")
        check("    // cellar: primaryKey\n    var f: Float = 0", at: "3:5", "`// cellar: primaryKey` is on `E.f`, stored as Float: a primary key is a String, a UUID or an integer, stored as it is (no converter or enum)")
        check("    // cellar: primaryKey\n    var b: Bool = false", at: "3:5", "a primary key is a String, a UUID or an integer")
        check("    // cellar: primaryKey\n    var tags: [String] = []", at: "3:5", "a primary key is a String, a UUID or an integer")
        check("    // objectbox: primaryKey\n    var a: String = \"\"", at: "3:5", "`primaryKey` is a Cellar annotation (ObjectBox has no equivalent); write it `// cellar: primaryKey`")
        check("    // cellar: primaryKey = 1\n    var a: String = \"\"", at: "3:5", "primaryKey")
        check("    // cellar: primaryKey\n    // cellar: unique = { \"onConflict\": \"replace\" }\n    var a: String = \"\"", at: "3:5", "remove `onConflict`")
        check("    var point: Point", at: "3:5", "`E.point` is a Point, which cannot be stored")
        check("    var e: E?", at: "3:5", "`E.e` is the entity E, which cannot be stored inside another object: use a relation, `var e: ToOne<E> = nil`")
        check("    var plain: Plain", at: "3:5", "`E.plain` is the enum Plain: store its raw value with `// cellar: convert = { \"default\": \".a\" }`")
        check("    var nested: String??", at: "3:5", "is a double optional")
        check("    let x = 0", at: "3:5", "`E.x` is a `let`: the generated code creates objects with `init()` and then sets each stored property; make it var or transient")
        check("    private var x = 0", at: "3:5", "`E.x` is private: the generated code (in another file) must read and write it")
        check("    fileprivate(set) var x = 0", at: "3:5", "is fileprivate(set)")
        check("    var (a, b) = (1, 2)", at: "3:5", "declares several values in one pattern")
        check("    #if DEBUG\n    var debug = 0\n    #endif", at: "4:5", "declares stored properties inside `#if`")
    }

    @Test func indexErrors() {
        func check(_ annotation: String, _ type: String, _ fragment: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
            expectError("class E: Entity {\n    var id: Id = 0\n    // cellar: \(annotation)\n    var x: \(type)\n}",
                        at: "3:5", fragment, sourceLocation: sourceLocation)
        }
        for type in ["Double", "Float?", "Data", "[UInt8]"] {
            check("index", type, "Cellar, like ObjectBox, cannot index Float, Double or byte vector (Data, [UInt8]) properties; remove the annotation")
            check("unique", type, "cannot index Float, Double or byte vector")
        }
        check("index = \"hash\"", "Int", "hash indexes are for String properties; use `// cellar: index` (a value index)")
        check("index = \"hash64\"", "Date", "hash indexes are for String properties")
        check("index = \"hash\"", "UUID", "hash indexes are for String properties")
        check("index = \"fulltext\"", "Int", "is stored as Int: a full-text index is for String properties")
        check("index = \"fulltext\"", "[String] = []", "a full-text index is for a String property (its words are indexed)")
        expectError("class E: Entity {\n    var id: Id = 0\n    // cellar: index = \"fulltext\"\n    // cellar: unique\n    var x: String = \"\"\n}",
                    at: "4:5", "a full-text index holds words, not whole values, so it cannot check uniqueness")
        expectError("class E: Entity {\n    var id: Id = 0\n    var a: A?\n}\n// cellar: embedded\nstruct A {\n    // cellar: index = \"fulltext\"\n    var x: String = \"\"\n}",
                    at: "7:5", "in the embedded type A: full-text indexes are on an entity's own String properties")
        check("index = \"geo\"", "String = \"\"", "a geo index is for GeoPoint properties")
        check("index = \"hash\"", "GeoPoint?", "its index is a geo index; write `// cellar: index = \"geo\"`")
        check("unique", "GeoPoint?", "a GeoPoint: its index finds points within shapes and cannot check uniqueness")
        check("default = 0", "GeoPoint = try! GeoPoint(latitude: 1, longitude: 2)", "a record without the point reads latitude 0, longitude 0")
        check("hnsw = { \"dimensions\": 4 }", "String = \"\"", "an HNSW index is on a [Float] (or [Float]?) property of vectors")
        check("hnsw = { \"dimensions\": 4 }", "[Double] = []", "an HNSW index is on a [Float] (or [Float]?) property of vectors")
        check("hnsw = { \"neighborsPerNode\": 4 }", "[Float] = []", "dimensions")
        check("hnsw = { \"dimensions\": 4, \"distanceType\": \"manhattan\" }", "[Float] = []", "distanceType")
        check("hnsw", "[Float] = []", "the HNSW parameters are missing")
        check("date-nano", "String", "is stored as String: date-nano is for Date properties; remove it")
        check("index", "ToOne<E> = nil", "cannot be used on the relation `E.x` (a ToOne is stored as the target's id, always indexed; it accepts uid, name and onDelete)")
        expectError("class E: Entity {\n    var id: Id = 0\n    // cellar: convert = { \"dbType\": \"Double\", \"converter\": \"C\" }\n    // cellar: index\n    var x: Money\n}",
                    at: "4:5", "stored as Double: Cellar, like ObjectBox, cannot index")
    }

    @Test func conversionErrors() {
        let enums = "\nenum Plain: Int { case a = 1, unknown = 0 }\nenum NoRaw { case a }\nenum Real: Double { case a = 1 }\nenum Str: String { case x }"
        func check(_ annotation: String, _ type: String, _ fragment: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
            expectError("class E: Entity {\n    var id: Id = 0\n    // cellar: \(annotation)\n    var x: \(type)\n}" + enums,
                        at: "3:5", fragment, sourceLocation: sourceLocation)
        }
        check("convert = { \"default\": \".unknown\" }", "Status",
              "`E.x` is a Status, which is not an enum declared in the scanned sources: declare its raw type with dbType, e.g. `// cellar: convert = { \"dbType\": \"Int\", \"default\": \".unknown\" }`")
        check("convert = { \"default\": \".a\" }", "NoRaw", "is the enum NoRaw, which has no raw type: declare one (`enum NoRaw: Int`)")
        check("convert = { \"default\": \".a\" }", "Real", "is the enum Real with raw type Double: enums are stored by raw values that are integers or String")
        check("convert = { \"default\": \".b\" }", "Plain", "\"default\": \".b\" is not a case of Plain (cases: .a, .unknown)")
        check("convert = {}", "Plain", "`E.x` is not optional, so it needs a default case for a missing or unknown stored value")
        check("convert = { \"dbType\": \"Int32\", \"default\": \".a\" }", "Plain", "\"dbType\" is Int32, but the raw type of Plain is Int")
        check("convert = { \"dbType\": \"Double\", \"default\": \".a\" }", "Other", "needs an integer or String \"dbType\", not Double")
        check("convert = { \"converter\": \"C\" }", "Point", "a converter needs the database type it converts to, e.g. `\"dbType\": \"String\"`; add \"dbType\"")
        check("convert = { \"dbType\": \"Character\", \"converter\": \"C\" }", "Point", "\"dbType\": \"Character\" is not a built-in type; use one of Bool, Int8")
        check("convert = { \"dbType\": \"Int\", \"converter\": \"C\", \"default\": \".a\" }", "Plain", "with a converter, the converter returns the value for a missing one: remove \"default\"")
        check("convert = { \"default\": \".a\" }", "String", "stores an enum by its raw value, but `E.x` is a String; it is stored as it is: remove the annotation")
        check("convert = { \"default\": \".a\" }", "[Plain]", "add \"dbType\" and \"converter\"")
        check("convert = { \"default\": \".a\" }", "ToOne<E> = nil", "cannot be used on the relation")
    }

    @Test func idErrors() {
        expectError("class E: Entity {\n    var name = \"\"\n}", at: "1:1", "`E` has no id property: add `var id: Id = 0`")
        expectError("class E: Entity {\n    var id: Int = 0\n}", at: "1:1",
                    "`E` has no id property: add `var id: Id = 0` (or `var id: EntityId<E> = 0`, or annotate a 64-bit integer property `// cellar: id`); its `id` is Int, which is not an id type")
        expectError("class E: Entity {\n    var id: Id?\n}", at: "2:5", "the id `E.id` is optional: an id is never nil")
        expectError("class E: Entity {\n    // cellar: id\n    var a: UInt64 = 0\n    // objectbox: id\n    var b: UInt64 = 0\n}", at: "4:5",
                    "`E` has several properties annotated `// cellar: id` (`a`, `b`); an entity has one id")
        expectError("class E: Entity {\n    // cellar: id\n    var name: String = \"\"\n}", at: "2:5",
                    "`// cellar: id` is on `E.name`, a String: the id must be a 64-bit integer (Id, UInt64, Int64, Int, UInt) or EntityId<E>")
        expectError("class E: Entity {\n    // cellar: id\n    var small: Int32 = 0\n}", at: "2:5", "the id must be a 64-bit integer")
        expectError("class E: Entity {\n    // cellar: id\n    var id: EntityId<F> = 0\n}\nclass F: Entity { var id: Id = 0 }", at: "3:5",
                    "the id `E.id` is EntityId<F>, which names another type: the id of E must be EntityId<E> (or Id)")
        expectError("class E: Entity {\n    var id: Id = 0\n    var other: EntityId<E> = 0\n}", at: "3:5",
                    "EntityId is only for the id property of its own entity")
        expectError("struct S: Entity {\n    let id: Id\n}", at: "2:5", "the id `S.id` is a `let`: `put` writes the new id back, so declare it `var`")
        expectError("class E: Entity {\n    // cellar: index\n    var id: Id = 0\n}", at: "2:5", "`// cellar: index` cannot be used on the id `E.id`")
        // An id that failed for another reason gives no extra "no id" error.
        expectError("class E: Entity {\n    private var id: Id = 0\n}", at: "2:5", "`E.id` is private")
    }

    @Test func entityErrors() {
        expectError("struct S: Entity {\n    var id: Id = 0\n    let version = 1\n}", at: "3:5",
                    "`S.version` is a `let` with an initial value, which the memberwise initializer cannot set; make it var or transient")
        expectError("struct S: Entity {\n    var id: Id = 0\n    // cellar: transient\n    var cache: [Int]\n}", at: "3:5",
                    "a transient property of a struct needs an initial value")
        expectError("class C {}\nextension C {\n    class Inner: Entity { var id: Id = 0 }\n}", at: "3:5",
                    "`C.Inner` is declared in an extension, where the generator does not look for entities")
        expectError("actor A: Entity { var id: Id = 0 }", at: "1:1", "`A` is an actor: entities are classes or structs")
        expectError("// cellar: entity\nenum Kind: Int { case a }", at: "1:1", "`Kind` is an enum: entities are classes or structs")
        expectError("class G<T>: Entity { var id: Id = 0 }", at: "1:1", "`G` is generic or nested in a generic type")
        expectError("struct Box<T> {\n    class Inner: Entity { var id: Id = 0 }\n}", at: "2:5", "`Box.Inner` is generic or nested in a generic type")
        expectError("private class P: Entity { var id: Id = 0 }", at: "1:1", "`P` is private: the generated code (in another file) must use it")
        expectError("class E: Entity {\n    var id: Id = 0\n    var x: Int = = 5\n}", at: "3:18", "`E` does not parse as Swift; fix the syntax error first")
        expectError("class E: Entity {\n    var id: Id = 0\n    var t: ToOne<Missing> = nil\n}", at: "3:5",
                    "`E.t` is a ToOne<Missing>, but `Missing` is not an entity in the scanned sources")
        expectError("class E: Entity {\n    var id: Id = 0\n    var t: ToOne<E>?\n}", at: "3:5", "`E.t` is an optional ToOne: a ToOne is never optional")
        expectError("class E: Entity {\n    var id: Id = 0\n    // cellar: name = \"x\"\n    var y = 0\n    var x = 0\n}", at: "5:5",
                    "`E.x` and `E.y` both have the name x in the model")
        expectError("class A: Entity { var id: Id = 0 }\n// cellar: name = \"A\"\nclass B: Entity { var id: Id = 0 }", at: "3:1",
                    "`B` and `A` (M.swift:1:1) both have the name A in the model: rename one with `// cellar: name = \"…\"`")
        expectError("// cellar: uid = 7\nclass A: Entity {\n    var id: Id = 0\n    // cellar: uid = 7\n    var x = 0\n}", at: "5:5",
                    "the UID 7 of `A.x` is also the UID of `A`")
    }

    // MARK: ToMany and backlinks

    @Test func standaloneToMany() throws {
        let source = """
        class Tag: Entity {
            var id: Id = 0
            var name = ""
        }
        class Note: Entity {
            var id: Id = 0
            var tags: ToMany<Tag> = nil
            // cellar: uid = 77
            // objectbox: name = "labels"
            var labels: ToMany<Tag> = []
            var title = ""
        }
        """
        let note = try entity(source, "Note")
        // ToMany is not a stored property: it is not in `properties`.
        #expect(note.properties.map(\.name) == ["id", "title"])
        #expect(note.relations == [
            RelationDescription(name: "tags", modelName: "tags", target: "Tag", location: SourceLocation(file: "M.swift", line: 7, column: 5)),
            RelationDescription(name: "labels", modelName: "labels", target: "Tag", uid: .some(77), location: SourceLocation(file: "M.swift", line: 10, column: 5)),
        ])
        #expect(note.standaloneRelations.count == 2 && note.hasRelations)
        #expect(try !entity(source, "Tag").hasRelations)
    }

    @Test func nestedAndSelfTargets() throws {
        let source = """
        enum App {
            struct Folder: Entity {
                var id: Id = 0
                var parent: ToOne<Folder> = nil
                // cellar: backlink = "parent"
                var children: ToMany<Folder> = nil
                var related: ToMany<App.Folder> = nil
            }
        }
        """
        let folder = try entity(source)
        #expect(folder.typeName == "App.Folder" && folder.kind == .struct)
        #expect(folder.properties.first { $0.name == "parent" }?.relationTarget == "App.Folder")
        #expect(folder.relations.map(\.target) == ["App.Folder", "App.Folder"])
        #expect(folder.relations.map(\.backlink) == [.toOne(property: "parent"), nil])
        // Without a name, `parent` and `related` both point back: the backlink must name one.
        let found = errors(source.replacingOccurrences(of: "backlink = \"parent\"", with: "backlink"))
        #expect(found.count == 1 && found[0].hasPrefix("M.swift:5:9: error: ") && found[0].contains("`parent` (ToOne<App.Folder>), `related` (ToMany<App.Folder>)"))
    }

    @Test func backlinks() throws {
        let source = """
        class Author: Entity {
            var id: Id = 0
            // cellar: backlink = "writer"
            var notes: ToMany<Note> = nil
            // cellar: backlink
            var tagged: ToMany<Tag> = nil
        }
        class Note: Entity {
            var id: Id = 0
            // cellar: name = "writer"
            var author: ToOne<Author> = nil
        }
        class Tag: Entity {
            var id: Id = 0
            var authors: ToMany<Author> = nil
        }
        """
        let entities = try scan(source)
        #expect(entities[0].relations.map(\.backlink) == [.toOne(property: "writer"), .relation("authors")])
        #expect(entities[0].standaloneRelations.isEmpty && entities[2].standaloneRelations.map(\.name) == ["authors"])
        // By Swift name too, when the model name differs.
        let bySwiftName = try scan(source.replacingOccurrences(of: "backlink = \"writer\"", with: "backlink = \"author\""))
        #expect(bySwiftName[0].relations[0].backlink == .toOne(property: "writer"))
    }

    @Test func backlinkWithoutNameFindsTheOnlyRelationBack() throws {
        let source = """
        class Author: Entity {
            var id: Id = 0
            // cellar: backlink
            var notes: ToMany<Note> = nil
        }
        class Note: Entity {
            var id: Id = 0
            var author: ToOne<Author> = nil
            var other: ToOne<Note> = nil
        }
        """
        #expect(try entity(source, "Author").relations[0].backlink == .toOne(property: "author"))
        #expect(try entity(source.replacingOccurrences(of: "author: ToOne<Author>", with: "authors: ToMany<Author>"), "Author")
            .relations[0].backlink == .relation("authors"))
    }

    @Test func toManyErrors() {
        let prefix = "class E: Entity {\n    var id: Id = 0\n"
        let suffix = "\n}\nclass F: Entity {\n    var id: Id = 0\n    var e: ToOne<E> = nil\n    var g: ToOne<G> = nil\n    var es: ToMany<E> = nil\n    var title = \"\"\n    // cellar: backlink\n    var back: ToMany<H> = nil\n}\nclass G: Entity {\n    var id: Id = 0\n}\nclass H: Entity {\n    var id: Id = 0\n    var f: ToOne<F> = nil\n}"
        func check(_ body: String, at position: String, _ fragment: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
            expectError(prefix + body + suffix, at: position, fragment, sourceLocation: sourceLocation)
        }
        check("    var fs: ToMany<F>?", at: "3:5", "`E.fs` is an optional ToMany: a ToMany is never optional (it is empty instead); declare it `var fs: ToMany<F> = nil`")
        check("    var fs: ToMany<F>", at: "3:5",
              "`E.fs` has no initial value: a ToMany starts empty and the generated code wires it to the store after a get or put; declare it `var fs: ToMany<F> = nil` (or `= []`)")
        check("    var fs: ToMany<F> = ToMany()", at: "3:5", "`E.fs` starts as `ToMany()`: a ToMany starts empty")
        check("    var fs: ToMany<Missing> = nil", at: "3:5",
              "`E.fs` is a ToMany<Missing>, but `Missing` is not an entity in the scanned sources: a ToMany<T> needs T to conform to `Entity`")
        check("    var fs: ToMany<String> = nil", at: "3:5", "`String` is not an entity")
        check("    // cellar: index\n    var fs: ToMany<F> = nil", at: "3:5",
              "`// cellar: index` cannot be used on the to-many relation `E.fs` (a ToMany is not stored in the object's record; it accepts uid, name, backlink and onDelete); remove it")
        check("    // cellar: backlink = \"e\"\n    // cellar: uid = 5\n    var fs: ToMany<F> = nil", at: "4:5",
              "`// cellar: uid = 5` is on `E.fs`, a backlink (`// cellar: backlink = \"e\"`): a backlink is not in the model, so it has no UID; remove the uid annotation")
        // Backlinks that do not resolve: at the annotation.
        check("    // cellar: backlink = \"nothing\"\n    var fs: ToMany<F> = nil", at: "3:5",
              "`// cellar: backlink = \"nothing\"` on `E.fs`: F has no ToOne or ToMany named nothing; its relations to E: `e` (ToOne<E>), `es` (ToMany<E>)")
        check("    // cellar: backlink = \"g\"\n    var fs: ToMany<F> = nil", at: "3:5",
              "`// cellar: backlink = \"g\"` on `E.fs`: `F.g` points at G, not at E, so it has no backlink here; its relations to E: `e` (ToOne<E>), `es` (ToMany<E>)")
        check("    // cellar: backlink = \"title\"\n    var fs: ToMany<F> = nil", at: "3:5",
              "`F.title` is a String, not a relation; a backlink is the other side of a ToOne<E> or ToMany<E> of F")
        check("    // cellar: backlink = \"back\"\n    var fs: ToMany<F> = nil", at: "3:5",
              "`F.back` is itself a backlink; a backlink is the other side of a ToOne or a ToMany without `backlink`")
        check("    // cellar: backlink\n    var fs: ToMany<F> = nil", at: "3:5",
              "`// cellar: backlink` on `E.fs`: F has several relations to E (`e` (ToOne<E>), `es` (ToMany<E>)); name the one it is the backlink of, e.g. `// cellar: backlink = \"e\"`")
        check("    // cellar: backlink\n    var gs: ToMany<G> = nil", at: "3:5",
              "`// cellar: backlink` on `E.gs`: G has no ToOne<E> or ToMany<E> to be the backlink of; add one to G (e.g. `var e: ToOne<E> = nil`)")
        // A relation's model name clashes with a property's; its UID with another's.
        check("    var x = 0\n    // cellar: name = \"x\"\n    var fs: ToMany<F> = nil", at: "5:5", "`E.fs` and `E.x` both have the name x in the model")
        check("    // cellar: uid = 9\n    var x = 0\n    // cellar: uid = 9\n    var fs: ToMany<F> = nil", at: "6:5", "the UID 9 of `E.fs` is also the UID of `E.x`")
    }

    @Test func severalErrorsInSourceOrder() {
        let found = errors([
            (path: "B.swift", contents: "class B: Entity {\n    var tags: [Color] = []\n}"),
            (path: "A.swift", contents: "class A: Entity {\n    var id: Id = 0\n    // cellar: indexd\n    var x = 0\n    lazy var y = 0\n}"),
        ])
        #expect(found.count == 4)
        #expect(found.map { $0.split(separator: " ").first.map(String.init) ?? "" }
            == ["B.swift:1:1:", "B.swift:2:5:", "A.swift:3:5:", "A.swift:5:5:"])
        #expect(found[0].contains("has no id property") && found[1].contains("not types with a converter"))
    }
}
