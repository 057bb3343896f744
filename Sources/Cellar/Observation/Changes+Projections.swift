import Dispatch

// `SendableMetatype` for the projection as for the entity: the results are read later, wherever
// the loop or the queue runs.
extension Query where E: SendableMetatype {
    /// The query's results as projections `P`, now and after each commit that changes its entity
    /// or an entity it links to (coalesced; see ``Changes``), as `changes()` hands out the objects:
    /// `for try await rows in query.changes(as: NoteRow.self) { … }`.
    public func changes<P: Projection & SendableMetatype>(as type: P.Type) throws -> Changes<[P]>
    where P.ProjectionBindingType.EntityType == E {
        let entities = try observedEntities()
        return Changes(store: box.store, entities: entities, current: { try self.find(as: P.self) })
    }

    /// Runs the query on `queue` now and after each commit that changes its entity or an entity
    /// it links to, and hands `handler` the results as projections `P` or the error (bursts
    /// coalesce into one run). Keep the returned observation: releasing it stops the calls.
    public func observe<P: Projection & SendableMetatype>(as type: P.Type, on queue: DispatchQueue,
                                                           _ handler: @escaping @Sendable (Result<[P], any Error>) -> Void) throws -> ChangeObservation
    where P.ProjectionBindingType.EntityType == E {
        let entities = try observedEntities()
        return ChangeObservation(store: box.store, entities: entities, queue: queue) {
            handler(Result { try self.find(as: P.self) })
        }
    }
}
