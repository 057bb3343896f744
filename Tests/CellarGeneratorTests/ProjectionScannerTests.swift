@_spi(CellarGenerated) @_spi(Testing) import Cellar
@testable import CellarGenerator
import CellarTestSupport
import Testing

/// Person and its relations, followed by the projection under test.
private let entities = """
@_spi(CellarGenerated) @_spi(Testing) import Cellar

enum Mood: Int { case unknown, calm }

final class Team: Entity {
    var id: Id = 0
    var name: String = ""
    required init() {}
}

final class Person: Entity {
    var id: Id = 0
    var name: String = ""
    var age: Int = 0
    var nick: String?
    // cellar: convert = { "default": ".unknown" }
    var mood: Mood = .unknown
    var team: ToOne<Team> = nil
    var friends: ToMany<Person> = nil
    required init() {}
}

"""

/// The projections in `entities` + `projection` (the projection starts at line 22 of M.swift).
private func projections(_ projection: String) throws -> [ProjectionDescription] {
    let files = [(path: "M.swift", contents: entities + projection)]
    return try ProjectionScanner.scan(files: files, entities: try SourceScanner.scan(files: files))
}

/// The error lines of scanning `entities` + `projection`.
private func errors(_ projection: String) -> [String] {
    do {
        _ = try projections(projection)
        return []
    } catch let error as GeneratorError {
        return [error.description]
    } catch let error as GeneratorErrors {
        return error.messages
    } catch {
        return ["unexpected \(error)"]
    }
}

/// Expects exactly one error, at `line:column` of M.swift, containing `fragment`.
private func expectError(_ projection: String, at position: String, _ fragment: String,
                         sourceLocation: Testing.SourceLocation = #_sourceLocation) {
    let found = errors(projection)
    #expect(found.count == 1, "expected one error, got \(found)", sourceLocation: sourceLocation)
    guard let first = found.first else { return }
    #expect(first.hasPrefix("M.swift:\(position): error: "), "\(first)", sourceLocation: sourceLocation)
    #expect(first.contains(fragment), "\(first)", sourceLocation: sourceLocation)
}

@Suite struct ProjectionScannerTests {
    @Test func readsFieldsByNameAndFrom() throws {
        let found = try projections("""
        // cellar: projection = "Person"
        struct PersonRow {
            var id: EntityId<Person>
            let name: String
            // cellar: from = "age"
            var years: Int?
            var nick: String?
            var mood: Mood
            var team: ToOne<Team>
            // cellar: from = "team"
            var teamId: Id
            var display: String { name }
            static let zero = 0
        }
        """)
        let row = try #require(found.first)
        #expect(found.count == 1)
        #expect(row.typeName == "PersonRow" && row.entityTypeName == "Person")
        #expect(row.fields.map(\.name) == ["id", "name", "years", "nick", "mood", "team", "teamId"])
        #expect(row.fields[0].source == .id(typed: true))
        guard case .property(let age) = row.fields[2].source else { Issue.record("years reads age"); return }
        #expect(age.name == "age" && row.fields[2].isOptional)
        guard case .toOneTargetId(let team) = row.fields[6].source else { Issue.record("teamId reads the target id"); return }
        #expect(team.name == "team")
    }

    @Test func aMissingPropertyNamesTheOnesThereAre() {
        expectError("""
        // cellar: projection = "Person"
        struct PersonRow {
            var nmae: String
        }
        """, at: "24:5", "Person has no property `nmae`; its properties are id, name, age, nick, mood, team")
    }

    @Test func aTypeMismatchSaysBothTypes() {
        expectError("""
        // cellar: projection = "Person"
        struct PersonRow {
            var name: String
            var age: String
        }
        """, at: "25:5", "`PersonRow.age` is a String, but Person.age is an Int: declare it `Int`")
        expectError("""
        // cellar: projection = "Person"
        struct PersonRow {
            var nick: String
        }
        """, at: "24:5", "`PersonRow.nick` is a String, but Person.nick is optional (String?): declare it `String?`")
        expectError("""
        // cellar: projection = "Person"
        struct PersonRow {
            var id: String
        }
        """, at: "24:5", "Person.id is the id: declare it `Id` or `EntityId<Person>`")
    }

    @Test func theProjectedTypeMustBeAnEntity() {
        expectError("""
        // cellar: projection = "Mood"
        struct PersonRow {
            var name: String
        }
        """, at: "22:1", "names Mood, which is not an entity in the scanned sources; the entities are: Person, Team")
        expectError("""
        // cellar: projection
        struct PersonRow {
            var name: String
        }
        """, at: "22:1", "name the entity it is a view of")
    }

    @Test func pathsThroughRelationsAreRefused() {
        expectError("""
        // cellar: projection = "Person"
        struct PersonRow {
            // cellar: from = "team.name"
            var teamName: String
        }
        """, at: "24:5", "`PersonRow.teamName` reads \"team.name\", but Person.team is a relation: a projection reads one record, not the objects it relates to; project the target entity instead")
    }

    @Test func relationsToManyAreRefusedAndToOneReadsOnlyAsToOneOrId() {
        expectError("""
        // cellar: projection = "Person"
        struct PersonRow {
            var friends: ToMany<Person>
        }
        """, at: "24:5", "Person.friends, a ToMany<Person>: relations to many are not read by projections")
        expectError("""
        // cellar: projection = "Person"
        struct PersonRow {
            var team: Team?
        }
        """, at: "24:5", "but Person.team is a ToOne<Team>: declare it `ToOne<Team>` (attached, so its `target` reads the object) or `Id`")
    }

    @Test func otherMistakes() {
        expectError("""
        // cellar: projection = "Person"
        final class PersonRow {
            var name: String = ""
        }
        """, at: "22:1", "a projection is a struct")
        expectError("""
        // cellar: projection = "Person"
        struct PersonRow {
            // cellar: index
            var name: String
        }
        """, at: "24:5", "on a projection's property Cellar accepts only `// cellar: from")
        expectError("""
        // cellar: projection = "Person"
        struct PersonRow {
            var name = ""
        }
        """, at: "24:5", "has no type annotation")
        expectError("""
        // cellar: projection = "Person"
        struct PersonRow {
            let name: String = ""
        }
        """, at: "24:5", "a `let` with an initial value")
        // Each error of a projection is reported, not only the first.
        #expect(errors("""
        // cellar: projection = "Person"
        struct PersonRow {
            var nmae: String
            var age: String
        }
        """).count == 2)
    }

    @Test func theEmittedBindingReadsTheSlotsOfTheModel() throws {
        let files = [(path: "M.swift", contents: entities + """
        // cellar: projection = "Person"
        struct PersonRow {
            var id: Id
            var age: Int?
            var mood: Mood
            // cellar: from = "team"
            var teamId: Id
        }
        """)]
        let scanned = try SourceScanner.scan(files: files)
        let found = try ProjectionScanner.scan(files: files, entities: scanned)
        var random = SplitMix64(seed: 3)
        let model = try ModelUpdate(modelPath: "model.json").update(nil, with: scanned, using: &random)
        let code = try CodeEmitter(targetName: "App").emit(entities: scanned, model: model, projections: found)
        #expect(code.contains("extension PersonRow: Cellar.Projection {\n    static let projectionBinding = PersonRowCellarProjectionBinding()\n}"))
        #expect(code.contains("typealias EntityType = Person"))
        #expect(code.contains("""
                return PersonRow(
                    id: id,
                    age: try record.read(Int.self, slot: 2) ?? 0,
                    mood: (try record.read(Int.self, slot: 4)).flatMap { Mood(rawValue: $0) } ?? Mood.unknown,
                    teamId: try record.read(Cellar.Id.self, slot: 5) ?? 0
                )
        """), "\(code)")
        #expect(!code.contains("\"PersonRow\""), "not in the model")
    }
}
