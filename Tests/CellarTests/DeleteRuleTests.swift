@_spi(CellarGenerated) @_spi(Testing) import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// Delete rules (`// cellar: onDelete = cascade | nullify | deny`) on ToOne, ToMany and backlinks,
/// with the generated entities Folder, Document, FolderLock and Shortcut: applied in the remove's
/// own transaction, through chains and cycles; `deny` removes nothing.
@Suite struct DeleteRuleTests {
    struct Tree {
        let store: Store
        var folders: Box<Folder> { store.box() }
        var documents: Box<Document> { store.box() }
        var locks: Box<FolderLock> { store.box() }
        var shortcuts: Box<Shortcut> { store.box() }
    }

    /// root → a → b (children, cascade), b → root (a cycle); each folder holds two documents.
    static func tree(_ store: Store) throws -> (root: Folder, a: Folder, b: Folder) {
        let boxes = Tree(store: store)
        let (root, a, b) = (Folder(name: "root"), Folder(name: "a"), Folder(name: "b"))
        try boxes.folders.put([root, a, b])
        root.children.append(a)
        a.children.append(b)
        b.children.append(root)
        try boxes.folders.put([root, a, b])
        for folder in [root, a, b] {
            let documents = (0..<2).map { Document(title: "\(folder.name) \($0)") }
            for document in documents { document.folder.target = folder }
            try boxes.documents.put(documents)
        }
        return (root, a, b)
    }

    @Test func cascadeFollowsChainsAndCyclesAndBacklinks() throws {
        let dir = TestDirectory("delete-cascade")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.sub("db"), model: cellarModel())
        defer { store.close() }
        let boxes = Tree(store: store)
        let (root, _, _) = try Self.tree(store)
        let other = Folder(name: "other")
        try boxes.folders.put(other)
        let kept = Document(title: "kept")
        kept.folder.target = other
        try boxes.documents.put(kept)

        // Removing one folder of the cycle removes the three and their six documents.
        #expect(try boxes.folders.remove(root.id))
        #expect(try boxes.folders.all().map(\.name) == ["other"])
        #expect(try boxes.documents.all().map(\.title) == ["kept"])
        // The links went with them; the index of Document.folder holds only what is left.
        #expect(try boxes.folders.get(other.id)?.documents.map(\.title) == ["kept"])
        _ = try ExportImportTests.verify(dir.sub("db"))
    }

    @Test func denyRemovesNothingEvenDeepInACascade() throws {
        let dir = TestDirectory("delete-deny")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.sub("db"), model: cellarModel())
        defer { store.close() }
        let boxes = Tree(store: store)
        let (root, _, b) = try Self.tree(store)
        let lock = FolderLock()
        lock.folder.target = b
        try boxes.locks.put(lock)

        // b is locked: removing it, or root (whose cascade reaches b), is refused whole.
        for folder in [b, root] {
            do {
                _ = try boxes.folders.remove(folder.id)
                Issue.record("removing \(folder.name) was not denied")
            } catch let error as CellarError {
                #expect(error.code == .deleteDenied)
                #expect(error.message.contains("Folder \(b.id) cannot be removed"), "\(error.message)")
                #expect(error.message.contains("the backlink of FolderLock.folder"), "\(error.message)")
            }
            #expect(try boxes.folders.count() == 3 && boxes.documents.count() == 6)
        }
        // Inside a transaction the failure rolls back what the transaction did before it.
        #expect(throws: CellarError.self) {
            try store.runInTransaction {
                try boxes.documents.put(Document(title: "new"))
                _ = try boxes.folders.remove(root.id)
            }
        }
        #expect(try boxes.documents.count() == 6)
        // Once the lock is gone, the cascade runs.
        #expect(try boxes.locks.remove(lock.id))
        #expect(try boxes.folders.remove(b.id))
        #expect(try boxes.folders.count() == 0 && boxes.documents.count() == 0)
    }

    @Test func nullifyUnsetsToOnesAndOwnToOneCascades() throws {
        let dir = TestDirectory("delete-nullify")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.sub("db"), model: cellarModel())
        defer { store.close() }
        let boxes = Tree(store: store)
        let folder = Folder(name: "f")
        try boxes.folders.put(folder)
        let document = Document(title: "d")
        try boxes.documents.put(document)
        let shortcut = Shortcut()
        shortcut.folder.target = folder
        shortcut.target.target = document
        try boxes.shortcuts.put(shortcut)

        // The folder goes: the shortcut stays, pointing at no folder (its index entry gone too).
        #expect(try boxes.folders.remove(folder.id))
        let read = try #require(try boxes.shortcuts.get(shortcut.id))
        #expect(read.folder.targetId == 0)
        #expect(try boxes.shortcuts.query { Shortcut.folder == folder.id }.build().count() == 0)
        // The shortcut goes: its own ToOne's rule takes its target document.
        #expect(try boxes.shortcuts.remove(shortcut.id))
        #expect(try boxes.documents.count() == 0)
        _ = try ExportImportTests.verify(dir.sub("db"))
    }

    @Test func removeAllAppliesTheRulesOfEachObject() throws {
        let dir = TestDirectory("delete-all")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.sub("db"), model: cellarModel())
        defer { store.close() }
        let boxes = Tree(store: store)
        _ = try Self.tree(store)
        #expect(try boxes.folders.removeAll() == 3)
        #expect(try boxes.documents.count() == 0)
    }

    @Test func theRulesAreInTheModelFile() throws {
        let model = cellarModel()
        let document = try #require(model.entity(named: "Document")?.property(named: "folder"))
        #expect(document.backlinkDeleteRule == .cascade && document.deleteRule == nil)
        #expect(model.entity(named: "FolderLock")?.property(named: "folder")?.backlinkDeleteRule == .deny)
        #expect(model.entity(named: "Shortcut")?.property(named: "folder")?.backlinkDeleteRule == .nullify)
        #expect(model.entity(named: "Shortcut")?.property(named: "target")?.deleteRule == .cascade)
        #expect(model.entity(named: "Folder")?.relations.first?.deleteRule == .cascade)
        // They read back from the file as written.
        let again = try Cellar.Model(json: model.jsonBytes())
        #expect(again == model)
        #expect(throws: CellarError.self) {
            _ = try Cellar.Model(json: Array(String(decoding: model.jsonBytes(), as: UTF8.self)
                .replacingOccurrences(of: "\"deny\"", with: "\"never\"").utf8))
        }
    }
}
