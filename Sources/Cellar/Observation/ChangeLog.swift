/// The objects a write transaction changed, by entity: recorded while it writes when someone
/// observes with precision (live queries, one object's changes), and handed to the observers
/// after the commit as ``CommittedChanges``. A transaction that does not commit drops it.
///
/// What is recorded: every object put (inserted or replaced) and every object removed. What is
/// not: a change to an object's relations alone (the link trees), and `removeAll`, which marks
/// its whole entity instead. Past `maximumIdsPerEntity` objects of one entity in one transaction
/// (an import), the entity is marked whole too: the log's memory stays bounded however large the
/// transaction, and its observers learn that anything of the entity may have changed.
@usableFromInline
final class ChangeLog {
    /// How many objects of one entity a transaction's log names before it marks the entity whole.
    static let maximumIdsPerEntity = 100_000

    /// Per entity id, the objects put or removed.
    private(set) var ids: [UInt32: Set<Id>] = [:]
    /// Entities whose changes were not recorded object by object.
    private(set) var whole: Set<UInt32> = []

    init() {}

    /// Records that object `id` of entity `entity` was put or removed (nothing when the entity is
    /// marked whole).
    func note(_ entity: UInt32, _ id: Id) {
        if !whole.isEmpty, whole.contains(entity) { return }
        guard ids[entity, default: []].insert(id).inserted else { return }
        if ids[entity]!.count > Self.maximumIdsPerEntity {
            ids[entity] = nil
            whole.insert(entity)
        }
    }

    /// Records that object `id` of `schema` was put or removed.
    @usableFromInline
    func note(_ schema: EntitySchema, _ id: Id) {
        note(schema.id.id, id)
    }

    /// Records that entity `entity` changed in a way not recorded per object.
    func noteWhole(_ entity: UInt32) {
        whole.insert(entity)
        ids[entity] = nil
    }

    /// What was recorded, for the observers.
    var committed: CommittedChanges { CommittedChanges(ids: ids, whole: whole) }
}

/// What one commit (or several, coalesced) changed, as far as the store recorded it: the objects
/// per entity, and the entities it changed without saying which objects.
struct CommittedChanges: Sendable {
    var ids: [UInt32: Set<Id>]
    var whole: Set<UInt32>

    /// The objects of `entity` changed; nil when not known object by object.
    func ids(of entity: UInt32) -> Set<Id>? {
        whole.contains(entity) ? nil : (ids[entity] ?? [])
    }

    /// These changes followed by `later`.
    mutating func merge(_ later: CommittedChanges) {
        for (entity, set) in later.ids { ids[entity, default: []].formUnion(set) }
        whole.formUnion(later.whole)
    }
}
