/// Several entities observed as one (as GRDB's `ValueObservation` tracks several tables): built
/// from boxes and queries, then handed to ``Store/changes(in:value:)``, which computes a value
/// now and again after each commit that changes any entity in the region.
///
/// ```swift
/// let region = try ObservationRegion().including(notes).including(openTickets)
/// for try await (noteCount, tickets) in try store.changes(in: region, value: { (try notes.count(), try openTickets.find()) }) {
///     show(noteCount, tickets)
/// }
/// ```
public struct ObservationRegion: Sendable {
    /// The entity ids in the region.
    let entities: Set<UInt32>

    /// An empty region.
    public init() { entities = [] }

    private init(_ entities: Set<UInt32>) { self.entities = entities }

    /// This region with `box`'s entity.
    public func including<E>(_ box: Box<E>) throws -> ObservationRegion {
        ObservationRegion(entities.union([try box.schema.get().id.id]))
    }

    /// This region with `query`'s entity and every entity its links reach.
    public func including<E: SendableMetatype>(_ query: Query<E>) throws -> ObservationRegion {
        ObservationRegion(entities.union(try query.observedEntities()))
    }
}

extension Store {
    /// `value()` now, then again after each commit that changes an entity of `region` (commits
    /// that come faster than the loop takes values coalesce, as ``Changes`` describes). Each
    /// value is computed in a read transaction of its own, so what it reads from several
    /// entities is one consistent snapshot.
    public func changes<T>(in region: ObservationRegion, value: @escaping @Sendable () throws -> T) throws -> Changes<T> {
        guard !region.entities.isEmpty else {
            throw CellarError.illegalArgument("changes(in:value:): the region is empty; include the boxes or queries whose changes matter")
        }
        return Changes(store: self, entities: region.entities, current: { [self] in try self.runInReadOnlyTransaction { try value() } })
    }
}
