@testable import CellarStorage
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

/// The grouped look-up on trees whose leaves are not all at one depth, which no build writes but
/// a damaged or foreign file may hold: a key whose path reaches a leaf before the leftmost path's
/// depth stops there, one whose path goes deeper goes on down as a single look-up does. Trees of
/// random shapes are held in memory (`ShapedTree`) and every key, present or not, is looked up a
/// group at a time with the tree's own height and with every other, against single look-ups;
/// a cursor walks each tree both ways and seeks every key.
@Suite struct GroupedLookupShapeTests {
    @Test func unevenDepthsAnswerAsSingleLookups() throws {
        var deeper = 0, shallower = 0
        for seed in UInt64(0)..<40 {
            let (leftmost, shallowest, deepest) = try Self.check(seed: seed)
            if deepest > leftmost { deeper += 1 }
            if shallowest < leftmost { shallower += 1 }
        }
        // The shapes reach both: paths deeper than the leftmost and paths that end above it.
        #expect(deeper >= 10 && shallower >= 10, "\(deeper) trees with deeper paths, \(shallower) with shallower ones")
    }

    /// One random tree's keys and others, looked up in groups with every height; returns the
    /// depth of its leftmost leaf, of its shallowest and of its deepest.
    static func check(seed: UInt64) throws -> (Int, Int, Int) {
        var rng = SplitMix64(seed: 0x5EED_0000 &+ seed)
        var numbers: [UInt64] = []
        var number = rng.next() % 100
        for _ in 0..<(20 + Int(rng.next() % 300)) {
            number += 1 + rng.next() % 9
            numbers.append(number)
        }
        let tree = ShapedTree(numbers, rng: &rng)
        defer { tree.release() }
        let height = try tree.height(root: tree.root)
        var probes = numbers.shuffled(using: &rng) + [0, .max]
        for _ in 0..<50 { probes.append(rng.next() % (number + 10)) }
        let expected = try probes.map { n in
            try withUnsafeBytes(of: n.bigEndian) { try tree.storedValue(root: tree.root, key: $0).map { Array($0.bytes) } }
        }
        #expect(expected.compactMap { $0 }.count >= numbers.count, "seed \(seed): every stored key is found one at a time")
        // The tree's own height (its leftmost path), then heights that are wrong on purpose:
        // every path then ends early or goes on.
        for given in Set([height, 1, 2, height - 1, height + 1, tree.deepest]) where given >= 1 {
            let keys = probes.map(\.bigEndian)
            var found = [StoredValue?](repeating: nil, count: keys.count)
            try keys.withUnsafeBufferPointer { keys in
                try found.withUnsafeMutableBufferPointer { found in
                    try tree.storedValues(root: tree.root, height: given, keys: keys, into: found)
                }
            }
            for (i, value) in found.enumerated() {
                #expect(value.map { Array($0.bytes) } == expected[i],
                        "seed \(seed), height \(given) (leftmost \(height), deepest \(tree.deepest)): key \(probes[i])")
            }
        }
        // A cursor walks such a tree both ways and seeks in it as in any other.
        let cursor = Cursor(source: tree, tree: TreeState(name: "shaped", root: tree.root, count: numbers.count, bytes: 0))
        var forward: [UInt64] = []
        var more = try cursor.first()
        while more { forward.append(Self.number(cursor.key)); more = try cursor.next() }
        #expect(forward == numbers, "seed \(seed): forward")
        var backward: [UInt64] = []
        more = try cursor.last()
        while more { backward.append(Self.number(cursor.key)); more = try cursor.previous() }
        #expect(backward == numbers.reversed(), "seed \(seed): backward")
        for probe in probes {
            let next = numbers.first { $0 >= probe }
            let found = try cursor.seek(bigEndianKey(probe))
            #expect((found ? Self.number(cursor.key) : nil) == next, "seed \(seed): seek \(probe)")
        }
        return (height, tree.shallowest, tree.deepest)
    }

    static func number(_ key: UnsafeRawBufferPointer) -> UInt64 { UInt64(bigEndian: key.loadUnaligned(as: UInt64.self)) }
}

/// A B+tree of 8-byte keys built in memory with leaves at random depths, served as a
/// `NodeSource`: each node a body in `NodeView`'s layout, children before their parents (lower
/// references), values inline (the key's number in decimal).
private final class ShapedTree: NodeSource {
    private var bodies: [UnsafeMutableRawPointer] = []
    private(set) var root: UInt64 = 0
    private(set) var deepest = 0
    private(set) var shallowest = Int.max

    init(_ numbers: [UInt64], rng: inout SplitMix64) {
        root = build(numbers[...], depth: 1, rng: &rng)
    }

    func release() { for body in bodies { body.deallocate() } }

    /// The node holding `numbers`: a leaf when few are left or at random once below the root,
    /// else a branch of two to five children over consecutive runs of them.
    private func build(_ numbers: ArraySlice<UInt64>, depth: Int, rng: inout SplitMix64) -> UInt64 {
        if numbers.count <= 4 || (depth > 1 && rng.next() % 3 == 0) {
            deepest = max(deepest, depth)
            shallowest = min(shallowest, depth)
            return add(numbers.map { (bigEndianKey($0), Array(String($0).utf8), UInt64(0)) }, leaf: true)
        }
        let parts = min(numbers.count, 2 + Int(rng.next() % 4))
        var cuts = Set<Int>()
        while cuts.count < parts - 1 { cuts.insert(numbers.startIndex + 1 + Int(rng.next() % UInt64(numbers.count - 1))) }
        let bounds = [numbers.startIndex] + cuts.sorted() + [numbers.endIndex]
        var entries: [([UInt8], [UInt8], UInt64)] = []
        for i in 0..<(bounds.count - 1) {
            let run = numbers[bounds[i]..<bounds[i + 1]]
            entries.append((bigEndianKey(run.first!), [], build(run, depth: depth + 1, rng: &rng)))
        }
        return add(entries, leaf: false)
    }

    /// Adds a node of `entries` (key, value, child) and returns its reference: one past the
    /// references of every node added before it.
    private func add(_ entries: [([UInt8], [UInt8], UInt64)], leaf: Bool) -> UInt64 {
        let body = NodeBodies.compact(entries.map { key, value, child in
            leaf ? NodeBodies.leafEntry(key: key, value: value) : NodeBodies.branchEntry(key: key, child: child)
        }, isLeaf: leaf)
        let memory = UnsafeMutableRawPointer.allocate(byteCount: body.count, alignment: 8)
        memory.copyMemory(from: body, byteCount: body.count)
        bodies.append(memory)
        return UInt64(bodies.count)
    }

    var limit: UInt64 { UInt64(bodies.count) + 1 }
    var mutationCount: Int { 0 }
    var isMutable: Bool { false }
    func node(_ ref: UInt64, below: UInt64) throws -> NodeView {
        guard ref >= 1, ref < below, ref <= UInt64(bodies.count) else {
            throw StorageError.fileCorrupt(offset: ref, reason: "reference \(ref) not below \(below)")
        }
        return NodeView(body: bodies[Int(ref) - 1])
    }
    func outOfLineValue(_ ref: UInt64, length: Int, below: UInt64) throws -> UnsafeRawBufferPointer {
        throw StorageError.fileCorrupt(offset: ref, reason: "no value records here")
    }
    var catalogRootRef: UInt64 { 0 }
    var decoder: ValueDecoder { fatalError("no compressed values here") }
    func reservedTreeRoot(_ name: String) throws -> UInt64? { nil }
    func applyDeferred(_ tree: TreeState) throws {}
}
