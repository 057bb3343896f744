import Atomics
import CellarStorage

/// The store's registry of change observers (`Box.changes()`, `Query.changes()`, `observe(on:)`):
/// after each commit, the observers of the entities it changed are signalled. A signal only
/// schedules work (a stream element, a queue block); what an observer computes runs later, in
/// a transaction of its own, after the commit's write lock was released.
///
/// Which entities a commit changed comes from the names of the trees the engine wrote: an
/// entity's tree is its own, a relation's trees (links and backlinks) count for both ends.
/// Observers that register `wantsIds` (live queries, one object's changes) also get which
/// objects the commit put or removed (see ChangeLog): while there is one, each write
/// transaction records them.
final class ChangeObservers: Sendable {
    private struct Entry: Sendable {
        let entities: Set<UInt32>
        let wantsIds: Bool
        let signal: @Sendable (CommittedChanges?) -> Void
        let finish: @Sendable () -> Void
    }

    private let entries = Locked<(next: Int, byToken: [Int: Entry])>((0, [:]))
    /// How many observers there are, for the commit's check without the lock. Sequentially
    /// consistent: an observer registers before it reads its first value, and a commit looks
    /// again after it published (see `committed`), so no commit falls between the two.
    private let count = ManagedAtomic<Int>(0)
    /// How many observers want the changed objects (a write transaction records them then).
    private let idCount = ManagedAtomic<Int>(0)
    /// The entities each tree belongs to, by tree name.
    private let treeEntities: [String: [UInt32]]

    init(model: Model) {
        var map: [String: [UInt32]] = [:]
        for entity in model.entities {
            map[StorageLayout.entityTree(entity.id.id)] = [entity.id.id]
            for relation in entity.relations {
                let ends = [entity.id.id, relation.targetId.id]
                map[StorageLayout.relationTree(relation.id.id)] = ends
                map[StorageLayout.backlinkTree(relation.id.id)] = ends
            }
        }
        treeEntities = map
    }

    /// Whether no one observes (the commit then skips collecting what changed).
    var isEmpty: Bool { count.load(ordering: .sequentiallyConsistent) == 0 }

    /// Whether an observer wants the changed objects (a write transaction then records them).
    var wantsIds: Bool { idCount.load(ordering: .sequentiallyConsistent) > 0 }

    /// Registers an observer of `entities`; returns the token that removes it.
    func add(entities: Set<UInt32>, signal: @escaping @Sendable () -> Void, finish: @escaping @Sendable () -> Void) -> Int {
        add(entities: entities, wantsIds: false, signal: { _ in signal() }, finish: finish)
    }

    /// Registers an observer of `entities` whose signal gets what each commit changed: the
    /// objects when `wantsIds` and the commit recorded them, else nil (not known object by
    /// object: a commit already being written when the observer registered, or `wantsIds` false).
    func add(entities: Set<UInt32>, wantsIds: Bool, signal: @escaping @Sendable (CommittedChanges?) -> Void,
             finish: @escaping @Sendable () -> Void) -> Int {
        if wantsIds { idCount.wrappingIncrement(ordering: .sequentiallyConsistent) }
        let token = entries.withLock { state in
            let token = state.next
            state.next += 1
            state.byToken[token] = Entry(entities: entities, wantsIds: wantsIds, signal: signal, finish: finish)
            return token
        }
        count.wrappingIncrement(ordering: .sequentiallyConsistent)
        return token
    }

    /// Removes an observer; nothing when it is gone already.
    func remove(_ token: Int) {
        guard let removed = entries.withLock({ $0.byToken.removeValue(forKey: token) }) else { return }
        count.wrappingDecrement(ordering: .sequentiallyConsistent)
        if removed.wantsIds { idCount.wrappingDecrement(ordering: .sequentiallyConsistent) }
    }

    /// After a commit: signals the observers of the entities behind `changedTrees`; every
    /// observer when the commit did not collect them (nil: there was no observer before it).
    /// `changes`: the objects the commit put and removed, when it recorded them.
    func committed(changedTrees: Set<String>?, changes: CommittedChanges? = nil) {
        var entities: Set<UInt32>?
        if let changedTrees {
            var changed = Set<UInt32>()
            for name in changedTrees { changed.formUnion(treeEntities[name] ?? []) }
            entities = changed
        }
        let signals = entries.withLock { state in
            state.byToken.values.filter { entry in entities.map { !$0.isDisjoint(with: entry.entities) } ?? true }
                .map { (signal: $0.signal, wantsIds: $0.wantsIds) }
        }
        for (signal, wantsIds) in signals { signal(wantsIds && entities != nil ? changes : nil) }
    }

    /// When the store closes: every stream ends, and no observer is signalled again.
    func finishAll() {
        let finished = entries.withLock { state in
            let all = Array(state.byToken.values)
            state.byToken = [:]
            return all
        }
        count.wrappingDecrement(by: finished.count, ordering: .sequentiallyConsistent)
        idCount.wrappingDecrement(by: finished.filter(\.wantsIds).count, ordering: .sequentiallyConsistent)
        for entry in finished { entry.finish() }
    }
}
