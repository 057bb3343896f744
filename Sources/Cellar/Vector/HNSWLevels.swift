// The level of a node in the HNSW hierarchy, drawn deterministically from its id: the id is
// hashed with SplitMix64 into a uniform u in (0, 1], and the level is ⌊−ln(u)·mL⌋ with
// mL = 1/ln(M), the exponential distribution of the HNSW paper (each level holds about 1/M of
// the nodes of the level below). Deterministic levels make a rebuild reproduce the same
// hierarchy and tests repeatable; the same hash gives the repair's backlink coin flips.

import Foundation

enum HNSWLevels {
    /// The highest level a node can have (also the decoder's bound). With M ≥ 2 a level above
    /// 24 has probability below 2⁻²⁴ per node.
    static let maxLevel = 24

    /// SplitMix64's output function of `x`.
    static func mix(_ x: UInt64) -> UInt64 {
        var z = x &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform value in (0, 1] from a hash.
    static func unit(_ hash: UInt64) -> Double { (Double(hash >> 11) + 1) / 9_007_199_254_740_992 }

    /// The level of the node with `id` in a graph with `neighborsPerNode` M.
    static func level(id: UInt64, neighborsPerNode: Int) -> Int {
        let mL = 1 / log(Double(max(2, neighborsPerNode)))
        let level = Int(-log(unit(mix(id))) * mL)
        return min(level, maxLevel)
    }

    /// A deterministic coin with probability `p` for the pair (`a`, `b`).
    static func coin(_ a: UInt64, _ b: UInt64, probability p: Double) -> Bool {
        if p >= 1 { return true }
        if p <= 0 { return false }
        return unit(mix(a ^ mix(b ^ 0x5851_F42D_4C95_7F2D))) <= p
    }
}
