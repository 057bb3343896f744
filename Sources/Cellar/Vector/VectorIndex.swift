import CellarStorage
import Foundation

/// HNSW vector indexes (`// cellar: hnsw = {…}` on a `[Float]` property): the graph in the
/// index's tree, and in memory.
///
/// **In the tree** (`i<index ID>`), written in the object's own write transaction:
/// - a **node** per indexed object: key = the object id (8 bytes, big-endian), value = the node's
///   level and its neighbours per level (`HNSWGraph.encodeNode`). The vector is not repeated: it
///   is in the object's record;
/// - the **entry point** under the key `[0]` (one byte, so never a node's key): its id, 8 bytes
///   big-endian; absent when the graph is empty.
///
/// **In memory** (`VectorIndexes`): the graph with every vector (`HNSWGraph`), loaded from the
/// tree and the records the first time a query or a commit needs it, then kept up to date by each
/// commit. A search reads the graph under a shared lock; a commit changes it under an exclusive
/// one, just before the commit is written, and writes the nodes it changed into the tree.
enum VectorIndex {
    static let entryPointKey: [UInt8] = [0]

    static func nodeKey(_ id: Id) -> [UInt8] { QueryPlan.bigEndian(id) }

    /// The vector of `property` in `record` (nil: absent or empty, which both mean "no vector").
    static func vector(of property: PropertySchema, in record: RecordReader) throws -> [Float]? {
        guard let vector = try record.list(Float.self, slot: property.slot), !vector.isEmpty else { return nil }
        return vector
    }

    /// Throws `illegalArgument` unless `vector` can be indexed with `parameters`: the right number
    /// of components, every one finite. `what` names the property (or the query).
    static func check(_ vector: [Float], _ parameters: HNSWParameters, what: @autoclosure () -> String) throws {
        guard vector.count == parameters.dimensions else {
            throw CellarError.illegalArgument("\(what()) has \(vector.count) dimensions; its HNSW index expects \(parameters.dimensions)")
        }
        if let bad = vector.firstIndex(where: { !$0.isFinite }) {
            throw CellarError.illegalArgument("\(what()) has \(vector[bad]) at component \(bad); a vector's components are finite numbers")
        }
    }

    /// Loads the graph of `index` on `property` of `schema` from a transaction's view: the nodes
    /// and entry point from the index's tree, then the vectors from one pass over the records
    /// (in id order, like the nodes: a scan rather than a lookup per node).
    static func load(_ index: IndexSchema, property: PropertySchema, schema: EntitySchema, in txn: ReadTransaction) throws -> HNSWGraph {
        let parameters = index.hnsw!
        guard let tree = try txn.tree(index.treeName) else { return HNSWGraph(parameters: parameters) }
        var loader = HNSWGraphLoader(parameters: parameters, expectedCount: try txn.cursor(tree).countKeys())
        var entryPoint: Id?
        do {
            try txn.cursor(tree).scan { key, value in
                if key.elementsEqual(entryPointKey) {
                    guard value.count == 8 else { throw corrupt(index, "an entry point of \(value.count) bytes") }
                    entryPoint = Id(bigEndian: value.loadUnaligned(as: UInt64.self))
                    return true
                }
                guard key.count == 8 else { throw corrupt(index, "a key of \(key.count) bytes") }
                try loader.addNode(id: Id(bigEndian: key.loadUnaligned(as: UInt64.self)), encoded: value)
                return true
            }
            if loader.count > 0, let records = try txn.tree(schema.treeName) {
                try txn.cursor(records).scan { key, record in
                    let id = try StorageLayout.objectId(key)
                    guard loader.contains(id), let bytes = try RecordReader(record).bytes(slot: property.slot) else { return true }
                    try loader.setVector(id: id, littleEndian: bytes)
                    return true
                }
            }
            return try loader.finish(entryPoint: entryPoint)
        } catch let error as CellarError where error.code == .fileCorrupt && error.message.hasPrefix("HNSW index: ") {
            throw corrupt(index, String(error.message.dropFirst("HNSW index: ".count)))
        }
    }

    static func corrupt(_ index: IndexSchema, _ what: String) -> CellarError {
        CellarError.fileCorrupt("the HNSW index \(index.id) (tree \(index.treeName)) has \(what)")
    }

    /// Writes what `changes` says changed in `graph` into the index's tree.
    static func write(_ changes: HNSWChanges, of graph: HNSWGraph, to tree: Tree, in write: WriteTransaction) throws {
        for id in changes.removed.sorted() { _ = try write.delete(tree, key: nodeKey(id)) }
        for id in changes.written.sorted() {
            guard let node = graph.encodeNode(id) else { continue }
            try write.put(tree, key: nodeKey(id), value: node)
        }
        if changes.entryPointChanged || !changes.written.isEmpty || !changes.removed.isEmpty {
            if let entry = graph.entryPoint {
                try write.put(tree, key: entryPointKey, value: nodeKey(entry))
            } else {
                _ = try write.delete(tree, key: entryPointKey)
            }
        }
    }
}

/// The in-memory graphs of a store's HNSW indexes, by index ID, each with the commit it reflects.
final class VectorIndexes: Sendable {
    final class Entry: Sendable {
        /// The graph: many searches, or one commit changing it.
        private let graph: ReadWriteLocked<HNSWGraph>
        /// The transaction id of the commit the graph reflects.
        var version: UInt64 { versionLock.withLock { $0 } }
        private let versionLock: Locked<UInt64>

        init(graph: HNSWGraph, version: UInt64) {
            self.graph = ReadWriteLocked(graph)
            versionLock = Locked(version)
        }

        func reading<R>(_ body: (HNSWGraph) throws -> R) rethrows -> R {
            try graph.reading(body)
        }

        func writing<R>(_ body: (HNSWGraph) throws -> R) rethrows -> R {
            try graph.writing { try body($0) }
        }

        fileprivate func setVersion(_ version: UInt64) {
            versionLock.withLock { $0 = version }
        }
    }

    private let entries = Locked<[UInt32: Entry]>([:])

    /// The graph of `index` for a reader of the snapshot of commit `version` (`view` loads it
    /// when there is none as recent). A graph newer than the reader's snapshot is used as it is:
    /// the reader then checks that each object found is in its snapshot.
    func entry(_ index: IndexSchema, version: UInt64, load: () throws -> HNSWGraph) throws -> Entry {
        if let entry = entries.withLock({ $0[index.id] }), entry.version >= version { return entry }
        let entry = Entry(graph: try load(), version: version)
        return entries.withLock { entries in
            if let current = entries[index.id], current.version >= version { return current }
            entries[index.id] = entry
            return entry
        }
    }

    /// Bytes the graphs in memory keep for their vectors and neighbour lists.
    var residentBytes: Int {
        entries.withLock { Array($0.values) }.reduce(0) { total, entry in
            total + entry.reading { $0.residentVectorBytes + $0.residentListBytes }
        }
    }

    /// Forgets the graph of `index` (its tree was dropped, or a transaction that changed it did
    /// not commit): the next use loads it again.
    func invalidate(_ indexId: UInt32) {
        entries.withLock { $0[indexId] = nil }
    }

    /// Notes that the graphs `committed` now reflect commit `version`.
    func committed(_ indexIds: [UInt32], version: UInt64) {
        entries.withLock { entries in
            for id in indexIds { entries[id]?.setVersion(version) }
        }
    }
}
