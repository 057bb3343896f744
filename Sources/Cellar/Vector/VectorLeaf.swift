import CellarStorage

/// A nearest-neighbour condition (`Doc.embedding.nearestNeighbors(to: v, maxCount: 10)`), checked
/// against the store's model: the property is a `[Float]` with an HNSW index, the query vector has
/// its dimensions and finite components, and `maxCount` is positive.
struct VectorLeaf {
    let property: PropertySchema
    let index: IndexSchema
    let vector: [Float]
    let maxCount: Int
    /// The search width (HNSW's ef) asked for; nil: the index's `indexingSearchCount`.
    let searchWidth: Int?

    init(_ condition: PropertyCondition, property: PropertySchema) throws {
        let what = "query condition \(property.qualifiedName) nearestNeighbors"
        guard condition.subject == .value, property.type == .floatVector else {
            throw CellarError.illegalArgument("\(what): nearest neighbours are searched among [Float] vectors; \(property.name) is a \(property.type)")
        }
        guard let index = property.index, index.kind == .hnsw, let parameters = index.hnsw else {
            throw CellarError.illegalArgument("\(what): the property has no HNSW index; add `// cellar: hnsw = { \"dimensions\": … }` to it")
        }
        guard let vector = condition.vector, !vector.isEmpty else {
            throw CellarError.illegalArgument("\(what): the query vector is empty; it needs \(parameters.dimensions) dimensions")
        }
        guard (1...2).contains(condition.values.count), case .integer(let count) = condition.values[0], count >= 1, count <= Int64(Int32.max) else {
            throw CellarError.illegalArgument("\(what): maxCount must be a positive number, got \(condition.values.map(\.description).joined(separator: ", "))")
        }
        if condition.values.count == 2 {
            guard case .integer(let width) = condition.values[1], width >= 1, width <= 1_000_000 else {
                throw CellarError.illegalArgument("\(what): searchWidth must be a number in 1…1,000,000, got \(condition.values[1].description)")
            }
            searchWidth = Int(width)
        } else {
            searchWidth = nil
        }
        try VectorIndex.check(vector, parameters, what: "the query vector of \(what)")
        self.property = property
        self.index = index
        self.vector = vector
        maxCount = Int(count)
    }

    /// The query's nearest-neighbour condition and the rest of it: the condition itself, or one
    /// of the conditions joined by `&&` at its top. Anywhere else (under `||`, in a link, twice)
    /// it is refused.
    static func split(_ condition: CompiledCondition?) throws -> (VectorLeaf?, CompiledCondition?) {
        guard let condition else { return (nil, nil) }
        switch condition {
        case .vector(let leaf):
            return (leaf, nil)
        case .all(let parts):
            let leaves = parts.compactMap { if case .vector(let leaf) = $0 { leaf } else { nil } }
            let rest = parts.filter { if case .vector = $0 { false } else { true } }
            guard leaves.count <= 1, !rest.contains(where: \.hasVector) else { throw misplaced() }
            if leaves.isEmpty { return (nil, condition) }
            return (leaves[0], rest.count == 1 ? rest[0] : .all(rest))
        default:
            if condition.hasVector { throw misplaced() }
            return (nil, condition)
        }
    }

    static func misplaced() -> CellarError {
        CellarError.illegalArgument("nearestNeighbors is a query's search: write it alone or joined with `&&` to the other conditions (which then filter the objects it finds), once per query, not under `||`")
    }
}

extension CompiledCondition {
    /// Whether a nearest-neighbour condition is in it.
    var hasVector: Bool {
        switch self {
        case .vector: true
        case .all(let parts), .any(let parts): parts.contains { $0.hasVector }
        default: false
        }
    }
}

extension CompiledQuery {
    /// The objects the nearest-neighbour search finds, nearest first, with their distances: at
    /// most `maxCount`, each meeting the rest of the condition (checked while the graph is
    /// searched, so that a selective condition still gives `maxCount` objects when there are
    /// that many).
    func nearest(_ context: TransactionContext) throws -> [(id: Id, distance: Float)] {
        let leaf = vector!
        let entry = try context.vectorGraph(leaf.index, property: leaf.property, schema: schema)
        // Other conditions that an index (or the ids) answers: their objects, found first. When
        // they are few they are compared one by one, exactly, rather than searched for through
        // the graph; else they are the search's filter.
        var candidates: [Id]?
        if condition != nil {
            if case .scan = plan.source {} else {
                candidates = try CompiledQuery(schema: schema, condition: condition, plan: plan, links: links, orders: []).matchingIds(context)
            }
        }
        var failure: (any Error)?
        let filter: ((UInt64) -> Bool)?
        if let candidates {
            let allowed = Set(candidates)
            filter = { allowed.contains(Id($0)) }
        } else {
            // A graph newer than a reader's snapshot may hold objects the snapshot does not:
            // each one found is looked up then (a condition reads its record anyway).
            let snapshotMatches = context.write != nil || entry.reflects(context.read!.transactionId)
            let linkSets = try links.map { Set(try $0.matchingIds(context)) }
            filter = condition == nil && links.isEmpty && snapshotMatches ? nil : { id in
                guard failure == nil else { return false }
                do {
                    return try context.withRecord(schema, id) { record in
                        guard let record else { return false }
                        guard let condition = self.condition else { return true }
                        return try condition.evaluate(RecordReader(record), id: id, links: linkSets, context: context)
                    }
                } catch {
                    failure = error
                    return false
                }
            }
        }
        // A condition no index answers is checked on each object the search meets; when it is
        // so selective that the search would meet most of the graph (more than an eighth of it
        // checked), the search stops and the objects are checked in one scan of the records
        // instead (cheaper per object than one lookup each), then compared one by one.
        let budget = candidates == nil && condition != nil ? max(4 * leaf.maxCount, entry.reading { $0.count } / 8) : Int.max
        // A quantized graph's candidates are re-scored with the vectors in their records.
        let exact: HNSWExactVectors = { id, body in
            try context.withRecord(schema, Id(id)) { record in
                guard let record, let bytes = try RecordReader(record).bytes(slot: leaf.property.slot) else { return }
                body(bytes)
            }
        }
        let found = try entry.reading { graph -> [(id: UInt64, distance: Float)]? in
            if let candidates, graph.prefersBruteForce(candidateCount: candidates.count, k: leaf.maxCount, ef: leaf.searchWidth) {
                return try graph.bruteForce(query: leaf.vector, k: leaf.maxCount, candidates: candidates, exact: exact)
            }
            return try graph.search(query: leaf.vector, k: leaf.maxCount, ef: leaf.searchWidth, filter: filter,
                                    filterBudget: budget, exact: exact)
        }
        if let failure { throw failure }
        if let found { return found.map { (Id($0.id), $0.distance) } }
        let matching = try CompiledQuery(schema: schema, condition: condition, plan: plan, links: links, orders: []).matchingIds(context)
        return try entry.reading { graph in
            try graph.bruteForce(query: leaf.vector, k: leaf.maxCount, candidates: matching, exact: exact).map { (Id($0.id), $0.distance) }
        }
    }
}

extension Property {
    /// The `maxCount` objects whose `[Float]` property is nearest to `vector`, by the distance
    /// of the property's HNSW index (`// cellar: hnsw = { "dimensions": …, "distanceType": … }`).
    /// Alone, or joined with `&&` to other conditions, which then filter the objects while the
    /// graph is searched (a selective filter still returns `maxCount` objects when there are
    /// that many). Results come nearest first; ``Query/findWithScores()`` gives the distances.
    ///
    /// A vector of other dimensions than the index's, an empty one, one with NaN or infinite
    /// components, or a `maxCount` below 1 makes the query throw
    /// ``CellarError/Code/illegalArgument`` when it is built. The search is approximate (HNSW):
    /// see `docs/vector-search.md` for accuracy and cost.
    public func nearestNeighbors(to vector: [Float], maxCount: Int) -> QueryCondition<E> {
        nearestNeighbors(vector, [.integer(Int64(maxCount))])
    }

    /// ``nearestNeighbors(to:maxCount:)`` with the search's width chosen: how many candidates
    /// the graph search keeps (HNSW's *ef*; at least `maxCount`). Without it the width is the
    /// index's `indexingSearchCount` (default 100). A wider search finds the true nearest
    /// neighbours more often and costs more: `docs/vector-search.md` shows recall against speed
    /// for several widths. A width outside 1…1,000,000 makes the query throw
    /// ``CellarError/Code/illegalArgument`` when it is built.
    public func nearestNeighbors(to vector: [Float], maxCount: Int, searchWidth: Int) -> QueryCondition<E> {
        nearestNeighbors(vector, [.integer(Int64(maxCount)), .integer(Int64(searchWidth))])
    }

    private func nearestNeighbors(_ vector: [Float], _ values: [QueryValue]) -> QueryCondition<E> {
        var condition = PropertyCondition(ref, .nearestNeighbors, values)
        condition.via = via
        condition.vector = vector
        return QueryCondition(.property(condition))
    }
}
