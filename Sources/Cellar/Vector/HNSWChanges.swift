// The change log of an HNSW graph for persistence. The graph is stored as one value per node
// (its level and neighbour lists, see HNSWNodeCoding) plus the entry point; every mutation
// reports which nodes' values must be rewritten, which must be deleted and whether the entry
// point changed, so that the integrator writes exactly those in the same write transaction.

/// What the mutations since the last ``HNSWGraph/takeChanges()`` did to the persisted graph.
@_spi(Testing) public struct HNSWChanges: Equatable, Sendable {
    /// Nodes whose value (level or a neighbour list) must be written (again).
    @_spi(Testing) public var written: Set<UInt64> = []
    /// Nodes no longer in the graph whose value must be deleted.
    @_spi(Testing) public var removed: Set<UInt64> = []
    /// Whether the entry point (or its absence, for an empty graph) must be written.
    @_spi(Testing) public var entryPointChanged = false

    @_spi(Testing) public init() {}

    /// Whether nothing needs writing.
    @_spi(Testing) public var isEmpty: Bool { written.isEmpty && removed.isEmpty && !entryPointChanged }

    /// Records that `id`'s value changed (a removed node that comes back is written, not deleted).
    mutating func write(_ id: UInt64) {
        removed.remove(id)
        written.insert(id)
    }

    /// Records that `id` left the graph.
    mutating func remove(_ id: UInt64) {
        written.remove(id)
        removed.insert(id)
    }

    /// These changes followed by `later`.
    mutating func merge(_ later: HNSWChanges) {
        for id in later.removed { remove(id) }
        for id in later.written { write(id) }
        entryPointChanged = entryPointChanged || later.entryPointChanged
    }
}
