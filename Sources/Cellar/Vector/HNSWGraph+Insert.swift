import CCellarSIMD

// HNSW construction: the layer search, the neighbour-selection heuristic and insertion.
//
// Insertion of a node q with level L (drawn from its id): greedy descent from the entry point
// through the levels above L (move to any closer neighbour until none is closer); then on each
// level from min(L, top) down to 0, a beam search for `efConstruction` candidates (entered from
// the previous level's results), the heuristic picks at most M of them as q's neighbours, and
// each picked neighbour links back to q — when its list is full, its list plus q is cut back to
// the level's max degree (M above level 0, 2·M on level 0) with the same heuristic. A node above
// the current top level becomes the entry point.
//
// The heuristic (the paper's algorithm 4, as hnswlib's `getNeighborsByHeuristic2`): walk the
// candidates from nearest to farthest and keep one only when it is nearer to the base node than
// to every neighbour kept so far. It keeps links in diverse directions, which keeps clustered
// data navigable.

extension HNSWGraph {
    /// The beam search on one level: from `entries`, the (up to) `ef` nearest nodes to `query`
    /// that pass `filter`, as a max-heap. Nodes failing the filter are still traversed. Without
    /// a filter the search stops when the nearest unexpanded candidate is farther than the
    /// farthest result; with one, only once `ef` matching results are held (or the reachable
    /// nodes are exhausted), so a selective filter still finds its matches.
    func searchLayer(_ query: HNSWProbe, entries: [(distance: Float, slot: Int32)], ef: Int,
                     level: Int, filter: ((UInt64) -> Bool)?, visited: inout HNSWVisitedSet) -> HNSWHeap {
        var budget = Int.max
        return searchLayer(query, entries: entries, ef: ef, level: level, filter: filter, budget: &budget, visited: &visited)
    }

    /// `searchLayer` that asks `filter` at most `budget` times (counted down): when the budget
    /// runs out the search stops, with `budget` < 0 and the results found so far.
    func searchLayer(_ query: HNSWProbe, entries: [(distance: Float, slot: Int32)], ef: Int,
                     level: Int, filter: ((UInt64) -> Bool)?, budget: inout Int, visited: inout HNSWVisitedSet) -> HNSWHeap {
        var results = HNSWHeap(capacity: ef + 1)
        var candidates = HNSWHeap(capacity: 4 * ef)
        let width = max(level0Stride, upperStride)
        let scratch = UnsafeMutablePointer<Int32>.allocate(capacity: width)
        let distances = UnsafeMutablePointer<Float>.allocate(capacity: width)
        defer {
            scratch.deallocate()
            distances.deallocate()
        }
        for entry in entries where visited.insert(entry.slot) {
            candidates.push(-entry.distance, entry.slot)
            if let filter {
                budget -= 1
                if budget < 0 { return results }
                guard filter(ids[Int(entry.slot)]) else { continue }
            }
            results.push(entry.distance, entry.slot)
            if results.count > ef { results.pop() }
        }
        var bound = results.isEmpty ? Float.infinity : results.top.distance
        let (vectorBase, vectorBytes) = isQuantized
            ? (UnsafeRawPointer(codes), codesPerVector) : (UnsafeRawPointer(vectors), floatsPerVector * MemoryLayout<Float>.stride)
        // At most the first 512 bytes of each: a whole vector of floats (1,536 bytes at 384
        // dimensions, for each of up to 2·M neighbours) asks for more lines than stay useful.
        let prefetchBytes = min(vectorBytes, 512)
        while !candidates.isEmpty {
            let current = candidates.top
            if -current.distance > bound && (filter == nil || results.count >= ef) { break }
            candidates.pop()
            let upperList: [Int32] = level == 0 ? [] : neighbors(current.slot, level)
            let base = level0 + Int(current.slot) * level0Stride
            let neighborCount = level == 0 ? Int(base[0]) : upperList.count
            // The neighbours not visited yet, their vectors asked into the caches as they are
            // found, then their distances in one tight loop, then the heaps.
            var fresh = 0
            for i in 0..<neighborCount {
                let neighbor = level == 0 ? base[1 + i] : upperList[i]
                if visited.insert(neighbor) {
                    scratch[fresh] = neighbor
                    fresh += 1
                    cellar_simd_prefetch(vectorBase + Int(neighbor) * vectorBytes, prefetchBytes)
                }
            }
            for i in 0..<fresh { distances[i] = distance(query, scratch[i]) }
            for i in 0..<fresh {
                let neighbor = scratch[i], d = distances[i]
                guard results.count < ef || d < bound else { continue }
                candidates.push(-d, neighbor)
                if let filter {
                    budget -= 1
                    if budget < 0 { return results }
                    guard filter(ids[Int(neighbor)]) else { continue }
                }
                results.push(d, neighbor)
                if results.count > ef { results.pop() }
                bound = results.top.distance
            }
        }
        return results
    }

    /// Greedy descent on `level`: moves from `start` to a closer neighbour while there is one.
    func greedyClosest(_ query: HNSWProbe, from start: (distance: Float, slot: Int32),
                       level: Int) -> (distance: Float, slot: Int32) {
        var current = start
        var changed = true
        while changed {
            changed = false
            for neighbor in neighbors(current.slot, level) {
                let d = distance(query, neighbor)
                if d < current.distance {
                    current = (d, neighbor)
                    changed = true
                }
            }
        }
        return current
    }

    /// The heuristic: from `candidates` sorted by ascending distance to the base node, at most
    /// `maximum` kept nearest-first, each nearer to the base than to any kept before it.
    func selectNeighbors(_ candidates: [(distance: Float, slot: Int32)], maximum: Int) -> [(distance: Float, slot: Int32)] {
        if candidates.count <= 1 { return Array(candidates.prefix(maximum)) }
        var kept: [(distance: Float, slot: Int32)] = []
        kept.reserveCapacity(maximum)
        for candidate in candidates {
            if kept.count >= maximum { break }
            let candidateVector = probe(candidate.slot)
            var good = true
            for other in kept where distance(candidateVector, other.slot) < candidate.distance {
                good = false
                break
            }
            if good { kept.append(candidate) }
        }
        return kept
    }

    /// Links `from` to `to` on `level` (`d` is their distance); a full list is cut back to the
    /// level's max degree with the heuristic (which may drop the new link).
    func addLink(from: Int32, to: Int32, distance d: Float, level: Int, _ changes: inout HNSWChanges) {
        var list = neighbors(from, level)
        guard !list.contains(to), from != to else { return }
        let maximum = parameters.maxDegree(level: level)
        if list.count < maximum {
            list.append(to)
        } else {
            let base = probe(from)
            var candidates = list.map { (distance: distance(base, $0), slot: $0) }
            candidates.append((d, to))
            candidates.sort { $0.distance < $1.distance || ($0.distance == $1.distance && $0.slot < $1.slot) }
            list = selectNeighbors(candidates, maximum: maximum).map(\.slot)
        }
        setNeighbors(from, level, list, &changes)
    }

    /// Adds node `id` with `vector` (at least `dimensions` finite floats; more are ignored). An
    /// id already in the graph is updated instead. Returns the changes to persist (also kept
    /// for ``takeChanges()``). Throws `.illegalArgument` for a bad vector, changing nothing.
    @discardableResult
    @_spi(Testing) public func insert(id: UInt64, vector: [Float]) throws -> HNSWChanges {
        if slotOf[id] != nil { return try update(id: id, vector: vector) }
        let prepared = try prepare(vector)
        var changes = HNSWChanges()
        insertPrepared(id: id, prepared: prepared, &changes)
        pending.merge(changes)
        return changes
    }

    /// Inserts a node whose vector is already prepared.
    func insertPrepared(id: UInt64, prepared: [Float], _ changes: inout HNSWChanges) {
        let level = HNSWLevels.level(id: id, neighborsPerNode: parameters.neighborsPerNode)
        let slot = allocateSlot(id: id, level: level, vector: prepared)
        changes.write(id)
        guard entrySlot >= 0 else {
            entrySlot = slot
            topLevel = level
            changes.entryPointChanged = true
            return
        }
        let query = probe(slot)
        var current = (distance: distance(query, entrySlot), slot: entrySlot)
        var l = topLevel
        while l > level {
            current = greedyClosest(query, from: current, level: l)
            l -= 1
        }
        var entries = [current]
        let ef = parameters.effectiveIndexingSearchCount
        for l in stride(from: min(level, topLevel), through: 0, by: -1) {
            var visited = HNSWVisitedSet(slotCount: ids.count)
            _ = visited.insert(slot)
            let found = searchLayer(query, entries: entries, ef: ef, level: l, filter: nil, visited: &visited).sortedAscending()
            let selected = selectNeighbors(found, maximum: parameters.neighborsPerNode)
            setNeighbors(slot, l, selected.map(\.slot), &changes)
            for neighbor in selected {
                addLink(from: neighbor.slot, to: slot, distance: neighbor.distance, level: l, &changes)
            }
            if !found.isEmpty { entries = found }
        }
        if level > topLevel {
            entrySlot = slot
            topLevel = level
            changes.entryPointChanged = true
        }
    }

    /// Replaces the vector of `id` (remove, then insert with the new vector; nothing changes
    /// when the stored vector is the same). An id not in the graph is inserted.
    @discardableResult
    @_spi(Testing) public func update(id: UInt64, vector: [Float]) throws -> HNSWChanges {
        let prepared = try prepare(vector)
        var changes = HNSWChanges()
        if let slot = slotOf[id] {
            if holds(slot, prepared: prepared) { return changes }
            removeNode(slot, &changes)
        }
        insertPrepared(id: id, prepared: prepared, &changes)
        pending.merge(changes)
        return changes
    }
}
