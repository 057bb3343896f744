@_spi(CellarGenerated) @_spi(Testing) import Cellar
@testable import CellarGenerator
import CellarTestSupport
import Foundation
import Testing

// How embedded types enter the model file: as entities with `ModelEntity.embeddedFlag`, IDs and
// UIDs assigned, renamed and retired exactly like entities; properties holding them name them in
// `embeddedType`.

private func describe(_ source: String) throws -> [EntityDescription] {
    try SourceScanner.scan(files: [(path: "M.swift", contents: source)])
}

private func update(_ model: Cellar.Model?, _ source: String, seed: UInt64 = 1) throws -> Cellar.Model {
    var random = SplitMix64(seed: seed)
    return try ModelUpdate(modelPath: "model-App.json").update(model, with: try describe(source), using: &random)
}

/// The message of the error `body` throws (nil when it throws none).
private func message(_ body: () throws -> Void) -> String? {
    do { try body(); return nil } catch { return "\(error)" }
}

private let contact = """
class Contact: Entity {
    var id: Id = 0
    var address: Address?
    var history: [Address] = []
    required init() {}
}
// cellar: embedded
struct Address {
    var city = ""
    // cellar: index
    var zip = ""
    var geo: Geo?
}
// cellar: embedded
struct Geo {
    var lat = 0.0
}
// cellar: embedded
struct Unused {
    var x = 0
}
"""

@Suite struct EmbeddedModelUpdateTests {
    @Test func embeddedTypesGetIdsUidsAndTheFlag() throws {
        let model = try update(nil, contact)
        #expect(model.entities.map(\.name) == ["Contact", "Address", "Geo", "Unused"])
        #expect(model.entities.map(\.isEmbedded) == [false, true, true, true])
        #expect(model.entities.map(\.flags) == [nil, ModelEntity.embeddedFlag, ModelEntity.embeddedFlag, ModelEntity.embeddedFlag])
        #expect(model.entities.map(\.id.id) == [1, 2, 3, 4] && model.lastEntityId == model.entities[3].id)

        let address = try #require(model.entity(named: "Address"))
        #expect(address.idProperty == nil && address.properties.map(\.name) == ["city", "zip", "geo"])
        #expect(address.properties.map(\.id.id) == [1, 2, 3] && address.lastPropertyId == address.properties[2].id)
        let zip = try #require(address.property(named: "zip"))
        #expect(zip.indexId == model.lastIndexId && zip.flags.contains(.indexed))
        #expect(address.property(named: "geo")?.embeddedType == "Geo" && address.property(named: "geo")?.type == .embedded)

        let owner = try #require(model.entity(named: "Contact"))
        #expect(owner.property(named: "address")?.type == .embedded && owner.property(named: "address")?.embeddedType == "Address")
        #expect(owner.property(named: "history")?.type == .embeddedList && owner.property(named: "history")?.embeddedType == "Address")
        #expect(owner.property(named: "id")?.embeddedType == nil)

        // The JSON holds the flag and the embedded type names, and reads back the same.
        let json = String(decoding: model.jsonBytes(), as: UTF8.self)
        #expect(json.contains("\"flags\": 268435456") && json.contains("\"embeddedType\": \"Address\""))
        #expect(try Cellar.Model(json: model.jsonBytes()) == model)
        // A second run changes nothing.
        #expect(try update(model, contact, seed: 9) == model)
    }

    @Test func renamesKeepUidsAndRemovalsRetire() throws {
        let model = try update(nil, contact)
        let address = try #require(model.entity(named: "Address"))
        let city = try #require(address.property(named: "city"))
        // Address → PostalAddress and city → town, each by its UID; Unused removed.
        let renamed = contact
            .replacingOccurrences(of: "// cellar: embedded\nstruct Address {\n    var city = \"\"",
                                  with: "// cellar: embedded\n// cellar: uid = \(address.id.uid)\nstruct PostalAddress {\n    // cellar: uid = \(city.id.uid)\n    var town = \"\"")
            .replacingOccurrences(of: "Address?", with: "PostalAddress?")
            .replacingOccurrences(of: "[Address]", with: "[PostalAddress]")
            .replacingOccurrences(of: "// cellar: embedded\nstruct Unused {\n    var x = 0\n}", with: "")
        let next = try update(model, renamed)
        let postal = try #require(next.entity(named: "PostalAddress"))
        #expect(postal.id == address.id && postal.isEmbedded)
        #expect(postal.property(named: "town")?.id == city.id && postal.lastPropertyId == address.lastPropertyId)
        #expect(next.entity(named: "Contact")?.property(named: "address")?.embeddedType == "PostalAddress")
        #expect(next.entity(named: "Contact")?.property(named: "address")?.id == model.entity(named: "Contact")?.property(named: "address")?.id)
        let unused = try #require(model.entity(named: "Unused"))
        #expect(next.entity(named: "Unused") == nil && next.retiredEntityUids == [unused.id.uid])
        #expect(next.retiredPropertyUids == unused.properties.map(\.id.uid))

        // A `uid` annotation without a value says which UID keeps the embedded type's data.
        let asking = contact.replacingOccurrences(of: "// cellar: embedded\nstruct Address {", with: "// cellar: embedded\n// cellar: uid\nstruct Address {")
        let advice = try #require(message { _ = try update(model, asking) })
        #expect(advice.contains("`// cellar: uid` needs a value for embedded type Address: to keep its data (it is \(address.id.uid) in model-App.json), use `// cellar: uid = \(address.id.uid)`"))
    }

    @Test func aModelWithoutEmbeddedTypesIsUnchanged() throws {
        let plain = "class Note: Entity {\n    var id: Id = 0\n    var title = \"\"\n    required init() {}\n}\n"
        let model = try update(nil, plain)
        #expect(model.entities.map(\.flags) == [nil])
        let json = String(decoding: model.jsonBytes(), as: UTF8.self)
        #expect(!json.contains("embeddedType") && !json.contains("\"flags\": 268435456"))
        let code = try CodeEmitter(targetName: "App").emit(entities: try describe(plain), model: model)
        #expect(!code.contains("embedded") && !code.contains("Embedded"))
    }

    @Test func changesOfKindOrEmbeddedTypeAreRefused() throws {
        let model = try update(nil, contact)
        // An embedded type becoming an entity (and back).
        let entity = contact.replacingOccurrences(of: "// cellar: embedded\nstruct Unused {\n    var x = 0", with: "struct Unused: Entity {\n    var id: Id = 0\n    var x = 0")
        let refused = try #require(message { _ = try update(model, entity) })
        #expect(refused.contains("M.swift:18:1: error: Unused changed from an embedded type to an entity; its stored objects cannot be read as an entity. Keep it an embedded type, or start it afresh (its stored objects are dropped) with `// cellar: uid = "))
        let plain = try update(nil, "struct Unused: Entity {\n    var id: Id = 0\n}\n")
        let back = try #require(message { _ = try update(plain, "// cellar: embedded\nstruct Unused {\n    var x = 0\n}\nstruct E: Entity { var id: Id = 0 }\n") })
        #expect(back.contains("Unused changed from an entity to an embedded type"))

        // A property holding another embedded type than before.
        let other = contact.replacingOccurrences(of: "var address: Address?", with: "var address: Geo?")
        let changed = try #require(message { _ = try update(model, other) })
        #expect(changed.contains("M.swift:3:5: error: property Contact.address changed its embedded type from Address to Geo; its stored objects cannot be read as Geo. Keep the old type, or start the property afresh (its stored values are dropped) with `// cellar: uid = "))
        // One object becoming a list of them is a change of type.
        let list = contact.replacingOccurrences(of: "var address: Address?", with: "var address: [Address]?")
        #expect(try #require(message { _ = try update(model, list) }).contains("property Contact.address changed its type from Embedded to EmbeddedList"))
    }

    @Test func sourcesWithOnlyEmbeddedTypesHaveNoEntities() throws {
        let work = TestDirectory("embedded-only")
        defer { work.remove() }
        let file = work.sub("A.swift")
        try "// cellar: embedded\nstruct A { var x = 0 }\n".write(toFile: file, atomically: true, encoding: .utf8)
        let options = Generator.Options(sources: [file], modelPath: work.sub("model.json"), outputPath: work.sub("out.swift"), targetName: "App")
        let text = try #require(message { _ = try Generator(options: options).run() })
        #expect(text.contains("no entities in the sources of App"))
    }
}
