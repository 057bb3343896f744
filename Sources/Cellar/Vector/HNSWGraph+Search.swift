// HNSW k-nearest-neighbour search, and the exact (brute force) search beside it.
//
// Approximate search: greedy descent from the entry point through the levels above 0, then a
// beam search on level 0 holding `ef` results (ef ≥ k; larger ef: better recall, slower). A
// filter is applied during the level-0 search: nodes it rejects are still traversed (they are
// the graph's paths) but never returned, and the search goes on until it holds ef matching
// results or has reached every node it can, so a selective filter still returns k hits when
// that many match.
//
// When to search by brute force instead: a filtered graph search computes about ef / s
// distances to collect ef matches when a fraction s of the N nodes match, while brute force
// over the c = s·N candidates computes c. Graph search is cheaper when ef / s < c, that is when
// c² > ef·N. ``HNSWGraph/prefersBruteForce(candidateCount:k:ef:)`` applies this rule (with a
// floor of 4·ef candidates, below which brute force is always at least as cheap); use it when
// the query's other conditions give a known candidate count. Brute force results are exact.

extension HNSWGraph {
    /// The search-time candidate count used when none is given: `indexingSearchCount`, at least k.
    @_spi(Testing) public func defaultSearchCount(k: Int) -> Int { max(k, parameters.indexingSearchCount) }

    /// The (approximately) `k` nearest nodes to `query` that pass `filter`, nearest first, with
    /// their distances (see ``VectorDistanceType`` for what the scores are). `ef` is the beam
    /// width (raised to k; default ``defaultSearchCount(k:)``). Throws `.illegalArgument` for a
    /// query shorter than `dimensions` or with a component that is not finite. Mutates nothing:
    /// concurrent searches are fine (not concurrent with a writer). A quantized graph returns
    /// approximate distances (see ``search(query:k:ef:filter:filterBudget:exact:)``).
    @_spi(Testing) public func search(query: [Float], k: Int, ef: Int? = nil,
                                      filter: ((UInt64) -> Bool)? = nil) throws -> [(id: UInt64, distance: Float)] {
        try search(query: query, k: k, ef: ef, filter: filter, filterBudget: .max, exact: nil)!
    }

    /// ``search(query:k:ef:filter:)`` that gives up, returning nil, once it has asked `filter`
    /// `filterBudget` times without finishing: a filter so selective that the search would walk
    /// most of the graph, where checking the objects one by one (then ``bruteForce(query:k:candidates:)``)
    /// is cheaper.
    @_spi(Testing) public func search(query: [Float], k: Int, ef: Int? = nil, filter: ((UInt64) -> Bool)?,
                                      filterBudget: Int) throws -> [(id: UInt64, distance: Float)]? {
        try search(query: query, k: k, ef: ef, filter: filter, filterBudget: filterBudget, exact: nil)
    }

    /// ``search(query:k:ef:filter:filterBudget:)``; in a quantized graph with `exact` given, the
    /// beam's `rescoredCount(k:)` nearest are re-scored with the exact vectors it reads and the
    /// k nearest by exact distance are returned.
    func search(query: [Float], k: Int, ef: Int? = nil, filter: ((UInt64) -> Bool)?,
                filterBudget: Int, exact: HNSWExactVectors?) throws -> [(id: UInt64, distance: Float)]? {
        let prepared = try prepare(query)
        guard k > 0, entrySlot >= 0 else { return [] }
        let width = max(k, ef ?? defaultSearchCount(k: k))
        let found: [(distance: Float, slot: Int32)]? = withProbe(prepared) { q in
            var current = (distance: distance(q, entrySlot), slot: entrySlot)
            var level = topLevel
            while level > 0 {
                current = greedyClosest(q, from: current, level: level)
                level -= 1
            }
            var visited = HNSWVisitedSet(slotCount: ids.count)
            var budget = filterBudget
            let found = searchLayer(q, entries: [current], ef: width, level: 0, filter: filter, budget: &budget, visited: &visited)
            return budget < 0 ? nil : found.sortedAscending()
        }
        guard let found else { return nil }
        if isQuantized, let exact {
            return try rescored(found, query: prepared, k: k, exact: exact)
        }
        return found.prefix(k).map { (id: ids[Int($0.slot)], distance: $0.distance) }
    }

    /// The exact `k` nearest nodes to `query` that pass `filter`, nearest first: every node's
    /// distance is computed (approximate ones in a quantized graph). Throws as
    /// ``search(query:k:ef:filter:)``.
    @_spi(Testing) public func bruteForce(query: [Float], k: Int,
                                          filter: ((UInt64) -> Bool)? = nil) throws -> [(id: UInt64, distance: Float)] {
        let prepared = try prepare(query)
        guard k > 0 else { return [] }
        return withProbe(prepared) { q in
            var best = HNSWHeap(capacity: k + 1)
            for slot in 0..<Int32(levels.count) where levels[Int(slot)] >= 0 {
                if let filter, !filter(ids[Int(slot)]) { continue }
                keep(distance(q, slot), slot, in: &best, k: k)
            }
            return best.sortedAscending().map { (id: ids[Int($0.slot)], distance: $0.distance) }
        }
    }

    /// The exact `k` nearest to `query` among `candidates` (ids not in the graph are skipped),
    /// nearest first: for a query whose other conditions leave few candidates. A quantized
    /// graph computes every distance from the exact vectors `exact` reads (approximate ones
    /// without it).
    @_spi(Testing) public func bruteForce(query: [Float], k: Int,
                                          candidates: some Sequence<UInt64>) throws -> [(id: UInt64, distance: Float)] {
        try bruteForce(query: query, k: k, candidates: candidates, exact: nil)
    }

    func bruteForce(query: [Float], k: Int, candidates: some Sequence<UInt64>,
                    exact: HNSWExactVectors?) throws -> [(id: UInt64, distance: Float)] {
        let prepared = try prepare(query)
        guard k > 0 else { return [] }
        var best = HNSWHeap(capacity: k + 1)
        var seen = HNSWVisitedSet(slotCount: ids.count)
        if isQuantized, let exact {
            try measuringExactly(prepared, exact: exact) { measure in
                for id in candidates {
                    guard let slot = slotOf[id], seen.insert(slot) else { continue }
                    if let d = try measure(id) { keep(d, slot, in: &best, k: k) }
                }
            }
        } else {
            withProbe(prepared) { q in
                for id in candidates {
                    guard let slot = slotOf[id], seen.insert(slot) else { continue }
                    keep(distance(q, slot), slot, in: &best, k: k)
                }
            }
        }
        return best.sortedAscending().map { (id: ids[Int($0.slot)], distance: $0.distance) }
    }

    /// Keeps (`d`, `slot`) in the max-heap `best` of the k nearest so far.
    private func keep(_ d: Float, _ slot: Int32, in best: inout HNSWHeap, k: Int) {
        if best.count < k {
            best.push(d, slot)
        } else if d < best.top.distance {
            best.pop()
            best.push(d, slot)
        }
    }

    /// Whether a query whose other conditions leave `candidateCount` candidates is better
    /// answered by ``bruteForce(query:k:candidates:)`` than by a filtered ``search(query:k:ef:filter:)``
    /// with beam width `ef` (default as in search): true when c² ≤ ef·N or c ≤ 4·ef.
    @_spi(Testing) public func prefersBruteForce(candidateCount: Int, k: Int, ef: Int? = nil) -> Bool {
        let width = max(k, ef ?? defaultSearchCount(k: k))
        let c = Double(candidateCount)
        return candidateCount <= 4 * width || c * c <= Double(width) * Double(count)
    }
}
