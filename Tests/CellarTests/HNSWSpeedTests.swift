// HNSW timing, single-threaded: insertion rate and queries per second at d = 128, N = 20,000
// (clustered, normalized, cosine) for ef from 10 to 200, with recall@10 against brute force.
// Runs only when CELLAR_HNSW_SPEED is set (meant for a release build:
// `CELLAR_HNSW_SPEED=1 swift test -c release -Xswiftc -enable-testing --filter HNSWSpeed`);
// CELLAR_HNSW_SPEED_N overrides N.

@_spi(Testing) import Cellar
import CellarTestSupport
import Foundation
import Testing

@Suite struct HNSWSpeedTests {
    static let enabled = ProcessInfo.processInfo.environment["CELLAR_HNSW_SPEED"] != nil

    @Test(.enabled(if: enabled)) func insertAndQueryRates() throws {
        let n = ProcessInfo.processInfo.environment["CELLAR_HNSW_SPEED_N"].flatMap { Int($0) } ?? 20_000
        let queryCount = 500
        let all = HNSWTestData.clustered(count: n + queryCount, dimensions: 128, seed: 77)
        let points = Array(all[..<n]), queries = Array(all[n...])
        let graph = HNSWGraph(parameters: try HNSWParameters(dimensions: 128, distanceType: .cosine))
        let start = Date()
        for (i, point) in points.enumerated() { try graph.insert(id: UInt64(i + 1), vector: point) }
        let insertSeconds = Date().timeIntervalSince(start)
        print(String(format: "HNSW speed: inserted %d (d=128, M=30, efConstruction=100) in %.2f s: %.0f inserts/s",
                     n, insertSeconds, Double(n) / insertSeconds))
        var exact: [Set<UInt64>] = []
        let bruteStart = Date()
        for query in queries { exact.append(Set(try graph.bruteForce(query: query, k: 10).map(\.id))) }
        let bruteSeconds = Date().timeIntervalSince(bruteStart)
        print(String(format: "HNSW speed: brute force %.0f queries/s", Double(queryCount) / bruteSeconds))
        for ef in [10, 20, 40, 80, 100, 150, 200] {
            var found = 0
            let queryStart = Date()
            var results: [[(id: UInt64, distance: Float)]] = []
            results.reserveCapacity(queryCount)
            for query in queries { results.append(try graph.search(query: query, k: 10, ef: ef)) }
            let seconds = Date().timeIntervalSince(queryStart)
            for (result, truth) in zip(results, exact) { found += result.filter { truth.contains($0.id) }.count }
            print(String(format: "HNSW speed: ef=%3d  %7.0f queries/s  recall@10 %.4f", ef, Double(queryCount) / seconds,
                         Double(found) / Double(10 * queryCount)))
        }
        #expect(graph.count == n)

        let removeStart = Date()
        for id in stride(from: UInt64(3), through: UInt64(n), by: 3) { graph.remove(id: id) }
        let removeSeconds = Date().timeIntervalSince(removeStart)
        print(String(format: "HNSW speed: removed %d with repair in %.2f s: %.0f removals/s", n / 3, removeSeconds,
                     Double(n / 3) / removeSeconds))
        let recall = try HNSWTestData.recall(graph, queries: Array(queries.prefix(100)), ef: 100)
        print(String(format: "HNSW speed: recall@10 at ef=100 after the removals: %.4f", recall))
        let filter = HNSWTestData.filter(keeping: 0.01)
        let filteredStart = Date()
        for query in queries { _ = try graph.search(query: query, k: 10, filter: filter) }
        let filteredSeconds = Date().timeIntervalSince(filteredStart)
        let bruteStart2 = Date()
        for query in queries { _ = try graph.bruteForce(query: query, k: 10, filter: filter) }
        let bruteSeconds2 = Date().timeIntervalSince(bruteStart2)
        print(String(format: "HNSW speed: filter keeping 1%%: graph %.0f queries/s, brute force %.0f queries/s",
                     Double(queryCount) / filteredSeconds, Double(queryCount) / bruteSeconds2))
    }
}
