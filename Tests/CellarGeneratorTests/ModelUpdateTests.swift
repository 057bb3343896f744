@_spi(CellarGenerated) @_spi(Testing) import Cellar
@testable import CellarGenerator
import CellarTestSupport
import Testing

// Entity descriptions written by hand, as the scanner would give them.
private let here = SourceLocation(file: "Notes.swift", line: 1, column: 1)

private func property(_ name: String, _ type: PropertyType, _ stored: String, flags: PropertyFlags = [], optional: Bool = false,
                      id: Bool = false, target: String? = nil, uid: UInt64?? = nil, modelName: String? = nil) -> PropertyDescription {
    PropertyDescription(name: name, modelName: modelName ?? name, swiftType: stored, isOptional: optional, propertyType: type,
                        storedSwiftType: stored, flags: flags, isId: id, relationTarget: target, uid: uid, location: here)
}

private func entity(_ name: String, _ properties: [PropertyDescription], relations: [RelationDescription] = [], uid: UInt64?? = nil,
                    modelName: String? = nil) -> EntityDescription {
    EntityDescription(typeName: name, modelName: modelName ?? name, kind: .class, uid: uid, properties: properties, relations: relations,
                      isPublic: false, location: here)
}

private func relation(_ name: String, _ target: String, uid: UInt64?? = nil, modelName: String? = nil,
                      backlink: RelationDescription.Backlink? = nil) -> RelationDescription {
    RelationDescription(name: name, modelName: modelName ?? name, target: target, backlink: backlink, uid: uid, location: here)
}

/// Tag, and Note with two ToMany<Tag> (`noteRelations`) and Tag with a backlink (not in the model).
private func relationSources(_ noteRelations: [RelationDescription] = [relation("tags", "Tag"), relation("labels", "Tag")]) -> [EntityDescription] {
    [
        entity("Note", [property("id", .long, "Id", flags: [.id], id: true), property("title", .string, "String")], relations: noteRelations),
        entity("Tag", [property("id", .long, "Id", flags: [.id], id: true)], relations: [relation("notes", "Note", backlink: .relation("tags"))]),
    ]
}

/// The sources that match the seed's model file: Author and Note.
private func seedSources(noteText: PropertyDescription? = nil) -> [EntityDescription] {
    [
        entity("Author", [property("id", .long, "Id", flags: [.id], id: true), property("name", .string, "String")]),
        entity("Note", [
            property("id", .long, "Id", flags: [.id], id: true), property("title", .string, "String"),
            noteText ?? property("text", .string, "String"), property("creationDate", .date, "Date", optional: true),
            property("modificationDate", .date, "Date", optional: true),
            property("author", .relation, "Id", flags: [.indexed, .indexPartialSkipZero], target: "Author"),
        ]),
    ]
}

private func update(_ model: Cellar.Model?, _ entities: [EntityDescription], seed: UInt64 = 1) throws -> Cellar.Model {
    var random = SplitMix64(seed: seed)
    return try ModelUpdate(modelPath: "model-Notes.json").update(model, with: entities, using: &random)
}

/// The message of the error `body` throws (nil when it throws none).
private func message(_ body: () throws -> Void) -> String? {
    do { try body(); return nil } catch { return "\(error)" }
}

@Suite struct ModelUpdateTests {
    @Test func theSeedsFileStaysByteForByte() throws {
        let seed = try Cellar.Model(json: Array(ModelJSONSeed.text.utf8))
        let updated = try update(seed, seedSources())
        #expect(updated == seed)
        #expect(String(decoding: updated.jsonBytes(), as: UTF8.self) == ModelJSONSeed.text + "\n")
    }

    @Test func aNewModelGetsSequentialIdsAndFreshUids() throws {
        let first = try update(nil, seedSources(), seed: 7)
        #expect(first.entities.map(\.id.id) == [1, 2])
        #expect(first.entities[1].properties.map(\.id.id) == [1, 2, 3, 4, 5, 6])
        #expect(first.lastEntityId == first.entities[1].id && first.entities[1].lastPropertyId == first.entities[1].properties[5].id)
        #expect(first.lastIndexId.id == 1 && first.entities[1].properties[5].indexId == first.lastIndexId)
        #expect(first.entities[1].properties[5].relationTarget == "Author")
        let uids = first.allUids
        #expect(uids.count == 11 && uids.allSatisfy { $0 >= 1 && $0 <= UInt64(Int64.max) })
        // The same sources and seed give the same model; updating it again changes nothing.
        #expect(try update(nil, seedSources(), seed: 7) == first)
        #expect(try update(first, seedSources(), seed: 99) == first)
    }

    @Test func renamesKeepIdsWithUidsAndRetireWithout() throws {
        let seed = try Cellar.Model(json: Array(ModelJSONSeed.text.utf8))
        let textUid: UInt64 = 5_661_281_725_891_017_216
        // Renamed with its UID: same ID and UID, new name.
        var sources = seedSources(noteText: property("body", .string, "String", uid: .some(textUid)))
        sources[0].typeName = "Writer"
        sources[0].modelName = "Writer"
        sources[0].uid = .some(712_683_617_673_955_584)
        sources[1].properties[5].relationTarget = "Writer"
        let renamed = try update(seed, sources)
        #expect(renamed.entities[0].name == "Writer" && renamed.entities[0].id == seed.entities[0].id)
        #expect(renamed.entities[1].properties[2].name == "body" && renamed.entities[1].properties[2].id == seed.entities[1].properties[2].id)
        #expect(renamed.entities[1].properties[5].relationTarget == "Writer")
        #expect(renamed.retiredPropertyUids.isEmpty && renamed.retiredEntityUids.isEmpty)
        // Renamed without a UID: the old one is retired, the new one gets the next ID.
        let replaced = try update(seed, seedSources(noteText: property("body", .string, "String")))
        let body = try #require(replaced.entity(named: "Note")?.property(named: "body"))
        #expect(body.id.id == 7 && replaced.entity(named: "Note")?.lastPropertyId == body.id)
        #expect(replaced.retiredPropertyUids == [textUid])
        // A reset: a fresh UID for the same name starts the property afresh.
        let reset = try update(seed, seedSources(noteText: property("text", .string, "String", uid: .some(42))))
        #expect(reset.entity(named: "Note")?.property(named: "text")?.id == IdUid(id: 7, uid: 42))
        #expect(reset.retiredPropertyUids == [textUid])
        // A removed entity, property and index are retired; an index added gets the next index ID.
        var noAuthor = seedSources()
        noAuthor.removeFirst()
        noAuthor[0].properties.removeLast()
        noAuthor[0].properties[1].flags = [.indexed]
        let smaller = try update(seed, noAuthor)
        #expect(smaller.retiredEntityUids == [712_683_617_673_955_584])
        #expect(smaller.retiredPropertyUids == [6_001_769_173_142_034_944, 6_336_800_942_024_279_296, 5_025_387_500_910_526_208])
        #expect(smaller.retiredIndexUids == [6_069_708_401_898_380_544])
        #expect(smaller.entities[0].properties[1].indexId?.id == 2 && smaller.lastIndexId.id == 2)
        #expect(smaller.lastEntityId == seed.lastEntityId && smaller.entities[0].lastPropertyId == seed.entities[1].lastPropertyId)
    }

    @Test func bareUidAnnotationsFailWithBothUids() throws {
        let seed = try Cellar.Model(json: Array(ModelJSONSeed.text.utf8))
        var sources = seedSources(noteText: property("text", .string, "String", uid: .some(nil)))
        sources[0].uid = .some(nil)
        sources[0].modelName = "Writer"
        let text = try #require(message { _ = try update(seed, sources) })
        let lines = text.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines[0].contains("entity Author") && lines[0].contains("Author = 712683617673955584") && lines[0].contains("to reset it"))
        #expect(lines[1].contains("property Note.text") && lines[1].contains("`// cellar: uid = 5661281725891017216`") && lines[1].contains("to reset it"))
        #expect(lines.allSatisfy { $0.hasPrefix("Notes.swift:1:1: error: ") })
    }

    @Test func relationsGetSequentialGlobalIdsAndStayAcrossRuns() throws {
        let first = try update(nil, relationSources(), seed: 3)
        let note = try #require(first.entity(named: "Note"))
        let tag = try #require(first.entity(named: "Tag"))
        #expect(note.relations.map(\.name) == ["tags", "labels"] && note.relations.map(\.id.id) == [1, 2])
        #expect(note.relations.allSatisfy { $0.targetId == tag.id })
        #expect(tag.relations.isEmpty)   // a backlink is not in the model
        #expect(first.lastRelationId == note.relations[1].id && first.lastIndexId == .zero)
        #expect(first.allUids.count == 7 && Set(note.relations.map(\.id.uid)).count == 2)
        // Same sources: same model, whatever the random source; a new relation gets the next ID.
        #expect(try update(first, relationSources(), seed: 99) == first)
        #expect(try update(nil, relationSources(), seed: 3) == first)
        var more = relationSources()
        more[1].relations.append(relation("related", "Note"))
        let grown = try update(first, more, seed: 5)
        #expect(grown.entity(named: "Tag")?.relations.map(\.id.id) == [3] && grown.lastRelationId.id == 3)
        #expect(grown.entity(named: "Tag")?.relations.first?.targetId == note.id)
        #expect(grown.entity(named: "Note") == note)
        // The JSON keeps them (ObjectBox's layout) and reads them back.
        let json = String(decoding: grown.jsonBytes(), as: UTF8.self)
        #expect(json.contains("\"relations\": [\n        {\n          \"id\": \"3:"))
        #expect(try Cellar.Model(json: grown.jsonBytes()) == grown)
    }

    @Test func relationRenamesRemovalsAndResets() throws {
        let first = try update(nil, relationSources(), seed: 3)
        let tags = first.entity(named: "Note")!.relations[0]
        let labels = first.entity(named: "Note")!.relations[1]
        // Renamed with its UID: same ID and UID.
        let renamed = try update(first, relationSources([relation("topics", "Tag", uid: .some(tags.id.uid)), relation("labels", "Tag")]))
        #expect(renamed.entity(named: "Note")?.relations == [ModelRelation(name: "topics", id: tags.id, targetId: tags.targetId), labels])
        #expect(renamed.retiredRelationUids.isEmpty && renamed.lastRelationId == first.lastRelationId)
        // The Swift name may change while the model name stays.
        #expect(try update(first, relationSources([relation("topics", "Tag", modelName: "tags"), relation("labels", "Tag")])) == first)
        // Renamed without a UID: the old one is retired, the new one gets the next ID.
        let replaced = try update(first, relationSources([relation("topics", "Tag"), relation("labels", "Tag")]))
        #expect(replaced.entity(named: "Note")?.relations.map(\.id.id) == [2, 3] && replaced.lastRelationId.id == 3)
        #expect(replaced.retiredRelationUids == [tags.id.uid])
        // Removed: retired, its ID never handed out again.
        let removed = try update(first, relationSources([relation("labels", "Tag")]))
        #expect(removed.entity(named: "Note")?.relations == [labels] && removed.retiredRelationUids == [tags.id.uid])
        let again = try update(removed, relationSources())
        #expect(again.entity(named: "Note")?.relations.map(\.id.id) == [2, 3])
        // A reset: a fresh UID for the same name.
        let reset = try update(first, relationSources([relation("tags", "Tag", uid: .some(42)), relation("labels", "Tag")]))
        #expect(reset.entity(named: "Note")?.relations.map(\.id) == [labels.id, IdUid(id: 3, uid: 42)])
        #expect(reset.retiredRelationUids == [tags.id.uid])
        // A removed entity retires its relations.
        let withoutNote = try update(first, [entity("Tag", [property("id", .long, "Id", flags: [.id], id: true)])])
        #expect(Set(withoutNote.retiredRelationUids) == [tags.id.uid, labels.id.uid])
    }

    @Test func relationRefusals() throws {
        let first = try update(nil, relationSources(), seed: 3)
        let tags = first.entity(named: "Note")!.relations[0]
        // `uid` without a value: the UID to keep and a fresh one.
        let advice = try #require(message { _ = try update(first, relationSources([relation("tags", "Tag", uid: .some(nil))])) })
        #expect(advice.contains("relation Note.tags") && advice.contains("`// cellar: uid = \(tags.id.uid)`") && advice.contains("to reset it"))
        // A retired UID; the UID of a property.
        let removed = try update(first, relationSources([relation("labels", "Tag")]))
        #expect(message { _ = try update(removed, relationSources([relation("tags", "Tag", uid: .some(tags.id.uid))])) }?.contains("was retired") == true)
        let titleUid = first.entity(named: "Note")!.property(named: "title")!.id.uid
        #expect(message { _ = try update(first, relationSources([relation("tags", "Tag", uid: .some(titleUid))])) }?.contains("belongs to something else") == true)
        // A changed target without a new UID.
        let changed = try #require(message { _ = try update(first, relationSources([relation("tags", "Note"), relation("labels", "Tag")])) })
        #expect(changed.contains("relation Note.tags changed its target from Tag to Note") && changed.contains("`// cellar: uid = "))
        // A target that is not an entity.
        #expect(message { _ = try update(first, relationSources([relation("tags", "Person")])) }?.contains("Person, which is not an entity") == true)
    }

    @Test func refusals() throws {
        let seed = try Cellar.Model(json: Array(ModelJSONSeed.text.utf8))
        // A merge gone wrong: two entities with ID 2.
        var merged = seed
        merged.entities[0].id.id = 2
        #expect(message { _ = try update(merged, seedSources()) }?.contains("both have ID 2") == true)
        var below = seed
        below.lastEntityId = IdUid(id: 1, uid: 712_683_617_673_955_584)
        #expect(message { _ = try update(below, seedSources()) }?.contains("above lastEntityId") == true)
        // A retired UID, a UID of something else.
        var retired = seed
        retired.retiredPropertyUids = [77]
        #expect(message { _ = try update(retired, seedSources(noteText: property("text", .string, "String", uid: .some(77)))) }?.contains("was retired") == true)
        #expect(message { _ = try update(seed, seedSources(noteText: property("text", .string, "String", uid: .some(712_683_617_673_955_584)))) }?.contains("belongs to something else") == true)
        // A type change without a new UID.
        #expect(message { _ = try update(seed, seedSources(noteText: property("text", .long, "Int64"))) }?.contains("changed its type from String to Long") == true)
        // A relation to a type that is not an entity.
        var orphan = seedSources()
        orphan[1].properties[5].relationTarget = "Person"
        #expect(message { _ = try update(seed, orphan) }?.contains("Person, which is not an entity") == true)
    }

    /// ObjectBox's documented "manual conflict resolution": after a merge, two of a kind share an ID. The
    /// message names both with their ID:UID and says what to write for either (only the
    /// developer knows which one is not shared yet), and which last ID to raise.
    @Test func duplicateIdsAfterAMergeNameBothIdUidsAndWhatToWrite() throws {
        let seed = try Cellar.Model(json: Array(ModelJSONSeed.text.utf8))
        func expectMessage(_ model: Cellar.Model, _ parts: [String], sourceLocation: Testing.SourceLocation = #_sourceLocation) {
            guard let text = message({ _ = try update(model, seedSources()) }) else {
                Issue.record("no error", sourceLocation: sourceLocation)
                return
            }
            for part in parts + ["model-Notes.json", "keep its UID", "nothing was written"] where !text.contains(part) {
                Issue.record("lacks \"\(part)\": \(text)", sourceLocation: sourceLocation)
            }
        }
        // Entities: Bear, added on another branch, got Note's ID 2.
        var entities = seed
        entities.entities.append(ModelEntity(name: "Bear", id: IdUid(id: 2, uid: 9876), lastPropertyId: IdUid(id: 1, uid: 9877),
                                             properties: [ModelProperty(name: "id", id: IdUid(id: 1, uid: 9877), type: .long, flags: .id)]))
        expectMessage(entities, ["entities Note (2:5608901830082711040) and Bear (2:9876) both have ID 2",
                                 "write \"3:9876\" as the id of Bear, or \"3:5608901830082711040\" as the id of Note",
                                 "the same value in \"lastEntityId\"", "search the file for that UID", "development database"])
        // Properties: Note.summary got title's ID 2; the next free one is 7.
        var properties = seed
        properties.entities[1].properties.append(ModelProperty(name: "summary", id: IdUid(id: 2, uid: 4242), type: .string))
        expectMessage(properties, ["properties Note.title (2:249105953415333376) and Note.summary (2:4242) both have ID 2",
                                   "\"7:4242\" as the id of Note.summary", "\"7:249105953415333376\" as the id of Note.title",
                                   "the \"lastPropertyId\" of entity Note"])
        // Indexes: Author.name's index got the ID of Note.author's.
        var indexes = seed
        indexes.entities[0].properties[1].indexId = IdUid(id: 1, uid: 4343)
        expectMessage(indexes, ["the indexes of Author.name (1:4343) and Note.author (1:6069708401898380544) both have ID 1",
                                "\"2:6069708401898380544\" as the indexId of Note.author", "\"2:4343\" as the indexId of Author.name",
                                "\"lastIndexId\""])
        // Relations.
        var relations = seed
        relations.entities[0].relations = [ModelRelation(name: "notes", id: IdUid(id: 1, uid: 5151), targetId: seed.entities[1].id)]
        relations.entities[1].relations = [ModelRelation(name: "authors", id: IdUid(id: 1, uid: 5252), targetId: seed.entities[0].id)]
        relations.lastRelationId = IdUid(id: 1, uid: 5252)
        expectMessage(relations, ["relations Author.notes (1:5151) and Note.authors (1:5252) both have ID 1",
                                  "\"2:5252\" as the id of Note.authors", "\"2:5151\" as the id of Author.notes", "\"lastRelationId\""])
    }
}
