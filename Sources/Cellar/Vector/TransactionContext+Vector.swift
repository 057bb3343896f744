import CellarStorage

/// A write transaction's changes to one HNSW index: objects whose vector was set (or removed:
/// nil), in order; applied to the graph, and written into the index's tree, at commit or before
/// the transaction searches the index.
final class VectorPending {
    let index: IndexSchema
    let property: PropertySchema
    let schema: EntitySchema
    var changes: [(id: Id, vector: [Float]?)] = []

    init(index: IndexSchema, property: PropertySchema, schema: EntitySchema) {
        self.index = index
        self.property = property
        self.schema = schema
    }
}

/// Keeping HNSW indexes up to date, and reading them.
extension TransactionContext {
    /// Notes that object `id` of `schema` now has `vector` (nil: none) in `property`'s HNSW index.
    func noteVectorChange(_ property: PropertySchema, of schema: EntitySchema, id: Id, vector: [Float]?) {
        let index = property.index!
        let pending = vectorPending[index.id] ?? {
            let made = VectorPending(index: index, property: property, schema: schema)
            vectorPending[index.id] = made
            return made
        }()
        pending.changes.append((id, vector))
    }

    /// The change a put makes to `property`'s HNSW index, from `old`'s record (nil: a new object)
    /// to `new`'s; nil when the vector is the same.
    func vectorIndexChange(_ property: PropertySchema, of schema: EntitySchema, id: Id, new: RecordReader, old: RecordReader?) throws -> ElementIndexChange? {
        let newVector = try VectorIndex.vector(of: property, in: new)
        let oldVector = try old.flatMap { try VectorIndex.vector(of: property, in: $0) }
        if old != nil && newVector == oldVector { return nil }
        if old == nil && newVector == nil { return nil }
        return ElementIndexChange(index: property.index!, removed: [], added: [], vector: (schema, property, id, newVector))
    }

    /// Checks the vectors a put brings to HNSW indexes, before anything is written: each one
    /// has the index's dimensions and finite components. An empty vector (a `[Float]` property's
    /// usual initial value) or nil is "no vector": the object is not in the index.
    func checkVectors(_ schema: EntitySchema, record: RecordReader) throws {
        for property in schema.vectorProperties {
            guard let vector = try VectorIndex.vector(of: property, in: record) else { continue }
            try VectorIndex.check(vector, property.index!.hnsw!, what: property.qualifiedName)
        }
    }

    /// The graph of `index` as this transaction sees it: with its own changes applied (a write
    /// transaction), or of its snapshot (a read transaction; possibly newer, see `VectorIndexes`).
    func vectorGraph(_ index: IndexSchema, property: PropertySchema, schema: EntitySchema) throws -> VectorIndexes.Entry {
        if write != nil {
            try flushVectors(index)
            return try writerEntry(index, property: property, schema: schema)
        }
        let read = read!
        if readsThePast {
            // Loaded from that commit for this read only: the graphs kept are of newer commits.
            return VectorIndexes.Entry(graph: try store.vectorIndexes.load(index, property: property, schema: schema, in: read,
                                                                           useImage: store.usesVectorImages),
                                       version: read.transactionId)
        }
        return try store.vectorIndexes.entry(index, version: read.transactionId) {
            try store.vectorIndexes.load(index, property: property, schema: schema, in: read, useImage: store.usesVectorImages)
        }
    }

    /// The graph of `index` as of the commit this write transaction started from (loaded from
    /// that commit when memory holds none as recent: no other commit can come while it writes).
    /// That commit may be newer than any this process published (`.full` durability: its own
    /// commit waiting for its sync) or made by another process (several writing processes): the
    /// graph is loaded from it, never from the newest published one.
    private func writerEntry(_ index: IndexSchema, property: PropertySchema, schema: EntitySchema) throws -> VectorIndexes.Entry {
        let write = write!
        return try store.vectorIndexes.entry(index, version: write.transactionId - 1) {
            try store.vectorIndexes.load(index, property: property, schema: schema, in: write.readBase(),
                                         useImage: store.usesVectorImages)
        }
    }

    /// Applies every HNSW index's pending changes (before the commit).
    func flushAllVectors() throws {
        for id in vectorPending.keys.sorted() { try flushVectors(vectorPending[id]!.index) }
    }

    /// Applies the pending changes of `index` to its graph and writes the nodes they changed.
    func flushVectors(_ index: IndexSchema) throws {
        guard let write, let pending = vectorPending[index.id], !pending.changes.isEmpty else { return }
        vectorPending[index.id] = nil
        let entry = try writerEntry(index, property: pending.property, schema: pending.schema)
        // From here the graph holds changes that are not committed: if the transaction does not
        // commit, the graph is dropped (`undo`) and loaded again when next used.
        vectorTouched.insert(index.id)
        let tree = try indexTree(index)
        try entry.writing { graph in
            entry.changing(toward: write.transactionId)
            _ = graph.takeChanges()
            for (id, vector) in Self.lastPerId(pending.changes.map { (id: $0.id, value: $0.vector) }[...]) {
                if let vector {
                    try graph.insert(id: id, vector: vector)
                } else if graph.contains(id) {
                    graph.remove(id: id)
                }
            }
            try VectorIndex.write(graph.takeChanges(), of: graph, to: tree, in: write)
        }
    }

    /// After a commit: the graphs this transaction changed reflect it, and so do the others
    /// that reflected the commit before it.
    func committedVectors() {
        guard let write else { return }
        store.vectorIndexes.committed(changed: vectorTouched, version: write.transactionId)
        vectorTouched = []
    }

    /// After a rollback: the graphs this transaction changed are dropped.
    func undoVectors() {
        for id in vectorTouched { store.vectorIndexes.invalidate(id) }
        vectorTouched = []
        vectorPending = [:]
    }
}
