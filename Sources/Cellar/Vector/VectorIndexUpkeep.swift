import CellarStorage

/// How an HNSW index is kept (see `IndexUpkeep`): a put's or a removal's vector changes the
/// transaction's copy of the graph (`VectorPending`), whose changed nodes are written at commit.
struct VectorIndexUpkeep: IndexUpkeep {
    /// No condition: `nearestNeighbors` is searched by `CompiledQuery` before the plan's
    /// candidates are read, and the graph holds no values (`contains` on the vector scans).
    func plan(_ condition: CompiledCondition, with index: IndexSchema) -> QueryPlan.Served? { nil }

    func changesAsAWhole(isCollection: Bool) -> Bool { true }

    func change(_ property: PropertySchema, of schema: EntitySchema, id: Id, new: RecordReader, old: RecordReader?,
                in context: TransactionContext) throws -> TransactionContext.ElementIndexChange? {
        try context.vectorIndexChange(property, of: schema, id: id, new: new, old: old)
    }

    func remove(_ property: PropertySchema, of schema: EntitySchema, id: Id, record: RecordReader,
                in context: TransactionContext, keys: inout [(IndexSchema, [UInt8])]) throws {
        if try VectorIndex.vector(of: property, in: record) != nil { context.noteVectorChange(property, of: schema, id: id, vector: nil) }
    }

    func dropped(_ index: IndexSchema, in context: TransactionContext) {
        context.vectorPending[index.id] = nil
        context.vectorTouched.insert(index.id)
        context.store.vectorIndexes.invalidate(index.id)
        context.store.vectorIndexes.removeImages(of: index.id)
    }

    /// The graph is read through `TransactionContext.vectorGraph`, which applies the pending
    /// changes itself.
    func beforeReading(_ index: IndexSchema, in context: TransactionContext) throws {}

    /// The parameters: an index built with others is built again.
    func markerDetail(_ index: IndexSchema) -> [UInt8] {
        guard let hnsw = index.hnsw else { return [] }
        return Array("hnsw \(hnsw.dimensions) \(hnsw.neighborsPerNode) \(hnsw.indexingSearchCount) \(hnsw.distanceType.rawValue) \(hnsw.reparationBacklinkProbability) \(hnsw.flags.rawValue)".utf8)
    }

    func build(_ property: PropertySchema, of schema: EntitySchema, from cursor: Cursor, in context: TransactionContext) throws {
        // Every object's vector inserted into a new graph, then every node written. A graph in
        // memory is of the tree before: dropped, and not carried past this commit.
        let index = property.index!
        context.vectorPending[index.id] = nil  // the records it reads hold them
        context.vectorTouched.insert(index.id)
        context.store.vectorIndexes.invalidate(index.id)
        let graph = HNSWGraph(parameters: index.hnsw!)
        try cursor.scan { key, record in
            let id = try StorageLayout.objectId(key)
            guard let vector = try VectorIndex.vector(of: property, in: RecordReader(record)) else { return true }
            do {
                try VectorIndex.check(vector, index.hnsw!, what: "\(property.qualifiedName) of object \(id)")
            } catch let error as CellarError {
                throw CellarError.schema("the HNSW index of \(property.qualifiedName) cannot be built: \(error.message); change the vector (with a model without the index), or the index's dimensions")
            }
            try graph.insert(id: id, vector: vector)
            return true
        }
        try VectorIndex.write(graph.takeChanges(), of: graph, to: try context.indexTree(index), in: context.write!)
    }

    func verify(_ property: PropertySchema, of owners: [EntitySchema], embedded: Bool, in txn: ReadTransaction) throws -> Int {
        try RecordCheck.verifyVectorIndex(property, of: owners[0], in: txn)
    }
}
