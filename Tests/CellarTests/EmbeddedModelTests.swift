@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

/// Embedded types in the meta model: the model JSON extension, the rules the model checks, and
/// what opening a store with a changed model does with them (renames keep the data; a change of
/// kind or of an embedded property's type is refused with what to do).
@Suite struct EmbeddedModelTests {
    @Test func theModelFileKeepsEmbeddedTypesAndTargets() throws {
        let model = embeddedModel()
        let json = model.jsonBytes()
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains("\"embeddedType\": \"EAddress\""))
        #expect(text.contains("\"flags\": 268435456"))
        let read = try Cellar.Model(json: json)
        #expect(read == model)
        #expect(read.jsonBytes() == json)
        #expect(read.entity(named: "EAddress")?.isEmbedded == true)
        #expect(read.entity(named: "EContact")?.isEmbedded == false)
    }

    @Test func theModelRefusesWhatAnEmbeddedTypeCannotBe() throws {
        func refused(_ change: (inout Cellar.Model) -> Void, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) {
            var model = embeddedModel()
            change(&model)
            do {
                try model.validate()
                Issue.record("accepted; expected \(expected)", sourceLocation: sourceLocation)
            } catch let error as CellarError where error.code == .schema {
                let message = error.message
                #expect(message.contains(expected), "\(message)", sourceLocation: sourceLocation)
            } catch {
                Issue.record("\(error)", sourceLocation: sourceLocation)
            }
        }
        let address = 2, contact = 0
        refused({ $0.entities[address].properties.insert(ModelProperty(name: "id", id: IdUid(id: 9, uid: 77), type: .long, flags: .id), at: 0)
                  $0.entities[address].lastPropertyId = IdUid(id: 9, uid: 77) }, "has an id property")
        refused({ $0.entities[address].properties[1].flags.insert([.unique]) }, "cannot be unique")
        refused({ $0.entities[address].properties[0].flags.insert([.primaryKey, .unique]) }, "is a primary key")
        refused({ $0.entities[contact].properties[2].embeddedType = "Nowhere" }, "Nowhere is not in the model")
        refused({ $0.entities[contact].properties[2].embeddedType = "EOrder" }, "EOrder is an entity, not an embedded type")
        refused({ $0.entities[contact].properties[2].embeddedType = nil }, "names no embeddedType")
        refused({ $0.entities[contact].properties[1].embeddedType = "EAddress" }, "only Embedded (101) and EmbeddedList (1101)")
        refused({ $0.entities[contact].properties[0].flags = [] }, "has 0 id properties")   // entities still need their id
    }

    @Test func renamingAnEmbeddedTypeAndItsPropertyKeepsTheData() throws {
        let directory = TestDirectory("embedded-rename")
        defer { directory.remove() }
        do {
            let store = try Store(directoryPath: directory.path, model: embeddedModel())
            try store.box(for: EContact.self).put(EContact("Ada", home: EAddress(city: "Rome", zip: "00100", geo: EGeo(lat: 41.9, lon: 12.5))))
        }
        var renamed = embeddedModel()
        renamed.entities[2].name = "EPlace"
        renamed.entities[2].properties[0].name = "town"
        for i in renamed.entities.indices {
            for j in renamed.entities[i].properties.indices where renamed.entities[i].properties[j].embeddedType == "EAddress" {
                renamed.entities[i].properties[j].embeddedType = "EPlace"
            }
        }
        let store = try Store(directoryPath: directory.path, model: renamed)
        #expect(store.modelChanges.contains(.renameEntity(from: "EAddress", to: "EPlace")))
        #expect(store.modelChanges.contains(.renameProperty(entity: "EPlace", from: "city", to: "town")))
        let contacts = store.box(for: EContact.self)
        #expect(try contacts.all().first?.home?.city == "Rome")
        #expect(try contacts.query { EContact.home.city == "Rome" && EContact.home.zip == "00100" }.build().count() == 1)
        #expect(try RecordCheck.verify(store.engine).indexEntries == 1)
    }

    @Test func aChangeOfKindOrOfEmbeddedTypeIsRefused() throws {
        let directory = TestDirectory("embedded-kind")
        defer { directory.remove() }
        do { _ = try Store(directoryPath: directory.path, model: embeddedModel()) }

        var flipped = embeddedModel()
        flipped.entities[3].flags = nil   // EGeo an entity now (with an id, to be a valid one)
        flipped.entities[3].properties.append(ModelProperty(name: "id", id: IdUid(id: 3, uid: 4_000_003), type: .long, flags: .id))
        flipped.entities[3].lastPropertyId = IdUid(id: 3, uid: 4_000_003)
        flipped.entities[2].properties.removeLast()                     // EAddress.geo gone (it held EGeo)
        flipped.entities[2].lastPropertyId = embeddedModel().entities[2].lastPropertyId
        #expect { _ = try Store(directoryPath: directory.path, model: flipped) } throws: { error in
            guard let error = error as? CellarError, error.code == .schema else { return false }
            let message = error.message
            return message.contains("was an embedded type and is now an entity")
        }

        var retargeted = embeddedModel()
        retargeted.entities[4].properties[2].embeddedType = "EGeo"   // ELine.shipTo: EAddress → EGeo
        #expect { _ = try Store(directoryPath: directory.path, model: retargeted) } throws: { error in
            guard let error = error as? CellarError, error.code == .schema else { return false }
            let message = error.message
            return message.contains("held embedded EAddress objects and now holds EGeo objects")
        }
    }

    @Test func anEmbeddedTypeGoneFromTheModelIsRetired() throws {
        let directory = TestDirectory("embedded-retire")
        defer { directory.remove() }
        do {
            let store = try Store(directoryPath: directory.path, model: embeddedModel())
            try store.box(for: EContact.self).put(EContact("Ada", home: EAddress(city: "Rome", geo: EGeo(lat: 1, lon: 2))))
        }
        var model = embeddedModel()
        model.entities[2].properties.removeLast()   // EAddress.geo
        model.entities.remove(at: 3)                // EGeo
        let store = try Store(directoryPath: directory.path, model: model)
        #expect(store.modelChanges.contains { if case .retireEntity(let entity) = $0 { entity.name == "EGeo" } else { false } })
        #expect(store.modelChanges.contains(.retireProperty(entity: "EAddress", property: "geo")))
        #expect(try store.box(for: EContact.self).all().first?.home?.city == "Rome")
        #expect(try RecordCheck.verify(store.engine).objects == 1)
    }
}
