// Seeded data sets and measurements shared by the HNSW tests: clustered Gaussian vectors
// (centres from N(0, I), each point a centre plus N(0, I) noise, optionally normalized),
// uniform points on the sphere for geo, and recall@k of the graph search against brute force.

@_spi(Testing) import Cellar
import CellarTestSupport
import Foundation

enum HNSWTestData {
    /// The node count of the recall tests: 5,000 in an optimized build; 1,000 in a debug build,
    /// where the unspecialized SIMD code is a few hundred times slower.
    #if DEBUG
    static let recallNodeCount = 1000
    #else
    static let recallNodeCount = 5000
    #endif

    /// A standard normal value (Box–Muller).
    static func gaussian(_ rng: inout SplitMix64) -> Float {
        let u1 = Double.random(in: Double.leastNonzeroMagnitude..<1, using: &rng)
        let u2 = Double.random(in: 0..<1, using: &rng)
        return Float((-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2))
    }

    /// `count` points in `dimensions` around `centres` Gaussian centres, L2-normalized when
    /// `normalized`.
    static func clustered(count: Int, dimensions: Int, centres centreCount: Int = 100, normalized: Bool = true,
                          seed: UInt64) -> [[Float]] {
        var rng = SplitMix64(seed: seed)
        let centres = (0..<centreCount).map { _ in (0..<dimensions).map { _ in gaussian(&rng) } }
        return (0..<count).map { _ in
            let centre = centres[Int.random(in: 0..<centreCount, using: &rng)]
            var point = centre.map { $0 + gaussian(&rng) }
            if normalized {
                let norm = point.reduce(0) { $0 + $1 * $1 }.squareRoot()
                point = point.map { $0 / norm }
            }
            return point
        }
    }

    /// `count` [latitude, longitude] points uniform on the sphere, in degrees.
    static func geoPoints(count: Int, seed: UInt64) -> [[Float]] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            let latitude = asin(Double.random(in: -1...1, using: &rng)) * 180 / Double.pi
            return [Float(latitude), Float(Double.random(in: -180..<180, using: &rng))]
        }
    }

    /// A graph of `vectors` under ids 1…N.
    static func graph(_ parameters: HNSWParameters, _ vectors: [[Float]]) throws -> HNSWGraph {
        let graph = HNSWGraph(parameters: parameters)
        for (i, vector) in vectors.enumerated() { try graph.insert(id: UInt64(i + 1), vector: vector) }
        return graph
    }

    /// Mean recall@k of `search` against `bruteForce` over `queries`.
    static func recall(_ graph: HNSWGraph, queries: [[Float]], k: Int = 10, ef: Int? = nil,
                       filter: ((UInt64) -> Bool)? = nil) throws -> Double {
        var found = 0, expected = 0
        for query in queries {
            let exact = Set(try graph.bruteForce(query: query, k: k, filter: filter).map(\.id))
            let approximate = try graph.search(query: query, k: k, ef: ef, filter: filter)
            found += approximate.filter { exact.contains($0.id) }.count
            expected += exact.count
        }
        return expected == 0 ? 1 : Double(found) / Double(expected)
    }

    /// A deterministic filter keeping about `fraction` of the ids.
    static func filter(keeping fraction: Double) -> @Sendable (UInt64) -> Bool {
        let limit = UInt64(fraction * 1_000_000)
        return { id in
            var z = id &* 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 29)) &* 0xBF58_476D_1CE4_E5B9
            return (z ^ (z >> 32)) % 1_000_000 < limit
        }
    }
}
