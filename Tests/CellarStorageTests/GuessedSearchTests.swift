@testable import CellarStorage
import CellarTestSupport
import Testing

/// The node searches that start at a guessed index (`HeadRange`): for every guess, the same answer
/// as the plain binary search, on leaves and branches of keys dense, sparse, clustered, of every
/// length and sharing their first 8 bytes, searched for keys present and absent.
@Suite struct GuessedSearchTests {
    /// A node body holding `keys` (sorted): leaf entries with a 1-byte value, or branch entries
    /// with child references 1, 2, ….
    static func body(_ keys: [[UInt8]], leaf: Bool) -> [UInt8] {
        let entries = keys.enumerated().map { i, key in
            leaf ? NodeBodies.leafEntry(key: key, value: [0x5A])
                 : NodeBodies.branchEntry(key: key, child: UInt64(i + 1))
        }
        return NodeBodies.compact(entries, isLeaf: leaf)
    }

    /// Sorted, distinct keys of one of several shapes.
    static func keys(_ rng: inout SplitMix64, shape: UInt64, count: Int) -> [[UInt8]] {
        var set = Set<[UInt8]>()
        let start = rng.next() % 1_000_000
        var next = start
        while set.count < count {
            let key: [UInt8]
            switch shape {
            case 0: key = bigEndianKey(next); next += 1                                   // dense ids
            case 1: key = bigEndianKey(next); next += 1 + rng.next() % 50                  // sparse
            case 2: key = bigEndianKey(rng.next() % 4 == 0 ? rng.next() : start + rng.next() % 64)  // clustered
            case 3: key = bigEndianKey(start + rng.next() % 8) + bigEndianKey(rng.next() % 1000)    // shared heads
            default:                                                                        // any length
                key = (0..<Int(rng.next() % 12)).map { _ in UInt8(truncatingIfNeeded: rng.next() % 3) }
            }
            set.insert(key)
        }
        return set.sorted { $0.lexicographicallyPrecedes($1) }
    }

    static func probes(_ rng: inout SplitMix64, _ keys: [[UInt8]]) -> [[UInt8]] {
        var probes = keys
        for _ in 0..<20 {
            var key = keys[Int(rng.next() % UInt64(keys.count))]
            switch rng.next() % 4 {
            case 0: if !key.isEmpty { key[key.count - 1] &+= 1 }
            case 1: key.append(0)
            case 2: key = Array(key.dropLast())
            default: key = bigEndianKey(rng.next())
            }
            probes.append(key)
        }
        return probes + [[], [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]]
    }

    @Test func everyGuessGivesThePlainSearchesAnswer() throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        for round in 0..<200 {
            let shape = UInt64(round % 5)
            let keys = Self.keys(&rng, shape: shape, count: 1 + Int(rng.next() % 40))
            for leaf in [true, false] {
                let body = Self.body(keys, leaf: leaf)
                try body.withUnsafeBytes { raw in
                    let node = NodeView(body: raw.baseAddress!)
                    #expect(NodeView.validate(raw.baseAddress!, length: raw.count) == nil)
                    for probe in Self.probes(&rng, keys) {
                        try probe.withUnsafeBytes { p in
                            let search = SearchKey(p.nonNullBase, p.count)
                            for guess in 0..<node.count {
                                if leaf {
                                    let expected = node.lowerBound(search)
                                    let got = node.lowerBound(search, guess: guess)
                                    try #require(got == expected, "seed \(seed) shape \(shape) guess \(guess) probe \(probe): \(got) != \(expected)")
                                } else {
                                    let expected = node.childIndex(search)
                                    let got = node.childIndex(search, guess: guess)
                                    try #require(got == expected, "seed \(seed) shape \(shape) guess \(guess) probe \(probe): \(got) != \(expected)")
                                }
                            }
                            // The range's own guess is nil or an index of the node.
                            var range = HeadRange.unbounded
                            range.hasLow = true
                            range.hasHigh = true
                            range.low = rng.next() % 2 == 0 ? 0 : rng.next()
                            range.high = rng.next() % 2 == 0 ? UInt64.max : rng.next()
                            if let guess = range.guess(search, count: node.count) {
                                #expect(guess >= 0 && guess < node.count)
                            }
                        }
                    }
                }
            }
        }
    }

    /// Ids at a constant step (a branch's separators over full leaves, ids of one entity among
    /// several): the guess is the key's own index, exactly (no rounding on the way), and any key
    /// of a small range gets an index of the node.
    @Test func evenlySpacedIdsAreGuessedExactly() {
        for step: UInt64 in [1, 2, 5, 18, 100, 3_300] {
            for count in [2, 3, 18, 185] {
                let low: UInt64 = 1_000_000
                let range = HeadRange(low: low, high: low + step * UInt64(count), hasLow: true, hasHigh: true)
                for i in 0..<count {
                    bigEndianKey(low + step * UInt64(i)).withUnsafeBytes { p in
                        #expect(range.guess(SearchKey(p.nonNullBase, p.count), count: count) == i, "step \(step), \(count) entries")
                    }
                }
                for key in low..<min(low + step * UInt64(count), low + 2_000) {
                    bigEndianKey(key).withUnsafeBytes { p in
                        let guess = range.guess(SearchKey(p.nonNullBase, p.count), count: count)
                        #expect(guess.map { $0 >= 0 && $0 < count } == true, "key \(key): \(String(describing: guess))")
                    }
                }
            }
        }
    }

    /// Over a dense run of ids, the range the parent gives a leaf puts the guess on the key itself.
    @Test func denseIdsAreGuessedExactly() {
        let keys = (1000..<1018).map { bigEndianKey(UInt64($0)) }
        let range = HeadRange(low: 1000, high: 1018, hasLow: true, hasHigh: true)
        for (i, key) in keys.enumerated() {
            key.withUnsafeBytes { p in
                #expect(range.guess(SearchKey(p.nonNullBase, p.count), count: keys.count) == i)
            }
        }
    }
}
