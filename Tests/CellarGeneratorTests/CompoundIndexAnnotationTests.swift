@_spi(CellarGenerated) @_spi(Testing) import Cellar
@testable import CellarGenerator
import CellarTestSupport
import Foundation
import Testing

// `// cellar: index = ["a", "b"]` and `unique = [...]` on an entity: indexes over several
// properties in the model file (entity member `indexes`) and in the generated model; an index over
// the same properties keeps its ID and UID across runs, one dropped is retired.

private func describe(_ source: String) throws -> [EntityDescription] {
    try SourceScanner.scan(files: [(path: "M.swift", contents: source)])
}

private func update(_ source: String, over model: Cellar.Model? = nil) throws -> Cellar.Model {
    var random = SplitMix64(seed: 7)
    return try ModelUpdate(modelPath: "model-App.json").update(model, with: try describe(source), using: &random)
}

private func people(_ annotations: String, extra: String = "") -> String {
    """
    \(annotations)
    class Person: Entity {
        var id: Id = 0
        var lastName: String = ""
        // cellar: name = "given"
        var firstName: String = ""
        var born: Date = Date(timeIntervalSince1970: 0)
        var tags: [String] = []
        \(extra)
        required init() {}
    }
    """
}

@Suite struct CompoundIndexAnnotationTests {
    @Test func indexesLandInTheModelAndKeepTheirIdsAcrossRuns() throws {
        let source = people("""
            // cellar: index = ["lastName", "firstName"]
            // cellar: unique = ["firstName", "born"]
            """)
        let model = try update(source)
        let person = try #require(model.entity(named: "Person"))
        #expect(person.indexes.count == 2)
        #expect(person.indexes[0].properties == [person.property(named: "lastName")!.id, person.property(named: "given")!.id])
        #expect(!person.indexes[0].unique && person.indexes[1].unique)
        #expect(person.indexes.map(\.id.id) == [1, 2] && model.lastIndexId.id == 2)
        #expect(try Cellar.Model(json: model.jsonBytes()) == model)
        let code = try CodeEmitter(targetName: "App").emit(entities: try describe(source), model: model)
        #expect(code.contains("indexes: [Cellar.ModelIndex(id: Cellar.IdUid(id: 1, uid: \(person.indexes[0].id.uid)), properties: ["))
        #expect(code.contains("unique: true)]"))

        // Again: the same IDs. The unique one made plain keeps its UID; the other dropped is retired.
        #expect(try update(source, over: model) == model)
        let changed = try update(people(#"// cellar: index = ["firstName", "born"]"#), over: model)
        let after = try #require(changed.entity(named: "Person"))
        #expect(after.indexes.map(\.id) == [person.indexes[1].id] && !after.indexes[0].unique)
        #expect(changed.retiredIndexUids == [person.indexes[0].id.uid])
        // Without annotations the model file has no `indexes` member.
        #expect(!String(decoding: try update(people("")).jsonBytes(), as: UTF8.self).contains("\"indexes\""))
    }

    @Test func theStaleCheckNamesWhatChanged() throws {
        let before = try update(people(""))
        let after = try update(people(#"// cellar: index = ["lastName", "born"]"#, extra: "var nickname: String = \"\""), over: before)
        #expect(Generator.changes(from: before, to: after) == ["Person.nickname was added", "the indexes over several properties of Person changed"])
        #expect(Generator.changes(from: after, to: try update(people(""), over: after)) == ["Person.nickname was removed", "the indexes over several properties of Person changed"])
        #expect(Generator.changes(from: nil, to: before) == ["the model file is new"])
    }

    @Test func misuseIsNamed() throws {
        func refused(_ annotations: String, _ expected: String) {
            do {
                _ = try describe(people(annotations))
                Issue.record("accepted: \(annotations)")
            } catch {
                #expect("\(error)".contains(expected), "\(error)")
            }
        }
        refused(#"// cellar: index = ["lastName"]"#, "two or more")
        refused(#"// cellar: index = "lastName""#, "two or more")
        refused(#"// cellar: index"#, "two or more")
        refused(#"// cellar: index = ["lastName", "nickname"]"#, "`nickname`, which is not a stored property")
        refused(#"// cellar: index = ["lastName", "tags"]"#, "an index over several properties holds")
        refused(#"// cellar: index = ["lastName", "id"]"#, "the id")
        refused(#"// cellar: unique = ["lastName", "lastName"]"#, "twice")
        refused("// cellar: index = [\"lastName\", \"born\"]\n// cellar: unique = [\"lastName\", \"born\"]", "repeats the index")
    }
}
