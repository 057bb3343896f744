// Int8 quantization of an HNSW index: the int8 kernel against an exact sum, and a quantized
// graph whose searches re-score their beam with exact vectors: recall against exact brute force,
// distances equal to the exact ones, a quarter of the bytes, and the same codes after a reload.

import CCellarSIMD
@_spi(Testing) @testable import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

@Suite struct HNSWQuantizationTests {
    @Test func everyInt8KernelSumsExactly() {
        var rng = SplitMix64(seed: 21)
        for length in 0...300 {
            for offset in 0..<3 {
                // Codes in −127…127 after `offset` bytes; past `length`, bytes that would change
                // the sum if a kernel read them.
                var a = [Int8](repeating: 127, count: offset + length + 40), b = a
                var expected: Int64 = 0
                for i in 0..<length {
                    a[offset + i] = Int8(Int(rng.next() % 255) - 127)
                    b[offset + i] = Int8(Int(rng.next() % 255) - 127)
                    expected += Int64(a[offset + i]) * Int64(b[offset + i])
                }
                a.withUnsafeBufferPointer { pa in
                    b.withUnsafeBufferPointer { pb in
                        for kernel in HNSWKernelTests.kernels {
                            let sum = cellar_simd_dot_i8_with(kernel, pa.baseAddress! + offset, pb.baseAddress! + offset, length)
                            #expect(Int64(sum) == expected, "kernel \(kernel.rawValue), length \(length), offset \(offset)")
                        }
                        #expect(Int64(cellar_simd_dot_i8(pa.baseAddress! + offset, pb.baseAddress! + offset, length)) == expected)
                    }
                }
            }
        }
        // The extremes: every product 127·127 or −127·127 over the longest vectors an index takes.
        let longest = HNSWParameters.dimensionsRange.upperBound
        let high = [Int8](repeating: 127, count: longest), low = [Int8](repeating: -127, count: longest)
        for kernel in HNSWKernelTests.kernels {
            #expect(Int64(cellar_simd_dot_i8_with(kernel, high, low, longest)) == -127 * 127 * Int64(longest))
        }
    }

    @Test func codesAreTheVectorOverItsScaleRounded() {
        var rng = SplitMix64(seed: 3)
        for count in [0, 1, 5, 31, 32, 33, 100, 384] {
            let vector = (0..<count).map { _ in Float.random(in: -3...3, using: &rng) }
            let codeCount = HNSWQuantization.codesPerVector(dimensions: max(1, count))
            var codes = [Int8](repeating: 99, count: codeCount)
            let (scale, length) = vector.withUnsafeBufferPointer { v in
                codes.withUnsafeMutableBufferPointer { HNSWQuantization.quantize(v.baseAddress ?? UnsafePointer(bitPattern: 16)!, count: count, into: $0.baseAddress!, codeCount: codeCount) }
            }
            let largest = vector.map(abs).max() ?? 0
            #expect(scale == largest / 127)
            #expect(abs(length - vector.reduce(0) { $0 + $1 * $1 }) <= 1e-4 * max(1, length))
            for i in 0..<count {
                #expect(codes[i] == Int8((vector[i] * (127 / largest)).rounded(.toNearestOrAwayFromZero)), "\(count) \(i)")
            }
            #expect(codes[count...].allSatisfy { $0 == 0 })
            if count > 0 { #expect(codes.contains { abs(Int($0)) == 127 }) }
        }
        var zero = [Int8](repeating: 5, count: 32)
        let zeros = [Float](repeating: 0, count: 20)
        let result = zeros.withUnsafeBufferPointer { v in zero.withUnsafeMutableBufferPointer { HNSWQuantization.quantize(v.baseAddress!, count: 20, into: $0.baseAddress!, codeCount: 32) } }
        #expect(result.scale == 0 && result.squaredLength == 0 && zero.allSatisfy { $0 == 0 })
    }

    /// A reader of exact vectors from `vectors` (id i + 1 is vectors[i]), as records give them:
    /// little-endian floats, at an address that is not a multiple of 4 for even ids (a record's
    /// fields need not be aligned).
    static func exactReader(_ vectors: [[Float]]) -> HNSWExactVectors {
        let encoded: [[UInt8]] = vectors.map { vector in
            [0] + vector.flatMap { (component: Float) -> [UInt8] in withUnsafeBytes(of: component.bitPattern.littleEndian, Array.init) }
        }
        return { id, body in
            guard id >= 1, Int(id) <= encoded.count else { return }
            encoded[Int(id) - 1].withUnsafeBytes { bytes in
                if id % 2 == 0 {
                    body(UnsafeRawBufferPointer(rebasing: bytes[1...]))
                } else {
                    let aligned = Array(bytes[1...])
                    aligned.withUnsafeBytes { body($0) }
                }
            }
        }
    }

    /// The 10 nearest to `query` in the quantized `graph`, re-scored with `exact`, after
    /// checking that every distance is the exact one (as the float graph `plain` computes it),
    /// nearest first.
    static func searchExactly(_ graph: HNSWGraph, _ query: [Float], exact: @escaping HNSWExactVectors, against plain: HNSWGraph,
                              _ comment: String) throws -> [(id: UInt64, distance: Float)] {
        let result = try #require(try graph.search(query: query, k: 10, filter: nil, filterBudget: .max, exact: exact))
        let exactDistances = try plain.bruteForce(query: query, k: 10, candidates: result.map(\.id))
        let byId = Dictionary(uniqueKeysWithValues: exactDistances.map { ($0.id, $0.distance) })
        for hit in result { #expect(abs(hit.distance - byId[hit.id]!) <= 1e-5 * max(1, abs(hit.distance)), "\(comment): \(hit)") }
        #expect(result.map(\.distance) == result.map(\.distance).sorted())
        return result
    }

    @Test(arguments: [VectorDistanceType.cosine, .euclidean, .dotProduct, .dotProductNonNormalized])
    func searchesRescoreTheirBeamExactly(type: VectorDistanceType) throws {
        let n = HNSWTestData.recallNodeCount, dimensions = 96
        let all = HNSWTestData.clustered(count: n + 50, dimensions: dimensions, normalized: type != .dotProductNonNormalized, seed: 31)
        let points = Array(all[..<n]), queries = Array(all[n...])
        let plain = try HNSWTestData.graph(try HNSWParameters(dimensions: dimensions, distanceType: type), points)
        let quantized = try HNSWTestData.graph(try HNSWParameters(dimensions: dimensions, distanceType: type, quantization: .int8), points)
        try quantized.verify()
        let exact = Self.exactReader(points)
        var found = 0
        for query in queries {
            let truth = try plain.bruteForce(query: query, k: 10)
            let result = try Self.searchExactly(quantized, query, exact: exact, against: plain, "\(type)")
            found += Set(result.map(\.id)).intersection(truth.map(\.id)).count
            // Brute force over candidates is exact too.
            let candidates = truth.map(\.id) + [UInt64(n + 7)]
            let brute = try quantized.bruteForce(query: query, k: 3, candidates: candidates, exact: exact)
            #expect(brute.map(\.id) == Array(truth.prefix(3).map(\.id)), "\(type)")
        }
        let recall = Double(found) / Double(10 * queries.count)
        print("HNSW int8 recall@10 \(type) d=\(dimensions) N=\(n): \(recall)")
        #expect(recall >= 0.95, "\(type): \(recall)")
        // A quarter of the bytes, plus two floats per vector.
        #expect(quantized.residentVectorBytes * 100 <= plain.residentVectorBytes * 30)
    }

    @Test func aReloadGivesTheSameCodesAndTheSameResults() throws {
        let points = HNSWTestData.clustered(count: 400, dimensions: 40, normalized: true, seed: 5)
        let parameters = try HNSWParameters(dimensions: 40, distanceType: .cosine, quantization: .int8)
        let graph = try HNSWTestData.graph(parameters, points)
        // Remove and update some, so that slots are reused.
        for id in stride(from: 3, through: 400, by: 7) { graph.remove(id: UInt64(id)) }
        for id in stride(from: 5, through: 400, by: 11) where graph.contains(UInt64(id)) {
            try graph.update(id: UInt64(id), vector: points[(id * 13) % 400])
        }
        #expect(try graph.update(id: 1, vector: points[0]).written.isEmpty)   // the same vector: nothing changes
        var vectors = points
        for id in stride(from: 5, through: 400, by: 11) where graph.contains(UInt64(id)) { vectors[id - 1] = points[(id * 13) % 400] }
        let nodes = graph.allIDs.map { id in
            HNSWStoredNode(id: id, level: graph.level(of: id)!, neighbors: graph.neighbors(of: id)!, vector: vectors[Int(id) - 1])
        }
        let reloaded = try HNSWGraph.load(parameters: parameters, nodes: nodes, entryPoint: graph.entryPoint)
        try reloaded.verify()
        for id in graph.allIDs {
            let (a, b) = (graph.probe(graph.slotOf[id]!), reloaded.probe(reloaded.slotOf[id]!))
            #expect(a.scale == b.scale && a.squaredLength == b.squaredLength)
            #expect(UnsafeRawBufferPointer(start: a.pointer, count: graph.codesPerVector)
                .elementsEqual(UnsafeRawBufferPointer(start: b.pointer, count: reloaded.codesPerVector)))
        }
        let exact = Self.exactReader(vectors)
        for query in points.prefix(20) {
            let before = try graph.search(query: query, k: 5, filter: nil, filterBudget: .max, exact: exact)
            let after = try reloaded.search(query: query, k: 5, filter: nil, filterBudget: .max, exact: exact)
            #expect(before!.map(\.id) == after!.map(\.id))
        }
    }
}
