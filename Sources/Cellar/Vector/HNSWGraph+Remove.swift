// HNSW removal with neighbour repair. A removed node is taken out of the graph for good (no
// tombstones), so that the persisted graph never names a node that is gone.
//
// On each level of the removed node x, the nodes that linked to x (found with the reverse
// lists) lose that link and are repaired: each such node p is offered, besides its remaining
// neighbours, x's former neighbours on that level (the nodes x linked to and the nodes that
// linked to x) — the nodes through which p reached that part of the graph. p's new list is
// chosen from those with the same heuristic as insertion, within the level's max degree. With
// the `reparationLimitCandidates` flag, only the max degree's worth of x's former neighbours
// nearest to p are offered. Each neighbour p newly gained links back to p with probability
// `reparationBacklinkProbability` (a deterministic coin from both ids), which keeps nodes
// that lost their in-links reachable. When x was the entry point, the node of the highest
// remaining level nearest to x (preferring x's neighbours on its top level) takes its place.

extension HNSWGraph {
    /// Removes `id` and repairs the graph around it; nothing happens when it is not in the
    /// graph. Returns the changes to persist (also kept for ``takeChanges()``).
    @discardableResult
    @_spi(Testing) public func remove(id: UInt64) -> HNSWChanges {
        var changes = HNSWChanges()
        guard let slot = slotOf[id] else { return changes }
        removeNode(slot, &changes)
        pending.merge(changes)
        return changes
    }

    /// Removes the node in `slot`, repairs its neighbourhood, frees the slot.
    func removeNode(_ slot: Int32, _ changes: inout HNSWChanges) {
        buildIncoming()
        let id = ids[Int(slot)]
        let level = Int(levels[Int(slot)])
        var topNeighbors: [Int32] = []
        for l in stride(from: level, through: 0, by: -1) {
            let outgoing = neighbors(slot, l)
            if l == level { topNeighbors = outgoing }
            let linkedFrom = incoming[Int(slot)][l]
            setNeighbors(slot, l, [], &changes)
            for p in linkedFrom {
                setNeighbors(p, l, neighbors(p, l).filter { $0 != slot }, &changes)
            }
            var pool = outgoing
            for p in linkedFrom where !pool.contains(p) { pool.append(p) }
            for p in linkedFrom { repair(p, level: l, offered: pool, &changes) }
        }
        // Freeing the slot leaves its vector where it is (until the slot is taken again), so
        // the probe stays valid for choosing the new entry point.
        let removedVector = probe(slot)
        freeSlot(slot)
        changes.remove(id)
        if entrySlot == slot { chooseEntryPoint(replacing: removedVector, preferring: topNeighbors, &changes) }
    }

    /// Gives `p` a new list on `level` from its current neighbours and `offered`.
    private func repair(_ p: Int32, level: Int, offered: [Int32], _ changes: inout HNSWChanges) {
        let maximum = parameters.maxDegree(level: level)
        let current = neighbors(p, level)
        let base = probe(p)
        var extra = offered.filter { $0 != p && !current.contains($0) }.map { (distance: distance(base, $0), slot: $0) }
        if parameters.flags.contains(.reparationLimitCandidates) && extra.count > maximum {
            extra.sort { $0.distance < $1.distance || ($0.distance == $1.distance && $0.slot < $1.slot) }
            extra.removeLast(extra.count - maximum)
        }
        guard !extra.isEmpty else { return }
        var candidates = current.map { (distance: distance(base, $0), slot: $0) } + extra
        candidates.sort { $0.distance < $1.distance || ($0.distance == $1.distance && $0.slot < $1.slot) }
        let selected = selectNeighbors(candidates, maximum: maximum)
        setNeighbors(p, level, selected.map(\.slot), &changes)
        let probability = parameters.reparationBacklinkProbability
        for neighbor in selected where !current.contains(neighbor.slot) {
            if HNSWLevels.coin(ids[Int(p)], ids[Int(neighbor.slot)], probability: probability) {
                addLink(from: neighbor.slot, to: p, distance: neighbor.distance, level: level, &changes)
            }
        }
    }

    /// A new entry point after the old one (whose vector was `removed`) left: a node of the
    /// highest remaining level, among `preferred` when one of them has it, nearest to `removed`.
    private func chooseEntryPoint(replacing removed: HNSWProbe, preferring preferred: [Int32], _ changes: inout HNSWChanges) {
        changes.entryPointChanged = true
        var best: (level: Int32, distance: Float, slot: Int32)?
        func consider(_ slot: Int32) {
            let level = levels[Int(slot)]
            guard level >= 0 else { return }
            let d = distance(removed, slot)
            if let current = best, (current.level, -current.distance, -current.slot) >= (level, -d, -slot) { return }
            best = (level, d, slot)
        }
        for slot in preferred { consider(slot) }
        let preferredLevel = best?.level ?? -1
        // Some node may stand higher than every preferred one: look at all (a rare event).
        if preferredLevel < topLevel {
            for slot in 0..<Int32(levels.count) where levels[Int(slot)] > preferredLevel { consider(slot) }
        }
        guard let chosen = best else {
            entrySlot = -1
            topLevel = -1
            return
        }
        entrySlot = chosen.slot
        topLevel = Int(chosen.level)
    }
}
