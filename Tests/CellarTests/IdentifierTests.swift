@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

// One entity under two names, same UID: the rename test.
private enum ItemV1: RowSchema {
    static let entity = testEntity("Item", id: 1, uid: 7_100, [("id", 1, .long, [.id]), ("name", 2, .string, [])])
}
private enum ItemV2: RowSchema {
    static let entity = testEntity("Thing", id: 1, uid: 7_100, [("id", 1, .long, [.id]), ("name", 2, .string, [])])
}

extension Note {
    static let titleProperty = Property<Note>(name: "title", id: 2, type: .string)
}

@Suite struct IdentifierTests {
    @Test func uriJsonAndResolving() throws {
        let store = try Store(directoryPath: "memory:pid-roundtrip", model: standardModel)
        let notes = store.box(for: Note.self)
        var note = Note(title: "Shopping")
        try notes.put(&note)
        let pid = try notes.identifier(for: note)
        #expect(!pid.isTemporary && pid.id == note.id.value && pid.entityName == "Note" && pid.entityUid == 2_000_000)
        #expect(pid.storeIdentifier == store.uuid)
        #expect(pid.uriRepresentation.absoluteString == "cellar://\(store.uuid.uuidString.lowercased())/Note/p\(note.id.value)")

        // URI: back to an equal identifier, without the UID (a URI names the entity only).
        let fromURI = try PersistentIdentifier(uriRepresentation: pid.uriRepresentation)
        #expect(fromURI == pid && fromURI.hashValue == pid.hashValue && fromURI.entityUid == nil)
        #expect(try PersistentIdentifier(pid.uriRepresentation.absoluteString) == pid)
        #expect(try PersistentIdentifier(pid.uriRepresentation.absoluteString.uppercased().replacingOccurrences(of: "CELLAR:", with: "cellar:").replacingOccurrences(of: "/NOTE/P", with: "/Note/p")) == pid,
                "the store UUID reads in either case")

        // JSON: one short string, with the UID.
        let data = try JSONEncoder().encode(pid)
        let decoded = try JSONDecoder().decode(PersistentIdentifier.self, from: data)
        #expect(decoded == pid && decoded.entityUid == 2_000_000)
        #expect(data.count < 80, "compact: \(String(decoding: data, as: UTF8.self))")
        let wrapped = try JSONDecoder().decode([String: PersistentIdentifier].self, from: JSONEncoder().encode(["selected": pid]))
        #expect(wrapped["selected"] == pid)

        #expect(try notes.get(pid) == note)
        #expect(try notes.get(fromURI) == note)
        #expect(try notes.get(decoded) == note)

        // Removed: nil, not an error (and the id is not handed out again).
        try notes.remove(note.id)
        #expect(try notes.get(pid) == nil)
        try notes.put(Note(title: "next"))
        #expect(try notes.get(pid) == nil)
    }

    @Test func temporaryIdentifiersNeverResolve() throws {
        let store = try Store(directoryPath: "memory:pid-temporary", model: standardModel)
        let other = try Store(directoryPath: "memory:pid-temporary-2", model: standardModel)
        let notes = store.box(for: Note.self)
        let unsaved = Note(title: "draft")
        let a = try notes.identifier(for: unsaved), b = try notes.identifier(for: unsaved)
        #expect(a.isTemporary && b.isTemporary && a != b, "each temporary identifier is distinct")
        #expect(a.uriRepresentation.absoluteString.contains("/Note/t"))
        let again = try PersistentIdentifier(uriRepresentation: a.uriRepresentation)
        #expect(again.isTemporary && again == a)
        #expect(try JSONDecoder().decode(PersistentIdentifier.self, from: JSONEncoder().encode(a)) == a)
        // Nothing stored has id 0, and a put does not make the old identifier resolve.
        try notes.put(unsaved)
        #expect(try notes.get(a) == nil)
        #expect(try other.box(for: Note.self).get(a) == nil, "not in another store either (no throw)")
        #expect(try notes.identifier(for: EntityId<Note>(0)).isTemporary)
    }

    @Test func anotherStoreOrEntityThrows() throws {
        let store = try Store(directoryPath: "memory:pid-a", model: standardModel)
        let other = try Store(directoryPath: "memory:pid-b", model: standardModel)
        #expect(store.uuid != other.uuid)
        let id = try store.box(for: Note.self).put(Note(title: "a"))
        try other.box(for: Note.self).put(Note(title: "b"))
        let pid = try store.box(for: Note.self).identifier(for: id)
        #expect(throws: CellarError.identifierFromAnotherStore) { try other.box(for: Note.self).get(pid) }
        #expect(throws: CellarError.identifierOfAnotherEntity(identifier: pid.description, box: "Tagged")) {
            try store.box(for: Tagged.self).get(pid)
        }
        // From a URI (no UID) the entity is matched by name.
        let fromURI = try PersistentIdentifier(pid.description)
        #expect(throws: CellarError.identifierOfAnotherEntity(identifier: pid.description, box: "Tagged")) {
            try store.box(for: Tagged.self).get(fromURI)
        }
    }

    @Test func validAcrossReopenCompactionAndRename() throws {
        let dir = TestDirectory("pid-reopen")
        defer { dir.remove() }
        let path = dir.sub("db")
        let saved: Data, savedURI: URL, uuid: UUID
        do {
            let store = try Store(directoryPath: path, model: testModel([ItemV1.entity]))
            let items = store.box(for: Row<ItemV1>.self)
            let row = Row<ItemV1>(["name": .string("kept")])
            try items.put(row)
            let pid = try items.identifier(for: row)
            saved = try JSONEncoder().encode(pid)
            savedURI = pid.uriRepresentation
            uuid = store.uuid
            store.close()
        }
        // Compacted (offline): the same UUID and ids.
        _ = try StorageEngine.compact(directory: path)
        do {
            // Reopened: the same store UUID, and both forms resolve.
            let store = try Store(directoryPath: path, model: testModel([ItemV1.entity]))
            #expect(store.uuid == uuid)
            let items = store.box(for: Row<ItemV1>.self)
            #expect(try items.get(JSONDecoder().decode(PersistentIdentifier.self, from: saved))?.values == ["name": .string("kept")])
            #expect(try items.get(PersistentIdentifier(uriRepresentation: savedURI))?.values == ["name": .string("kept")])
            store.close()
        }
        // Renamed (UID kept): the decoded identifier carries the UID and still resolves; the URI
        // names the old entity and is refused; identifiers made now carry the new name.
        let store = try Store(directoryPath: path, model: testModel([ItemV2.entity]))
        #expect(store.modelChanges == [.renameEntity(from: "Item", to: "Thing")])
        let things = store.box(for: Row<ItemV2>.self)
        let old = try JSONDecoder().decode(PersistentIdentifier.self, from: saved)
        let thing = try #require(try things.get(old))
        #expect(thing.values == ["name": .string("kept")])
        #expect(throws: CellarError.identifierOfAnotherEntity(identifier: savedURI.absoluteString, box: "Thing")) {
            try things.get(PersistentIdentifier(uriRepresentation: savedURI))
        }
        let new = try things.identifier(for: thing)
        #expect(new.entityName == "Thing" && new.id == old.id && new != old)
    }

    @Test func malformedURIsSayWhatIsWrong() throws {
        let uuid = "0b0f6d8e-4c1a-4f5e-9d2b-7a3c5e1f2a4b"
        let cases: [(String, String)] = [
            ("http://\(uuid)/Note/p1", "does not start with cellar://"),
            ("cellar://not-a-uuid/Note/p1", "\"not-a-uuid\" is not a store UUID"),
            ("cellar://\(uuid)/Note", "found 2 parts"),
            ("cellar://\(uuid)/Note/p1/more", "found 4 parts"),
            ("cellar://\(uuid)//p1", "the entity name is empty"),
            ("cellar://\(uuid)/No%zzte/p1", "is not percent-encoded UTF-8"),
            ("cellar://\(uuid)/No%C3te/p1", "is not percent-encoded UTF-8"),
            ("cellar://\(uuid)/%FF/p1", "is not percent-encoded UTF-8"),
            ("cellar://\(uuid)/Note/p0", "\"0\" is not a positive integer"),
            ("cellar://\(uuid)/Note/p+5", "\"+5\" is not a positive integer"),
            ("cellar://\(uuid)/Note/p", "\"\" is not a positive integer"),
            ("cellar://\(uuid)/Note/p99999999999999999999", "is not a positive integer"),
            ("cellar://\(uuid)/Note/x1", "p<id> (or t<uuid> when temporary)"),
            ("cellar://\(uuid)/Note/tnope", "\"nope\" is not a UUID"),
            ("cellar://\(uuid)/Note/p1#", "the entity UID"),
            ("cellar://\(uuid)/Note/p1#12a", "the entity UID"),
            ("", "does not start with cellar://"),
        ]
        for (uri, reason) in cases {
            do {
                _ = try PersistentIdentifier(uri)
                Issue.record("\(uri) was accepted")
            } catch let error as CellarError where error.code == .illegalArgument {
                let message = error.message
                #expect(message.contains(reason), "\(uri): \(message)")
            }
        }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(PersistentIdentifier.self, from: Data("\"cellar://x\"".utf8)) }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(PersistentIdentifier.self, from: Data("42".utf8)) }
        // A name outside [A-Za-z0-9_] is percent-encoded, and read back.
        let odd = PersistentIdentifier(store: UUID(), entityName: "Grüße/Note 1", entityUid: 5, id: 9)
        #expect(odd.description.hasSuffix("/Gr%C3%BC%C3%9Fe%2FNote%201/p9"))
        #expect(try PersistentIdentifier(odd.description) == odd)
        #expect(try JSONDecoder().decode(PersistentIdentifier.self, from: JSONEncoder().encode(odd)).entityUid == 5)
    }

    @Test func findIdentifiersOrderAndHashing() throws {
        let store = try Store(directoryPath: "memory:pid-query", model: standardModel)
        let notes = store.box(for: Note.self)
        let ids = try notes.put((0..<20).map { Note(title: $0 % 2 == 0 ? "even \($0)" : "odd \($0)") })
        let query = try notes.query { Note.titleProperty.startsWith("even") }.build()
        let found = try query.findIdentifiers()
        #expect(found == (try query.findIds().map { try notes.identifier(for: $0) }))
        #expect(found.count == 10 && found.allSatisfy { $0.entityUid == 2_000_000 && !$0.isTemporary })
        #expect(try found.compactMap { try notes.get($0)?.title } == (0..<20).filter { $0 % 2 == 0 }.map { "even \($0)" })
        // Comparable in id order within an entity; Hashable with the URI-made twins.
        let all = try ids.map { try notes.identifier(for: $0) }
        #expect(all.shuffled().sorted() == all)
        let twins = try all.map { try PersistentIdentifier(uriRepresentation: $0.uriRepresentation) }
        #expect(Set(all + twins).count == 20)
        let temporary = try notes.identifier(for: Note())
        #expect(all.allSatisfy { $0 < temporary }, "stored before temporary")
    }
}
