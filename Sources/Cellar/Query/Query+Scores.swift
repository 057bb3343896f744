/// An object found by a nearest-neighbour search, with its distance to the query vector.
public struct ObjectWithScore<E> {
    /// The object.
    public let object: E
    /// Its distance to the query vector, by the index's distance type (smaller is nearer).
    public let score: Double
}

/// The id of an object found by a nearest-neighbour search, with its distance.
public struct IdWithScore<E>: Hashable, Sendable {
    /// The object's id.
    public let id: EntityId<E>
    /// Its distance to the query vector, by the index's distance type (smaller is nearer).
    public let score: Double
}

extension Query {
    /// The objects of a `nearestNeighbors` query with their distances, nearest first.
    ///
    /// - Throws: ``CellarError/Code/illegalArgument`` when the query has no `nearestNeighbors`
    ///   condition.
    public func findWithScores() throws -> [ObjectWithScore<E>] {
        let query = try compiled
        return try box.store.inReadContext { context in
            try translatingErrors {
                let found = try Self.scored(query, context)
                let scores = Dictionary(found.map { ($0.id, Double($0.distance)) }, uniquingKeysWith: { a, _ in a })
                var objects: [ObjectWithScore<E>] = []
                objects.reserveCapacity(found.count)
                try context.forEachRecord(query.schema, ids: found.map(\.id), stable: false) { id, record in
                    objects.append(ObjectWithScore(object: try box.object(id: id, record: record), score: scores[id] ?? 0))
                    return true
                }
                return objects
            }
        }
    }

    /// The ids of a `nearestNeighbors` query's objects with their distances, nearest first; no
    /// object is built.
    ///
    /// - Throws: ``CellarError/Code/illegalArgument`` when the query has no `nearestNeighbors`
    ///   condition.
    public func findIdsWithScores() throws -> [IdWithScore<E>] {
        let query = try compiled
        return try box.store.inReadContext { context in
            try translatingErrors {
                try Self.scored(query, context).map { IdWithScore(id: EntityId($0.id), score: Double($0.distance)) }
            }
        }
    }

    static func scored(_ query: CompiledQuery, _ context: TransactionContext) throws -> [(id: Id, distance: Float)] {
        guard query.vector != nil else {
            throw CellarError.illegalArgument("findWithScores and findIdsWithScores are for a query with a nearestNeighbors condition; this one has none")
        }
        return try query.nearest(context)
    }
}
