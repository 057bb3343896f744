import CellarStorage
import CellarTestSupport
import Testing

/// `Cursor.countKeys` and `Cursor.appendKeySuffixes` against a plain scan of the same ranges, in
/// read and write transactions, over trees of many small leaves.
@Suite struct KeyRunTests {
    @Test func keyRunsMatchAScan() throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let directory = TestDirectory("key-runs")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path, options: StorageOptions(durability: .none, nodeSize: 512))
        defer { engine.close() }
        // Keys: a 1-byte "value" from a few, then an 8-byte id: like an index.
        func key(_ value: UInt8, _ id: UInt64) -> [UInt8] { [value] + withUnsafeBytes(of: id.bigEndian, Array.init) }
        func check(_ cursor: Cursor, _ range: KeyRange, _ what: String) throws {
            var expected: [UInt64] = []
            try cursor.scan(range) { key, _ in
                expected.append(UInt64(bigEndian: key.loadUnaligned(fromByteOffset: key.count - 8, as: UInt64.self)))
                return true
            }
            var ids: [UInt64] = []
            try cursor.appendKeySuffixes(range, to: &ids)
            #expect(ids == expected, "seed \(seed) \(what) \(range)")
            #expect(try cursor.countKeys(range) == expected.count, "seed \(seed) \(what) \(range)")
        }
        func randomRange() -> KeyRange {
            let a = key(UInt8.random(in: 0...9, using: &rng), UInt64.random(in: 0...3000, using: &rng))
            let b = key(UInt8.random(in: 0...9, using: &rng), UInt64.random(in: 0...3000, using: &rng))
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: return .prefix([a[0]])
            case 1: return KeyRange(lower: a, lowerInclusive: Bool.random(using: &rng))
            case 2: return KeyRange(upper: b, upperInclusive: Bool.random(using: &rng))
            case 3: return .all
            default: return KeyRange(lower: a, lowerInclusive: Bool.random(using: &rng), upper: b, upperInclusive: Bool.random(using: &rng))
            }
        }
        for round in 0..<6 {
            try engine.write { txn in
                let tree = try txn.tree("i1")!
                for _ in 0..<500 {
                    let k = key(UInt8.random(in: 0...9, using: &rng), UInt64.random(in: 0...3000, using: &rng))
                    if Int.random(in: 0..<4, using: &rng) == 0 { try txn.delete(tree, key: k) } else { try txn.put(tree, key: k, value: []) }
                }
                for _ in 0..<30 { try check(try txn.cursor(tree), randomRange(), "write round \(round)") }
            }
            try engine.read { txn in
                let tree = try #require(try txn.tree("i1"))
                for _ in 0..<60 { try check(try txn.cursor(tree), randomRange(), "read round \(round)") }
            }
        }
    }
}
