import CellarStorage
import CellarTestSupport
import Testing

/// `ReadTransaction.forEachValue(_:keysOf:_:)`, which looks keys up a group at a time in stages:
/// for every key, in any order, present or not, the value `withValue` gives, on trees of one to
/// several levels, plain, compressed and encrypted, with values inline and out of line.
@Suite struct GroupedLookupTests {
    static let key = try! EncryptionKey(bytes: (0..<32).map { UInt8($0) })

    /// Each number's value: its bytes repeated; one in five longer than a quarter of the node
    /// (out of line), some compressible.
    static func value(_ number: UInt64) -> [UInt8] {
        let length = number % 5 == 0 ? 300 + Int(number % 200) : Int(number % 40)
        return (0..<length).map { UInt8(truncatingIfNeeded: number >> (8 * UInt64($0 % 8))) }
    }

    /// Every value `forEachValue` hands out for `numbers`, with its position, compared with
    /// `withValue`'s; the positions must be 0, 1, 2, … up to where `stopAfter` stops it.
    static func check(_ txn: ReadTransaction, _ tree: Tree, _ numbers: [UInt64], stopAfter: Int? = nil,
                      _ what: String) throws {
        var positions: [Int] = []
        try txn.forEachValue(tree, keysOf: numbers) { i, value in
            positions.append(i)
            let expected = try txn.withValue(tree, key: bigEndianKey(numbers[i])) { $0.map(Bytes.copy) }
            #expect(value.map(Bytes.copy) == expected, "\(what): key \(numbers[i]) at \(i)")
            return stopAfter.map { positions.count < $0 } ?? true
        }
        let visited = stopAfter.map { min($0, numbers.count) } ?? numbers.count
        #expect(positions == Array(0..<visited), "\(what): positions")
    }

    @Test(arguments: [(100, false, false), (3_000, false, false), (3_000, true, false), (3_000, false, true)])
    func sameValuesAsOneLookupAfterAnother(count: Int, compressed: Bool, encrypted: Bool) throws {
        if compressed && !Compression.zstd().isAvailable { return }
        let directory = TestDirectory("grouped-lookup")
        defer { directory.remove() }
        let options = StorageOptions(initialMapSize: 1 << 20, nodeSize: 512, compression: compressed ? .zstd() : .none,
                                     compressionThreshold: 16, encryptionKey: encrypted ? Self.key : nil)
        let engine = try StorageEngine(directory: directory.path, options: options)
        defer { engine.close() }
        var rng = SplitMix64(seed: UInt64(count) &+ (compressed ? 1 : 0) &+ (encrypted ? 2 : 0))
        var stored: [UInt64] = []
        var number: UInt64 = rng.next() % 1000
        for _ in 0..<count {
            number += 1 + rng.next() % 20
            stored.append(number)
        }
        try engine.write { txn in
            let tree = try txn.tree("t", create: true)!
            for n in stored { try txn.put(tree, key: bigEndianKey(n), value: Self.value(n)) }
            _ = try txn.tree("empty", create: true)
        }
        try engine.read { txn in
            let tree = try #require(try txn.tree("t"))
            if count > 1_000 { #expect(try txn.height(tree) >= 3, "a tree of several levels") }
            try Self.check(txn, tree, stored, "every key in order")
            var probes = stored.shuffled(using: &rng)
            for _ in 0..<200 {
                let base = stored[Int(rng.next() % UInt64(stored.count))]
                probes.insert(rng.next() % 2 == 0 ? base &+ 1 : rng.next(), at: Int(rng.next() % UInt64(probes.count)))
            }
            probes += [0, .max, stored[0], stored[0]]
            try Self.check(txn, tree, probes, "shuffled, absent and repeated keys")
            for stop in [1, 15, 16, 17, 33] { try Self.check(txn, tree, probes, stopAfter: stop, "stopped after \(stop)") }
            try Self.check(txn, tree, [], "no keys")
            try Self.check(txn, try #require(try txn.tree("empty")), [1, 2, 3], "an empty tree")
        }
    }
}
