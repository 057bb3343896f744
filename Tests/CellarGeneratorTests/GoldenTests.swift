@_spi(CellarGenerated) @_spi(Testing) import Cellar
@testable import CellarGenerator
import CellarTestSupport
import Foundation
import Testing

/// Sources in, model JSON and generated code out, compared with committed files:
/// - `Fixtures/seed`: the entities of ObjectBox's example project with its model file, which must stay
///   byte for byte as it is;
/// - `Tests/CellarTests/Generated`: entities with every conversion, whose generated bindings the
///   CellarTests target compiles and runs (GeneratedBindingTests).
/// `CELLAR_UPDATE_GOLDEN=1` writes the new outputs over the committed ones instead of comparing.
@Suite struct GoldenTests {
    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

    struct Case {
        var target: String
        var directory: URL
        var sources: URL
        var model: URL
        var output: URL
    }

    static let cases = [
        Case(target: "Seed", directory: testsDirectory.appendingPathComponent("CellarGeneratorTests/Fixtures/seed"),
             sources: testsDirectory.appendingPathComponent("CellarGeneratorTests/Fixtures/seed/Sources"),
             model: testsDirectory.appendingPathComponent("CellarGeneratorTests/Fixtures/seed/model-Seed.json"),
             output: testsDirectory.appendingPathComponent("CellarGeneratorTests/Fixtures/seed/EntityInfo-Seed.generated.swift")),
        Case(target: "CellarTests", directory: testsDirectory.appendingPathComponent("CellarTests/Generated"),
             sources: testsDirectory.appendingPathComponent("CellarTests/Generated/GeneratedEntities.swift"),
             model: testsDirectory.appendingPathComponent("CellarTests/Generated/model-CellarTests.json"),
             output: testsDirectory.appendingPathComponent("CellarTests/Generated/EntityInfo-CellarTests.generated.swift")),
    ]

    @Test(arguments: cases.indices)
    func generatedFilesMatchTheCommittedOnes(_ index: Int) throws {
        let golden = Self.cases[index]
        let work = TestDirectory("golden")
        defer { work.remove() }
        let model = work.sub("model.json")
        let output = work.sub("out.generated.swift")
        try FileManager.default.copyItem(atPath: golden.model.path, toPath: model)
        var random = SplitMix64(seed: 1)
        let summary = try Generator(options: .init(sources: [golden.sources.path], modelPath: model, outputPath: output,
                                                   targetName: golden.target)).run(using: &random)
        #expect(!summary.modelChanged, "the committed model file of \(golden.target) is complete: nothing to assign")
        #expect(!FileManager.default.fileExists(atPath: model + ".bak"))
        let expected = try String(contentsOf: golden.output, encoding: .utf8)
        let produced = try String(contentsOfFile: output, encoding: .utf8)
        if ProcessInfo.processInfo.environment["CELLAR_UPDATE_GOLDEN"] == "1" {
            try produced.write(to: golden.output, atomically: true, encoding: .utf8)
        } else {
            #expect(produced == expected, "\(golden.output.lastPathComponent) differs: regenerate with CELLAR_UPDATE_GOLDEN=1 and review the diff")
        }
        // A second run changes nothing and touches nothing.
        var again = SplitMix64(seed: 2)
        let second = try Generator(options: .init(sources: [golden.sources.path], modelPath: model, outputPath: output,
                                                  targetName: golden.target)).run(using: &again)
        #expect(!second.modelChanged && !second.codeChanged)
    }

    @Test func theSeedsModelFileIsTheSeed() throws {
        let text = try String(contentsOf: Self.cases[0].model, encoding: .utf8)
        #expect(text == ModelJSONSeed.text + "\n")
    }

    @Test func aChangedModelKeepsABackupAndBadSourcesWriteNothing() throws {
        let work = TestDirectory("generator-run")
        defer { work.remove() }
        let sources = work.sub("Sources")
        try FileManager.default.createDirectory(atPath: sources, withIntermediateDirectories: true)
        let file = sources + "/Item.swift"
        try "class Item: Entity { var id: Id = 0; var name = \"\"; required init() {} }\n".write(toFile: file, atomically: true, encoding: .utf8)
        let options = Generator.Options(sources: [sources], modelPath: work.sub("model-App.json"), outputPath: sources + "/generated/EntityInfo-App.generated.swift", targetName: "App")
        var random = SplitMix64(seed: 5)
        let first = try Generator(options: options).run(using: &random)
        #expect(first.modelChanged && first.codeChanged && first.entities == ["Item"])
        #expect(!FileManager.default.fileExists(atPath: options.modelPath + ".bak"))
        let firstModel = try String(contentsOfFile: options.modelPath, encoding: .utf8)
        // A new property: the model changes, the old file is kept as .bak.
        try "class Item: Entity { var id: Id = 0; var name = \"\"; var count = 0; required init() {} }\n".write(toFile: file, atomically: true, encoding: .utf8)
        let second = try Generator(options: options).run(using: &random)
        #expect(second.modelChanged && second.codeChanged)
        #expect(try String(contentsOfFile: options.modelPath + ".bak", encoding: .utf8) == firstModel)
        // Sources with an error: a message with the place, and neither file is touched.
        let before = try String(contentsOfFile: options.modelPath, encoding: .utf8)
        try "class Item: Entity { var id: Id = 0; var tags: [Color] = []; required init() {} }\n".write(toFile: file, atomically: true, encoding: .utf8)
        do {
            _ = try Generator(options: options).run(using: &random)
            Issue.record("expected an error for [Color]")
        } catch {
            #expect("\(error)".contains("Item.swift:1:") && "\(error)".contains("relation"))
        }
        #expect(try String(contentsOfFile: options.modelPath, encoding: .utf8) == before)
    }
}

@Suite struct VisibilityTests {
    @Test func publicVisibilityMakesTheGeneratedApiPublic() throws {
        let source = """
        public final class Item: Entity {
            public var id: Id = 0
            public var name = ""
            public required init() {}
        }
        """
        let entities = try SourceScanner.scan(files: [(path: "Item.swift", contents: source)])
        var random = SplitMix64(seed: 4)
        let model = try ModelUpdate(modelPath: "model-Lib.json").update(nil, with: entities, using: &random)
        let internalCode = try CodeEmitter(targetName: "Lib").emit(entities: entities, model: model)
        let publicCode = try CodeEmitter(targetName: "Lib", isPublic: true).emit(entities: entities, model: model)
        // The plumbing the bindings call is SPI: generated files import it, app code does not.
        #expect(internalCode.contains("\n@_spi(CellarGenerated) import Cellar\n"))
        #expect(publicCode.contains("\n@_spi(CellarGenerated) import Cellar\n"))
        for declaration in ["static let entityBinding", "struct ItemCellarBinding", "static let name", "func cellarModel()", "convenience init(directoryPath:"] {
            #expect(publicCode.contains("public \(declaration)"), "\(declaration)")
            #expect(!internalCode.contains("public \(declaration)"), "\(declaration)")
        }
    }
}

@Suite struct RelationEmitTests {
    @Test func aStructWithRelationsGetsItsHooksAndKeepsItsToManysOutOfRead() throws {
        let source = """
        struct Folder: Entity {
            var id: Id = 0
            var name = ""
            var parent: ToOne<Folder> = nil
            // cellar: backlink = "parent"
            var children: ToMany<Folder> = nil
            var related: ToMany<Folder> = []
        }
        struct Plain: Entity {
            var id: Id = 0
        }
        """
        let entities = try SourceScanner.scan(files: [(path: "Folder.swift", contents: source)])
        var random = SplitMix64(seed: 4)
        let model = try ModelUpdate(modelPath: "model-App.json").update(nil, with: entities, using: &random)
        let code = try CodeEmitter(targetName: "App").emit(entities: entities, model: model)
        #expect(code.contains("record.add(try entity.parent.targetIdForPut(), slot: 2)"))
        #expect(code.contains("""
                return Folder(
                    id: id,
                    name: try record.string(slot: 1) ?? "",
                    parent: Cellar.ToOne<Folder>(targetId: try record.read(Cellar.Id.self, slot: 2) ?? 0)
                )
            }

            var hasRelations: Bool { true }

            func attach(_ entity: Folder, id: Cellar.Id, store: Cellar.Store) {
                entity.parent.attach(store)
                entity.children.attach(store, owner: id, link: .backlinkOfToOne(property: 3))
                entity.related.attach(store, owner: id, link: .relation(1))
            }

            func writeRelations(of entity: Folder, id: Cellar.Id, in writer: Cellar.RelationWriter) throws {
                try entity.children.write(owner: id, link: .backlinkOfToOne(property: 3), in: writer)
                try entity.related.write(owner: id, link: .relation(1), in: writer)
            }
        }
        """))
        // The model as code names the relation; an entity without relations gets no hooks.
        let relation = try #require(model.entity(named: "Folder")?.relations.first)
        #expect(code.contains("relations: [\n                    Cellar.ModelRelation(name: \"related\", id: \(idUid(relation.id)), targetId: \(idUid(relation.targetId))),\n                ]),"))
        #expect(code.contains("lastRelationId: \(idUid(relation.id))"))
        // A constant for link conditions, for the standalone relation only.
        #expect(code.contains("    static let related = Cellar.RelationProperty<Folder>(name: \"related\", relationId: 1, targetEntityId: 1)\n"))
        #expect(!code.contains("static let children"))
        #expect(code.components(separatedBy: "var hasRelations").count == 2)
        let publicCode = try CodeEmitter(targetName: "App", isPublic: true).emit(entities: entities, model: model)
        for declaration in ["var hasRelations", "func attach(", "func writeRelations("] {
            #expect(publicCode.contains("public \(declaration)"), "\(declaration)")
        }
    }

    private func idUid(_ value: IdUid) -> String { "Cellar.IdUid(id: \(value.id), uid: \(value.uid))" }
}
