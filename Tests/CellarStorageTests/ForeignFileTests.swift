import CellarStorage
import CellarTestSupport
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// A data file that is not a Cellar store is never overwritten, and an open says what it found.
@Suite("foreign files")
struct ForeignFileTests {
    /// A file's bytes as a test's argument, shown in the log as its size and first bytes (the
    /// whole array would be kilobytes of numbers).
    struct FileContent: Sendable, CustomTestStringConvertible {
        let bytes: [UInt8]
        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var testDescription: String {
            let shown = bytes.prefix(16).map { $0 >= 0x20 && $0 < 0x7f ? String(UnicodeScalar($0)) : "\\x" + String($0, radix: 16) }
            return "\(bytes.count) bytes \"\(shown.joined())\(bytes.count > 16 ? "…" : "")\""
        }
    }

    @Test("a file that is not Cellar's is refused, named, and left as it was, small or large",
          arguments: [FileContent(Array("just some notes of mine, keep them\n".utf8)),
                      FileContent([UInt8](repeating: 0x41, count: 4096)),
                      FileContent(Array("SQLite format 3\0".utf8) + [UInt8](repeating: 7, count: 10_000)),
                      FileContent([0x00, 0x00, 0x01])])
    func foreignFilesAreRefused(file: FileContent) throws {
        let content = file.bytes
        let dir = TestDirectory("foreign")
        defer { dir.remove() }
        let path = dir.sub(StorageEngine.dataFileName)
        TestDirectory.write(content, to: path)
        for readOnly in [false, true] {
            do {
                _ = try StorageEngine(directory: dir.path, options: StorageOptions(readOnly: readOnly))
                Issue.record("a foreign file of \(content.count) bytes opened (read-only: \(readOnly))")
            } catch let error as StorageError {
                guard case .notAStore(let named, _) = error else {
                    Issue.record("expected notAStore, got \(error)")
                    continue
                }
                #expect(named == path)
                #expect(error.description.contains(path))
            }
            #expect(TestDirectory.read(path) == content, "the foreign file was changed")
        }
    }

    @Test("what a creation cut short leaves (nothing, zeros, the start of Cellar's header) becomes a new store",
          arguments: [FileContent([]), FileContent([UInt8](repeating: 0, count: 4096)), FileContent(Array("CELL".utf8)),
                      FileContent(Array("CELLARDB".utf8) + [UInt8](repeating: 0x5A, count: 40))])
    func unfinishedCreationsAreRecreated(file: FileContent) throws {
        let content = file.bytes
        let dir = TestDirectory("unfinished")
        defer { dir.remove() }
        TestDirectory.write(content, to: dir.sub(StorageEngine.dataFileName))
        #expect(throws: StorageError.self, "read-only: nothing to read") {
            try StorageEngine(directory: dir.path, options: StorageOptions(readOnly: true))
        }
        let engine = try StorageEngine(directory: dir.path)
        defer { engine.close() }
        try engine.write { txn in try txn.put(txn.tree("t")!, key: [1], value: [1]) }
        #expect(engine.lastTransactionId == 1)
    }

    @Test("a data file that is a directory is EISDIR, read-only too")
    func aDirectoryIsNamedAsOne() throws {
        let dir = TestDirectory("is-directory")
        defer { dir.remove() }
        let path = dir.sub(StorageEngine.dataFileName)
        #expect(mkdir(path, 0o755) == 0)
        for readOnly in [true, false] {
            #expect(throws: StorageError.io(operation: "open", errno: EISDIR, path: path)) {
                try StorageEngine(directory: dir.path, options: StorageOptions(readOnly: readOnly))
            }
        }
    }
}
