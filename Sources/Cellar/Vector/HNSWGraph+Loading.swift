// Rebuilding an HNSW graph at open from its persisted nodes (see HNSWNodeCoding) and the
// vectors read from the object records, and checking the graph's invariants.
//
// The invariants `verify()` checks, reporting the first one broken:
// 1. the id → slot map and the slots agree, every live node's level is within 0…24;
// 2. every vector component is finite;
// 3. on every level l of every node: at most the level's max degree (2·M on level 0, M above)
//    neighbours, none of them the node itself, none twice, each one in the graph with a level
//    of at least l;
// 4. the reverse lists hold exactly the forward links (an internal structure, rebuilt at load);
// 5. the entry point is absent exactly when the graph is empty, is in the graph, and stands on
//    the top level: no node's level is above the entry point's.

/// One node as persisted plus its vector, for ``HNSWGraph/init(parameters:nodes:entryPoint:)``.
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
    @_spi(Testing) public convenience init(parameters: HNSWParameters, nodes: [HNSWStoredNode], entryPoint: UInt64?) throws {
        self.init(parameters: parameters)
        func corrupt(_ message: String) -> CellarError { .fileCorrupt("HNSW index: \(message)") }
        var scratch = HNSWChanges()
        for node in nodes {
            guard slotOf[node.id] == nil else { throw corrupt("node \(node.id) is given twice") }
            guard (0...HNSWLevels.maxLevel).contains(node.level), node.neighbors.count == node.level + 1 else {
                throw corrupt("node \(node.id) has level \(node.level) with \(node.neighbors.count) neighbour lists")
            }
            let prepared: [Float]
            do { prepared = try prepare(node.vector) } catch let error as CellarError {
                throw corrupt("the vector of node \(node.id): \(error.message)")
            }
            _ = allocateSlot(id: node.id, level: node.level, vector: prepared)
        }
        for node in nodes {
            let slot = slotOf[node.id]!
            for (l, list) in node.neighbors.enumerated() {
                let maximum = parameters.maxDegree(level: l)
                guard list.count <= maximum else {
                    throw corrupt("node \(node.id) has \(list.count) neighbours on level \(l), more than \(maximum)")
                }
                var slots: [Int32] = []
                slots.reserveCapacity(list.count)
                for neighbor in list {
                    guard let s = slotOf[neighbor], neighbor != node.id, !slots.contains(s) else {
                        throw corrupt("node \(node.id) names \(neighbor) on level \(l), which is itself, named twice or not in the index")
                    }
                    guard levels[Int(s)] >= l else {
                        throw corrupt("node \(node.id) names \(neighbor) on level \(l), above that node's level \(levels[Int(s)])")
                    }
                    slots.append(s)
                }
                setNeighbors(slot, l, slots, &scratch)
            }
        }
        if let entryPoint {
            guard let slot = slotOf[entryPoint] else { throw corrupt("the entry point \(entryPoint) is not in the index") }
            entrySlot = slot
            topLevel = Int(levels[Int(slot)])
        } else if !nodes.isEmpty {
            throw corrupt("the index has \(nodes.count) nodes but no entry point")
        }
        // The checks above cover what was stored; the whole invariant check (`verify()`, which
        // `cellar verify` runs) would double the time of a load, which the first query waits for.
        if let highest = nodes.map(\.level).max(), topLevel != highest {
            throw corrupt("the entry point \(entryPoint.map(String.init) ?? "-") is on level \(topLevel), below the top level \(highest)")
        }
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
            guard upper[slot].count == level * upperStride, incoming[slot].count == level + 1 else {
                return "node \(id) has storage for another level than \(level)"
            }
            highest = max(highest, levels[slot])
            for component in vector(Int32(slot)) where !component.isFinite { return "node \(id) has a vector component \(component)" }
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
                    guard incoming[Int(n)][l].contains(Int32(slot)) else {
                        return "the reverse list of \(ids[Int(n)]) on level \(l) misses \(id)"
                    }
                }
                for p in incoming[slot][l] where p < 0 || Int(p) >= levels.count || levels[Int(p)] < l || !neighbors(p, l).contains(Int32(slot)) {
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
