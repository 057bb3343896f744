@_spi(CellarGenerated) @_spi(Testing) import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// `Store.copy(to:encryption:)`, `Store.export(to:entity:)` and `Store.importObjects(from:into:options:)`:
/// a store's data written elsewhere while it stays in use.
@Suite struct BackupTests {
    /// The export lines of the store in `path` (opened read-only with `key`), the header without
    /// what names the commit.
    static func exported(_ path: String, key: EncryptionKey? = nil) throws -> [String] {
        let engine = try StorageEngine(directory: path, options: StorageOptions(readOnly: true, encryptionKey: key))
        defer { engine.close() }
        var lines: [String] = []
        try ObjectExport.export(engine) { lines.append(String(decoding: $0, as: UTF8.self)) }
        return lines
    }

    static func verify(_ path: String, key: EncryptionKey? = nil) throws -> RecordCheck.Summary {
        let engine = try StorageEngine(directory: path, options: StorageOptions(readOnly: true, encryptionKey: key))
        defer { engine.close() }
        return try RecordCheck.verify(engine)
    }

    /// Lines equal but for the header's `commit` (a copy's own transaction ids go on from the
    /// copied one, and so does its commit).
    static func expectSame(_ a: [String], _ b: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(a.count == b.count, sourceLocation: sourceLocation)
        #expect(try ExportImportTests.portableHeader(a[0]) == ExportImportTests.portableHeader(b[0]), sourceLocation: sourceLocation)
        #expect(a.dropFirst().elementsEqual(b.dropFirst()), sourceLocation: sourceLocation)
    }

    @Test func aCopyHoldsEverythingAndKeepsTheUUID() throws {
        let dir = TestDirectory("copy-everything")
        defer { dir.remove() }
        let (source, target) = (dir.sub("source"), dir.sub("target"))
        try ExportImportTests.fill(source, seed: 11)
        let store = try Store(directoryPath: source, model: cellarModel(), options: StoreOptions(durability: .none))
        let report = try store.copy(to: target)
        #expect(report.bytes > 0)
        // A copy never replaces anything.
        #expect(throws: CellarError.self) { try store.copy(to: target) }
        let uuid = store.uuid
        store.close()
        try Self.expectSame(try Self.exported(source), try Self.exported(target))
        let (before, after) = (try Self.verify(source), try Self.verify(target))
        #expect(after.objects == before.objects && after.indexEntries == before.indexEntries && after.relationLinks == before.relationLinks)
        let copy = try Store(directoryPath: target, model: cellarModel())
        defer { copy.close() }
        #expect(copy.uuid == uuid)
        #expect(copy.modelChanges.isEmpty)
        // New objects get ids above every id the source handed out.
        #expect(try ExportImportTests.exported(target)[0].contains("\"nextIds\""))
    }

    @Test("a copy made while other threads write holds one commit, whole")
    func aCopyUnderWritesIsOneCommit() throws {
        let dir = TestDirectory("copy-under-writes")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.sub("source"), model: cellarModel(), options: StoreOptions(durability: .none))
        defer { store.close() }
        let box = store.box(for: Tag.self)
        let copied = Locked(0)
        let writer = Thread {
            // Each transaction puts 100 tags: any one commit holds a multiple of 100.
            while copied.current < 3 {
                _ = try? box.put((0..<100).map { _ in Tag() })
            }
        }
        writer.start()
        // The copies start once the writer committed (an event, not a pause).
        while try box.count() == 0 { usleep(1_000) }
        for round in 0..<3 {
            let target = dir.sub("copy\(round)")
            try store.copy(to: target)
            copied.withLock { $0 += 1 }
            let copy = try Store(directoryPath: target, model: cellarModel())
            let count = try copy.box(for: Tag.self).count()
            #expect(count > 0 && count % 100 == 0, "copy \(round) holds \(count) tags")
            copy.close()
            _ = try Self.verify(target)
        }
        while !writer.isFinished { usleep(1_000) }
    }

    @Test func aCopyTakesAnotherKeyOrNone() throws {
        let dir = TestDirectory("copy-keys")
        defer { dir.remove() }
        let source = dir.sub("source")
        try ExportImportTests.fill(source, seed: 3)
        let plainLines = try Self.exported(source)
        let store = try Store(directoryPath: source, model: cellarModel())
        try store.copy(to: dir.sub("encrypted"), encryption: .key(TestKeys.encryption))
        store.close()
        // Without its key the copy does not open; with it, it holds the same objects.
        #expect(throws: CellarError.self) { _ = try Store(directoryPath: dir.sub("encrypted"), model: cellarModel()) }
        try Self.expectSame(plainLines, try Self.exported(dir.sub("encrypted"), key: TestKeys.encryption))
        let encrypted = try Store(directoryPath: dir.sub("encrypted"), model: cellarModel(),
                                  options: StoreOptions(encryptionKey: TestKeys.encryption))
        try encrypted.copy(to: dir.sub("again"))  // the same key
        try encrypted.copy(to: dir.sub("plain"), encryption: .plain)
        encrypted.close()
        try Self.expectSame(plainLines, try Self.exported(dir.sub("again"), key: TestKeys.encryption))
        try Self.expectSame(plainLines, try Self.exported(dir.sub("plain")))
        _ = try Self.verify(dir.sub("plain"))
    }

    @Test func anInMemoryStoreCopiesToDiskAndLeftoversGo() throws {
        let dir = TestDirectory("copy-memory")
        defer { dir.remove() }
        let store = try Store(directoryPath: "memory:copy", model: cellarModel())
        defer { store.close() }
        try store.box(for: Tag.self).put((0..<50).map { index in
            let tag = Tag()
            tag.name = "tag \(index)"
            return tag
        })
        // What a crash during an earlier copy to the same path left.
        let target = dir.sub("copy")
        try FileManager.default.createDirectory(atPath: target + ".partial", withIntermediateDirectories: false)
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: target + ".partial/" + StorageEngine.dataFileName))
        try store.copy(to: target)
        #expect(!FileManager.default.fileExists(atPath: target + ".partial"))
        let copy = try Store(directoryPath: target, model: cellarModel())
        defer { copy.close() }
        let names = try copy.box(for: Tag.self).all().map(\.name)
        #expect(names == (0..<50).map { "tag \($0)" }, "\(names.prefix(5)) \(names.count)")
    }

    @Test func exportAndImportThroughTheAPI() throws {
        let dir = TestDirectory("export-api")
        defer { dir.remove() }
        let source = dir.sub("source")
        try ExportImportTests.fill(source, seed: 5)
        let store = try Store(directoryPath: source, model: cellarModel())
        let file = dir.path + "/export.jsonl"
        let exported = try store.export(to: file)
        let tags = try store.export(to: dir.path + "/tags.jsonl", entity: "Tag")
        store.close()
        #expect(tags.objects == 5)
        let imported = try Store.importObjects(from: file, into: dir.sub("target"))
        #expect(imported.objects == exported.objects)
        try Self.expectSame(try Self.exported(source), try Self.exported(dir.sub("target")))
        // Into a store that holds objects of the file's entities: refused, nothing written.
        #expect(throws: CellarError.self) { try Store.importObjects(from: file, into: dir.sub("target")) }
    }
}
