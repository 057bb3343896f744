@_spi(CellarGenerated) @_spi(Testing) import Cellar
@testable import CellarGenerator
import CellarTestSupport
import Foundation
import Testing

// `// cellar: onDelete = cascade | nullify | deny` on ToOne, ToMany and backlinks: a relation's own
// rule becomes its `deleteRule`, a backlink's rule the `backlinkDeleteRule` of the relation it is
// the other side of, in the model file and in the generated model.

private func describe(_ source: String) throws -> [EntityDescription] {
    try SourceScanner.scan(files: [(path: "M.swift", contents: source)])
}

private func update(_ source: String) throws -> Cellar.Model {
    var random = SplitMix64(seed: 5)
    return try ModelUpdate(modelPath: "model-App.json").update(nil, with: try describe(source), using: &random)
}

private func authors(_ noteRule: String, _ backlinkRule: String, _ tagsRule: String = "") -> String {
    """
    class Author: Entity {
        var id: Id = 0
        \(backlinkRule)
        // cellar: backlink = "author"
        var notes: ToMany<Note> = nil
        required init() {}
    }
    class Note: Entity {
        var id: Id = 0
        \(noteRule)
        var author: ToOne<Author> = nil
        \(tagsRule)
        var tags: ToMany<Tag> = nil
        required init() {}
    }
    class Tag: Entity {
        var id: Id = 0
        required init() {}
    }
    """
}

@Suite struct DeleteRuleAnnotationTests {
    @Test func rulesLandOnTheRelationsTheyBelongTo() throws {
        let source = authors("// cellar: onDelete = deny", "// cellar: onDelete = \"cascade\"", "// cellar: onDelete = nullify")
        let model = try update(source)
        let author = try #require(model.entity(named: "Note")?.property(named: "author"))
        #expect(author.deleteRule == .deny && author.backlinkDeleteRule == .cascade)
        #expect(model.entity(named: "Note")?.relations.first?.deleteRule == .nullify)
        #expect(try Cellar.Model(json: model.jsonBytes()) == model)
        let code = try CodeEmitter(targetName: "App").emit(entities: try describe(source), model: model)
        #expect(code.contains("relationTarget: \"Author\", deleteRule: .deny, backlinkDeleteRule: .cascade)"))
        #expect(code.contains("deleteRule: .nullify)"))
        // Without annotations the model says nothing of rules.
        let plain = try update(authors("", ""))
        #expect(!String(decoding: plain.jsonBytes(), as: UTF8.self).contains("DeleteRule"))
    }

    @Test func misuseIsNamed() throws {
        let bad = """
        class Note: Entity {
            var id: Id = 0
            // cellar: onDelete = cascade
            var title = ""
            required init() {}
        }
        """
        #expect(throws: GeneratorError.self) { _ = try describe(bad) }
        #expect(throws: GeneratorError.self) { _ = try describe(authors("// cellar: onDelete = sometimes", "")) }
        #expect(throws: GeneratorError.self) { _ = try describe(authors("// cellar: onDelete", "")) }
    }
}
