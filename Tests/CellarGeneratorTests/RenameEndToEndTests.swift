import Cellar
@testable import CellarGenerator
import CellarTestSupport
import Testing

// Renames and resets through the generator's model update and a real store: data written with
// one generated model is read under the next one.
private let here = SourceLocation(file: "Item.swift", line: 1, column: 1)

private func item(_ typeName: String, uid: UInt64?? = nil, _ properties: [(String, PropertyType, String, UInt64??)]) -> EntityDescription {
    var described = [PropertyDescription(name: "id", modelName: "id", swiftType: "Id", isOptional: false, propertyType: .long,
                                         storedSwiftType: "Id", flags: [.id], isId: true, location: here)]
    for (name, type, stored, uid) in properties {
        described.append(PropertyDescription(name: name, modelName: name, swiftType: stored, isOptional: true, propertyType: type,
                                             storedSwiftType: stored, uid: uid, location: here))
    }
    return EntityDescription(typeName: typeName, modelName: typeName, kind: .class, uid: uid, properties: described,
                             isPublic: false, location: here)
}

private enum Models {
    static func update(_ model: Cellar.Model?, _ entity: EntityDescription) throws -> Cellar.Model {
        var random = SplitMix64(seed: 3)
        return try ModelUpdate(modelPath: "model-Items.json").update(model, with: [entity], using: &random)
    }

    static let v1: Cellar.Model = try! update(nil, item("Item", [("name", .string, "String", nil), ("score", .long, "Int64", nil)]))
    static let itemUid = v1.entities[0].id.uid
    static let scoreUid = v1.entities[0].property(named: "score")!.id.uid
    /// The entity renamed to Thing and `score` to `points`, both with their UIDs.
    static let v2: Cellar.Model = try! update(v1, item("Thing", uid: .some(itemUid), [("name", .string, "String", nil), ("points", .long, "Int64", .some(scoreUid))]))
    /// `points` reset with a fresh UID.
    static let v3: Cellar.Model = try! update(v2, item("Thing", [("name", .string, "String", nil), ("points", .long, "Int64", .some(4242))]))
}

private enum V1: RowSchema { static var entity: ModelEntity { Models.v1.entities[0] } }
private enum V2: RowSchema { static var entity: ModelEntity { Models.v2.entities[0] } }
private enum V3: RowSchema { static var entity: ModelEntity { Models.v3.entities[0] } }

@Suite struct RenameEndToEndTests {
    @Test func renameKeepsDataAndResetDropsIt() throws {
        let dir = TestDirectory("generator-rename")
        defer { dir.remove() }
        let path = dir.sub("db")
        do {
            let store = try Store(directoryPath: path, model: Models.v1)
            try store.box(for: Row<V1>.self).put([Row(["name": .string("a"), "score": .long(1)]), Row(["name": .string("b"), "score": .long(2)])])
        }
        #expect(Models.v2.entities[0].id == Models.v1.entities[0].id)
        #expect(Models.v2.entities[0].property(named: "points")?.id == Models.v1.entities[0].property(named: "score")?.id)
        do {
            let store = try Store(directoryPath: path, model: Models.v2)
            #expect(store.modelChanges == [.renameEntity(from: "Item", to: "Thing"), .renameProperty(entity: "Thing", from: "score", to: "points")])
            #expect(try store.box(for: Row<V2>.self).all().map(\.values) == [["name": .string("a"), "points": .long(1)], ["name": .string("b"), "points": .long(2)]])
        }
        let store = try Store(directoryPath: path, model: Models.v3)
        #expect(store.modelChanges == [.addProperty(entity: "Thing", property: "points"), .retireProperty(entity: "Thing", property: "points")])
        #expect(Models.v3.entities[0].property(named: "points")?.id == IdUid(id: 4, uid: 4242))
        #expect(try store.box(for: Row<V3>.self).all().map(\.values) == [["name": .string("a")], ["name": .string("b")]])
    }
}
