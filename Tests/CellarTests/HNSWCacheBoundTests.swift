// The vector cache bound (`vectorCacheHintSizeKB`): a graph keeps floats while they fit in it and
// int8 codes when they would not — from the start when it is loaded with more nodes than the bound
// holds as floats, or from the insert that outgrows it — and never keeps more vector bytes than
// the bound while the codes fit. Searches of such a graph re-score their beam exactly, so a
// store's queries return exact distances; its image is written and read in the form it has.

@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

@Suite struct HNSWCacheBoundTests {
    @Test func codesAreKeptExactlyWhenTheFloatsWouldNotFit() throws {
        // 64 dimensions: 256 bytes of floats a vector, 72 of codes and factors.
        let bounded = try HNSWParameters(dimensions: 64, distanceType: .cosine, vectorCacheHintSizeKB: 1)
        #expect(!HNSWGraph.keepsCodes(bounded, count: 0))
        #expect(!HNSWGraph.keepsCodes(bounded, count: 4))   // 1,024 bytes: the bound
        #expect(HNSWGraph.keepsCodes(bounded, count: 5))
        #expect(HNSWGraph.keepsCodes(bounded, count: Int.max))
        let asked = try HNSWParameters(dimensions: 64, distanceType: .cosine, quantization: .int8)
        #expect(HNSWGraph.keepsCodes(asked, count: 0))
        // Geo keeps its two floats whatever the bound.
        let geo = try HNSWParameters(dimensions: 2, distanceType: .geo, vectorCacheHintSizeKB: 1)
        #expect(!HNSWGraph.keepsCodes(geo, count: 1_000_000))
        // Padding off: the floats counted as stored (3 dimensions, 12 bytes each).
        let unpadded = try HNSWParameters(dimensions: 3, vectorCacheHintSizeKB: 1, flags: .vectorCacheSimdPaddingOff)
        #expect(!HNSWGraph.keepsCodes(unpadded, count: 85) && HNSWGraph.keepsCodes(unpadded, count: 86))
    }

    @Test(arguments: [VectorDistanceType.cosine, .euclidean])
    func aGrowingGraphStaysWithinTheBound(type: VectorDistanceType) throws {
        let n = 1_500, dimensions = 64
        let all = HNSWTestData.clustered(count: n + 40, dimensions: dimensions, normalized: type == .cosine, seed: 77)
        let points = Array(all[..<n]), queries = Array(all[n...])
        // 128 KB: the floats of 512 vectors, the codes of 1,820.
        let parameters = try HNSWParameters(dimensions: dimensions, distanceType: type, vectorCacheHintSizeKB: 128)
        let bound = Int(parameters.vectorCacheByteBound)
        let graph = HNSWGraph(parameters: parameters)
        var over: [Int] = []
        for (i, point) in points.enumerated() {
            try graph.insert(id: UInt64(i + 1), vector: point)
            if graph.residentVectorBytes > bound { over.append(i + 1) }
            if i + 1 == 512 { #expect(!graph.isQuantized, "512 vectors of floats fit") }
        }
        #expect(over.count == 0, "above the bound after \(over.count) inserts, the first \(over.first ?? 0)")
        #expect(graph.isQuantized)
        try graph.verify()
        // Removals and updates keep it sound.
        for id in stride(from: 4, through: n, by: 9) { graph.remove(id: UInt64(id)) }
        for id in stride(from: 6, through: n, by: 13) where graph.contains(UInt64(id)) {
            try graph.update(id: UInt64(id), vector: points[(id * 7) % n])
        }
        try graph.verify()
        var vectors = points
        for id in stride(from: 6, through: n, by: 13) where graph.contains(UInt64(id)) { vectors[id - 1] = points[(id * 7) % n] }
        // Against a graph of floats with the same nodes: the same exact answers, found as well.
        let plain = HNSWGraph(parameters: try HNSWParameters(dimensions: dimensions, distanceType: type))
        for id in graph.allIDs.sorted() { try plain.insert(id: id, vector: vectors[Int(id) - 1]) }
        let exact = HNSWQuantizationTests.exactReader(vectors)
        var found = 0
        for query in queries {
            let truth = try plain.bruteForce(query: query, k: 10)
            let result = try HNSWQuantizationTests.searchExactly(graph, query, exact: exact, against: plain, "\(type)")
            found += Set(result.map(\.id)).intersection(truth.map(\.id)).count
        }
        let recall = Double(found) / Double(10 * queries.count)
        #expect(recall >= 0.95, "\(type): recall@10 \(recall)")
        // Loaded with its node count known, it keeps codes from the start, within the bound.
        let nodes = graph.allIDs.map { id in
            HNSWStoredNode(id: id, level: graph.level(of: id)!, neighbors: graph.neighbors(of: id)!, vector: vectors[Int(id) - 1])
        }
        var loader = HNSWGraphLoader(parameters: parameters, expectedCount: nodes.count)
        #expect(loader.graph.isQuantized)
        for node in nodes { try loader.addNode(id: node.id, level: node.level, neighbors: node.neighbors) }
        for node in nodes { try loader.setVector(id: node.id, node.vector) }
        let loaded = try loader.finish(entryPoint: graph.entryPoint)
        try loaded.verify()
        #expect(loaded.residentVectorBytes <= bound)
        for query in queries.prefix(10) {
            #expect(try loaded.search(query: query, k: 10, filter: nil, filterBudget: .max, exact: exact)!.map(\.id)
                == (try graph.search(query: query, k: 10, filter: nil, filterBudget: .max, exact: exact)!.map(\.id)))
        }
    }

    @Test func aGraphOfFloatsWithinTheBoundStaysFloats() throws {
        let points = HNSWTestData.clustered(count: 300, dimensions: 16, normalized: true, seed: 8)
        // 300 × 64 bytes = 18.75 KB of floats under a bound of 19 KB.
        let graph = try HNSWTestData.graph(try HNSWParameters(dimensions: 16, distanceType: .cosine, vectorCacheHintSizeKB: 19), points)
        #expect(!graph.isQuantized)
        #expect(graph.residentVectorBytes <= 19 * 1024)
        try graph.verify()
    }

    /// `cellarModel()` with Passage's HNSW index given `vectorCacheHintSizeKB`.
    static func model(cacheKB: UInt64) throws -> Cellar.Model {
        var model = cellarModel()
        let at = model.entities.firstIndex { $0.name == "Passage" }!
        for i in model.entities[at].properties.indices {
            guard let json = model.entities[at].properties[i].hnswParams else { continue }
            var parameters = try HNSWParameters(json: json)
            parameters.vectorCacheHintSizeKB = cacheKB
            model.entities[at].properties[i].hnswParams = parameters.jsonObject
        }
        return model
    }

    /// The graph `store` holds in memory for Passage's index.
    static func graph(of store: Store) throws -> VectorIndexes.Entry {
        let schema = try #require(store.schemas.values.first { $0.name == "Passage" })
        let index = try #require(schema.vectorProperties.first?.index)
        let version = try store.engine.read { $0.transactionId }
        return try store.vectorIndexes.entry(index, version: version) { throw CellarError.illegalArgument("not loaded") }
    }

    /// A graph of floats mapped from its image, exactly as many as the bound holds, turns into
    /// codes at the next insert: its floats quantized straight from the mapping.
    @Test func aMappedGraphOfFloatsTurnsIntoCodes() throws {
        let directory = TestDirectory("hnsw-cache-bound-mapped")
        defer { directory.remove() }
        // 19 KB: the floats of 304 vectors (64 bytes each), the codes of 486.
        let model = try Self.model(cacheKB: 19)
        let vectors = VectorSearchTests.clustered(340, seed: 45), queries = VectorSearchTests.clustered(10, seed: 46)
        var objects: [Id: Passage] = [:]
        do {
            let store = try Store(directoryPath: directory.path, model: model)
            defer { store.close() }
            for passage in vectors.prefix(304).map({ Passage("p", $0) }) { objects[try store.box(for: Passage.self).put(passage).value] = passage }
            try Self.graph(of: store).reading { #expect(!$0.isQuantized) }
        }
        let store = try Store(directoryPath: directory.path, model: model)
        defer { store.close() }
        let box = store.box(for: Passage.self)
        _ = try box.query { Passage.embedding.nearestNeighbors(to: queries[0], maxCount: 1) }.build().findIds()
        #expect(store.vectorIndexes.imageLoads.withLock { $0 } == 1)
        try Self.graph(of: store).reading { #expect(!$0.isQuantized && $0.count == 304) }
        for passage in vectors.suffix(36).map({ Passage("q", $0) }) { objects[try box.put(passage).value] = passage }
        try Self.graph(of: store).reading { graph in
            #expect(graph.isQuantized && graph.residentVectorBytes <= 19 * 1024)
            #expect(graph.firstViolation() == nil)
        }
        for query in queries {
            let hits = try box.query { Passage.embedding.nearestNeighbors(to: query, maxCount: 5, searchWidth: 100) }.build().findIdsWithScores()
            #expect(hits.map(\.id.value) == VectorSearchTests.exact(query, objects, k: 5))
            for hit in hits { #expect(abs(hit.score - Double(VectorSearchTests.cosineDistance(query, objects[hit.id.value]!.embedding))) <= 1e-5) }
        }
    }

    /// Readers search while a writer's commits take the graph past the bound (its floats turned
    /// into codes under the commit's lock): every answer is whole and sorted.
    @Test func readersSearchWhileAWriterCrossesTheBound() throws {
        let store = try Store(directoryPath: "memory:hnsw-cache-bound-readers", model: try Self.model(cacheKB: 20))
        let box = store.box(for: Passage.self)
        let vectors = VectorSearchTests.clustered(500, seed: 43), queries = VectorSearchTests.clustered(8, seed: 44)
        try box.put(vectors.prefix(50).map { Passage("p", $0) })
        let done = Locked(false), problems = Locked<[String]>([]), searches = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 3) { worker in
            do {
                if worker == 0 {
                    defer { done.withLock { $0 = true } }
                    for chunk in stride(from: 50, to: vectors.count, by: 50) {
                        try box.put(vectors[chunk..<(chunk + 50)].map { Passage("p", $0) })
                    }
                    return
                }
                var round = 0
                // At least a few searches each, then as long as the writer writes.
                while round < 4 || !done.withLock({ $0 }) {
                    let hits = try box.query { Passage.embedding.nearestNeighbors(to: queries[round % queries.count], maxCount: 5) }
                        .build().findIdsWithScores()
                    if hits.count != 5 || hits.map(\.score) != hits.map(\.score).sorted() || Set(hits.map(\.id)).count != 5 {
                        problems.withLock { $0.append("worker \(worker), round \(round): \(hits)") }
                    }
                    round += 1
                }
                searches.withLock { $0 += round }
            } catch {
                problems.withLock { $0.append("worker \(worker): \(error)") }
            }
        }
        #expect(problems.withLock { $0 }.isEmpty, "\(problems.withLock { $0 }.prefix(3))")
        #expect(searches.withLock { $0 } >= 8)
        try Self.graph(of: store).reading { graph in
            #expect(graph.isQuantized && graph.count == vectors.count && graph.residentVectorBytes <= 20 * 1024)
            #expect(graph.firstViolation() == nil)
        }
    }

    @Test func aStoreWithABoundAnswersExactlyAndReopensFromItsImage() throws {
        let directory = TestDirectory("hnsw-cache-bound")
        defer { directory.remove() }
        // Passage: 8 dimensions, cosine; 64 bytes of floats a vector (padded to 16), 40 of codes
        // and factors. 20 KB holds 320 vectors of floats, 512 of codes.
        let model = try Self.model(cacheKB: 20)
        let vectors = VectorSearchTests.clustered(500, seed: 41), queries = VectorSearchTests.clustered(20, seed: 42)
        var objects: [Id: Passage] = [:]
        var answers: [[String]] = []
        do {
            let store = try Store(directoryPath: directory.path, model: model)
            defer { store.close() }
            let box = store.box(for: Passage.self)
            for chunk in stride(from: 0, to: vectors.count, by: 100) {
                let passages = vectors[chunk..<(chunk + 100)].map { Passage("p", $0) }
                try box.put(passages)
                for passage in passages { objects[passage.id.value] = passage }
                try Self.graph(of: store).reading { #expect($0.residentVectorBytes <= 20 * 1024, "after \(chunk + 100)") }
            }
            try Self.graph(of: store).reading { #expect($0.isQuantized) }
            var found = 0.0
            for query in queries {
                let hits = try box.query { Passage.embedding.nearestNeighbors(to: query, maxCount: 10) }.build().findIdsWithScores()
                found += VectorSearchTests.recall(hits.map(\.id.value), VectorSearchTests.exact(query, objects, k: 10))
                for hit in hits {
                    #expect(abs(hit.score - Double(VectorSearchTests.cosineDistance(query, objects[hit.id.value]!.embedding))) <= 1e-5)
                }
                answers.append(hits.map { "\($0.id.value):\($0.score)" })
            }
            #expect(found / Double(queries.count) >= 0.95, "recall@10 \(found / Double(queries.count))")
        }
        // Reopened: the image of codes is read back, the answers the same.
        let store = try Store(directoryPath: directory.path, model: model)
        defer { store.close() }
        let box = store.box(for: Passage.self)
        let again = try queries.map { query in
            try box.query { Passage.embedding.nearestNeighbors(to: query, maxCount: 10) }.build().findIdsWithScores().map { "\($0.id.value):\($0.score)" }
        }
        #expect(again == answers)
        #expect(store.vectorIndexes.imageLoads.withLock { $0 } == 1)
        try Self.graph(of: store).reading { graph in
            #expect(graph.isQuantized && graph.residentVectorBytes <= 20 * 1024)
            #expect(graph.firstViolation() == nil)
        }
    }
}
