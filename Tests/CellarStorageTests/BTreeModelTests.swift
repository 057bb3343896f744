import CellarStorage
import CellarTestSupport
import Testing

/// The B+tree against an in-memory model: random operations, then every read path compared.
@Suite("B+tree against an in-memory model")
struct BTreeModelTests {
    /// A sorted view of one tree of the model.
    static func sorted(_ entries: [[UInt8]: [UInt8]]) -> [([UInt8], [UInt8])] {
        entries.sorted { Bytes.precedes($0.key, $1.key) }.map { ($0.key, $0.value) }
    }

    static func scan(_ cursor: Cursor, _ range: KeyRange = .all, reverse: Bool = false) throws -> [([UInt8], [UInt8])] {
        var out: [([UInt8], [UInt8])] = []
        try cursor.scan(range, reverse: reverse) { key, value in
            out.append((Bytes.copy(key), Bytes.copy(value)))
            return true
        }
        return out
    }

    static func same(_ a: [([UInt8], [UInt8])], _ b: [([UInt8], [UInt8])]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { Bytes.equal($0.0, $1.0) && Bytes.equal($0.1, $1.1) }
    }

    static func randomKey(_ rng: inout SplitMix64, space: UInt64) -> [UInt8] {
        // Mostly 8-byte keys, some short, some long with a shared prefix (to exercise the compare).
        let n = rng.next() % space
        switch rng.next() % 8 {
        case 0: return Array(bigEndianKey(n).suffix(Int(rng.next() % 3)))
        case 1: return Array(repeating: 0x61, count: 20) + bigEndianKey(n)
        default: return bigEndianKey(n)
        }
    }

    static func randomValue(_ rng: inout SplitMix64) -> [UInt8] {
        let size: Int
        switch rng.next() % 50 {
        case 0: size = Int(rng.next() % 20_000)   // out of line
        case 1, 2, 3: size = 0
        default: size = Int(rng.next() % 300)
        }
        let fill = UInt8(truncatingIfNeeded: rng.next())
        return [UInt8](repeating: fill, count: size)
    }

    /// Compares every read path of `txn`'s tree with the model: count, gets, seeks, scans both ways,
    /// ranges, prefixes.
    static func check(_ txn: ReadTransaction, _ model: [[UInt8]: [UInt8]], rng: inout SplitMix64, seed: UInt64, space: UInt64) throws {
        let expected = sorted(model)
        guard let tree = try txn.tree("t") else {
            #expect(model.isEmpty, "tree missing but model has \(model.count) entries (seed \(seed))")
            return
        }
        #expect(try txn.count(tree) == model.count, "count (seed \(seed))")
        #expect(same(try scan(txn.cursor(tree)), expected), "forward scan (seed \(seed))")
        #expect(same(try scan(txn.cursor(tree), reverse: true), expected.reversed()), "reverse scan (seed \(seed))")
        for _ in 0..<40 {
            let key = Self.randomKey(&rng, space: space)
            #expect(try txn.get(tree, key: key) == model[key], "get (seed \(seed))")
            let cursor = try txn.cursor(tree)
            let found = try cursor.seek(key)
            let want = expected.first { !Bytes.precedes($0.0, key) }
            #expect(found == (want != nil), "seek found (seed \(seed))")
            if found, let want { #expect(Array(cursor.key) == want.0, "seek key (seed \(seed))") }
        }
        // Forward seeks on one cursor: ascending keys (present or not, some twice), then any key
        // (which may lie before the last one), then ascending again.
        var keys = (0..<40).map { _ in Self.randomKey(&rng, space: space) }
        keys[0..<30].sort { Bytes.precedes($0, $1) }
        keys[31...].sort { Bytes.precedes($0, $1) }
        let forward = try txn.cursor(tree)
        for key in keys + keys.suffix(3) {
            let found = try forward.seekForward(key)
            let want = expected.first { !Bytes.precedes($0.0, key) }
            #expect(found == (want != nil), "seekForward found (seed \(seed))")
            if found, let want {
                let (key, value): ([UInt8], [UInt8]) = (Array(forward.key), Array(try forward.value()))
                #expect(key == want.0 && value == want.1, "seekForward entry (seed \(seed))")
            }
        }
        for _ in 0..<6 {
            var a = Self.randomKey(&rng, space: space)
            var b = Self.randomKey(&rng, space: space)
            if Bytes.precedes(b, a) { swap(&a, &b) }
            let lowerInclusive = rng.next() % 2 == 0
            let upperInclusive = rng.next() % 2 == 0
            let range = KeyRange(lower: a, lowerInclusive: lowerInclusive, upper: b, upperInclusive: upperInclusive)
            let inRange = expected.filter { entry in
                let aboveLower = lowerInclusive ? !Bytes.precedes(entry.0, a) : Bytes.precedes(a, entry.0)
                let belowUpper = upperInclusive ? !Bytes.precedes(b, entry.0) : Bytes.precedes(entry.0, b)
                return aboveLower && belowUpper
            }
            #expect(same(try scan(txn.cursor(tree), range), inRange), "range scan (seed \(seed))")
            #expect(same(try scan(txn.cursor(tree), range, reverse: true), inRange.reversed()), "reverse range scan (seed \(seed))")
            let prefix = Array(a.prefix(Int(rng.next() % 8)))
            let withPrefix = expected.filter { $0.0.starts(with: prefix) }
            #expect(same(try scan(txn.cursor(tree), .prefix(prefix)), withPrefix), "prefix scan (seed \(seed))")
            #expect(same(try scan(txn.cursor(tree), .prefix(prefix), reverse: true), withPrefix.reversed()), "reverse prefix scan (seed \(seed))")
        }
    }

    /// The model compares with `Bytes` (memcmp) instead of the standard library's generic paths,
    /// which are slow in debug builds: they must agree, or the model tests prove nothing.
    @Test("the byte helpers the model compares with agree with the standard library")
    func byteHelpers() {
        var rng = SplitMix64(seed: SplitMix64.testSeed())
        func bytes() -> [UInt8] {
            (0..<Int(rng.next() % 6)).map { _ in UInt8(truncatingIfNeeded: rng.next() % 3) }
        }
        for _ in 0..<5_000 {
            let a = bytes(), b = rng.next() % 4 == 0 ? a : bytes()
            #expect(Bytes.equal(a, b) == (a == b), "\(a) == \(b)")
            #expect(Bytes.precedes(a, b) == a.lexicographicallyPrecedes(b), "\(a) < \(b)")
            #expect(a.withUnsafeBytes { Bytes.copy($0) } == a)
        }
    }

    /// `Model ==` is written out (with `Bytes.equal` for values): it must agree with the
    /// standard library's comparison of the same trees, or every model test proves nothing.
    @Test("two models are equal exactly when their trees are")
    func modelEquality() {
        var rng = SplitMix64(seed: SplitMix64.testSeed())
        func model() -> Model {
            var model = Model()
            for _ in 0..<Int(rng.next() % 3) {
                var entries: [[UInt8]: [UInt8]] = [:]
                for _ in 0..<Int(rng.next() % 3) {
                    entries[[UInt8(rng.next() % 3)]] = (0..<Int(rng.next() % 3)).map { _ in UInt8(rng.next() % 2) }
                }
                model.trees["t\(rng.next() % 2)"] = entries
            }
            return model
        }
        var equal = 0
        for _ in 0..<5_000 {
            let a = model(), b = rng.next() % 4 == 0 ? a : model()
            #expect((a == b) == (a.trees == b.trees), "\(a.trees) == \(b.trees)")
            if a == b { equal += 1 }
        }
        #expect(equal > 1_250 && equal < 5_000, "\(equal) equal pairs: the pairs must be both")
    }

    @Test("random puts, deletes, aborts and reopens match the model", arguments: [512, 4096])
    func randomOperations(nodeSize: Int) throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let directory = TestDirectory("model")
        defer { directory.remove() }
        let options = StorageOptions(initialMapSize: 1 << 20, nodeSize: nodeSize, superblockInterval: 5)
        var engine = try StorageEngine(directory: directory.path, options: options)
        var model: [[UInt8]: [UInt8]] = [:]
        let space: UInt64 = 3000
        for round in 0..<60 {
            let txn = try engine.beginWrite()
            let tree = try txn.tree("t")!
            var scratch = model
            for _ in 0..<Int(rng.next() % 400) {
                let key = Self.randomKey(&rng, space: space)
                if rng.next() % 3 == 0 {
                    let removed = try txn.delete(tree, key: key)
                    #expect(removed == (scratch[key] != nil), "delete result (seed \(seed))")
                    scratch[key] = nil
                } else {
                    let value = Self.randomValue(&rng)
                    try txn.put(tree, key: key, value: value)
                    scratch[key] = value
                }
                // Read-your-writes.
                if rng.next() % 10 == 0 {
                    let probe = Self.randomKey(&rng, space: space)
                    #expect(try txn.get(tree, key: probe) == scratch[probe], "read-your-writes (seed \(seed))")
                }
            }
            #expect(try txn.count(tree) == scratch.count, "count inside the transaction (seed \(seed))")
            if rng.next() % 7 == 0 {
                txn.abort()
            } else {
                try txn.commit()
                model = scratch
            }
            try engine.read { try Self.check($0, model, rng: &rng, seed: seed, space: space) }
            if round % 15 == 14 {
                engine.close()
                engine = try StorageEngine(directory: directory.path, options: options)
                try engine.read { try Self.check($0, model, rng: &rng, seed: seed, space: space) }
            }
        }
        engine.close()
    }

    /// Puts in runs of ascending keys, as ids are written, go through the tree's finger (the last
    /// leaf a put reached) instead of descending: reads, overwrites, splits, deletes and out-of-line
    /// values in the middle of runs check that it never serves a key outside its leaf's range.
    @Test("runs of ascending keys, with reads, overwrites and deletes between them, match the model", arguments: [512, 4096])
    func ascendingRuns(nodeSize: Int) throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let directory = TestDirectory("finger")
        defer { directory.remove() }
        let options = StorageOptions(durability: .none, initialMapSize: 1 << 20, nodeSize: nodeSize)
        let engine = try StorageEngine(directory: directory.path, options: options)
        defer { engine.close() }
        var model: [[UInt8]: [UInt8]] = [:]
        let space: UInt64 = 2000
        // A key of `n`: mostly 8 bytes; some runs use a longer or shorter form, so that a run's
        // keys sort between or around another run's (the finger's bounds compare unequal lengths).
        func key(_ n: UInt64, form: UInt64) -> [UInt8] {
            switch form {
            case 0: return Array(bigEndianKey(n).suffix(4))
            case 1: return bigEndianKey(n) + [0x00]
            case 2: return Array(repeating: 0x61, count: 20) + bigEndianKey(n)
            default: return bigEndianKey(n)
            }
        }
        for round in 0..<16 {
            let txn = try engine.beginWrite()
            let tree = try txn.tree("t")!
            var scratch = model
            for _ in 0..<Int(1 + rng.next() % 8) {
                var n = rng.next() % space
                let form = rng.next() % 6
                let step = 1 + rng.next() % 3
                for _ in 0..<Int(10 + rng.next() % 300) {
                    let k = key(n, form: form)
                    switch rng.next() % 40 {
                    case 0:
                        let removed = try txn.delete(tree, key: k)
                        #expect(removed == (scratch[k] != nil), "delete result (seed \(seed))")
                        scratch[k] = nil
                    case 1, 2, 3:
                        // A key just before or after the run's current one, in another form.
                        let probe = key(n &+ rng.next() % 3 &- 1, form: rng.next() % 4)
                        #expect(try txn.get(tree, key: probe) == scratch[probe], "read beside the run (seed \(seed))")
                    default:
                        var value = rng.next() % 60 == 0 ? [UInt8](repeating: 7, count: 3000) : Self.randomValue(&rng)
                        if let old = scratch[k], rng.next() % 2 == 0 {
                            // An update of the same length (written over the old bytes in place).
                            value = [UInt8](repeating: UInt8(truncatingIfNeeded: rng.next()), count: old.count)
                        }
                        try txn.put(tree, key: k, value: value)
                        scratch[k] = value
                    }
                    #expect(try txn.get(tree, key: k) == scratch[k], "read-your-writes (seed \(seed))")
                    n = (n + step) % space
                }
                #expect(try txn.count(tree) == scratch.count, "count inside the transaction (seed \(seed))")
            }
            #expect(Self.same(try Self.scan(txn.cursor(tree)), Self.sorted(scratch)), "scan inside the transaction (seed \(seed))")
            if rng.next() % 6 == 0 {
                txn.abort()
            } else {
                try txn.commit()
                model = scratch
            }
            if round % 4 == 3 { try engine.read { try Self.check($0, model, rng: &rng, seed: seed, space: space) } }
        }
    }

    @Test("200,000 keys in random order, then deleted down to an empty tree")
    func twoHundredThousandKeys() throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let directory = TestDirectory("200k")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path, options: StorageOptions(durability: .none, initialMapSize: 1 << 20, nodeSize: 1024))
        defer { engine.close() }
        let n = 200_000
        var order = Array(0..<UInt64(n))
        order.shuffle(using: &rng)
        // Insert in 4 commits.
        for part in 0..<4 {
            try engine.write { txn throws in
                let tree = try txn.tree("t")!
                for i in order[(part * n / 4)..<((part + 1) * n / 4)] {
                    try txn.put(tree, key: bigEndianKey(i), value: bigEndianKey(i &* 31))
                }
            }
        }
        try engine.read { txn throws in
            let tree = try txn.tree("t")!
            #expect(try txn.count(tree) == n)
            var expected: UInt64 = 0
            try txn.cursor(tree).scan { key, value in
                #expect(Array(key) == bigEndianKey(expected), "key order (seed \(seed))")
                #expect(Array(value) == bigEndianKey(expected &* 31), "value (seed \(seed))")
                expected += 1
                return true
            }
            #expect(expected == UInt64(n))
        }
        // Delete in random order, checking along the way.
        order.shuffle(using: &rng)
        for part in 0..<8 {
            let slice = order[(part * n / 8)..<((part + 1) * n / 8)]
            try engine.write { txn throws in
                let tree = try txn.tree("t")!
                for i in slice { #expect(try txn.delete(tree, key: bigEndianKey(i)), "delete (seed \(seed))") }
            }
            let remaining = Set(order[((part + 1) * n / 8)...])
            try engine.read { txn throws in
                let tree = try txn.tree("t")!
                #expect(try txn.count(tree) == remaining.count)
                var seen = 0
                var previous: [UInt8]?
                try txn.cursor(tree).scan { key, _ in
                    seen += 1
                    if let previous { #expect(previous.lexicographicallyPrecedes(Array(key))) }
                    previous = Array(key)
                    return true
                }
                #expect(seen == remaining.count, "scan after deletes (seed \(seed))")
                for i in slice.prefix(50) { #expect(try txn.get(tree, key: bigEndianKey(i)) == nil) }
                for i in remaining.prefix(50) { #expect(try txn.get(tree, key: bigEndianKey(i)) == bigEndianKey(i &* 31)) }
            }
        }
        try engine.read { txn throws in
            let tree = try txn.tree("t")!
            #expect(try txn.count(tree) == 0)
            #expect(try txn.cursor(tree).first() == false)
            #expect(try txn.cursor(tree).last() == false)
        }
        // An empty tree holds no bytes: everything it had is garbage.
        #expect(engine.liveBytes < 1024, "live bytes after deleting everything: \(engine.liveBytes)")
    }

    /// A key may be far larger than a node (up to 1 MiB), and a branch holds its children's
    /// smallest keys: a branch of two children can be over the node size on its own. Splitting
    /// such a branch made one-child branches and a new level at every split near a large key, until
    /// a tree of 1,000 keys was 65 levels deep and a cursor refused it as corrupt.
    @Test("keys of up to 64 KiB, put and deleted at random: the model's content, in a tree at most log2(count) + 1 deep",
          arguments: [512, 4096])
    func largeKeysKeepTheTreeShallow(nodeSize: Int) throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let directory = TestDirectory("large-keys")
        defer { directory.remove() }
        let options = StorageOptions(initialMapSize: 1 << 20, nodeSize: nodeSize, superblockInterval: 5)
        var engine = try StorageEngine(directory: directory.path, options: options)
        var model: [[UInt8]: [UInt8]] = [:]
        func largeKey() -> [UInt8] {
            // A tenth of the keys are 2 KiB to 64 KiB: their prefix picks their place in the tree.
            let n = rng.next() % 2000
            let size = rng.next() % 10 == 0 ? 2048 + Int(rng.next() % 63_000) : Int(rng.next() % 24)
            return bigEndianKey(n) + [UInt8](repeating: UInt8(truncatingIfNeeded: n), count: size)
        }
        var deepest = 0
        for round in 0..<40 {
            try engine.write { txn throws in
                let tree = try txn.tree("t")!
                for _ in 0..<Int(rng.next() % 120) {
                    // Deletes are as likely as puts in every other round, so the tree shrinks too.
                    if round % 2 == 1, rng.next() % 2 == 0, let victim = model.keys.sorted(by: Bytes.precedes).randomElement(using: &rng) {
                        #expect(try txn.delete(tree, key: victim), "delete (seed \(seed))")
                        model[victim] = nil
                    } else {
                        let key = largeKey()
                        let value = Self.randomValue(&rng)
                        try txn.put(tree, key: key, value: value)
                        model[key] = value
                    }
                }
            }
            try engine.read { txn throws in
                try Self.check(txn, model, rng: &rng, seed: seed, space: 2000)
                guard let tree = try txn.tree("t") else { return }
                let height = try txn.height(tree)
                let bound = Tree.maximumHeight(count: model.count)
                #expect(height <= bound, "\(height) levels for \(model.count) keys in round \(round) (seed \(seed))")
                deepest = max(deepest, height)
            }
            if round % 10 == 9 {
                engine.close()
                engine = try StorageEngine(directory: directory.path, options: options)
            }
        }
        engine.close()
        #expect(deepest >= 2, "the test never grew a branch (seed \(seed))")
    }

    @Test("keys and values from 0 bytes to 1 MiB round-trip, through commit and reopen")
    func sizesFromZeroToOneMebibyte() throws {
        let directory = TestDirectory("sizes")
        defer { directory.remove() }
        let sizes = [0, 1, 7, 8, 15, 16, 17, 31, 255, 1023, 1024, 1025, 4095, 4096, 65_536, 300_000, 1 << 20]
        func key(_ size: Int, _ tag: UInt8) -> [UInt8] { (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) } + [tag] }
        func bytes(_ size: Int, _ tag: UInt8) -> [UInt8] { (0..<size).map { UInt8(truncatingIfNeeded: $0 &+ Int(tag)) } }
        var options = StorageOptions(initialMapSize: 1 << 20)
        options.nodeSize = 4096
        do {
            let engine = try StorageEngine(directory: directory.path, options: options)
            try engine.write { txn throws in
                let values = try txn.tree("values")!
                let keys = try txn.tree("keys")!
                for (i, size) in sizes.enumerated() {
                    try txn.put(values, key: bigEndianKey(UInt64(i)), value: bytes(size, UInt8(i)))
                    try txn.put(keys, key: Array(key(size, UInt8(i)).dropLast()), value: bytes(i, 1))
                }
                // Read-your-writes for the big ones before commit.
                #expect(try txn.get(values, key: bigEndianKey(UInt64(sizes.count - 1))) == bytes(1 << 20, UInt8(sizes.count - 1)))
            }
            engine.close()
        }
        let engine = try StorageEngine(directory: directory.path, options: options)
        defer { engine.close() }
        try engine.read { txn throws in
            let values = try txn.tree("values")!
            let keys = try txn.tree("keys")!
            for (i, size) in sizes.enumerated() {
                #expect(try txn.get(values, key: bigEndianKey(UInt64(i))) == bytes(size, UInt8(i)), "value of \(size) bytes")
                #expect(try txn.get(keys, key: Array(key(size, UInt8(i)).dropLast())) == bytes(i, 1), "key of \(size) bytes")
            }
            #expect(try txn.count(keys) == sizes.count)
            var scanned = 0
            try txn.cursor(keys).scan { _, _ in scanned += 1; return true }
            #expect(scanned == sizes.count)
        }
        // Replacing and deleting big values leaves them as garbage, not live.
        let before = engine.liveBytes
        try engine.write { txn throws in
            let values = try txn.tree("values")!
            try txn.delete(values, key: bigEndianKey(UInt64(sizes.count - 1)))
        }
        #expect(engine.liveBytes < before - (1 << 20) + 4096)
    }

    @Test("limits: a key or value over the limit is refused with tooLarge")
    func limits() throws {
        let directory = TestDirectory("limits")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path)
        defer { engine.close() }
        let txn = try engine.beginWrite()
        let tree = try txn.tree("t")!
        #expect(throws: StorageError.tooLarge(what: "key", size: StorageLimits.maxKeySize + 1, limit: StorageLimits.maxKeySize)) {
            try txn.put(tree, key: [UInt8](repeating: 1, count: StorageLimits.maxKeySize + 1), value: [])
        }
        txn.abort()
    }
}
