// HNSW search quality: recall@10 of the graph search against brute force on seeded clustered
// data for every distance type, after removing and updating a third of the nodes, and with
// filters keeping 50 %, 5 % and 0.5 % of the nodes. Recall figures are printed. N is 5,000 in
// a release build (`swift test -c release -Xswiftc -enable-testing --filter HNSW`), 1,000 in a
// debug build (see HNSWTestData.recallNodeCount).

@_spi(Testing) import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

@Suite struct HNSWRecallTests {
    /// Points and queries drawn from the same clusters.
    func data(count: Int, queries: Int = 100, dimensions: Int, normalized: Bool = true, seed: UInt64) -> ([[Float]], [[Float]]) {
        let all = HNSWTestData.clustered(count: count + queries, dimensions: dimensions, normalized: normalized, seed: seed)
        return (Array(all[..<count]), Array(all[count...]))
    }

    @Test(arguments: [(VectorDistanceType.cosine, 32), (.cosine, 128), (.euclidean, 32), (.dotProduct, 32),
                      (.dotProductNonNormalized, 32)])
    func recallAtDefaults(type: VectorDistanceType, dimensions: Int) throws {
        let n = HNSWTestData.recallNodeCount
        let (points, queries) = data(count: n, dimensions: dimensions, normalized: type != .dotProductNonNormalized, seed: 11)
        let graph = try HNSWTestData.graph(try HNSWParameters(dimensions: dimensions, distanceType: type), points)
        try graph.verify()
        let recall = try HNSWTestData.recall(graph, queries: queries)
        print("HNSW recall@10 \(type) d=\(dimensions) N=\(n) ef=default: \(recall)")
        #expect(recall >= 0.95)
    }

    @Test func recallGeo() throws {
        let n = HNSWTestData.recallNodeCount
        let points = HNSWTestData.geoPoints(count: n, seed: 5), queries = HNSWTestData.geoPoints(count: 100, seed: 6)
        let graph = try HNSWTestData.graph(try HNSWParameters(dimensions: 2, distanceType: .geo), points)
        try graph.verify()
        let recall = try HNSWTestData.recall(graph, queries: queries)
        print("HNSW recall@10 geo N=\(n) ef=default: \(recall)")
        #expect(recall >= 0.95)
        let nearest = try graph.search(query: points[41], k: 1)
        #expect(nearest.first?.id == 42 && nearest.first?.distance == 0)
    }

    /// With the defaults, and with both effective flags and a backlink probability of one half.
    @Test(arguments: [false, true])
    func recallAfterRemovingAndUpdatingAThird(flagged: Bool) throws {
        let n = UInt64(HNSWTestData.recallNodeCount / 3 * 3)
        let (points, queries) = data(count: Int(n), dimensions: 40, seed: 21)
        let replacements = HNSWTestData.clustered(count: Int(n), dimensions: 40, seed: 22)
        let parameters = flagged
            ? try HNSWParameters(dimensions: 40, distanceType: .cosine, reparationBacklinkProbability: 0.5,
                                 flags: [.reparationLimitCandidates, .vectorCacheSimdPaddingOff])
            : try HNSWParameters(dimensions: 40, distanceType: .cosine)
        let graph = try HNSWTestData.graph(parameters, points)
        _ = graph.takeChanges()
        for id in stride(from: UInt64(3), through: n, by: 3) {
            let changes = graph.remove(id: id)
            #expect(changes.removed == [id] && !changes.written.contains(id))
        }
        #expect(graph.count == Int(n / 3 * 2))
        try graph.verify()
        let afterRemoval = try HNSWTestData.recall(graph, queries: queries)
        print("HNSW recall@10 cosine d=40 flags=\(flagged) after removing 1/3 (N=\(graph.count) left): \(afterRemoval)")
        #expect(afterRemoval >= 0.95)
        for id in stride(from: UInt64(1), through: n, by: 3) {
            try graph.update(id: id, vector: replacements[Int(id) - 1])
        }
        for id in stride(from: UInt64(3), through: n, by: 3) {
            try graph.insert(id: id, vector: points[Int(id) - 1])
        }
        #expect(graph.count == Int(n))
        try graph.verify()
        let afterUpdate = try HNSWTestData.recall(graph, queries: queries)
        print("HNSW recall@10 cosine d=40 flags=\(flagged) after updating 1/3 and re-inserting 1/3 (N=\(n)): \(afterUpdate)")
        #expect(afterUpdate >= 0.95)
    }

    @Test(arguments: [0.5, 0.05, 0.005])
    func filteredSearchMatchesBruteForceOnTheFilteredSet(fraction: Double) throws {
        let n = HNSWTestData.recallNodeCount
        let (points, queries) = data(count: n, dimensions: 32, seed: 31)
        let graph = try HNSWTestData.graph(try HNSWParameters(dimensions: 32, distanceType: .cosine), points)
        let filter = HNSWTestData.filter(keeping: fraction)
        let matching = (1...n).filter { filter(UInt64($0)) }.count
        let recall = try HNSWTestData.recall(graph, queries: queries, filter: filter)
        print("HNSW recall@10 cosine d=32 N=\(n) filter keeping \(fraction) (\(matching) match): \(recall)")
        #expect(recall >= 0.95)
        for query in queries.prefix(10) {
            let hits = try graph.search(query: query, k: 10, filter: filter)
            #expect(hits.count == min(10, matching))
            #expect(hits.allSatisfy { filter($0.id) })
            #expect(zip(hits, hits.dropFirst()).allSatisfy { $0.distance <= $1.distance })
        }
        let candidates = (1...n).map(UInt64.init).filter(filter)
        let exact = try graph.bruteForce(query: queries[0], k: 10, candidates: candidates)
        #expect(exact.map(\.id) == (try graph.bruteForce(query: queries[0], k: 10, filter: filter)).map(\.id))
        print("HNSW prefersBruteForce(\(matching) candidates of \(n)): \(graph.prefersBruteForce(candidateCount: matching, k: 10))")
        // A budget of filter calls: ample, the same answer; short, the search gives up.
        var asked = 0
        let counting: (UInt64) -> Bool = { asked += 1; return filter($0) }
        let plain = try graph.search(query: queries[1], k: 10, filter: filter)
        #expect(try graph.search(query: queries[1], k: 10, filter: counting, filterBudget: .max)?.map(\.id) == plain.map(\.id))
        let needed = asked
        asked = 0
        #expect(try graph.search(query: queries[1], k: 10, filter: counting, filterBudget: needed - 1) == nil)
        #expect(asked == needed - 1)
        #expect(try graph.search(query: queries[1], k: 10, filter: counting, filterBudget: needed)?.map(\.id) == plain.map(\.id))
    }

    @Test func smallGraphsAndEdgeCases() throws {
        let graph = HNSWGraph(parameters: try HNSWParameters(dimensions: 3))
        #expect(try graph.search(query: [0, 0, 0], k: 5).isEmpty)
        #expect(throws: CellarError.self) { try graph.insert(id: 1, vector: [1, 2]) }
        #expect(throws: CellarError.self) { try graph.insert(id: 1, vector: [1, .nan, 2]) }
        #expect(graph.count == 0)
        try graph.insert(id: 7, vector: [1, 0, 0, 99])
        #expect(try graph.search(query: [1, 0, 0], k: 5).map(\.id) == [7])
        try graph.insert(id: 8, vector: [0, 1, 0])
        #expect(try graph.search(query: [0, 0.9, 0], k: 1).map(\.id) == [8])
        #expect(try graph.update(id: 8, vector: [0, 1, 0]).isEmpty)
        graph.remove(id: 7)
        graph.remove(id: 8)
        #expect(graph.count == 0 && graph.entryPoint == nil)
        try graph.verify()
        let changes = graph.takeChanges()
        #expect(changes.written.isEmpty && changes.removed == [7, 8] && changes.entryPointChanged)
    }
}

/// Searches from several threads at once (readers only) return what serial searches return.
@Suite struct HNSWConcurrentReadTests {
    @Test func concurrentSearchesMatchSerialOnes() throws {
        let points = HNSWTestData.clustered(count: 800, dimensions: 16, seed: 41)
        let graph = try HNSWTestData.graph(try HNSWParameters(dimensions: 16, distanceType: .cosine), points)
        let queries = Array(points.prefix(64))
        let serial = try queries.map { try graph.search(query: $0, k: 5, filter: { $0 % 2 == 0 }).map(\.id) }
        let results = Locked<[[UInt64]]>(Array(repeating: [], count: queries.count))
        DispatchQueue.concurrentPerform(iterations: queries.count) { i in
            let ids = (try? graph.search(query: queries[i], k: 5, filter: { $0 % 2 == 0 }).map(\.id)) ?? []
            results.withLock { $0[i] = ids }
        }
        #expect(results.withLock { $0 } == serial)
    }
}
