@_spi(CellarGenerated) @_spi(Testing) import Cellar
@testable import CellarGenerator
import Testing

// Embedded types (`// cellar: embedded`) as the scanner reads them, and every error it gives
// about them.

private func scan(_ source: String) throws -> [EntityDescription] {
    try SourceScanner.scan(files: [(path: "M.swift", contents: source)])
}

/// The error lines a scan of `M.swift` throws; empty when it succeeds.
private func errors(_ source: String) -> [String] {
    do {
        _ = try scan(source)
        return []
    } catch let error as GeneratorError {
        return [error.description]
    } catch let error as GeneratorErrors {
        return error.messages
    } catch {
        return ["unexpected \(error)"]
    }
}

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

/// An entity `E` holding `Address` objects, then `body` (one embedded type or more).
private func withOwner(_ body: String) -> String {
    "class E: Entity {\n    var id: Id = 0\n    var address: Address?\n    required init() {}\n}\n" + body
}

@Suite struct EmbeddedScannerTests {
    static let example = """
    import Cellar

    class Contact: Entity {
        var id: Id = 0
        var name = ""
        var address: Address?
        var billing = Address()
        var previous: [Address] = []
        var others: [Address]?
        required init() {}
    }

    // cellar: embedded
    struct Address {
        var city = ""
        // cellar: index
        var zip: String = ""
        var geo: Geo?
        var tags: [String] = []
        var status: Status = .unknown
        // cellar: name = "note"
        var remark: String?
        var extra: FlexValue = .null
        var scores: [String: Double] = [:]
        var keys: Set<UUID>?
        // cellar: date-nano
        var seen: Date?
        // cellar: default = 3
        var level = 1
        // cellar: transient
        var cache = 0
        // cellar: index = "hash"
        var code = ""
    }

    // cellar: embedded
    final class Geo {
        var lat = 0.0
        var lon = 0.0
        init() {}
    }

    enum Status: Int { case unknown, verified }

    // cellar: embedded
    struct Unused {
        var x = 0
    }
    """

    @Test func embeddedTypesAndTheirProperties() throws {
        let source = Self.example.replacingOccurrences(of: "var status: Status = .unknown",
                                                       with: "// cellar: convert = { \"default\": \".unknown\" }\n    var status: Status = .unknown")
        let types = try scan(source)
        #expect(types.map(\.typeName) == ["Contact", "Address", "Geo", "Unused"])
        #expect(types.map(\.isEmbedded) == [false, true, true, true])
        #expect(types[1].kind == .struct && types[2].kind == .class)
        #expect(types[1].idProperty == nil
            && types[1].properties.map(\.name) == ["city", "zip", "geo", "tags", "status", "remark", "extra", "scores", "keys", "seen", "level", "code"])

        let contact = types[0]
        let address = try #require(contact.property("address"))
        #expect(address.propertyType.rawValue == 101 && address.isEmbeddedObject && !address.isEmbeddedList)
        #expect(address.embeddedType == "Address" && address.isOptional && address.embeddedInitializer == nil)
        #expect(address.flags.isEmpty && address.index == nil)
        let billing = try #require(contact.property("billing"))
        #expect(billing.propertyType.rawValue == 101 && !billing.isOptional && billing.embeddedInitializer == "Address()")
        let previous = try #require(contact.property("previous"))
        #expect(previous.propertyType.rawValue == 1101 && previous.isEmbeddedList && previous.embeddedType == "Address" && !previous.isOptional)
        let others = try #require(contact.property("others"))
        #expect(others.isEmbeddedList && others.isOptional)

        // The embedded type's properties are described as an entity's.
        let zip = try #require(types[1].property("zip"))
        // A String's index in an embedded type is a value index unless `index = "hash"` says otherwise.
        #expect(zip.flags == [.indexed] && zip.index == .value)
        #expect(types[1].property("code")?.flags == [.indexed, .indexHash] && types[1].property("code")?.index == .hash)
        #expect(types[1].property("geo")?.embeddedType == "Geo")
        #expect(types[1].property("tags")?.propertyType == PropertyType.list(of: .string))
        #expect(types[1].property("status")?.conversion == .rawValue(defaultCase: ".unknown"))
        #expect(types[1].property("remark")?.modelName == "note")
        #expect(types[1].property("extra")?.isFlex == true && types[1].property("scores")?.propertyType == PropertyType.map(of: .double))
        #expect(types[1].property("keys")?.propertyType == PropertyType.set(of: .uuid) && types[1].property("seen")?.propertyType == .dateNano)
        #expect(types[1].property("level")?.defaultValue == .integer(3))
    }

    @Test func nestedAndQualifiedEmbeddedTypes() throws {
        let types = try scan("""
        struct Order: Entity {
            var id: Id = 0
            var lines: [Order.Line] = []
            var first: Line?
            // cellar: embedded
            // cellar: name = "OrderLine"
            // cellar: uid = 77
            struct Line {
                var sku = ""
            }
        }
        """)
        #expect(types.map(\.typeName) == ["Order", "Order.Line"])
        #expect(types[1].modelName == "OrderLine" && types[1].uid == .some(77) && types[1].isEmbedded)
        #expect(types[0].properties.compactMap(\.embeddedType) == ["Order.Line", "Order.Line"])
    }

    @Test func optionalAndListCyclesAreAllowed() throws {
        let types = try scan("""
        // cellar: embedded
        final class Node {
            var name = ""
            var parent: Node?
            var children: [Node] = []
            init() {}
        }
        class Tree: Entity { var id: Id = 0; var root = Node(); required init() {} }
        """)
        #expect(types.map(\.typeName) == ["Node", "Tree"])
    }

    @Test func anEmbeddedTypeAloneIsNotEnoughForAGenerator() throws {
        // The scanner describes it; `Generator.run` wants an entity (see the golden tests).
        let types = try scan("// cellar: embedded\nstruct A { var x = 0 }")
        #expect(types.count == 1 && types[0].isEmbedded)
    }

    // MARK: Errors

    @Test func idsAreRefused() {
        expectError(withOwner("// cellar: embedded\nstruct Address {\n    var id: Id = 0\n}"), at: "8:5",
                    "`Address.id` is an Id, an id, but Address is an embedded type (`// cellar: embedded`), which has no id")
        expectError(withOwner("// cellar: embedded\nstruct Address {\n    var owner: EntityId<E> = 0\n}"), at: "8:5",
                    "`Address.owner` is an EntityId<E>, an id, but Address is an embedded type")
        expectError(withOwner("// cellar: embedded\nstruct Address {\n    var ownerId: Id?\n}"), at: "8:5",
                    "`Address.ownerId` is an optional Id, an id, but Address is an embedded type (`// cellar: embedded`), which has no id: its objects are stored inside their owners' records; remove the property (or make Address an entity, conforming to `Entity`, and relate to it with ToOne), or keep another object's id as a UInt64")
        expectError(withOwner("// cellar: embedded\nstruct Address {\n    // cellar: id\n    var key: UInt64 = 0\n}"), at: "8:5",
                    "`// cellar: id` is on `Address.key`, but Address is an embedded type (`// cellar: embedded`), which has no id: its objects are stored inside their owners' records; remove the annotation")
    }

    @Test func anEntityConformanceIsRefused() {
        expectError("// cellar: embedded\nstruct Address: Entity {\n    var city = \"\"\n}", at: "1:1",
                    "`Address` is annotated `// cellar: embedded` but conforms to `Entity`: an embedded type has no id and no box (its objects are stored inside their owners' records); remove the `Entity` conformance")
        expectError("// cellar: entity\n// cellar: embedded\nstruct Address {\n    var city = \"\"\n}", at: "1:1",
                    "`Address` is annotated both `// cellar: entity` and `// cellar: embedded`: a type is either an entity")
        expectError("// cellar: embedded = true\nstruct Address {\n    var city = \"\"\n}", at: "1:1",
                    "`embedded` takes no value")
        expectError("// cellar: embedded\nactor A {\n    var x = 0\n}", at: "2:1", "`A` is an actor: embedded types are classes or structs")
    }

    @Test func primaryKeysUniqueAndRelationsAreRefused() {
        expectError(withOwner("// cellar: embedded\nstruct Address {\n    // cellar: primaryKey\n    var code = \"\"\n}"), at: "8:5",
                    "`// cellar: primaryKey` is on `Address.code`, but Address is an embedded type, which has no box to look its objects up in: an embedded object's property cannot be a primary key")
        expectError(withOwner("// cellar: embedded\nstruct Address {\n    // cellar: unique\n    var code = \"\"\n}"), at: "8:5",
                    "`// cellar: unique` is on `Address.code`: an embedded object's property cannot be unique")
        // A ToOne is allowed (without a delete rule); a ToMany is not.
        expectError(withOwner("// cellar: embedded\nstruct Address {\n    // cellar: onDelete = cascade\n    var owner: ToOne<E> = nil\n}"), at: "8:5",
                    "`// cellar: onDelete = cascade` is on `Address.owner`, a ToOne inside the embedded type Address: a relation inside an embedded object has no delete rule")
        expectError(withOwner("// cellar: embedded\nstruct Address {\n    var owners: ToMany<E> = nil\n}"), at: "8:5",
                    "`Address.owners` is a ToMany<E>, but Address is an embedded type: an embedded object holds to-one relations (ToOne) only")
    }

    @Test func backlinksThroughEmbeddedToOnesNameTheirPath() throws {
        let source = """
        // cellar: embedded
        struct Slot {
            var owner: ToOne<E> = nil
            var next: Inner?
        }
        // cellar: embedded
        struct Inner {
            var owner: ToOne<E> = nil
        }
        class P: Entity {
            var id: Id = 0
            var slots: [Slot] = []
        }
        class E: Entity {
            var id: Id = 0
            // cellar: backlink = "slots.next.owner"
            var deep: ToMany<P> = nil
            // cellar: backlink = "slots.owner"
            var shallow: ToMany<P> = nil
        }
        """
        let entities = try SourceScanner.scan(files: [(path: "M.swift", contents: source)])
        let e = try #require(entities.first { $0.typeName == "E" })
        #expect(e.relations.map(\.backlink) == [.embeddedToOne(path: ["slots", "next", "owner"]), .embeddedToOne(path: ["slots", "owner"])])
        func refused(_ path: String, _ fragment: String, onDelete: Bool = false) {
            let changed = source.replacingOccurrences(of: "backlink = \"slots.owner\"", with: "backlink = \"\(path)\"")
                .replacingOccurrences(of: "    var shallow", with: onDelete ? "    // cellar: onDelete = cascade\n    var shallow" : "    var shallow")
            do {
                _ = try SourceScanner.scan(files: [(path: "M.swift", contents: changed)])
                Issue.record("accepted \(path)")
            } catch {
                #expect("\(error)".contains(fragment), "\(error)")
            }
        }
        refused("slots.nobody", "Slot has no property nobody")
        refused("id.owner", "`P.id` holds no embedded objects")
        refused("slots.next", "`Slot.next` is a Inner, not a ToOne<E>")
        refused("slots.owner", "has no delete rule", onDelete: true)
    }

    @Test func relationsToAnEmbeddedTypeAreRefused() {
        let embedded = "// cellar: embedded\nstruct Address {\n    var city = \"\"\n}\n"
        expectError(embedded + "class F: Entity {\n    var id: Id = 0\n    var home: ToOne<Address> = nil\n}", at: "7:5",
                    "`F.home` is a ToOne<Address>, but Address is an embedded type (`// cellar: embedded`), which has no id to relate to: store it inside the object, `var home: Address?`")
        expectError(embedded + "class F: Entity {\n    var id: Id = 0\n    var homes: ToMany<Address> = nil\n}", at: "7:5",
                    "store it inside the object, `var homes: [Address] = []`")
    }

    @Test func embeddedPropertiesTakeOnlyNameAndUid() {
        let embedded = "// cellar: embedded\nstruct Address {\n    var city = \"\"\n}\n"
        expectError(embedded + "class F: Entity {\n    var id: Id = 0\n    // cellar: index\n    var home: Address?\n}", at: "7:5",
                    "`// cellar: index` cannot be used on `F.home`, an embedded Address (index a property of Address instead: `// cellar: index` on it): it accepts uid and name")
        expectError(embedded + "class F: Entity {\n    var id: Id = 0\n    // cellar: default = 1\n    var homes: [Address] = []\n}", at: "7:5",
                    "`// cellar: default = 1` cannot be used on `F.homes`, a list of embedded Address objects: it accepts uid and name")
        expectError(embedded + "class F: Entity {\n    var id: Id = 0\n    var homes: Set<Address> = []\n}", at: "7:5",
                    "`F.homes` is a Set<Address>: embedded objects are stored one by one or in a list; declare it `[Address]`")
        expectError(embedded + "class F: Entity {\n    var id: Id = 0\n    var home: Address\n    required init() { home = Address() }\n}", at: "7:5",
                    "`F.home` is a non-optional Address without an initial value: a record without the object (written before the property existed) needs a value to read; declare it optional (`var home: Address?`) or give it an initial value (`var home = Address()`)")
        expectError(embedded + "class F: Entity {\n    var id: Id = 0\n    var homes: [Address] = [Address(city: \"x\")]\n}", at: "7:5",
                    "`F.homes` starts as `[Address(city: \"x\")]`, but records written before the property existed read an empty list")
    }

    @Test func cyclesThroughNonOptionalObjectsAreRefused() {
        expectError("// cellar: embedded\nfinal class Node {\n    var next = Node()\n    init() {}\n}", at: "3:5",
                    "`Node.next` makes the embedded type Node contain itself (Node.next → Node) through non-optional embedded objects, so each would hold another without end; make one of these properties optional (`var next: Node?`) or a list")
        expectError("""
        // cellar: embedded
        final class A {
            var b = B()
            init() {}
        }
        // cellar: embedded
        final class B {
            var c = C()
            init() {}
        }
        // cellar: embedded
        final class C {
            var a = A()
            init() {}
        }
        """, at: "13:5", "`C.a` makes the embedded type A contain itself (A.b → B, B.c → C, C.a → A)")
    }

    @Test func chainsDeeperThanTheLimitAreRefused() throws {
        func chain(_ levels: Int) -> String {
            var source = "class E: Entity {\n    var id: Id = 0\n    var l1 = L1()\n    required init() {}\n}\n"
            for level in 1...levels {
                source += "// cellar: embedded\nstruct L\(level) {\n"
                source += level < levels ? "    var next = L\(level + 1)()\n" : "    var x = 0\n"
                source += "}\n"
            }
            return source
        }
        #expect(try scan(chain(EmbeddedNesting.maxDepth)).count == EmbeddedNesting.maxDepth + 1)
        expectError(chain(EmbeddedNesting.maxDepth + 1), at: "3:5",
                    "`E.l1` starts a chain of 33 non-optional embedded objects (E.l1 → L1, L1.next → L2, L2.next → L3, L3.next → L4, …), deeper than the 32 levels Cellar accepts")
    }
}
