import BenchSupport
import Foundation

/// The collection benchmark's data, lookups and expected answers for N items, built before any timer.
///
/// Item i (1...N): title `Item title %09d`; 5 distinct tags drawn uniformly from the 1,000 tags
/// `tag0000` … `tag0999` (SplitMix64 seeded with 7), sorted ascending (so that a relational table
/// keyed by (item_id, tag) gives them back in the same order: the list is, in effect, a set); 8 scores
/// in 0..<1,000,000; attributes color, size, shape and owner, each one of `attributeValues[key]`
/// (4, 3, 3 and 5 values), drawn from the same generator.
struct Workload {
    static let distinctTags = 1_000
    static let tagsPerItem = 5
    static let scoresPerItem = 8
    static let attributeValues: [(key: String, values: [String])] = [
        ("color", ["red", "green", "blue", "black"]),
        ("size", ["small", "medium", "large"]),
        ("shape", ["circle", "square", "triangle"]),
        ("owner", ["alice", "bob", "carol", "dave", "erin"]),
    ]
    /// Indexed tag lookups (step tag).
    static let tagLookups = 100
    /// Lookups without the element index (step tag-scan) and map lookups (step map): each reads every
    /// object, so fewer; their rate is per lookup.
    static let scanLookups = 10
    static let mapLookups = 10

    static func tagName(_ k: Int) -> String { "tag" + String(repeating: "0", count: 4 - String(k).count) + String(k) }

    let n: Int
    /// Items 1...N as the app holds them (id 0: not stored yet); item i at index i − 1.
    let items: [Item]
    /// The get step's order: the CRUD workload's SplitMix64 permutation of 1...N.
    let permutation: [UInt64]
    /// The tags the tag step looks up (100, seeded), and the first `scanLookups` of them for tag-scan.
    let lookupTags: [String]
    /// The ids holding each tag, ascending.
    let idsByTag: [String: [Int64]]
    /// The colors the map step looks up (red, green, blue, black, red, …) and how many items have each.
    let lookupColors: [String]
    let colorCounts: [String: Int]

    init(n: Int) {
        self.n = n
        var random = SplitMix64(state: 7)
        let tagNames = (0..<Self.distinctTags).map(Self.tagName)
        var items: [Item] = []
        items.reserveCapacity(n)
        var idsByTag: [String: [Int64]] = [:]
        var colorCounts: [String: Int] = [:]
        for i in 1...n {
            var picked: [Int] = []
            while picked.count < Self.tagsPerItem {
                let k = Int(random.next() % UInt64(Self.distinctTags))
                if !picked.contains(k) { picked.append(k) }
            }
            let tags = picked.sorted().map { tagNames[$0] }
            let scores = (0..<Self.scoresPerItem).map { _ in Int(random.next() % 1_000_000) }
            var attributes: [String: String] = [:]
            for (key, values) in Self.attributeValues {
                attributes[key] = values[Int(random.next() % UInt64(values.count))]
            }
            for tag in tags { idsByTag[tag, default: []].append(Int64(i)) }
            colorCounts[attributes["color"]!, default: 0] += 1
            items.append(Item(id: 0, title: "Item title " + Self.nineDigits(i), tags: tags, scores: scores, attributes: attributes))
        }
        self.items = items
        self.idsByTag = idsByTag
        self.colorCounts = colorCounts
        permutation = randomOrder(n)
        var lookups = SplitMix64(state: 11)
        lookupTags = (0..<Self.tagLookups).map { _ in tagNames[Int(lookups.next() % UInt64(Self.distinctTags))] }
        let colors = Self.attributeValues[0].values
        lookupColors = (0..<Self.mapLookups).map { colors[$0 % colors.count] }
        precondition(items[0].title.utf8.count == 20)
    }

    /// `%09d`.
    static func nineDigits(_ i: Int) -> String {
        let s = String(i)
        return String(repeating: "0", count: max(0, 9 - s.count)) + s
    }

    /// The expected ids of the tag lookups (tag: all 100; tag-scan: the first `scanLookups`).
    func expectedIds(_ lookups: Int) -> [[Int64]] { lookupTags.prefix(lookups).map { idsByTag[$0] ?? [] } }

    /// The get step's checks: every item found, and each equal to the one put (read again after the timer).
    func checkGet(_ engine: String, found: Int) throws {
        try check("\(engine) get: every item found", found == n, "\(found) of \(n)")
    }

    /// Checks one lookup step's answers against the expected ids (ascending).
    func checkIds(_ step: String, _ got: [[Int64]], lookups: Int) throws {
        let expected = expectedIds(lookups)
        try check("\(step): \(lookups) answers", got.count == expected.count, "\(got.count)")
        for (k, (ids, want)) in zip(got, expected).enumerated() {
            try check("\(step): lookup \(k) (\(lookupTags[k])) finds its \(want.count) items", ids == want,
                      "\(ids.count) ids, first \(ids.prefix(3))")
        }
    }

    func checkMapCounts(_ step: String, _ got: [Int]) throws {
        for (k, count) in got.enumerated() {
            let want = colorCounts[lookupColors[k]] ?? 0
            try check("\(step): lookup \(k) (color \(lookupColors[k])) counts \(want)", count == want, "\(count)")
        }
    }
}

func check(_ what: String, _ ok: Bool, _ detail: @autoclosure () -> String = "") throws {
    guard ok else { throw BenchError("check failed: \(what)" + { let d = detail(); return d.isEmpty ? "" : " (\(d))" }()) }
}
