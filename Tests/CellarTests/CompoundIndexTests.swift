@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// Indexes over several properties (`// cellar: index = […]`, `unique = […]` on the type), with
/// the generated entity Member: index (lastName, firstName, age), unique (email, employer).
@Suite struct CompoundIndexTests {
    /// The generated model without Member's indexes (a store written before they were added), or
    /// with its unique index not unique.
    static func model(indexes: Bool, unique: Bool = true) -> Cellar.Model {
        var model = cellarModel()
        let at = model.entities.firstIndex { $0.name == "Member" }!
        if !indexes { model.entities[at].indexes = [] }
        if !unique { model.entities[at].indexes[1].unique = false }
        return model
    }

    static func usesCompound(_ query: Query<Member>, covering: Int) throws -> Bool {
        guard case .index(let index, let ranges) = try query.compiled.plan.source else { return false }
        return index.id == 25 && ranges.count == 1 && covering > 0
    }

    @Test func queriesOnAllOrAPrefixOfThePropertiesMatchAFilterInMemory() throws {
        let dir = TestDirectory("compound-queries")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.sub("db"), model: cellarModel())
        defer { store.close() }
        let box: Box<Member> = store.box()
        var rng = SplitMix64(seed: SplitMix64.testSeed())
        let lastNames = ["Ng", "Smith", "Smith-Jones", "Ø", ""]
        let firstNames = ["Ann", "Bo", "ann", "Zoë"]
        var members: [Id: (String, String, Int)] = [:]
        for round in 0..<6 {
            // Puts, updates of each indexed property, removes.
            var batch: [Member] = []
            for _ in 0..<150 {
                let member = Member(lastNames.randomElement(using: &rng)!, firstNames.randomElement(using: &rng)!,
                                    age: Int.random(in: -2...3, using: &rng), email: "m\(round)-\(batch.count)")
                batch.append(member)
            }
            try box.put(batch)
            for member in batch { members[member.id] = (member.lastName, member.firstName, member.age) }
            for id in members.keys.shuffled(using: &rng).prefix(60) {
                let member = try box.get(id)!
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: member.lastName = lastNames.randomElement(using: &rng)!
                case 1: member.firstName = firstNames.randomElement(using: &rng)!
                case 2: member.age = Int.random(in: -2...3, using: &rng)
                default:
                    #expect(try box.remove(id))
                    members[id] = nil
                    continue
                }
                try box.put(member)
                members[id] = (member.lastName, member.firstName, member.age)
            }
            for _ in 0..<20 {
                let (last, first, age) = (lastNames.randomElement(using: &rng)!, firstNames.randomElement(using: &rng)!,
                                          Int.random(in: -2...3, using: &rng))
                let cases: [(QueryCondition<Member>, covering: Int, exact: Bool, ((String, String, Int)) -> Bool)] = [
                    (Member.lastName == last, 1, true, { $0.0 == last }),
                    (Member.lastName == last && Member.firstName == first, 2, true, { $0.0 == last && $0.1 == first }),
                    (Member.firstName == first && Member.age == age && Member.lastName == last, 3, true,
                     { $0.0 == last && $0.1 == first && $0.2 == age }),
                    // A gap after the first property: its prefix serves, the age is checked.
                    (Member.lastName == last && Member.age == age, 1, false, { $0.0 == last && $0.2 == age }),
                    (Member.lastName == last && Member.firstName.startsWith("A"), 1, false, { $0.0 == last && $0.1.hasPrefix("A") }),
                    // Ignoring case, the index cannot serve the first name: its prefix of one does.
                    (Member.lastName == last && Member.firstName.isEqual(to: first, caseSensitive: false), 1, false,
                     { $0.0 == last && $0.1.lowercased() == first.lowercased() }),
                    // Not a prefix: scanned.
                    (Member.firstName == first && Member.age == age, 0, false, { $0.1 == first && $0.2 == age }),
                ]
                for (condition, covering, exact, test) in cases {
                    let query = try box.query { condition }.build()
                    #expect(try Self.usesCompound(query, covering: covering) == (covering > 0), "\(condition)")
                    if covering > 0 { #expect(try query.compiled.plan.exact == exact, "\(condition)") }
                    let expected = members.filter { test($0.value) }.keys.sorted()
                    #expect(try query.findIds().map(\.value) == expected, "\(condition)")
                    #expect(try query.count() == expected.count, "\(condition)")
                }
            }
        }
        store.close()
        #expect(try ExportImportTests.verify(dir.sub("db")).indexEntries > 0)
    }

    @Test func aUniqueIndexNamesEveryValueAndWritesNothing() throws {
        let dir = TestDirectory("compound-unique")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.sub("db"), model: cellarModel())
        defer { store.close() }
        let box: Box<Member> = store.box()
        let first = Member("Ng", "Ann", age: 30, email: "ann@x.org", employer: "X")
        try box.put(first)
        do {
            try box.put(Member("Ng", "Bo", age: 31, email: "ann@x.org", employer: "X"))
            Issue.record("a second member with the same email and employer was stored")
        } catch let error as CellarError where error.code == .uniqueViolation {
            #expect(error.property == "Member(email, employer)")
            #expect(error.value == #"email = "ann@x.org", employer = "X""#)
            #expect(error.message.contains("object \(first.id)"))
        }
        #expect(try box.count() == 1)
        // Another employer, or none (twice), is allowed; so is putting the holder again.
        try box.put(Member("Ng", "Bo", age: 31, email: "ann@x.org", employer: "Y"))
        try box.put([Member("A", "B", age: 1, email: "ann@x.org"), Member("C", "D", age: 2, email: "ann@x.org")])
        first.age = 40
        try box.put(first)
        // An update into another object's values is refused, and leaves it as it was.
        let other = try box.query { Member.employer == "Y" }.build().findUnique()!
        other.employer = "X"
        #expect(throws: CellarError.self) { try box.put(other) }
        #expect(try box.get(other.id)?.employer == "Y")
        // Within one transaction: the first put's key is seen by the second.
        #expect(throws: CellarError.self) {
            try store.runInTransaction {
                try box.put(Member("E", "F", age: 1, email: "e@x", employer: "Z"))
                try box.put(Member("G", "H", age: 1, email: "e@x", employer: "Z"))
            }
        }
        #expect(try box.query { Member.employer == "Z" }.build().count() == 0)
        #expect(try box.count() == 4)
        // removeAll takes the index's keys with the objects: the values are free again.
        #expect(try box.removeAll() == 4)
        try box.put(Member("Ng", "Ann", age: 30, email: "ann@x.org", employer: "X"))
        #expect(try box.query { Member.lastName == "Ng" && Member.firstName == "Ann" }.build().count() == 1)
        store.close()
        _ = try ExportImportTests.verify(dir.sub("db"))
    }

    @Test func anUpsertByPrimaryKeyKeepsTheIndexUpToDate() throws {
        let dir = TestDirectory("compound-upsert")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.sub("db"), model: cellarModel())
        defer { store.close() }
        let accounts: Box<Account> = store.box()
        try accounts.put(Account(email: "ada@x", name: "Ada", visits: 1), mode: .upsert)
        // The object holding the key is found, and its entry in Account(name, visits) moves.
        try accounts.put(Account(email: "ada@x", name: "Ada L.", visits: 2), mode: .upsert)
        #expect(try accounts.query { Account.name == "Ada L." && Account.visits == 2 }.build().count() == 1)
        #expect(try accounts.query { Account.name == "Ada" && Account.visits == 1 }.build().count() == 0)
        store.close()
        _ = try ExportImportTests.verify(dir.sub("db"))
    }

    @Test func anIndexAddedToAStoreIsBuiltAndAUniqueOneRefusesDuplicates() throws {
        let dir = TestDirectory("compound-added")
        defer { dir.remove() }
        let count = 40_000   // more than one batch of the index build
        var ids: [Id] = []
        do {
            let store = try Store(directoryPath: dir.sub("db"), model: Self.model(indexes: false))
            defer { store.close() }
            let box: Box<Member> = store.box()
            let members = (0..<count).map { Member("L\($0 % 97)", "F\($0 % 13)", age: $0 % 5, email: "m\($0)", employer: $0 % 3 == 0 ? nil : "E") }
            members[200].email = "m100"   // the same email and employer as members[100]
            try box.put(members)
            ids = members.map(\.id)
        }
        do {
            _ = try Store(directoryPath: dir.sub("db"), model: cellarModel())
            Issue.record("a unique index was added over duplicates")
        } catch let error as CellarError where error.code == .schema {
            #expect(error.message.contains("Member(email, employer) is now unique, but objects \(ids[100]) and \(ids[200]) both hold email = \"m100\", employer = \"E\""),
                    "\(error.message)")
        }
        do {
            // The index made not unique keeps its UID (the failed open stored the model with it).
            let store = try Store(directoryPath: dir.sub("db"), model: Self.model(indexes: true, unique: false))
            defer { store.close() }
            #expect(try store.box(for: Member.self).remove(ids[200]))
        }
        let store = try Store(directoryPath: dir.sub("db"), model: cellarModel())
        let box: Box<Member> = store.box()
        let query = try box.query { Member.lastName == "L5" && Member.firstName == "F5" }.build()
        #expect(try Self.usesCompound(query, covering: 2))
        #expect(try query.findIds().map(\.value) == ids.enumerated().filter { $0.offset != 200 && $0.offset % 97 == 5 && $0.offset % 13 == 5 }.map(\.element))
        store.close()
        #expect(try ExportImportTests.verify(dir.sub("db")).indexEntries >= 2 * (count - 1))
    }

    @Test func theModelFileKeepsIndexesAndRefusesBadOnes() throws {
        let model = cellarModel()
        #expect(try Model(json: model.jsonBytes(), file: "model.json") == model)
        let member = model.entity(named: "Member")!
        func refused(_ change: (inout ModelEntity) -> Void, _ expected: String) {
            var broken = model
            let at = broken.entities.firstIndex { $0.name == "Member" }!
            change(&broken.entities[at])
            #expect(throws: CellarError.self) { try broken.validate() }
            do { try broken.validate() } catch let error as CellarError {
                #expect(error.message.contains(expected), "\(error.message)")
            } catch {}
        }
        refused({ $0.indexes[0].properties.removeLast(2) }, "has 1 properties")
        refused({ $0.indexes[0].properties[1] = member.properties[1].id }, "names Member.lastName twice")
        refused({ $0.indexes[0].properties[0] = member.properties[0].id }, "a id")
        refused({ $0.indexes[0].properties[0] = IdUid(id: 9, uid: 99) }, "which entity Member does not have")
        refused({ $0.indexes[1].id = IdUid(id: $0.indexes[0].id.id, uid: 12_345) }, "both have ID")
    }
}
