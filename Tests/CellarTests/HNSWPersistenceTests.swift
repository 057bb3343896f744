// The HNSW graph's persisted form: node encoding round trips and corrupt-input errors, the
// change log replayed onto a simulated key-value store and reloaded, the loader's checks, and
// verify() catching violations planted in the graph's internals.

@_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

@Suite struct HNSWPersistenceTests {
    func expectCorrupt(_ bytes: [UInt8], m: Int = 30, _ words: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let decoded = try HNSWGraph.decodeNode(bytes, neighborsPerNode: m)
            Issue.record("decoded \(decoded) from \(bytes)", sourceLocation: sourceLocation)
        } catch let error as CellarError {
            #expect(error.code == .fileCorrupt, sourceLocation: sourceLocation)
            #expect(error.message.contains(words), "\(error.message)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func nodeEncodingRoundTripsAndIsCompact() throws {
        let lists: [[UInt64]] = [[5, 3, 1000, 4, UInt64.max], [9, 2], []]
        let bytes = HNSWGraph.encodeNode(level: 2, neighbors: lists)
        let decoded = try HNSWGraph.decodeNode(bytes, neighborsPerNode: 4)
        #expect(decoded.level == 2)
        #expect(decoded.neighbors == lists.map { $0.sorted() })
        #expect(HNSWGraph.encodeNode(level: 0, neighbors: [[]]) == [0, 0])
        let points = HNSWTestData.clustered(count: 2000, dimensions: 16, seed: 2)
        let graph = try HNSWTestData.graph(try HNSWParameters(dimensions: 16), points)
        var total = 0
        for id in graph.allIDs {
            let encoded = graph.encodeNode(id)!
            total += encoded.count
            let node = try HNSWGraph.decodeNode(encoded, neighborsPerNode: 30)
            #expect(node.level == graph.level(of: id))
            #expect(node.neighbors == graph.neighbors(of: id)!.map { $0.sorted() })
        }
        print("HNSW node encoding: \(Double(total) / 2000) bytes per node on average (N=2000, M=30)")
    }

    @Test func corruptNodesAreRefused() {
        expectCorrupt([], "truncated at the level")
        expectCorrupt([25, 0], "level 25")
        expectCorrupt([0], "truncated at the neighbour count of level 0")
        expectCorrupt([0, 61] + [UInt8](repeating: 1, count: 61), "61 neighbours")
        expectCorrupt([1, 0, 31] + [UInt8](repeating: 1, count: 31), "31 neighbours")
        expectCorrupt([0, 2, 5, 0], "twice")
        expectCorrupt([0, 1, 5, 9], "left over")
        expectCorrupt([0, 1, 0x85, 0x00], "overlong")
        expectCorrupt([0, 1] + [UInt8](repeating: 0xFF, count: 9) + [0x02], "overflows")
        expectCorrupt([0, 1] + [UInt8](repeating: 0xFF, count: 10) + [0x01], "overflows")
        expectCorrupt([0, 2] + [UInt8](repeating: 0xFF, count: 9) + [0x01, 0x01], "overflows 64 bits")
        expectCorrupt([0, 1, 0x80], "truncated")
        // Every proper prefix of a valid value is refused; random bytes never crash.
        let valid = HNSWGraph.encodeNode(level: 1, neighbors: [[1, 2, 300, 70000], [2]])
        for length in 0..<valid.count {
            #expect(throws: CellarError.self) { try HNSWGraph.decodeNode(Array(valid[..<length]), neighborsPerNode: 30) }
        }
        var rng = SplitMix64(seed: 99)
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0..<24, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            _ = try? HNSWGraph.decodeNode(bytes, neighborsPerNode: 4)
        }
    }

    /// Replays every operation's changes onto a dictionary standing for the B+tree, then loads
    /// a graph from it: it must equal the live graph node for node.
    @Test func changeLogRebuildsTheSameGraph() throws {
        let parameters = try HNSWParameters(dimensions: 8, neighborsPerNode: 6, distanceType: .euclidean)
        let points = HNSWTestData.clustered(count: 1500, dimensions: 8, centres: 10, seed: 4)
        let graph = HNSWGraph(parameters: parameters)
        var store: [UInt64: [UInt8]] = [:]
        var entry: UInt64?
        var vectors: [UInt64: [Float]] = [:]
        var rng = SplitMix64(seed: 8)
        func persist(_ changes: HNSWChanges) {
            for id in changes.removed { store[id] = nil }
            for id in changes.written { store[id] = graph.encodeNode(id)! }
            if changes.entryPointChanged { entry = graph.entryPoint }
        }
        for step in 0..<3000 {
            let id = UInt64.random(in: 1...800, using: &rng)
            let vector = points[step % points.count]
            if graph.contains(id) && Bool.random(using: &rng) {
                persist(graph.remove(id: id))
                vectors[id] = nil
            } else {
                persist(try graph.insert(id: id, vector: vector))
                vectors[id] = vector
            }
            if step % 500 == 0 { persist(graph.takeChanges()) } // draining again rewrites, harmlessly
            if step % 250 == 0 { #expect(graph.firstViolation() == nil, "after step \(step)") }
        }
        try graph.verify()
        #expect(Set(store.keys) == Set(graph.allIDs))
        #expect(entry == graph.entryPoint)
        let nodes = try store.map { id, bytes in
            let node = try HNSWGraph.decodeNode(bytes, neighborsPerNode: 6)
            return HNSWStoredNode(id: id, level: node.level, neighbors: node.neighbors, vector: vectors[id]!)
        }
        let loaded = try HNSWGraph.load(parameters: parameters, nodes: nodes, entryPoint: entry)
        #expect(loaded.takeChanges().isEmpty)
        for id in graph.allIDs { #expect(loaded.encodeNode(id) == graph.encodeNode(id)) }
        for query in points.prefix(20) {
            #expect(try loaded.search(query: query, k: 5).map(\.id).sorted() == graph.search(query: query, k: 5).map(\.id).sorted())
        }
    }

    @Test func loaderRefusesInconsistentNodes() throws {
        let p = try HNSWParameters(dimensions: 2, neighborsPerNode: 2)
        func node(_ id: UInt64, _ level: Int, _ lists: [[UInt64]], _ vector: [Float] = [0, 1]) -> HNSWStoredNode {
            HNSWStoredNode(id: id, level: level, neighbors: lists, vector: vector)
        }
        let cases: [([HNSWStoredNode], UInt64?, String)] = [
            ([node(1, 0, [[2]])], 1, "not in the index"),
            ([node(1, 0, [[1]])], 1, "itself"),
            ([node(1, 0, []), node(2, 0, [[]])], 1, "neighbour lists"),
            ([node(1, 0, [[]]), node(1, 0, [[]])], 1, "twice"),
            ([node(1, 0, [[2, 3, 4, 5, 6]]), node(2, 0, [[]]), node(3, 0, [[]]), node(4, 0, [[]]), node(5, 0, [[]]), node(6, 0, [[]])], 1, "more than 4"),
            ([node(1, 1, [[2], [2]]), node(2, 0, [[1]])], 1, "above that node's level"),
            ([node(1, 0, [[]], [0])], 1, "dimensions"),
            ([node(1, 0, [[]], [.infinity, 0])], 1, "finite"),
            ([node(1, 0, [[]])], 9, "entry point 9"),
            ([node(1, 0, [[]])], nil, "no entry point"),
            ([node(1, 0, [[2]]), node(2, 1, [[1], []])], 1, "top level"),
        ]
        for (nodes, entry, words) in cases {
            do {
                _ = try HNSWGraph.load(parameters: p, nodes: nodes, entryPoint: entry)
                Issue.record("loaded \(nodes)")
            } catch let error as CellarError {
                #expect(error.code == .fileCorrupt && error.message.contains(words), "\(error.message) lacks \(words)")
            }
        }
        #expect(try HNSWGraph.load(parameters: p, nodes: [], entryPoint: nil).count == 0)
    }

    @Test func verifyCatchesPlantedViolations() throws {
        let points = HNSWTestData.clustered(count: 300, dimensions: 4, centres: 5, seed: 12)
        let parameters = try HNSWParameters(dimensions: 4, neighborsPerNode: 4)
        func fresh() throws -> HNSWGraph {
            let graph = try HNSWTestData.graph(parameters, points)
            try graph.verify()
            return graph
        }
        func expectViolation(_ words: String, _ plant: (HNSWGraph) -> Void, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let graph = try fresh()
            plant(graph)
            let problem = graph.firstViolation()
            #expect(problem?.contains(words) == true, "\(problem ?? "nil") lacks \(words)", sourceLocation: sourceLocation)
            #expect(throws: CellarError.self, sourceLocation: sourceLocation) { try graph.verify() }
        }
        let slot = 10
        try expectViolation("more than 8") { $0.level0[slot * $0.level0Stride] = 9 }
        try expectViolation("not in the index") { g in g.level0[slot * g.level0Stride + 1] = 5000 }
        try expectViolation("its own neighbour") { g in g.level0[slot * g.level0Stride + 1] = Int32(slot) }
        try expectViolation("twice") { g in g.level0[slot * g.level0Stride + 2] = g.level0[slot * g.level0Stride + 1] }
        try expectViolation("reverse list") { g in
            g.buildIncoming()
            let n = g.level0[slot * g.level0Stride + 1]
            g.incoming[Int(n)][0].removeAll { $0 == Int32(slot) }
        }
        try expectViolation("vector component") { $0.vectors[slot * $0.floatsPerVector] = .nan }
        try expectViolation("top level") { g in
            let low = (0..<g.levels.count).first { g.levels[$0] == 0 }!
            g.entrySlot = Int32(low)
        }
        try expectViolation("not in the index") { $0.entrySlot = -1 }
        try expectViolation("not found under its id") { g in g.slotOf[g.ids[slot]] = Int32(slot + 1) }
        try expectViolation("above") { g in
            // A level-0 node named on level 1 of a node that has level 1.
            let high = (0..<g.levels.count).first { g.levels[$0] >= 1 && g.upper[$0][0] > 0 }!
            let low = (0..<g.levels.count).first { g.levels[$0] == 0 }!
            g.upper[high][1] = Int32(low)
        }
    }
}
