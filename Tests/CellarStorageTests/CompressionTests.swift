@testable import CellarStorage
import CellarTestSupport
import Testing

/// zstd compression of values (`StorageOptions.compression`): what is stored compressed, that
/// every read path gives the original bytes back, dictionaries trained by compaction, and that
/// bad compressed bytes are `fileCorrupt`, never a crash.
@Suite(.enabled(if: Compression.zstd().isAvailable, "this build has no zstd (see CompressionUnavailableTests)"))
struct CompressionTests {
    /// Text-like bytes that compress well: words from a small vocabulary, seeded.
    static func text(_ rng: inout SplitMix64, count: Int) -> [UInt8] {
        let words = ["cellar", "object", "store", "note", "title", "lorem", "ipsum", "dolor", "amet", "record"]
        var bytes: [UInt8] = []
        while bytes.count < count { bytes += Array((words[Int(rng.next() % 10)] + " ").utf8) }
        return Array(bytes.prefix(count))
    }

    static func noise(_ rng: inout SplitMix64, count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }

    /// How a value is stored: whether compressed, and with which dictionary (0: none).
    static func stored(_ txn: ReadTransaction, tree name: String, key: [UInt8]) throws -> (compressed: Bool, dictionary: UInt32)? {
        let tree = try #require(try txn.tree(name))
        guard let value = try key.withUnsafeBytes({ try txn.storedValue(root: tree.state.root, key: $0) }) else { return nil }
        guard value.compressed else { return (false, 0) }
        return (true, try Zstd.header(of: value.bytes, offset: 0).dictionary)
    }

    static func options(_ compression: Compression, nodeSize: Int = 4096) -> StorageOptions {
        var options = StorageOptions(durability: .none, nodeSize: nodeSize, compression: compression)
        options.automaticCompaction = nil
        return options
    }

    @Test func everyReadPathGivesTheOriginalBytes() throws {
        var rng = SplitMix64(seed: SplitMix64.testSeed())
        let dir = TestDirectory("compression-reads")
        defer { dir.remove() }
        var expected: [[UInt8]: [UInt8]] = [:]
        for i in 0..<600 {
            let key = bigEndianKey(UInt64(i))
            switch i % 4 {
            case 0: expected[key] = Self.text(&rng, count: 200 + Int(rng.next() % 400))      // compressed, inline
            case 1: expected[key] = Self.text(&rng, count: 2_000 + Int(rng.next() % 30_000))  // compressed, out of line
            case 2: expected[key] = Self.noise(&rng, count: 100 + Int(rng.next() % 3_000))   // does not shrink: as is
            default: expected[key] = Self.text(&rng, count: Int(rng.next() % 64))            // below the threshold
            }
        }
        let engine = try StorageEngine(directory: dir.path, options: Self.options(.zstd()))
        try engine.write { txn in
            let tree = try txn.tree("t")!
            for (key, value) in expected { try txn.put(tree, key: key, value: value) }
            // The transaction reads its own compressed values back.
            for (key, value) in expected {
                #expect(try txn.get(tree, key: key) == value)
                try txn.withValue(tree, key: key) { #expect($0.map(Array.init) == value) }
            }
        }
        try engine.read { txn throws -> Void in
            for (key, value) in expected {
                let stored = try #require(try Self.stored(txn, tree: "t", key: key))
                let index = Int(key.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 0, as: UInt64.self).bigEndian })
                #expect(stored.compressed == (index % 4 < 2), "value \(index) of \(value.count) bytes")
            }
        }
        func check(_ engine: StorageEngine) throws {
            try engine.read { txn in
                let tree = try #require(try txn.tree("t"))
                var pointers: [([UInt8], UnsafeRawBufferPointer)] = []
                for (key, value) in expected {
                    #expect(try txn.get(tree, key: key) == value)
                    let raw = try #require(try key.withUnsafeBytes { try txn.get(tree, key: $0) })
                    pointers.append((value, raw))
                    try txn.withValue(tree, key: key) { #expect($0.map(Array.init) == value) }
                }
                // `get`'s bytes stay valid for the whole transaction.
                for (value, raw) in pointers { #expect(Array(raw) == value) }
                var forward: [[UInt8]: [UInt8]] = [:]
                try txn.cursor(tree).scan { key, value in forward[Array(key)] = Array(value); return true }
                #expect(forward == expected)
                var backward: [[UInt8]: [UInt8]] = [:]
                try txn.cursor(tree).scan(reverse: true) { key, value in backward[Array(key)] = Array(value); return true }
                #expect(backward == expected)
                var kept: [([UInt8], UnsafeRawBufferPointer)] = []
                try txn.cursor(tree).scan(stableValues: true) { key, value in kept.append((Array(key), value)); return true }
                for (key, value) in kept { #expect(Array(value) == expected[key]) }
                let cursor = try txn.cursor(tree)
                var more = try cursor.first()
                while more {
                    #expect(Array(try cursor.value()) == expected[Array(cursor.key)])
                    more = try cursor.next()
                }
            }
        }
        try check(engine)
        engine.close()
        // Read back by a store that does not compress.
        let plain = try StorageEngine(directory: dir.path, options: Self.options(.none))
        defer { plain.close() }
        try check(plain)
    }

    @Test func compressedStoreIsSmallerAndCompactingWithNoneDecompresses() throws {
        var rng = SplitMix64(seed: SplitMix64.testSeed())
        let values = (0..<3_000).map { _ in Self.text(&rng, count: 150 + Int(rng.next() % 300)) }
        var sizes: [Compression: UInt64] = [:]
        for compression in [Compression.none, .zstd()] {
            let dir = TestDirectory("compression-size")
            defer { dir.remove() }
            let engine = try StorageEngine(directory: dir.path, options: Self.options(compression))
            defer { engine.close() }
            try engine.write { txn in
                let tree = try txn.tree("t")!
                for (i, value) in values.enumerated() { try txn.put(tree, key: bigEndianKey(UInt64(i)), value: value) }
            }
            sizes[compression] = engine.fileSize
        }
        #expect(sizes[.zstd()]! * 10 < sizes[.none]! * 6, "\(sizes)")

        let dir = TestDirectory("compression-none-compact")
        defer { dir.remove() }
        do {
            let engine = try StorageEngine(directory: dir.path, options: Self.options(.zstd()))
            defer { engine.close() }
            try engine.write { txn in
                let tree = try txn.tree("t")!
                for (i, value) in values.enumerated() { try txn.put(tree, key: bigEndianKey(UInt64(i)), value: value) }
            }
        }
        let engine = try StorageEngine(directory: dir.path, options: Self.options(.none))
        defer { engine.close() }
        try engine.compact()
        try engine.read { txn throws -> Void in
            for (i, value) in values.enumerated() {
                #expect(try Self.stored(txn, tree: "t", key: bigEndianKey(UInt64(i)))?.compressed == false)
                #expect(try txn.get(txn.tree("t")!, key: bigEndianKey(UInt64(i))) == value)
            }
        }
        #expect(engine.fileSize * 6 > sizes[.zstd()]! * 10)
    }

    /// Compaction with `.zstdDictionary` trains one dictionary per tree with enough values, keeps
    /// numbering them across compactions, drops the old ones, and commits after it use the new one.
    @Test func compactionTrainsADictionaryPerTree() throws {
        var rng = SplitMix64(seed: SplitMix64.testSeed())
        let dir = TestDirectory("compression-dictionary")
        defer { dir.remove() }
        // Records alike as an entity's objects are: the same field layout and much shared text.
        func note(_ i: Int) -> [UInt8] {
            var bytes = withUnsafeBytes(of: UInt64(i).littleEndian) { Array($0) }
            bytes += Array("Note title \(String(repeating: "0", count: 9 - String(i).count))\(i)".utf8)
            bytes += Array("Body \(i) Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor".utf8)
            bytes += withUnsafeBytes(of: UInt64(1_700_000_000_000 + 1000 * i).littleEndian) { Array($0) }
            return bytes
        }
        var expected: [String: [[UInt8]: [UInt8]]] = ["notes": [:], "few": [:]]
        let engine = try StorageEngine(directory: dir.path, options: Self.options(.zstdDictionary()))
        try engine.write { txn in
            let notes = try txn.tree("notes")!
            for i in 0..<5_000 { expected["notes"]![bigEndianKey(UInt64(i))] = note(i) }
            for (key, value) in expected["notes"]! { try txn.put(notes, key: key, value: value) }
            let few = try txn.tree("few")!
            for i in 0..<100 { expected["few"]![bigEndianKey(UInt64(i))] = Self.text(&rng, count: 200) }
            for (key, value) in expected["few"]! { try txn.put(few, key: key, value: value) }
        }
        let before = engine.fileSize
        let key7 = bigEndianKey(7)
        // Alone, a record this small and this varied does not shrink by an eighth.
        #expect(try engine.read { try Self.stored($0, tree: "notes", key: key7) }! == (false, 0))

        try engine.compact()
        let first = try #require(try engine.read { try Self.stored($0, tree: "notes", key: key7) })
        #expect(first.compressed && first.dictionary != 0)
        #expect(try engine.read { try Self.stored($0, tree: "few", key: key7) }!.dictionary == 0, "too few values to train on")
        #expect(engine.fileSize * 2 < before, "\(before) → \(engine.fileSize)")
        #expect(try engine.read { try Model(reading: $0) }.trees == expected)

        // A commit after the compaction compresses with the new dictionary.
        let newKey = bigEndianKey(9_999)
        expected["notes"]![newKey] = note(9_999)
        try engine.write { try $0.put($0.tree("notes")!, key: newKey, value: note(9_999)) }
        #expect(try engine.read { try Self.stored($0, tree: "notes", key: newKey) }! == (true, first.dictionary))

        try engine.compact()
        let second = try #require(try engine.read { try Self.stored($0, tree: "notes", key: key7) })
        #expect(second.dictionary > first.dictionary, "ids are never reused")
        try engine.read { txn throws -> Void in
            #expect(try txn.dictionaryBytes(first.dictionary) == nil, "the old dictionary went with the old file")
            #expect(try txn.dictionaryBytes(second.dictionary) != nil)
            #expect(try txn.treeNames() == ["few", "notes"], "the dictionaries' tree is the engine's own")
        }
        engine.close()
        let reopened = try StorageEngine(directory: dir.path, options: Self.options(.zstd()))
        defer { reopened.close() }
        #expect(try reopened.read { try Model(reading: $0) }.trees == expected)
    }

    /// Random puts, overwrites and deletes with values of every kind, against the in-memory model,
    /// through commits, a reopen and compactions with each option.
    @Test(arguments: [Compression.zstd(level: 1), .zstdDictionary(level: 3)])
    func randomOperationsAgainstTheModel(_ compression: Compression) throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let dir = TestDirectory("compression-model")
        defer { dir.remove() }
        var model = Model()
        var engine = try StorageEngine(directory: dir.path, options: Self.options(compression, nodeSize: 1024))
        for round in 0..<12 {
            var operations: [Operation] = []
            for _ in 0..<400 {
                let tree = ["a", "b"][Int(rng.next() % 2)]
                let key = bigEndianKey(rng.next() % 700)
                if rng.next() % 5 == 0 {
                    operations.append(.delete(tree: tree, key: key))
                } else {
                    let size = Int(rng.next() % 600) + (rng.next() % 30 == 0 ? 5_000 : 0)
                    let value = rng.next() % 3 == 0 ? Self.noise(&rng, count: size) : Self.text(&rng, count: size)
                    operations.append(.put(tree: tree, key: key, value: value))
                }
            }
            try engine.write { try apply(operations, to: $0) }
            model.apply(operations)
            if round % 4 == 3 { try engine.compact() }
            if round % 5 == 4 {
                engine.close()
                engine = try StorageEngine(directory: dir.path, options: Self.options(compression, nodeSize: 1024))
            }
            let read = try engine.read { try Model(reading: $0) }
            #expect(read == model, "seed \(seed), round \(round)")
        }
        engine.close()
    }

    /// A compressed value whose bytes are not what the writer makes (stored with a valid record
    /// checksum, so that only the decoder can tell) is `fileCorrupt` on every read path.
    @Test func badCompressedBytesAreFileCorrupt() throws {
        var rng = SplitMix64(seed: SplitMix64.testSeed())
        let sample = Self.text(&rng, count: 3_000)
        let compressor = try ValueCompressor(level: 3)
        let good = try #require(sample.withUnsafeBytes { compressor.compress($0, dictionary: nil).map(Array.init) })
        var wrongSize = good
        // The frame header's content size (single-segment frames keep it in the last header
        // bytes): a different number than the block decodes to.
        wrongSize[5] ^= 0x01
        var namesDictionary = Array(good)
        namesDictionary[4] |= 0x01  // Dictionary_ID_flag = 1: a one-byte id follows
        namesDictionary.insert(77, at: 5)
        // Each with the words its `fileCorrupt` reason must hold: the check that caught it.
        let cases: [(String, [UInt8], String)] = [
            ("noise", Self.noise(&rng, count: 200), "not a zstd frame"),
            ("truncated", Array(good.prefix(good.count / 2)), "does not decode"),
            ("too short", Array(good.prefix(3)), "too short"),
            ("bad block", Array(good.prefix(12)) + Self.noise(&rng, count: good.count - 12), "does not decode"),
            ("wrong size", wrongSize, "does not decode"),
            ("unknown dictionary", namesDictionary, "dictionary 77, which the store does not hold"),
            ("huge claim", [0x28, 0xB5, 0x2F, 0xFD, 0xA0, 0x00, 0x00, 0x00, 0x40, 0x01, 0x00, 0x00], "claims 1073741824 bytes"),
        ]
        for (label, bytes, reason) in cases {
            let dir = TestDirectory("compression-corrupt")
            defer { dir.remove() }
            let engine = try StorageEngine(directory: dir.path, options: Self.options(.zstd()))
            defer { engine.close() }
            try engine.write { txn in
                let tree = try txn.tree("t")!
                try bigEndianKey(1).withUnsafeBytes { key in
                    try bytes.withUnsafeBytes { try txn.mutator.put(state: tree.state, key: key, value: $0, flags: NodeView.compressedBit) }
                }
            }
            func isCorrupt(_ body: () throws -> Void) -> Bool {
                do { try body() } catch StorageError.fileCorrupt { return true } catch { return false }
                return false
            }
            try engine.read { txn in
                let tree = try txn.tree("t")!
                do {
                    _ = try txn.get(tree, key: bigEndianKey(1))
                    Issue.record("\(label): get decoded")
                } catch StorageError.fileCorrupt(_, let why) {
                    #expect(why.contains(reason), "\(label): \(why)")
                }
                #expect(isCorrupt { try txn.withValue(tree, key: bigEndianKey(1)) { _ in } }, "\(label): withValue")
                #expect(isCorrupt { try txn.cursor(tree).scan { _, _ in true } }, "\(label): scan")
                #expect(isCorrupt { try txn.cursor(tree).scan(stableValues: true) { _, _ in true } }, "\(label): stable scan")
            }
            // Compaction reads every value: it refuses, and the store stays as it was.
            #expect(isCorrupt { try engine.compact() }, "\(label): compact")
            #expect(try engine.read { try $0.treeNames() } == ["t"])
        }
    }

    /// Small values that keep failing to shrink stop being offered to zstd for the rest of the
    /// transaction, except one in `retryEvery`; one that shrinks brings them all back.
    @Test func smallValuesThatDoNotShrinkAreSampled() throws {
        var rng = SplitMix64(seed: SplitMix64.testSeed())
        let dir = TestDirectory("compression-sampling")
        defer { dir.remove() }
        let engine = try StorageEngine(directory: dir.path, options: Self.options(.zstd()))
        defer { engine.close() }
        let noise = 200, text = 200
        try engine.write { txn in
            let tree = try txn.tree("t")!
            for i in 0..<noise { try txn.put(tree, key: bigEndianKey(UInt64(i)), value: Self.noise(&rng, count: 300)) }
            for i in noise..<(noise + text) { try txn.put(tree, key: bigEndianKey(UInt64(i)), value: Self.text(&rng, count: 300)) }
            // Large values are always tried.
            try txn.put(tree, key: bigEndianKey(1_000), value: Self.text(&rng, count: 5_000))
        }
        let compressed = try engine.read { txn in
            try (noise..<(noise + text)).map { try Self.stored(txn, tree: "t", key: bigEndianKey(UInt64($0)))!.compressed }
        }
        // 200 small values in a row that did not shrink: the next try is the 256th (a multiple
        // of 64), the 56th text value; it shrinks, and every one after it is tried again.
        let firstTried = CompressionSampling.retryEvery * 4 - noise - 1
        #expect(compressed.prefix(firstTried).allSatisfy { !$0 }, "\(compressed.prefix(firstTried + 2))")
        #expect(compressed.dropFirst(firstTried).allSatisfy { $0 })
        #expect(try engine.read { try Self.stored($0, tree: "t", key: bigEndianKey(1_000)) }!.compressed)
    }

    @Test func reservedNamesAndBadOptionsAreRefused() throws {
        let dir = TestDirectory("compression-refusals")
        defer { dir.remove() }
        let engine = try StorageEngine(directory: dir.path, options: Self.options(.zstdDictionary()))
        defer { engine.close() }
        try engine.write { txn -> Void in
            #expect(throws: StorageError.self) { try txn.tree(Dictionaries.treeName) }
            #expect(throws: StorageError.self) { try txn.dropTree("\u{0}mine") }
        }
        try engine.read { txn -> Void in #expect(throws: StorageError.self) { try txn.tree(Dictionaries.treeName) } }
        var low = Self.options(.zstd())
        low.compressionThreshold = 8
        #expect(throws: StorageError.self) { try StorageEngine(directory: dir.sub("x"), options: low) }
        #expect(throws: StorageError.self) { try StorageEngine(directory: dir.sub("y"), options: Self.options(.zstd(level: 99))) }
    }
}
