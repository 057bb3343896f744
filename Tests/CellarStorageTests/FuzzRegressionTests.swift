import CellarStorage
import CellarTestSupport
import Testing

/// Files the fuzzers found that once crashed the engine. Each must now open with an error, or
/// open and read, but never trap.
@Suite("Fuzzer findings")
struct FuzzRegressionTests {
    static let fixtures: String = {
        let file = #filePath
        return String(file[..<file.lastIndex(of: "/")!]) + "/Fixtures"
    }()

    @Test("a superblock naming a commit at offset 2^64 - 8 is ignored, not an overflow trap",
          arguments: ["superblock-commit-offset-overflow.cellar"])
    func opensWithoutTrapping(fixture: String) throws {
        let bytes = TestDirectory.read(Self.fixtures + "/" + fixture)
        #expect(bytes.count > 0)
        for readOnly in [true, false] {
            let directory = TestDirectory("fuzzfix")
            defer { directory.remove() }
            TestDirectory.write(bytes, to: directory.sub(StorageEngine.dataFileName))
            do {
                let engine = try StorageEngine(directory: directory.path, options: StorageOptions(readOnly: readOnly))
                _ = try engine.read { try Model(reading: $0) }
                engine.close()
            } catch is StorageError {
                // A clear error is as good as opening.
            }
        }
    }
}
