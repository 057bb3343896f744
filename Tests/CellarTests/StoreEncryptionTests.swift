@_spi(CellarGenerated) @_spi(Testing) import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// An encrypted `Store`: objects, relations, indexes and queries through the whole API, the key
/// errors as `CellarError` codes, and `compact(newKey:)`.
@Suite struct StoreEncryptionTests {
    static let key = TestKeys.encryption

    static func options(_ key: EncryptionKey?) -> StoreOptions {
        StoreOptions(durability: .none, automaticCompaction: nil, encryptionKey: key)
    }

    static func contains(_ file: String, _ text: String) -> Bool {
        let bytes = TestDirectory.read(file), needle = Array(text.utf8)
        guard bytes.count >= needle.count else { return false }
        return (0...(bytes.count - needle.count)).contains { i in bytes[i] == needle[0] && Array(bytes[i..<(i + needle.count)]) == needle }
    }

    /// The error opening the store in `dir` with `key` throws.
    static func openError(_ dir: TestDirectory, _ key: EncryptionKey?) -> CellarError? {
        #expect(throws: CellarError.self) { try Store(directoryPath: dir.path, model: queryModel(), options: Self.options(key)) }
    }

    @Test func objectsRelationsAndQueriesInAnEncryptedStore() throws {
        let dir = TestDirectory("store-encrypted")
        defer { dir.remove() }
        let dataFile = dir.sub(StorageEngine.dataFileName)
        var store: Store? = try Store(directoryPath: dir.path, model: queryModel(), options: Self.options(Self.key))
        let (people, even, odd) = try StoreCompactionTests.putAuthorsAndTags(store!)
        var all: [QItem] = []
        for i in 0..<200 {
            let item = QItem()
            item.title = "secret-title-\(i)"
            item.score = Int32(i)
            item.author.target = people[i % 5]
            item.tags.append(i % 2 == 0 ? even : odd)
            all.append(item)
        }
        try store!.box(for: QItem.self).put(all)
        let before = try StoreCompactionTests.summary(store!)
        store = nil
        #expect(!Self.contains(dataFile, "secret-title-1"), "an object's text is in the file")
        #expect(!Self.contains(dataFile, "author-3"), "a related object's text is in the file")

        // The key errors, each its own code.
        #expect(Self.openError(dir, nil)?.code == .encryptionKeyRequired)
        #expect(Self.openError(dir, EncryptionKey(passphrase: "guess"))?.code == .wrongEncryptionKey)
        store = try Store(directoryPath: dir.path, model: queryModel(), options: Self.options(Self.key))
        #expect(try StoreCompactionTests.summary(store!) == before)

        // Removing the key by compaction: the store opens plain and holds the same.
        try store!.compact(newKey: nil)
        store = nil
        #expect(Self.contains(dataFile, "secret-title-1"))
        #expect(Self.openError(dir, Self.key)?.code == .notEncrypted)
        store = try Store(directoryPath: dir.path, model: queryModel(), options: Self.options(nil))
        #expect(try StoreCompactionTests.summary(store!) == before)
        // And adding it back.
        try store!.compact(newKey: Self.key)
        store = nil
        #expect(!Self.contains(dataFile, "secret-title-1"))
        store = try Store(directoryPath: dir.path, model: queryModel(), options: Self.options(Self.key))
        #expect(try StoreCompactionTests.summary(store!) == before)
    }
}
