@testable import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// A store whose values are zstd-compressed, read by whichever build this is. With zstd, every
/// value reads back as written. Without it (an iOS build, or Linux with the `Zstd` trait off),
/// every read of a compressed value, on every read path, throws `compressionUnavailable` and
/// never returns bytes; values stored plain still read; compaction refuses and leaves the file as
/// it was; options that would compress are refused at open.
///
/// The fixture `Fixtures/zstd-values.cellar` was written by a build with zstd through
/// `writeFixture(to:)`: tree "notes", trained a dictionary by a compaction (its values are
/// compressed with it), tree "fresh", written after it (compressed without a dictionary), and
/// tree "small", whose values are under the compression threshold (stored plain). To write it
/// again: `CELLAR_WRITE_FIXTURE=1 swift test --filter CompressionUnavailableTests`.
@Suite struct CompressionUnavailableTests {
    static let fixture = FuzzRegressionTests.fixtures + "/zstd-values.cellar"
    static let counts = ["notes": 300, "fresh": 20, "small": 10]

    /// Value `i` of `tree`: words from a small vocabulary (they compress well), or 20 bytes in
    /// "small".
    static func value(_ tree: String, _ i: Int) -> [UInt8] {
        if tree == "small" { return Array(String(format: "small value %08d", i).utf8) }
        var rng = SplitMix64(seed: UInt64(i) &* 7_919 &+ UInt64(tree.utf8.count))
        let words = ["cellar", "object", "store", "note", "title", "lorem", "ipsum", "dolor", "amet", tree]
        var text = "\(tree) \(i):"
        while text.utf8.count < 200 + i % 7 * 100 { text += " " + words[Int(rng.next() % 10)] }
        return Array(text.utf8)
    }

    static func key(_ i: Int) -> [UInt8] { bigEndianKey(UInt64(i)) }

    /// What the fixture holds, written with zstd (see the suite's comment).
    static func writeFixture(to directory: String) throws {
        var options = StorageOptions(durability: .none, initialMapSize: 1 << 16, compression: .zstdDictionary(level: 3))
        options.automaticCompaction = nil
        let engine = try StorageEngine(directory: directory, options: options)
        defer { engine.close() }
        try engine.write { txn in
            let tree = try txn.tree("notes")!
            for i in 0..<counts["notes"]! { try txn.put(tree, key: key(i), value: value("notes", i)) }
        }
        try engine.compact()
        try engine.write { txn in
            for name in ["fresh", "small"] {
                let tree = try txn.tree(name)!
                for i in 0..<counts[name]! { try txn.put(tree, key: key(i), value: value(name, i)) }
            }
        }
    }

    /// How `tree`'s values are stored: (compressed, with a dictionary) counts.
    static func storage(_ txn: ReadTransaction, _ name: String) throws -> (compressed: Int, withDictionary: Int) {
        let tree = try #require(try txn.tree(name))
        var compressed = 0, withDictionary = 0
        for i in 0..<counts[name]! {
            let stored = try #require(try key(i).withUnsafeBytes { try txn.storedValue(root: tree.state.root, key: $0) })
            guard stored.compressed else { continue }
            compressed += 1
            // The frame header's descriptor byte (after the 4-byte magic): its low two bits say
            // whether a dictionary id follows (RFC 8878 §3.1.1.1.1).
            if stored.bytes[4] & 0x03 != 0 { withDictionary += 1 }
        }
        return (compressed, withDictionary)
    }

    func copyOfTheFixture(_ name: String) -> TestDirectory {
        let directory = TestDirectory(name)
        TestDirectory.write(TestDirectory.read(Self.fixture), to: directory.sub(StorageEngine.dataFileName))
        return directory
    }

    @Test("the fixture holds what it says: dictionary frames, plain frames, plain values")
    func theFixtureIsWhatItSays() throws {
        if ProcessInfo.processInfo.environment["CELLAR_WRITE_FIXTURE"] == "1" {
            let directory = TestDirectory("zstd-fixture-new")
            defer { directory.remove() }
            try Self.writeFixture(to: directory.path)
            // Without most of the zeros the log writes ahead of its end (the last record may end
            // in zeros of its own: the cut is at the next 4 KiB past the last byte that is not).
            let bytes = TestDirectory.read(directory.sub(StorageEngine.dataFileName))
            let end = (bytes.lastIndex { $0 != 0 }! + 1 + 4_095) / 4_096 * 4_096
            TestDirectory.write(Array(bytes.prefix(end)), to: Self.fixture)
        }
        let directory = copyOfTheFixture("zstd-fixture")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path, options: StorageOptions(readOnly: true))
        defer { engine.close() }
        try engine.read { txn in
            #expect(try Self.storage(txn, "notes") == (300, 300))
            let fresh = try Self.storage(txn, "fresh")
            #expect(fresh.compressed == 20 && fresh.withDictionary == 0)
            #expect(try Self.storage(txn, "small") == (0, 0))
            #expect(try txn.dictionaryIds().count == 1)
        }
    }

    @Test("with zstd, every value reads back as written", .enabled(if: Compression.zstd().isAvailable))
    func readsWithZstd() throws {
        let directory = copyOfTheFixture("zstd-fixture-read")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path, options: StorageOptions(readOnly: true))
        defer { engine.close() }
        try engine.read { txn in
            for (name, count) in Self.counts {
                let tree = try #require(try txn.tree(name))
                for i in 0..<count { #expect(try txn.get(tree, key: Self.key(i)) == Self.value(name, i), "\(name) \(i)") }
            }
        }
    }

    @Test("without zstd, a compressed value is a clear error on every read path, plain values read, compaction refuses",
          .enabled(if: !Compression.zstd().isAvailable))
    func refusesWithoutZstd() throws {
        let directory = copyOfTheFixture("zstd-fixture-refused")
        defer { directory.remove() }
        func isUnavailable(_ body: () throws -> Void) -> Bool {
            do {
                try body()
            } catch StorageError.compressionUnavailable(let codec, let needed) {
                return codec == "zstd" && needed.contains("compressed with zstd")
            } catch {
                Issue.record("another error: \(error)")
            }
            return false
        }
        // Options that would compress are refused at open, with the platform's story in the message.
        for compression in [Compression.zstd(), .zstdDictionary()] {
            do {
                try StorageEngine(directory: directory.path, options: StorageOptions(compression: compression)).close()
                Issue.record("\(compression) opened")
            } catch let error as StorageError {
                guard case .compressionUnavailable = error else { Issue.record("\(error)"); continue }
                #expect(error.description.contains("iOS") && error.description.contains("Zstd"), "\(error)")
            }
        }
        let engine = try StorageEngine(directory: directory.path, options: StorageOptions())
        defer { engine.close() }
        try engine.read { txn in
            for name in ["notes", "fresh"] {
                let tree = try #require(try txn.tree(name))
                for i in [0, 7, Self.counts[name]! - 1] {
                    #expect(isUnavailable { _ = try txn.get(tree, key: Self.key(i)) }, "\(name) \(i): get")
                    #expect(isUnavailable { try txn.withValue(tree, key: Self.key(i)) { _ in } }, "\(name) \(i): withValue")
                }
                #expect(isUnavailable { try txn.cursor(tree).scan { _, _ in true } }, "\(name): scan")
                #expect(isUnavailable { try txn.cursor(tree).scan(stableValues: true) { _, _ in true } }, "\(name): stable scan")
            }
            let small = try #require(try txn.tree("small"))
            for i in 0..<Self.counts["small"]! { #expect(try txn.get(small, key: Self.key(i)) == Self.value("small", i)) }
        }
        // Compaction reads every value: it refuses, and the store stays as it was (no file of
        // its copy left behind).
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(isUnavailable { try engine.compact() }, "compact")
        engine.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == files)
        let reopened = try StorageEngine(directory: directory.path, options: StorageOptions(readOnly: true))
        defer { reopened.close() }
        try reopened.read { txn throws -> Void in
            #expect(try txn.treeNames().sorted() == ["fresh", "notes", "small"])
            #expect(try Self.storage(txn, "notes") == (300, 300))
            #expect(try Self.storage(txn, "fresh").compressed == 20)
        }
    }
}
