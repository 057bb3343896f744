import CellarStorage
import CellarTestSupport
import Testing

/// A store written by a build whose splits could leave one-child branches
/// (`Fixtures/deep-tree.cellar.zst`, the data file as one zstd frame; see `DeepTreeFixture`): its
/// tree is 80 levels deep for 80 keys, past the 64 at which readers once refused a tree as
/// corrupt. Such stores must stay readable and writable, and a compaction rebuilds their trees.
@Suite("a deep tree from an older build", .enabled(if: Compression.zstd().isAvailable, "the fixture is kept as a zstd frame"))
struct DeepTreeTests {
    @Test("reads every key in order both ways, takes writes without growing, and a compaction makes it shallow")
    func deepTreeFromAnOlderBuild() throws {
        let directory = TestDirectory("deep-tree")
        defer { directory.remove() }
        let frame = TestDirectory.read(FuzzRegressionTests.fixtures + "/deep-tree.cellar.zst")
        TestDirectory.write(try frame.withUnsafeBytes { try Diagnostics.decodeCompressedValue($0, dictionary: nil) }, to: directory.sub("data.cellar"))
        let options = StorageOptions(initialMapSize: 1 << 20, nodeSize: 512)
        var expected: [[UInt8]: [UInt8]] = [:]
        for i in 0..<DeepTreeFixture.count { expected[DeepTreeFixture.key(i)] = DeepTreeFixture.value(i) }

        func check(_ engine: StorageEngine, _ what: String) throws -> Int {
            try engine.read { txn in
                let tree = try #require(try txn.tree("deep"))
                let sorted = expected.keys.sorted(by: Bytes.precedes)
                var forward: [[UInt8]] = []
                try txn.cursor(tree).scan { key, value in
                    forward.append(Bytes.copy(key))
                    #expect(Bytes.equal(Bytes.copy(value), expected[Bytes.copy(key)] ?? []), "\(what): a value")
                    return true
                }
                #expect(forward == sorted, "\(what): forward scan")
                var backward: [[UInt8]] = []
                try txn.cursor(tree).scan(reverse: true) { key, _ in backward.append(Bytes.copy(key)); return true }
                #expect(backward == sorted.reversed(), "\(what): reverse scan")
                for (key, value) in expected { #expect(try txn.get(tree, key: key) == value, "\(what): get") }
                let cursor = try txn.cursor(tree)
                #expect(try cursor.seek(sorted[sorted.count / 2]) && Bytes.copy(cursor.key) == sorted[sorted.count / 2], "\(what): seek")
                #expect(try txn.count(tree) == expected.count, "\(what): count")
                // The grouped look-up (8-byte keys: here the keys' first 8 bytes, absent) down a
                // tree this deep answers as single look-ups do.
                let numbers = sorted.map { UInt64(bigEndian: $0.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }) } + [0, .max]
                var looked = 0
                try txn.forEachValue(tree, keysOf: numbers) { i, value in
                    let single = try txn.withValue(tree, key: bigEndianKey(numbers[i])) { $0.map(Bytes.copy) }
                    #expect(value.map(Bytes.copy) == single, "\(what): grouped look-up of \(numbers[i])")
                    looked += 1
                    return true
                }
                #expect(looked == numbers.count, "\(what): grouped look-ups")
                return try txn.height(tree)
            }
        }

        let engine = try StorageEngine(directory: directory.path, options: options)
        defer { engine.close() }
        // Deeper than a cursor's first allocation of levels (32): its path grows.
        #expect(try check(engine, "as the older build left it") == 80)
        // Writes keep every key and add no level.
        try engine.write { txn in
            let tree = try txn.tree("deep")!
            for i in DeepTreeFixture.count..<(DeepTreeFixture.count + 40) {
                try txn.put(tree, key: DeepTreeFixture.key(i), value: DeepTreeFixture.value(i))
                expected[DeepTreeFixture.key(i)] = DeepTreeFixture.value(i)
            }
            for i in stride(from: 0, to: DeepTreeFixture.count, by: 3) {
                #expect(try txn.delete(tree, key: DeepTreeFixture.key(i)))
                expected[DeepTreeFixture.key(i)] = nil
            }
        }
        #expect(try check(engine, "after writes") <= 80)
        _ = try engine.compact()
        let height = try check(engine, "after a compaction")
        #expect(height <= Tree.maximumHeight(count: expected.count), "\(height) levels for \(expected.count) keys after a compaction")
    }
}
