import CellarStorage
import CellarTestSupport
import Testing

/// `WriteTransaction.putDeferred`: held-back puts must be invisible as such. Whatever reads or
/// changes the tree next (and the commit) sees exactly what immediate puts would have left.
@Suite("Deferred puts")
struct DeferredPutTests {
    /// Random deferred puts mixed with immediate puts, deletes, reads, counts, scans, a cursor
    /// that stays open across them, tree drops, aborts and commits, against the model.
    @Test("deferred puts mixed with every other operation match the model", arguments: [512, 4096])
    func mixedWithEverything(nodeSize: Int) throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let directory = TestDirectory("deferred")
        defer { directory.remove() }
        let options = StorageOptions(durability: .none, initialMapSize: 1 << 20, nodeSize: nodeSize)
        var engine = try StorageEngine(directory: directory.path, options: options)
        var model: [[UInt8]: [UInt8]] = [:]
        let space: UInt64 = 3000
        for round in 0..<50 {
            let txn = try engine.beginWrite()
            var tree = try txn.tree("t")!
            var scratch = model
            // Half the rounds use keys of at most 16 bytes only (the radix sort), half mix in
            // longer ones (the comparison sort).
            let shortKeysOnly = round % 2 == 0
            func key() -> [UInt8] {
                var k = BTreeModelTests.randomKey(&rng, space: space)
                while shortKeysOnly && k.count > 16 { k = BTreeModelTests.randomKey(&rng, space: space) }
                return k
            }
            // A cursor opened early and stepped now and then: it must see what was deferred.
            let walker = try txn.cursor(tree)
            var walkerKey: [UInt8]? = try walker.first() ? Array(walker.key) : nil
            // Another, moved to the first or the last key now and then (until the tree is dropped).
            var edges: Cursor? = try txn.cursor(tree)
            for _ in 0..<Int(rng.next() % 600) {
                switch rng.next() % 20 {
                case 0:
                    let k = key()
                    let removed = try txn.delete(tree, key: k)
                    #expect(removed == (scratch[k] != nil), "delete result (seed \(seed))")
                    scratch[k] = nil
                case 1:
                    let k = key(), value = BTreeModelTests.randomValue(&rng)
                    try txn.put(tree, key: k, value: value)
                    scratch[k] = value
                case 2:
                    let probe = key()
                    #expect(try txn.get(tree, key: probe) == scratch[probe], "read-your-writes (seed \(seed))")
                case 3:
                    #expect(try txn.count(tree) == scratch.count, "count (seed \(seed))")
                case 4 where rng.next() % 4 == 0:
                    #expect(BTreeModelTests.same(try BTreeModelTests.scan(txn.cursor(tree)), BTreeModelTests.sorted(scratch)),
                            "scan inside the transaction (seed \(seed))")
                case 5 where walkerKey != nil:
                    // The successor of the walker's last key in the model, as it is now.
                    let want = BTreeModelTests.sorted(scratch).first { Bytes.precedes(walkerKey!, $0.0) }
                    if scratch[walkerKey!] == nil {
                        // Its entry was deleted: the walker cannot step from it.
                        walkerKey = nil
                        continue
                    }
                    let moved = try walker.next()
                    #expect(moved == (want != nil), "walker moved (seed \(seed))")
                    if moved, let want {
                        #expect(Array(walker.key) == want.0, "walker key (seed \(seed))")
                        #expect(Array(try walker.value()) == want.1, "walker value (seed \(seed))")
                        walkerKey = want.0
                    } else {
                        walkerKey = nil
                    }
                case 6 where edges != nil && rng.next() % 4 == 0:
                    // The first (or last) 30 keys, stepping from there.
                    let sorted = BTreeModelTests.sorted(scratch)
                    let forward = rng.next() % 2 == 0
                    let want = (forward ? Array(sorted.prefix(30)) : Array(sorted.suffix(30).reversed())).map(\.0)
                    var seen: [[UInt8]] = []
                    var more = forward ? try edges!.first() : try edges!.last()
                    while more && seen.count < 30 {
                        seen.append(Array(edges!.key))
                        more = forward ? try edges!.next() : try edges!.previous()
                    }
                    #expect(seen == want, "keys from first/last (seed \(seed))")
                case 7 where rng.next() % 40 == 0:
                    // Dropping the tree discards what it held back.
                    #expect(try txn.dropTree("t"))
                    scratch = [:]
                    tree = try txn.tree("t")!
                    walkerKey = nil
                    edges = nil
                default:
                    let k = key(), value = BTreeModelTests.randomValue(&rng)
                    try txn.putDeferred(tree, key: k, value: value)
                    scratch[k] = value
                }
            }
            if rng.next() % 7 == 0 {
                txn.abort()
            } else {
                try txn.commit()
                model = scratch
            }
            try engine.read { try BTreeModelTests.check($0, model, rng: &rng, seed: seed, space: space) }
            if round % 10 == 9 {
                engine.close()
                engine = try StorageEngine(directory: directory.path, options: options)
                try engine.read { try BTreeModelTests.check($0, model, rng: &rng, seed: seed, space: space) }
            }
        }
        engine.close()
    }

    /// Keys that are prefixes of one another, zero bytes at the end, the empty key, each put three
    /// times in a shuffled order: the later put of a key wins (the sort is stable), with short keys
    /// only (radix sort) and with one long key among them (comparison sort).
    @Test("in a held-back batch the later put of a key wins", arguments: [false, true])
    func orderAndLastWins(withLongKey: Bool) throws {
        let directory = TestDirectory("deferred-order")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path, options: StorageOptions(durability: .none))
        defer { engine.close() }
        var keys: [[UInt8]] = [[], [0], [0, 0], [1], [1, 0], [1, 0, 0], [0, 1], [0xFF],
                               [UInt8](repeating: 0xFF, count: 15), [UInt8](repeating: 0xFF, count: 16),
                               [0, 0, 0, 0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]
        if withLongKey { keys.append([UInt8](repeating: 1, count: 17)) }
        var rng = SplitMix64(seed: 7)
        var expected: [[UInt8]: [UInt8]] = [:]
        try engine.write { txn in
            let tree = try txn.tree("t")!
            // A transaction's first puts to a tree go in at once (`DeferredPuts.holdBackAfter`):
            // these come first, so that the keys below are held back.
            for i in 0..<100 {
                let filler: [UInt8] = [0xEE, UInt8(i)]
                try txn.putDeferred(tree, key: filler, value: filler)
                expected[filler] = filler
            }
            // Each key three times in a shuffled order, each time with another value.
            var puts = (0..<3).flatMap { round in keys.map { ($0, round) } }
            for i in stride(from: puts.count - 1, to: 0, by: -1) { puts.swapAt(i, Int(rng.next() % UInt64(i + 1))) }
            for (key, round) in puts {
                let value = [UInt8(round)] + key
                try txn.putDeferred(tree, key: key, value: value)
                expected[key] = value
            }
            #expect(try txn.count(tree) == keys.count + 100)
        }
        try engine.read { txn in
            let tree = try txn.tree("t")!
            #expect(BTreeModelTests.same(try BTreeModelTests.scan(txn.cursor(tree)), BTreeModelTests.sorted(expected)))
        }
    }

    /// More than the buffer holds (8 MiB of keys and values, after the first 64 puts that go in
    /// at once) applies the first part on the way; the rest at commit.
    @Test("a batch larger than the buffer is applied in parts")
    func largerThanTheBuffer() throws {
        let directory = TestDirectory("deferred-large")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path, options: StorageOptions(durability: .none))
        defer { engine.close() }
        let count = 300
        try engine.write { txn in
            let tree = try txn.tree("t")!
            for i in (0..<count).reversed() {
                try txn.putDeferred(tree, key: bigEndianKey(UInt64(i)), value: [UInt8](repeating: UInt8(i & 0xFF), count: 64 << 10))
            }
        }
        try engine.read { txn in
            let tree = try txn.tree("t")!
            #expect(try txn.count(tree) == count)
            var i: UInt64 = 0
            try txn.cursor(tree).scan { key, value in
                #expect(Array(key) == bigEndianKey(i))
                #expect(value.count == 64 << 10 && value.allSatisfy { $0 == UInt8(i & 0xFF) })
                i += 1
                return true
            }
            #expect(i == UInt64(count))
        }
    }

    @Test("a deferred put refuses what a put refuses, at once")
    func refusals() throws {
        let directory = TestDirectory("deferred-refusals")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path, options: StorageOptions(durability: .none))
        defer { engine.close() }
        let other = try engine.beginWrite()
        let foreign = try other.tree("t")!
        other.abort()
        try engine.write { txn in
            let tree = try txn.tree("t")!
            #expect(throws: StorageError.self) {
                try [UInt8](repeating: 1, count: StorageLimits.maxKeySize + 1).withUnsafeBytes { key in
                    try txn.putDeferred(tree, key: key, value: UnsafeRawBufferPointer(start: nil, count: 0))
                }
            }
            #expect(throws: StorageError.self) {
                try [UInt8](repeating: 1, count: 8).withUnsafeBytes { key in
                    try txn.putDeferred(foreign, key: key, value: UnsafeRawBufferPointer(start: nil, count: 0))
                }
            }
            try [UInt8](repeating: 1, count: 8).withUnsafeBytes { key in
                try txn.putDeferred(tree, key: key, value: UnsafeRawBufferPointer(start: nil, count: 0))
            }
            #expect(txn.changedTreeNames == ["t"], "a deferred put marks its tree changed at once")
            #expect(try txn.dropTree("t"))
            #expect(throws: StorageError.self) {
                try [UInt8](repeating: 1, count: 8).withUnsafeBytes { key in
                    try txn.putDeferred(tree, key: key, value: UnsafeRawBufferPointer(start: nil, count: 0))
                }
            }
        }
        let dropped = try engine.read { try $0.tree("t") == nil }
        #expect(dropped)
    }
}
