import CellarStorage

// Rebuilding an HNSW graph at open from its persisted nodes (see HNSWNodeCoding) and the
// vectors read from the object records, and checking the graph's invariants.
//
// The invariants `verify()` checks, reporting the first one broken:
// 1. the id → slot map and the slots agree, every live node's level is within 0…24;
// 2. every vector component is finite;
// 3. on every level l of every node: at most the level's max degree (2·M on level 0, M above)
//    neighbours, none of them the node itself, none twice, each one in the graph with a level
//    of at least l;
// 4. the reverse lists, once built, hold exactly the forward links (an internal structure);
// 5. the entry point is absent exactly when the graph is empty, is in the graph, and stands on
//    the top level: no node's level is above the entry point's.

/// One node as persisted plus its vector, for ``HNSWGraph/load(parameters:nodes:entryPoint:)``.
@_spi(Testing) public struct HNSWStoredNode: Sendable {
    @_spi(Testing) public var id: UInt64
    @_spi(Testing) public var level: Int
    @_spi(Testing) public var neighbors: [[UInt64]]
    @_spi(Testing) public var vector: [Float]

    @_spi(Testing) public init(id: UInt64, level: Int, neighbors: [[UInt64]], vector: [Float]) {
        (self.id, self.level, self.neighbors, self.vector) = (id, level, neighbors, vector)
    }
}

extension HNSWGraph {
    /// The graph made of persisted `nodes` (levels and neighbour lists as decoded, vectors from
    /// the objects) and `entryPoint` (nil for an empty graph). Throws `.fileCorrupt` naming the
    /// first inconsistency (a node given twice, a level or degree out of bounds, a neighbour not
    /// among the nodes, a vector shorter than `dimensions` or not finite, a bad entry point).
    /// The change log starts empty.
    @_spi(Testing) public static func load(parameters: HNSWParameters, nodes: [HNSWStoredNode], entryPoint: UInt64?) throws -> HNSWGraph {
        var loader = HNSWGraphLoader(parameters: parameters)
        for node in nodes { try loader.addNode(id: node.id, level: node.level, neighbors: node.neighbors) }
        for node in nodes { try loader.setVector(id: node.id, node.vector) }
        return try loader.finish(entryPoint: entryPoint)
    }

    /// The first broken invariant (see the file header) in words, nil when the graph is sound.
    @_spi(Testing) public func firstViolation() -> String? {
        var live = 0
        var highest: Int32 = -1
        for slot in 0..<levels.count where levels[slot] >= 0 {
            live += 1
            let id = ids[slot]
            guard slotOf[id] == Int32(slot) else { return "node \(id) is not found under its id" }
            let level = Int(levels[slot])
            guard level <= HNSWLevels.maxLevel else { return "node \(id) has level \(level), above \(HNSWLevels.maxLevel)" }
            guard upper[slot].count == level * upperStride, !incomingBuilt || incoming[slot].count == level + 1 else {
                return "node \(id) has storage for another level than \(level)"
            }
            highest = max(highest, levels[slot])
            if isQuantized {
                for factor in [codeFactors[2 * slot], codeFactors[2 * slot + 1]] where !factor.isFinite {
                    return "node \(id) has a vector factor \(factor)"
                }
            } else {
                for component in vector(Int32(slot)) where !component.isFinite { return "node \(id) has a vector component \(component)" }
            }
            for l in 0...level {
                let count = l == 0 ? Int(level0[slot * level0Stride]) : Int(upper[slot][(l - 1) * upperStride])
                guard count >= 0, count <= parameters.maxDegree(level: l) else {
                    return "node \(id) has \(count) neighbours on level \(l), more than \(parameters.maxDegree(level: l))"
                }
                let list = neighbors(Int32(slot), l)
                for (i, n) in list.enumerated() {
                    guard n >= 0, Int(n) < levels.count, levels[Int(n)] >= 0 else {
                        return "node \(id) has a neighbour on level \(l) that is not in the index (slot \(n))"
                    }
                    guard Int(n) != slot else { return "node \(id) is its own neighbour on level \(l)" }
                    guard !list[..<i].contains(n) else { return "node \(id) names \(ids[Int(n)]) twice on level \(l)" }
                    guard levels[Int(n)] >= l else {
                        return "node \(id) names \(ids[Int(n)]) on level \(l), above that node's level \(levels[Int(n)])"
                    }
                    guard !incomingBuilt || incoming[Int(n)][l].contains(Int32(slot)) else {
                        return "the reverse list of \(ids[Int(n)]) on level \(l) misses \(id)"
                    }
                }
                for p in incomingBuilt ? incoming[slot][l] : [] where p < 0 || Int(p) >= levels.count || levels[Int(p)] < l || !neighbors(p, l).contains(Int32(slot)) {
                    return "the reverse list of \(id) on level \(l) names slot \(p), which does not link to it"
                }
            }
        }
        guard live == slotOf.count else { return "\(slotOf.count) ids map to \(live) nodes" }
        if live == 0 {
            guard entrySlot == -1 else { return "the index is empty but has an entry point" }
            return nil
        }
        guard entrySlot >= 0, Int(entrySlot) < levels.count, levels[Int(entrySlot)] >= 0 else {
            return "the entry point is not in the index"
        }
        guard Int(levels[Int(entrySlot)]) == topLevel, levels[Int(entrySlot)] == highest else {
            return "the entry point \(ids[Int(entrySlot)]) has level \(levels[Int(entrySlot)]), but the top level is \(highest)"
        }
        return nil
    }

    /// Throws `.fileCorrupt` naming the first broken invariant (see ``firstViolation()``).
    @_spi(Testing) public func verify() throws {
        if let problem = firstViolation() { throw CellarError.fileCorrupt("HNSW index: \(problem)") }
    }
}

/// Builds a graph from its persisted form without building a node at a time: every stored node
/// is added (`addNode`, in any order: each takes the next slot and its lists are kept as ids),
/// then every node's vector written into its slot (`setVector`), then `finish` resolves the
/// neighbour ids to slots, writes the lists and checks what was stored (the checks of
/// ``HNSWGraph/load(parameters:nodes:entryPoint:)``). The reverse lists are not built (see
/// HNSWGraph), nor is the change log touched. The whole invariant check (`verify()`, which
/// `cellar verify` runs) is left out: it would double a load, which the first query waits for.
struct HNSWGraphLoader {
    let graph: HNSWGraph
    /// Per slot, level by level: the neighbour count, then the neighbour ids.
    private var lists: [UInt64] = []
    /// Per slot: where its lists begin in `lists`.
    private var listStart: [Int] = []
    /// Per slot: whether its vector was written.
    private var hasVector: [Bool] = []
    /// One vector's floats (zero-padded), decoded here before a quantized graph stores them.
    private var scratch: [Float]

    /// A loader for about `expectedCount` nodes (room is made for them up front).
    init(parameters: HNSWParameters, expectedCount: Int = 0) {
        graph = HNSWGraph(parameters: parameters, expectedCount: expectedCount)
        scratch = [Float](repeating: 0, count: graph.floatsPerVector)
        graph.reserve(expectedCount)
        listStart.reserveCapacity(expectedCount)
        hasVector.reserveCapacity(expectedCount)
        // About 2·M level-0 neighbours per node once the graph has grown, plus the counts.
        lists.reserveCapacity(expectedCount * (2 * parameters.neighborsPerNode + 2))
    }

    static func corrupt(_ message: String) -> CellarError { .fileCorrupt("HNSW index: \(message)") }

    /// How many nodes were added.
    var count: Int { listStart.count }

    /// Whether node `id` was added.
    func contains(_ id: UInt64) -> Bool { graph.slotOf[id] != nil }

    /// Adds node `id` from its persisted value (see HNSWNodeCoding).
    mutating func addNode(id: UInt64, encoded: UnsafeRawBufferPointer) throws {
        guard graph.slotOf[id] == nil else { throw Self.corrupt("node \(id) is given twice") }
        let start = lists.count
        let level: Int
        do {
            level = try HNSWGraph.decodeNode(encoded, neighborsPerNode: graph.parameters.neighborsPerNode, into: &lists)
        } catch let error as CellarError {
            throw Self.corrupt("node \(id): \(error.message)")
        }
        add(id, level: level, start: start)
    }

    /// Adds node `id` of `level` with `neighbors[l]` on each level l.
    mutating func addNode(id: UInt64, level: Int, neighbors: [[UInt64]]) throws {
        guard graph.slotOf[id] == nil else { throw Self.corrupt("node \(id) is given twice") }
        guard (0...HNSWLevels.maxLevel).contains(level), neighbors.count == level + 1 else {
            throw Self.corrupt("node \(id) has level \(level) with \(neighbors.count) neighbour lists")
        }
        let start = lists.count
        for (l, list) in neighbors.enumerated() {
            let maximum = graph.parameters.maxDegree(level: l)
            guard list.count <= maximum else {
                throw Self.corrupt("node \(id) has \(list.count) neighbours on level \(l), more than \(maximum)")
            }
            lists.append(UInt64(list.count))
            lists.append(contentsOf: list)
        }
        add(id, level: level, start: start)
    }

    private mutating func add(_ id: UInt64, level: Int, start: Int) {
        _ = graph.allocateSlot(id: id, level: level)
        listStart.append(start)
        hasVector.append(false)
    }

    /// Writes the vector of node `id` from its stored form: `dimensions` little-endian floats.
    mutating func setVector(id: UInt64, littleEndian bytes: UnsafeRawBufferPointer) throws {
        guard let slot = graph.slotOf[id] else { return }
        let dimensions = graph.parameters.dimensions
        guard bytes.count == dimensions * MemoryLayout<Float>.size else {
            throw Self.corrupt("the vector of node \(id) has \(bytes.count / MemoryLayout<Float>.size) dimensions, not \(dimensions)")
        }
        let graph = self.graph
        /// The vector decoded, checked and normalized into `target` (zero-padded beyond).
        func decode(into target: UnsafeMutablePointer<Float>) throws {
            for i in 0..<dimensions {
                let component = Float(bitPattern: bytes.loadLE(UInt32.self, at: i &* 4))
                guard component.isFinite else {
                    throw Self.corrupt("the vector of node \(id) has \(component) at component \(i), not a finite number")
                }
                target[i] = component
            }
            graph.normalizeInPlace(target)
        }
        if graph.isQuantized {
            try scratch.withUnsafeMutableBufferPointer { buffer in
                try decode(into: buffer.baseAddress!)
                graph.storeVector(slot, prepared: buffer.baseAddress!)
            }
        } else {
            // Straight into the graph's buffer, whose padding is zero.
            try decode(into: graph.vectors + Int(slot) * graph.floatsPerVector)
        }
        hasVector[Int(slot)] = true
    }

    /// Writes the vector of node `id` (at least `dimensions` components; see `HNSWGraph.prepare`).
    mutating func setVector(id: UInt64, _ vector: [Float]) throws {
        guard let slot = graph.slotOf[id] else { return }
        let prepared: [Float]
        do { prepared = try graph.prepare(vector) } catch let error as CellarError {
            throw Self.corrupt("the vector of node \(id): \(error.message)")
        }
        prepared.withUnsafeBufferPointer { graph.storeVector(slot, prepared: $0.baseAddress!) }
        hasVector[Int(slot)] = true
    }

    /// The graph, its lists resolved from ids to slots and checked, with `entryPoint` (nil for
    /// an empty graph). Throws `.fileCorrupt` naming the first inconsistency.
    func finish(entryPoint: UInt64?) throws -> HNSWGraph {
        let graph = self.graph
        let n = graph.ids.count
        // A local copy (shared storage): looked up without the class property's access checks.
        let slotOf = graph.slotOf
        // `seen[s] == stamp`: s is already on the list being resolved.
        var seen = [Int](repeating: -1, count: n)
        var stamp = 0
        var resolved = [Int32](repeating: 0, count: graph.level0Stride)
        for slot in 0..<n {
            let id = graph.ids[slot]
            guard hasVector[slot] else { throw Self.corrupt("a node for object \(id), which has no vector") }
            var at = listStart[slot]
            for l in 0...Int(graph.levels[slot]) {
                let count = Int(lists[at])
                at += 1
                for i in 0..<count {
                    let neighbor = lists[at + i]
                    guard let s = slotOf[neighbor], Int(s) != slot, seen[Int(s)] != stamp else {
                        throw Self.corrupt("node \(id) names \(neighbor) on level \(l), which is itself, named twice or not in the index")
                    }
                    guard graph.levels[Int(s)] >= l else {
                        throw Self.corrupt("node \(id) names \(neighbor) on level \(l), above that node's level \(graph.levels[Int(s)])")
                    }
                    seen[Int(s)] = stamp
                    resolved[i] = s
                }
                stamp += 1
                at += count
                if l == 0 {
                    let base = graph.level0 + slot * graph.level0Stride
                    base[0] = Int32(count)
                    for i in 0..<count { base[1 + i] = resolved[i] }
                } else {
                    let offset = (l - 1) * graph.upperStride
                    graph.upper[slot][offset] = Int32(count)
                    for i in 0..<count { graph.upper[slot][offset + 1 + i] = resolved[i] }
                }
            }
        }
        if let entryPoint {
            guard let slot = graph.slotOf[entryPoint] else { throw Self.corrupt("the entry point \(entryPoint) is not in the index") }
            graph.entrySlot = slot
            graph.topLevel = Int(graph.levels[Int(slot)])
        } else if n > 0 {
            throw Self.corrupt("the index has \(n) nodes but no entry point")
        }
        if let highest = graph.levels.max(), n > 0, graph.topLevel != Int(highest) {
            throw Self.corrupt("the entry point \(entryPoint.map(String.init) ?? "-") is on level \(graph.topLevel), below the top level \(highest)")
        }
        return graph
    }
}
