import CellarStorage
import CellarTestSupport
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// A data file that remembers the largest read asked of it.
private final class ReadRecordingFile: StorageFile, @unchecked Sendable {
    private let real: PosixFile
    private(set) var largestRead = 0

    init(path: String, create: Bool, readOnly: Bool) throws {
        real = try PosixFile(path: path, create: create, readOnly: readOnly)
    }

    var path: String { real.path }
    func size() throws -> UInt64 { try real.size() }
    func readOnce(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        largestRead = max(largestRead, buffer.count)
        return try real.readOnce(into: buffer, at: offset)
    }
    func writeOnce(_ buffer: UnsafeRawBufferPointer, at offset: UInt64) throws -> Int { try real.writeOnce(buffer, at: offset) }
    func syncOnce() throws { try real.syncOnce() }
    func truncate(to length: UInt64) throws { try real.truncate(to: length) }
    func map(length: Int) throws -> MappedRegion { try real.map(length: length) }
    func close() { real.close() }
}

/// Files the fuzzers found that once crashed the engine. Each must now open with an error, or
/// open and read, but never trap.
@Suite("Fuzzer findings")
struct FuzzRegressionTests {
    static let fixtures: String = {
        let file = #filePath
        return String(file[..<file.lastIndex(of: "/")!]) + "/Fixtures"
    }()

    @Test("files that once trapped open with an error or read",
          arguments: ["superblock-commit-offset-overflow.cellar", "verifiesnow-huge-record-length.cellar",
                      "verified-record-kind-confusion.cellar", "verified-record-kind-confusion.input"])
    func opensWithoutTrapping(fixture: String) throws {
        let bytes = TestDirectory.read(Self.fixtures + "/" + fixture)
        #expect(bytes.count > 0)
        for readOnly in [true, false] {
            let directory = TestDirectory("fuzzfix")
            defer { directory.remove() }
            TestDirectory.write(bytes, to: directory.sub(StorageEngine.dataFileName))
            do {
                let engine = try StorageEngine(directory: directory.path, options: StorageOptions(readOnly: readOnly))
                defer { engine.close() }
                _ = try engine.read { try Model(reading: $0) }
                try engine.read { txn in
                    for name in try txn.treeNames() {
                        guard let tree = try txn.tree(name) else { continue }
                        try txn.cursor(tree).scan(reverse: true) { _, _ in true }
                    }
                }
            } catch is StorageError {
                // A clear error is as good as opening.
            }
        }
    }

    /// The engine remembers which record starts it has verified, one bit each whatever the kind.
    /// In this file (FuzzOpenStore, resealed pass) a branch points at a value record a scan had
    /// already verified, and the scan then read that value's bytes as a node (ASan: a wild read in
    /// `NodeView.child`). A verified record is now checked against the kind, and a value against
    /// the length, its reference expects.
    @Test func aReferenceToARecordVerifiedAsAnotherKindIsCorrupt() throws {
        let bytes = TestDirectory.read(Self.fixtures + "/verified-record-kind-confusion.cellar")
        let directory = TestDirectory("fuzzfix-kind")
        defer { directory.remove() }
        TestDirectory.write(bytes, to: directory.sub(StorageEngine.dataFileName))
        let engine = try StorageEngine(directory: directory.path, options: StorageOptions(readOnly: true))
        defer { engine.close() }
        #expect(throws: StorageError.self) { _ = try engine.read { try Model(reading: $0) } }
    }

    /// A record whose length field says almost 2 GiB, in an 11 KB file: a read-only open, which
    /// looks at a bad record a second time (it may be a frame being appended), once allocated
    /// and read that much. Now nothing larger than the file is read.
    @Test func aCorruptRecordLengthReadsNoMoreThanTheFile() throws {
        let bytes = TestDirectory.read(Self.fixtures + "/verifiesnow-huge-record-length.cellar")
        let directory = TestDirectory("fuzzfix-length")
        defer { directory.remove() }
        TestDirectory.write(bytes, to: directory.sub(StorageEngine.dataFileName))
        let opened = Locked<ReadRecordingFile?>(nil)
        var options = StorageOptions(readOnly: true)
        options.openFile = { path, create, readOnly in
            let file = try ReadRecordingFile(path: path, create: create, readOnly: readOnly)
            opened.withLock { $0 = file }
            return file
        }
        if let engine = try? StorageEngine(directory: directory.path, options: options) {
            _ = try? engine.read { try Model(reading: $0) }
            engine.close()
        }
        let file = try #require(opened.current)
        #expect(file.largestRead <= bytes.count, "read \(file.largestRead) bytes at once from a \(bytes.count)-byte file")
    }
}
