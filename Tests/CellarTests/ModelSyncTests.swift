@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

// Versions of one entity "Item" (UID 100) as an app's model evolves.
private let itemUid: UInt64 = 100
private func item(_ name: String = "Item", id: UInt32 = 1, last: UInt32, _ properties: [(String, UInt32, UInt64, PropertyType)]) -> ModelEntity {
    let props = properties.map { ModelProperty(name: $0.0, id: IdUid(id: $0.1, uid: $0.2), type: $0.3, flags: $0.1 == 1 ? [.id] : []) }
    let lastUid = properties.first { $0.1 == last }?.2 ?? 999
    return ModelEntity(name: name, id: IdUid(id: id, uid: itemUid), lastPropertyId: IdUid(id: last, uid: lastUid), properties: props)
}

private enum V1: RowSchema {
    static let entity = item(last: 3, [("id", 1, 101, .long), ("name", 2, 102, .string), ("score", 3, 103, .long)])
}
/// Adds `note` (ID 4), renames `score` to `points`.
private enum V2: RowSchema {
    static let entity = item(last: 4, [("id", 1, 101, .long), ("name", 2, 102, .string), ("points", 3, 103, .long), ("note", 4, 104, .string)])
}
/// Removes `name`; adds a new, different `name` (ID 5, a new UID) of another type.
private enum V3: RowSchema {
    static let entity = item(last: 5, [("id", 1, 101, .long), ("points", 3, 103, .long), ("note", 4, 104, .string), ("name", 5, 105, .double)])
}
/// Renames the entity.
private enum V4: RowSchema {
    static let entity = item("Thing", last: 5, [("id", 1, 101, .long), ("points", 3, 103, .long), ("note", 4, 104, .string), ("name", 5, 105, .double)])
}

private func model(_ entities: ModelEntity..., lastEntity: IdUid? = nil) -> Cellar.Model {
    testModel(entities, lastEntity: lastEntity)
}

/// Expects `body` to throw a schema error whose message contains every one of `parts`.
private func expectSchemaError(_ parts: [String], sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected a schema error containing \(parts)", sourceLocation: sourceLocation)
    } catch let error as CellarError where error.code == .schema {
        let message = error.message
        for part in parts where !message.contains(part) {
            Issue.record("schema error lacks \"\(part)\": \(message)", sourceLocation: sourceLocation)
        }
    } catch {
        Issue.record("expected a schema error, got \(error)", sourceLocation: sourceLocation)
    }
}

@Suite struct ModelSyncTests {
    @Test func evolutionAddRenameRetireKeepsDataRight() throws {
        let dir = TestDirectory("sync-evolution")
        defer { dir.remove() }
        let path = dir.sub("db")
        do {
            let store = try Store(directoryPath: path, model: model(V1.entity))
            #expect(store.modelChanges == [.addEntity("Item")])
            try store.box(for: Row<V1>.self).put(Row(["name": .string("old"), "score": .long(7)]))
        }
        do {
            // A new property reads as absent from old records; a renamed one keeps its data.
            let store = try Store(directoryPath: path, model: model(V2.entity))
            #expect(store.modelChanges == [.renameProperty(entity: "Item", from: "score", to: "points"), .addProperty(entity: "Item", property: "note")])
            let box = store.box(for: Row<V2>.self)
            #expect(try box.get(1 as Id)?.values == ["name": .string("old"), "points": .long(7)])
            try box.put(Row(["name": .string("v2"), "points": .long(8), "note": .string("n")]))
        }
        do {
            // Reopening with the same model changes nothing.
            let store = try Store(directoryPath: path, model: model(V2.entity))
            #expect(store.modelChanges.isEmpty)
        }
        do {
            // `name` retired: its bytes are never read again, not even by the new `name` (ID 5).
            let store = try Store(directoryPath: path, model: model(V3.entity))
            #expect(store.modelChanges == [.addProperty(entity: "Item", property: "name"), .retireProperty(entity: "Item", property: "name")])
            #expect(store.model.retiredPropertyUids == [102])
            let box = store.box(for: Row<V3>.self)
            #expect(try box.all().map(\.values) == [["points": .long(7)], ["points": .long(8), "note": .string("n")]])
            try box.put(Row(["name": .double(2.5)]))
        }
        // The entity renamed: same data.
        let store = try Store(directoryPath: path, model: model(V4.entity))
        #expect(store.modelChanges == [.renameEntity(from: "Item", to: "Thing")])
        #expect(try store.box(for: Row<V4>.self).all().map(\.values) == [["points": .long(7)], ["points": .long(8), "note": .string("n")], ["name": .double(2.5)]])
        #expect(store.model.entities[0].lastPropertyId.id == 5)
    }

    @Test func retiringAnEntityDropsItsDataAndItsUidForGood() throws {
        let dir = TestDirectory("sync-retire")
        defer { dir.remove() }
        let path = dir.sub("db")
        do {
            let store = try Store(directoryPath: path, model: model(V1.entity, Note.modelEntity))
            try store.box(for: Row<V1>.self).put(Row(["name": .string("gone soon")]))
            try store.box(for: Note.self).put(Note(title: "stays"))
        }
        do {
            let store = try Store(directoryPath: path, model: model(Note.modelEntity))
            #expect(store.modelChanges == [.retireEntity(V1.entity)])
            #expect(store.model.retiredEntityUids == [itemUid] && store.model.retiredPropertyUids == [101, 102, 103])
            #expect(store.model.lastEntityId.id == 2)
            #expect(try store.engine.read { try $0.tree("e1") } == nil)
            #expect(try store.box(for: Note.self).count() == 1)
        }
        // The retired UID never comes back, and its ID is never reused for a new entity.
        expectSchemaError(["Item", "retired", "\(itemUid)"]) { _ = try Store(directoryPath: path, model: model(V1.entity, Note.modelEntity)) }
        var newcomer = V1.entity
        newcomer.id = IdUid(id: 1, uid: 555)
        newcomer.properties = newcomer.properties.map { var p = $0; p.id.uid += 1000; return p }
        newcomer.lastPropertyId.uid += 1000
        expectSchemaError(["Item (1:555)", "ID 1", "never reused", "ID 3", "\"3:555\"", "lastEntityId 2:\(Note.modelEntity.id.uid)"]) {
            _ = try Store(directoryPath: path, model: model(newcomer, Note.modelEntity, lastEntity: IdUid(id: 2, uid: Note.modelEntity.id.uid)))
        }
        newcomer.id.id = 3
        let store = try Store(directoryPath: path, model: model(Note.modelEntity, newcomer))
        #expect(store.modelChanges == [.addEntity("Item")])
        #expect(try store.box(for: Note.self).count() == 1)
    }

    @Test func refusals() throws {
        let dir = TestDirectory("sync-refuse")
        defer { dir.remove() }
        let path = dir.sub("db")
        do {
            let store = try Store(directoryPath: path, model: model(V2.entity, Note.modelEntity))
            try store.box(for: Row<V2>.self).put(Row(["name": .string("x")]))
        }
        // A type change.
        var typeChanged = V2.entity
        typeChanged.properties[1].type = .long
        expectSchemaError(["Item.name", "String", "Long", "new UID"]) { _ = try Store(directoryPath: path, model: model(typeChanged, Note.modelEntity)) }
        var signChanged = V2.entity
        signChanged.properties[2].flags = [.unsigned]
        expectSchemaError(["Item.points", "unsigned Long"]) { _ = try Store(directoryPath: path, model: model(signChanged, Note.modelEntity)) }
        // ID/UID mismatches: an entity, a property (nothing else has the old ID: setting it back
        // is offered, for a change that was never shared).
        var entityMoved = V2.entity
        entityMoved.id.id = 3
        expectSchemaError(["entity Item has moved", "3:\(itemUid) in the model", "1:\(itemUid) in this database", "delete it", "set Item back to \"1:\(itemUid)\""]) {
            _ = try Store(directoryPath: path, model: model(entityMoved, Note.modelEntity, lastEntity: IdUid(id: 3, uid: itemUid)))
        }
        var propertyMoved = V2.entity
        propertyMoved.properties[3].id.id = 5
        propertyMoved.lastPropertyId = propertyMoved.properties[3].id
        expectSchemaError(["property Item.note has moved", "5:104", "4:104"]) { _ = try Store(directoryPath: path, model: model(propertyMoved, Note.modelEntity)) }
        // A model older than the database's.
        expectSchemaError(["lastPropertyId", "Item", "3:103", "4:104", "newest model JSON"]) {
            _ = try Store(directoryPath: path, model: model(V1.entity, Note.modelEntity))
        }
        expectSchemaError(["lastEntityId", "1:", "2:"]) {
            _ = try Store(directoryPath: path, model: model(V2.entity, lastEntity: V2.entity.id))
        }
        // A new property reusing an ID the database handed out before.
        var reused = V2.entity
        reused.properties.append(ModelProperty(name: "again", id: IdUid(id: 4, uid: 777), type: .string))
        reused.properties.remove(at: 3)
        expectSchemaError(["Item.again", "ID 4", "never reused"]) { _ = try Store(directoryPath: path, model: model(reused, Note.modelEntity)) }
        // The code's model checked in itself.
        var duplicateUid = V2.entity
        duplicateUid.properties[2].id.uid = 102
        expectSchemaError(["same UID 102"]) { _ = try Store(directoryPath: path, model: model(duplicateUid, Note.modelEntity)) }
        var twoIds = V2.entity
        twoIds.properties[2].flags = [.id]
        expectSchemaError(["2 id properties"]) { _ = try Store(directoryPath: path, model: model(twoIds, Note.modelEntity)) }
        var aboveLast = V2.entity
        aboveLast.lastPropertyId = IdUid(id: 3, uid: 103)
        expectSchemaError(["Item.note", "above the entity's lastPropertyId"]) { _ = try Store(directoryPath: path, model: model(aboveLast, Note.modelEntity)) }
        // After every refusal the database is as it was.
        let store = try Store(directoryPath: path, model: model(V2.entity, Note.modelEntity))
        #expect(store.modelChanges.isEmpty)
        #expect(try store.box(for: Row<V2>.self).all().map(\.values) == [["name": .string("x")]])
    }

    // MARK: Databases made with another version of the model file

    /// ObjectBox's documented merge case: on a shared base, Alice adds Ant and Bob adds Bear, both with entity ID 2.
    /// Bob resolves the duplicate by giving his Bear the next free ID, 3.
    private enum Merge {
        static let base = testEntity("Base", id: 1, uid: 50_000, [("id", 1, .long, [.id]), ("a", 2, .string, [])])
        static let ant = testEntity("Ant", id: 2, uid: 12_345, [("id", 1, .long, [.id])])
        static let bear = testEntity("Bear", id: 2, uid: 9_876, [("id", 1, .long, [.id])])
        static var movedBear: ModelEntity { var bear = bear; bear.id.id = 3; return bear }
        static var merged: Cellar.Model { testModel([base, ant, movedBear]) }
    }

    @Test func aDatabaseMadeBeforeAMergeThatMovedAnEntityIsToldWhichMovedAndToBeRecreated() throws {
        let dir = TestDirectory("sync-merge")
        defer { dir.remove() }
        let alice = dir.sub("alice"), bob = dir.sub("bob")
        _ = try Store(directoryPath: alice, model: testModel([Merge.base, Merge.ant]))
        _ = try Store(directoryPath: bob, model: testModel([Merge.base, Merge.bear]))
        // Alice's database takes the merged model: Ant kept its ID, Bear is new to it.
        #expect(try Store(directoryPath: alice, model: Merge.merged).modelChanges == [.addEntity("Bear")])
        // Bob's database has Bear at 2: the message names Bear as moved, with both ID:UIDs, says
        // what now has ID 2, and tells Bob to recreate his database; it must never tell him to
        // move Ant (that would break Alice's database) nor to set Bear back.
        let expected = ["entity Bear has moved", "3:9876 in the model", "2:9876 in this database", "entity Ant (2:12345) has ID 2 now",
                        "merge conflict", "development database, delete it", "Keep the model file as it is"]
        var reordered = Merge.merged
        reordered.entities.reverse()
        for merged in [Merge.merged, reordered] {
            do {
                _ = try Store(directoryPath: bob, model: merged)
                Issue.record("Bob's database opened with the merged model")
            } catch let error as CellarError where error.code == .schema {
                let message = error.message
                for part in expected { #expect(message.contains(part), "lacks \"\(part)\": \(message)") }
                #expect(!message.contains("give Ant") && !message.contains("12345\""), "advice that breaks Alice's database: \(message)")
            }
        }
        // Recreated, Bob's database takes the merged model.
        try FileManager.default.removeItem(atPath: bob)
        #expect(try Store(directoryPath: bob, model: Merge.merged).modelChanges == [.addEntity("Base"), .addEntity("Ant"), .addEntity("Bear")])
    }

    @Test func movedPropertiesIndexesAndRelationsAreNamedWithBothIdUids() throws {
        // Properties: Alice adds Base.b, Bob adds Base.c, both ID 3; Bob moves his to 4.
        var alice = Merge.base, bob = Merge.base
        alice.properties.append(ModelProperty(name: "b", id: IdUid(id: 3, uid: 61), type: .string))
        alice.lastPropertyId = IdUid(id: 3, uid: 61)
        bob.properties.append(ModelProperty(name: "c", id: IdUid(id: 3, uid: 71), type: .string))
        bob.lastPropertyId = IdUid(id: 3, uid: 71)
        var merged = alice
        merged.properties.append(ModelProperty(name: "c", id: IdUid(id: 4, uid: 71), type: .string))
        merged.lastPropertyId = IdUid(id: 4, uid: 71)
        expectSchemaError(["property Base.c has moved", "4:71 in the model", "3:71 in this database", "property Base.b (3:61) has ID 3 now",
                           "two properties with ID 3", "delete it"]) {
            _ = try ModelSync.sync(code: testModel([merged]), stored: testModel([bob]))
        }
        // Indexes (IDs across the model): Alice indexes Base.a, Bob adds an indexed Ant.b, both
        // index ID 1; Bob moves his to 2.
        var indexedA = Merge.base
        indexedA.properties[1].flags = [.indexed]
        indexedA.properties[1].indexId = IdUid(id: 1, uid: 81)
        var antB = Merge.ant
        antB.properties.append(ModelProperty(name: "b", id: IdUid(id: 2, uid: 82), type: .string, flags: [.indexed], indexId: IdUid(id: 1, uid: 91)))
        antB.lastPropertyId = IdUid(id: 2, uid: 82)
        var movedIndex = antB
        movedIndex.properties[1].indexId = IdUid(id: 2, uid: 91)
        var bobs = testModel([Merge.base, antB])
        bobs.lastIndexId = IdUid(id: 1, uid: 91)
        var code = testModel([indexedA, movedIndex])
        code.lastIndexId = IdUid(id: 2, uid: 91)
        expectSchemaError(["the index of Ant.b has moved", "2:91 in the model", "1:91 in this database", "the index of Base.a (1:81) has ID 1 now"]) {
            _ = try ModelSync.sync(code: code, stored: bobs)
        }
        // Relations (IDs across the model), with nothing holding the old ID now.
        var related = Merge.ant
        related.relations = [ModelRelation(name: "bases", id: IdUid(id: 1, uid: 93), targetId: Merge.base.id)]
        var relatedMoved = related
        relatedMoved.relations[0].id.id = 2
        var stored = testModel([Merge.base, related])
        stored.lastRelationId = IdUid(id: 1, uid: 93)
        var moved = testModel([Merge.base, relatedMoved])
        moved.lastRelationId = IdUid(id: 2, uid: 93)
        expectSchemaError(["relation Ant.bases has moved", "2:93 in the model", "1:93 in this database", "set Ant.bases back to \"1:93\""]) {
            _ = try ModelSync.sync(code: moved, stored: stored)
        }
    }

    @Test func aNewEntityOnAnIdTheDatabaseUsedGetsAdviceForBothBranches() throws {
        // Bob's database (Bear at 2) opened with a model file that never had Bear but has Ant at 2.
        expectSchemaError(["entity Ant (2:12345) is new to this database", "for entity Bear (2:9876)", "never reused",
                           "Ant at 2:12345 is already shared", "delete it", "give Ant the ID 3", "\"3:12345\"", "lastEntityId"]) {
            _ = try ModelSync.sync(code: testModel([Merge.base, Merge.ant]), stored: testModel([Merge.base, Merge.bear]))
        }
        // The same for a property.
        var alice = Merge.base, bob = Merge.base
        alice.properties.append(ModelProperty(name: "b", id: IdUid(id: 3, uid: 61), type: .string))
        alice.lastPropertyId = IdUid(id: 3, uid: 61)
        bob.properties.append(ModelProperty(name: "c", id: IdUid(id: 3, uid: 71), type: .string))
        bob.lastPropertyId = IdUid(id: 3, uid: 71)
        expectSchemaError(["property Base.b (3:61) is new to this database", "for property Base.c (3:71)", "\"4:61\"", "\"lastPropertyId\" of entity Base"]) {
            _ = try ModelSync.sync(code: testModel([alice]), stored: testModel([bob]))
        }
    }

    @Test func aRecreatedModelFileIsToldApartFromAMerge() throws {
        let dir = TestDirectory("sync-recreated")
        defer { dir.remove() }
        let path = dir.sub("db")
        _ = try Store(directoryPath: path, model: testModel([Merge.base, Merge.ant]))
        // The model file deleted and generated anew: the same entities and IDs, all UIDs new.
        let recreated = testModel([testEntity("Base", id: 1, uid: 70_000, [("id", 1, .long, [.id]), ("a", 2, .string, [])]),
                                   testEntity("Ant", id: 2, uid: 80_000, [("id", 1, .long, [.id])])])
        let expected = ["model file was recreated", "none of its UIDs is known to this database",
                        "entity Base is 1:70000 in the model, 1:50000 in the database",
                        "delete the database", "restore the old model file"]
        let misleading = ["merge", "never reused", "newer model", "has moved"]
        func check(_ model: Cellar.Model) {
            do {
                _ = try Store(directoryPath: path, model: model)
                Issue.record("the database opened with a recreated model file")
            } catch let error as CellarError where error.code == .schema {
                let message = error.message
                for part in expected { #expect(message.contains(part), "lacks \"\(part)\": \(message)") }
                for part in misleading { #expect(!message.contains(part), "says \"\(part)\": \(message)") }
            } catch {
                Issue.record("expected a schema error, got \(error)")
            }
        }
        check(recreated)
        // The database's last IDs above the recreated file's (an entity retired before): still a
        // recreated file, not an older one.
        let bear = testEntity("Bear", id: 3, uid: 9_876, [("id", 1, .long, [.id])])
        _ = try Store(directoryPath: path, model: testModel([Merge.base, Merge.ant, bear]))
        _ = try Store(directoryPath: path, model: testModel([Merge.base, Merge.ant], lastEntity: bear.id))
        check(recreated)
        // Restoring the old model file keeps the data.
        #expect(try Store(directoryPath: path, model: testModel([Merge.base, Merge.ant], lastEntity: bear.id)).modelChanges.isEmpty)
    }

    @Test func theSeedsModelFileOpensAStoreAndSyncsIdempotently() throws {
        let seed = try Cellar.Model(json: Array(ModelJSONSeed.text.utf8))
        let dir = TestDirectory("sync-seed")
        defer { dir.remove() }
        do {
            let store = try Store(directoryPath: dir.sub("db"), model: seed)
            #expect(store.modelChanges == [.addEntity("Author"), .addEntity("Note")])
            #expect(store.model == seed)
        }
        let store = try Store(directoryPath: dir.sub("db"), model: seed)
        #expect(store.modelChanges.isEmpty)
        // The stored copy is the model JSON, byte for byte what the seed's file holds.
        let stored = try store.engine.read { txn in Array(try txn.get(txn.tree("m")!, key: Array("model".utf8))!) }
        #expect(String(decoding: stored, as: UTF8.self) == ModelJSONSeed.text + "\n")
    }
}

@Suite struct UidTests {
    @Test func newUidsArePositiveAndNeverUsedOrRetired() throws {
        var model = try Cellar.Model(json: Array(ModelJSONSeed.text.utf8))
        model.retiredPropertyUids = [77]
        #expect(model.allUids.count == 12)   // 2 entities, 8 properties, 1 index, 1 retired
        // The first three values a seeded generator gives: retire the first, take the second;
        // the same generator must then give the third.
        var probe = SplitMix64(seed: 9)
        let draws = (0..<3).map { _ in UInt64.random(in: 1...UInt64(Int64.max), using: &probe) }
        model.retiredEntityUids = [draws[0]]
        var generator = SplitMix64(seed: 9)
        #expect(model.newUid(using: &generator, excluding: [draws[1]]) == draws[2])
        for _ in 0..<1_000 {
            let uid = model.newUid()
            #expect(uid >= 1 && uid <= UInt64(Int64.max) && !model.allUids.contains(uid))
        }
    }
}
