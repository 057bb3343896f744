@_spi(CellarGenerated) @_spi(Testing) import Cellar
@testable import CellarGenerator
import CellarTestSupport
import Foundation
import Testing

// `// cellar: asymmetric` on an entity: the model file holds `ModelEntity.asymmetricFlag` in the
// entity's flags, the generated model too; taking the annotation off clears the flag.

private func describe(_ source: String) throws -> [EntityDescription] {
    try SourceScanner.scan(files: [(path: "M.swift", contents: source)])
}

private func update(_ model: Cellar.Model?, _ source: String) throws -> Cellar.Model {
    var random = SplitMix64(seed: 3)
    return try ModelUpdate(modelPath: "model-App.json").update(model, with: try describe(source), using: &random)
}

private func logs(annotated: Bool) -> String {
    """
    class Note: Entity {
        var id: Id = 0
        var title = ""
        required init() {}
    }
    /// Telemetry.
    \(annotated ? "// cellar: asymmetric\n" : "")class LogLine: Entity {
        var id: Id = 0
        var message = ""
        required init() {}
    }
    """
}

@Suite struct AsymmetricAnnotationTests {
    @Test func theAnnotationSetsTheEntityFlag() throws {
        let described = try describe(logs(annotated: true))
        #expect(described.map(\.isAsymmetric) == [false, true])
        let model = try update(nil, logs(annotated: true))
        #expect(model.entities.map(\.flags) == [nil, ModelEntity.asymmetricFlag])
        #expect(model.entities.map(\.isAsymmetric) == [false, true] && model.entities.map(\.isEmbedded) == [false, false])
        let json = String(decoding: model.jsonBytes(), as: UTF8.self)
        #expect(json.contains("\"flags\": \(ModelEntity.asymmetricFlag)"))
        #expect(try Cellar.Model(json: model.jsonBytes()) == model)
        // The generated model carries the flag.
        let code = try CodeEmitter(targetName: "App").emit(entities: described, model: model)
        #expect(code.contains("flags: \(ModelEntity.asymmetricFlag)"))
    }

    @Test func removingTheAnnotationClearsTheFlagAndKeepsTheIds() throws {
        let marked = try update(nil, logs(annotated: true))
        let plain = try update(marked, logs(annotated: false))
        #expect(plain.entities.map(\.flags) == [nil, nil])
        #expect(plain.entities.map(\.id) == marked.entities.map(\.id))
        #expect(try update(plain, logs(annotated: true)) == marked)
    }

    @Test func anEmbeddedTypeCannotBeAsymmetric() throws {
        let source = """
        class Note: Entity {
            var id: Id = 0
            var place: Place?
            required init() {}
        }
        // cellar: embedded
        // cellar: asymmetric
        struct Place {
            var name = ""
        }
        """
        do {
            _ = try describe(source)
            Issue.record("an embedded type annotated asymmetric was accepted")
        } catch {
            #expect("\(error)".contains("an embedded type has no objects of its own to push"))
        }
    }
}
