@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

/// Primary keys through the generated `Account` (a String key, a relation) and `Badge` (an
/// optional UUID key on a struct): look-ups, the put modes, upserts that keep id and relations,
/// key changes and duplicates refused with nothing written, and concurrent upserts.
@Suite struct PrimaryKeyTests {
    @Test func getByPrimaryKeyAndThePutModes() throws {
        let store = try Store(directoryPath: "memory:pk-modes", model: cellarModel())
        let accounts = store.box(for: Account.self)
        let ada = Account(email: "ada@example.com", name: "Ada", visits: 1)
        let adaId = try accounts.put(ada, mode: .insert).value
        #expect(ada.id == adaId)
        #expect(try accounts.get(primaryKey: "ada@example.com")?.id == adaId)
        #expect(try accounts.get(primaryKey: "nobody@example.com") == nil)

        // insert: a stored key throws, and nothing is written.
        do {
            _ = try accounts.put(Account(email: "ada@example.com", name: "Other"), mode: .insert)
            Issue.record("insert of a stored key succeeded")
        } catch let error as CellarError where error.code == .uniqueViolation {
            #expect(error.property == "Account.email" && error.value?.contains("ada@example.com") == true)
        }
        #expect(try accounts.count() == 1)

        // upsert: the object holding the key is replaced, keeping its id; the new object gets it.
        let again = Account(email: "ada@example.com", name: "Ada L.", visits: 2)
        #expect(try accounts.put(again, mode: .upsert).value == adaId && again.id == adaId)
        let replaced = try accounts.get(adaId)?.name
        let afterUpsert = try accounts.count()
        #expect(replaced == "Ada L." && afterUpsert == 1)
        // upsert of a new key inserts.
        let grace = Account(email: "grace@example.com", name: "Grace")
        let graceId = try accounts.put(grace, mode: .upsert).value
        let afterInsert = try accounts.count()
        #expect(graceId != adaId && grace.id == graceId && afterInsert == 2)

        // update by key: the object holding it; a missing key throws notFound.
        #expect(try accounts.put(Account(email: "grace@example.com", name: "Grace H."), mode: .update).value == graceId)
        #expect(throws: CellarError.self) { try accounts.put(Account(email: "x@example.com", name: "X"), mode: .update) }

        // put (the default) of a new object with a stored key: a unique violation.
        #expect(throws: CellarError.self) { try accounts.put(Account(email: "grace@example.com", name: "Twin")) }
        #expect(try accounts.count() == 2)

        // Changing the key of a stored object throws; nothing is written.
        let stored = try #require(try accounts.get(graceId))
        stored.email = "grace@navy.mil"
        do {
            _ = try accounts.put(stored)
            Issue.record("a changed primary key was accepted")
        } catch let error as CellarError where error.code == .illegalArgument {
            let message = error.message
            #expect(message.contains("grace@example.com") && message.contains("grace@navy.mil"))
        }
        #expect(try accounts.get(primaryKey: "grace@example.com")?.id == graceId)
        #expect(try accounts.get(primaryKey: "grace@navy.mil") == nil)
        // Taking another object's key throws too.
        stored.email = "ada@example.com"
        #expect(throws: CellarError.self) { try accounts.put(stored, mode: .upsert) }

        // A whole batch in one transaction: later objects see the keys of earlier ones.
        #expect(throws: CellarError.self) {
            try accounts.put([Account(email: "a@x", name: "1"), Account(email: "a@x", name: "2")], mode: .insert)
        }
        #expect(try accounts.count() == 2)
        let batch = [Account(email: "b@x", name: "1"), Account(email: "b@x", name: "2")]
        try accounts.put(batch, mode: .upsert)
        let afterBatch = try accounts.count(), bName = try accounts.get(primaryKey: "b@x")?.name
        #expect(afterBatch == 3 && bName == "2" && batch[0].id == batch[1].id)
    }

    @Test func keysAreFoundAgainAfterRemoveAllInTheSameTransaction() throws {
        let store = try Store(directoryPath: "memory:pk-remove-all", model: cellarModel())
        let accounts = store.box(for: Account.self)
        try store.runInTransaction {
            try accounts.put(Account(email: "a@x", name: "1"), mode: .upsert)
            try accounts.removeAll()
            // The key's index was dropped with the objects: the upsert inserts, and finds its own key after.
            let again = Account(email: "a@x", name: "2")
            try accounts.put(again, mode: .upsert)
            try accounts.put(Account(email: "a@x", name: "3"), mode: .upsert)
            let count = try accounts.count(), name = try accounts.get(primaryKey: "a@x")?.name
            #expect(count == 1 && name == "3")
        }
    }

    @Test func anUpsertKeepsRelationsAndBacklinks() throws {
        let store = try Store(directoryPath: "memory:pk-relations", model: cellarModel())
        let accounts = store.box(for: Account.self)
        let tags = store.box(for: Tag.self)
        let swift = Tag()
        swift.name = "swift"
        try tags.put(swift)
        let ada = Account(email: "ada@example.com", name: "Ada")
        ada.favorites.append(swift)
        try accounts.put(ada)
        // A fresh object with the same key, its relation never touched: the stored links stay.
        try accounts.put(Account(email: "ada@example.com", name: "Ada L.", visits: 3), mode: .upsert)
        let back = try #require(try accounts.get(primaryKey: "ada@example.com"))
        #expect(back.id == ada.id && back.name == "Ada L." && back.visits == 3)
        #expect(back.favorites.map(\.name) == ["swift"])
    }

    @Test func optionalUUIDKeysOnAStruct() throws {
        let store = try Store(directoryPath: "memory:pk-uuid", model: cellarModel())
        let badges = store.box(for: Badge.self)
        let code = UUID()
        var first = Badge(code: code, label: "gold")
        try badges.put(&first, mode: .upsert)
        var second = Badge(code: code, label: "platinum")
        let id = try badges.put(&second, mode: .upsert)
        let count = try badges.count()
        #expect(id == first.id && second.id == first.id && count == 1)
        #expect(try badges.get(primaryKey: code)?.label == "platinum")
        // nil keys are not indexed: any number of objects may have none, and none is found by it.
        var none1 = Badge(code: nil, label: "a"), none2 = Badge(code: nil, label: "b")
        try badges.put(&none1, mode: .upsert)
        try badges.put(&none2, mode: .upsert)
        let all = try badges.count()
        #expect(none1.id != none2.id && all == 3)
        // A stored object without a key cannot get one by a put of the same id either.
        var keyed = none1
        keyed.code = UUID()
        #expect(throws: CellarError.self) { try badges.put(&keyed) }
        #expect(throws: CellarError.self) { try badges.get(primaryKey: "not a UUID") }
        #expect(throws: CellarError.self) { try store.box(for: Tag.self).get(primaryKey: "swift") }
    }

    @Test func integerKeys() throws {
        let store = try Store(directoryPath: "memory:pk-integer", model: cellarModel())
        let invoices = store.box(for: Invoice.self)
        try invoices.put([Invoice(number: -5, total: 1), Invoice(number: 0, total: 2), Invoice(number: Int64.max, total: 3)], mode: .insert)
        #expect(try invoices.get(primaryKey: -5)?.total == 1)
        #expect(try invoices.get(primaryKey: 0)?.total == 2)
        #expect(try invoices.get(primaryKey: Int64.max)?.total == 3)
        #expect(try invoices.get(primaryKey: 7) == nil)
        try invoices.put(Invoice(number: 0, total: 20), mode: .upsert)
        let total = try invoices.get(primaryKey: 0)?.total, count = try invoices.count()
        #expect(total == 20 && count == 3)
        // An upsert keeps the entity's other index up to date.
        let renamed = Invoice(number: 0, total: 21)
        renamed.customer = "acme"
        try invoices.put(renamed, mode: .upsert)
        let acme = try invoices.query { Invoice.customer == "acme" }.build().findIds().map(\.value)
        let none = try invoices.query { Invoice.customer == "" }.build().count()
        #expect(acme == [renamed.id] && none == 2)
        #expect(throws: CellarError.self) { try invoices.get(primaryKey: "seven") }
        #expect(throws: CellarError.self) { try invoices.get(primaryKey: 1.5) }
    }

    @Test func aModelFileWithBadPrimaryKeysIsRefused() throws {
        func refused(_ change: (inout ModelEntity) -> Void, _ part: String) {
            var model = cellarModel()
            let at = model.entities.firstIndex { $0.name == "Account" }!
            change(&model.entities[at])
            // An index ID for a property the change gave an index.
            model.lastIndexId = IdUid(id: model.lastIndexId.id + 1, uid: 77_000_001)
            do {
                _ = try Store(directoryPath: "memory:pk-bad-\(part.hashValue)", model: model)
                Issue.record("opened: \(part)")
            } catch let error as CellarError where error.code == .schema {
                let message = error.message
                #expect(message.contains(part), "\(message)")
            } catch {
                Issue.record("\(error)")
            }
        }
        let name = { (entity: ModelEntity) in entity.properties.firstIndex { $0.name == "name" }! }
        refused({ entity in
            entity.properties[name(entity)].flags.formUnion([.primaryKey, .unique, .indexed])
            entity.properties[name(entity)].indexId = IdUid(id: cellarModel().lastIndexId.id + 1, uid: 77_000_001)
        }, "2 primary keys (email, name)")
        refused({ $0.properties[name($0)].flags.insert(.primaryKey) }, "a primary key without a unique index")
        refused({ entity in
            let email = entity.properties.firstIndex { $0.name == "email" }!
            entity.properties[email].flags.subtract(.unique)
        }, "a primary key without a unique index")
        refused({ entity in
            let visits = entity.properties.firstIndex { $0.name == "visits" }!
            entity.properties[visits].type = .double
            entity.properties[visits].flags.insert(.primaryKey)
            let email = entity.properties.firstIndex { $0.name == "email" }!
            entity.properties[email].flags.subtract(.primaryKey)
        }, "is a primary key of type Double")
    }

    @Test func concurrentUpsertsOfTheSameKeysLeaveOneObjectPerKey() async throws {
        let directory = TestDirectory("pk-concurrent")
        defer { directory.remove() }
        let store = try Store(directoryPath: directory.path, model: cellarModel())
        let keys = (0..<20).map { "user\($0)@example.com" }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    let accounts = store.box(for: Account.self)
                    for round in 0..<25 {
                        for key in keys.shuffled() {
                            try accounts.put(Account(email: key, name: "w\(worker)", visits: round), mode: .upsert)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let accounts = store.box(for: Account.self)
        let all = try accounts.all()
        #expect(all.count == keys.count && Set(all.map(\.email)) == Set(keys))
        #expect(try RecordCheck.verify(store.engine).indexEntries >= keys.count)
    }
}
