@_spi(CellarGenerated) @_spi(Testing) import Cellar
@testable import CellarGenerator
import CellarTestSupport
import Testing

// Renames and resets through the generator's model update and a real store: data written with
// one generated model is read under the next one.

/// Scans one entity from source text, as the generator does.
private func scan(_ source: String) throws -> EntityDescription {
    try SourceScanner.scan(files: [(path: "Item.swift", contents: source)])[0]
}

private enum Models {
    static func update(_ model: Cellar.Model?, _ source: String) throws -> Cellar.Model {
        var random = SplitMix64(seed: 3)
        return try ModelUpdate(modelPath: "model-Items.json").update(model, with: [try scan(source)], using: &random)
    }

    static let v1: Cellar.Model = try! update(nil, """
        class Item: Entity {
            var id: Id = 0
            var name: String?
            var score: Int64?
            required init() {}
        }
        """)
    static let itemUid = v1.entities[0].id.uid
    static let scoreUid = v1.entities[0].property(named: "score")!.id.uid
    /// The entity renamed to Thing and `score` to `points`, both with their UIDs.
    static let v2: Cellar.Model = try! update(v1, """
        // cellar: uid = \(itemUid)
        class Thing: Entity {
            var id: Id = 0
            var name: String?
            // cellar: uid = \(scoreUid)
            var points: Int64?
            required init() {}
        }
        """)
    /// `points` reset with a fresh UID.
    static let v3: Cellar.Model = try! update(v2, """
        class Thing: Entity {
            var id: Id = 0
            var name: String?
            // cellar: uid = 4242
            var points: Int64?
            required init() {}
        }
        """)
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
