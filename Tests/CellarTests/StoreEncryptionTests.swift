@_spi(CellarGenerated) @_spi(Testing) @_spi(Tools) import Cellar
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

    @Test func keysFromHexadecimalAndFromTheToolsEnvironment() throws {
        let hex = "00112233445566778899AABBCCDDEEFF00112233445566778899aabbccddeeff"
        let dir = TestDirectory("store-hex-key")
        defer { dir.remove() }
        // The hexadecimal key is the key of those bytes: a store made with one opens with the other.
        let bytes: [UInt8] = [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF]
        try Store(directoryPath: dir.path, model: cellarModel(), options: Self.options(EncryptionKey(bytes: bytes + bytes))).close()
        try Store(directoryPath: dir.path, model: cellarModel(), options: Self.options(EncryptionKey(hexadecimal: hex))).close()
        for bad in ["", String(hex.dropLast()), hex + "0", String(hex.dropLast()) + "g", " " + String(hex.dropFirst())] {
            #expect(throws: StorageError.self, "\(bad)") { try EncryptionKey(hexadecimal: bad) }
        }
        // The tools' variables: the hexadecimal one first, then the passphrase; errors name the variable.
        #expect(try ToolKeys.key(environment: [:]) == nil)
        let first = try ToolKeys.key(environment: ["CELLAR_KEY": hex, "CELLAR_PASSPHRASE": "x"])
        try Store(directoryPath: dir.path, model: cellarModel(), options: Self.options(first)).close()  // the hexadecimal key opens it
        #expect(try ToolKeys.key(environment: ["CELLAR_PASSPHRASE": "x"]) != nil)
        #expect { try ToolKeys.key(environment: ["CELLAR_KEY": "12ab"]) } throws: {
            ($0 as? CellarError)?.message == "CELLAR_KEY must hold 64 hexadecimal digits (a 256-bit key)"
        }
        #expect { try ToolKeys.key(hexVariable: "NEW", environment: ["NEW": "12ab"]) } throws: { ($0 as? CellarError)?.message.hasPrefix("NEW ") == true }
        #expect(throws: CellarError.self) { try ToolKeys.key(environment: ["CELLAR_PASSPHRASE": ""]) }
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
