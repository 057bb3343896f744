import Cellar
import CellarTestSupport
import Foundation
import Testing

/// `CellarError` as an app sees it (a plain `import Cellar`): codes to match, the values
/// involved, and the same messages as ever.
@Suite struct CellarErrorTests {
    @Test func aUniqueViolationCarriesItsPropertyAndValue() throws {
        let directory = TestDirectory("error-unique")
        let store = try Store(directoryPath: directory.path, model: queryModel())
        let authors = store.box(for: QAuthor.self)
        try authors.put(QAuthor("Ada"))
        do {
            try authors.put(QAuthor("Ada"))
            Issue.record("a second Ada was stored")
        } catch let error as CellarError where error.code == .uniqueViolation {
            #expect(error.property == "QAuthor.name")
            #expect(error.value == "\"Ada\"")
            #expect(error.description == "QAuthor.name must be unique, and \"Ada\" is stored already in another object")
            #expect(error == CellarError.uniqueViolation(property: "QAuthor.name", value: "\"Ada\""))
        }
    }

    @Test func aCodeIsAPatternForAnyError() {
        func matches(_ error: any Error, _ code: CellarError.Code) -> Bool {
            switch error {
            case code: true
            default: false
            }
        }
        #expect(matches(CellarError.readOnly, .readOnly))
        #expect(!matches(CellarError.readOnly, .storeClosed))
        #expect(!matches(CocoaError(.fileNoSuchFile), .readOnly))
        do {
            throw CellarError.fileCorrupt("a record of 3 bytes")
        } catch CellarError.Code.fileCorrupt {
            // matched by its code
        } catch {
            Issue.record("not matched: \(error)")
        }
    }

    @Test func theMessagesAreTheSameAsEver() {
        #expect(CellarError.schema("entity Note: x").description == "schema: entity Note: x")
        #expect(CellarError.fileCorrupt("bad").description
                == "the database is corrupt: bad. Restore it from a backup, or run `cellar verify` on it to see what is damaged")
        #expect(CellarError.fileCorrupt("bad").message == "bad")
        #expect(CellarError.notFound(entity: "Note", id: 7).description == "no Note with id 7 is stored")
        #expect(CellarError.notFound(entity: "Note", id: 7).entity == "Note")
        #expect(CellarError.notFound(entity: "Note", id: 7).id == 7)
        #expect(CellarError.idAlreadyExists(entity: "Note", id: 1).description
                == "a Note with id 1 is stored already; use put mode .put or .update to replace it")
        #expect(CellarError.nonUniqueResult(count: 3).count == 3)
        #expect(CellarError.illegalArgument("x").description == "illegal argument: x")
        #expect(CellarError.cannotRelateToUnsavedEntities("y").description == "cannot relate to an object that was never put: y")
        #expect(CellarError.identifierOfAnotherEntity(identifier: "p", box: "Tag").entity == "Tag")
        #expect(CellarError.readOnly.description == "the store was opened read-only")
        #expect(CellarError.storeClosed.description == "the store was closed")
        #expect(CellarError.storeClosed.code.description == "storeClosed")
        #expect(CellarError.notFound(entity: "Note", id: 7).localizedDescription == "no Note with id 7 is stored")
    }

    @Test func anUnknownCodeKeepsItsMessage() {
        let error = CellarError(CellarError.Code(rawValue: "somethingNew"), message: "a new kind of failure")
        #expect(error.description == "a new kind of failure")
        #expect(error.code != .schema)
    }

    @Test func aChangedCopyLeavesTheOriginalAlone() {
        let original = CellarError.notFound(entity: "Note", id: 7)
        var changed = original
        changed.id = 8
        changed.message = "moved"
        #expect(original.id == 7)
        #expect(original.message == "no Note with id 7 is stored")
        #expect(changed.id == 8 && changed.entity == "Note" && changed.message == "moved")
        #expect(changed != original)
        changed.id = 7
        changed.message = original.message
        #expect(changed == original)
    }

    /// An error is kept inside hot values (a box holds its schema look-up as a `Result`): its
    /// size is the code and one reference, so that copying such a value stays a few moves.
    @Test func anErrorIsThreeWordsWide() {
        #expect(MemoryLayout<CellarError>.size <= 3 * MemoryLayout<Int>.size)
    }
}
