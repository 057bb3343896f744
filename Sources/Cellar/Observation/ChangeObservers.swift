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
/// transaction records them. A journal observer (the store's live queries, together) gets those
/// before the commit is visible, in commit order (`record`), so that a reader at commit N knows
/// every change up to N.
final class ChangeObservers: Sendable {
    private struct Entry: Sendable {
        let entities: Set<UInt32>
        let wantsIds: Bool
        /// For journal observers (live queries): gets each commit's changes before it becomes
        /// visible (see `record`).
        let journal: LiveJournal?
        let signal: @Sendable (CommittedChanges?) -> Void
        let finish: @Sendable () -> Void

        func observes(_ entities: [UInt32]?) -> Bool {
            entities.map { $0.contains { self.entities.contains($0) } } ?? true
        }
    }

    private struct State {
        var next = 0
        var byToken: [Int: Entry] = [:]
        /// `byToken`'s values, kept for the commits (which read it without building it).
        var all: [Entry] = []
    }

    private let entries = Locked(State())
    /// The id of the last commit that reached its publication (`publishing`), observed or not.
    /// A journal observer that registers reads it after it counts itself in `count`, and a
    /// commit stores it before it reads `count` (both sequentially consistent): either the
    /// commit sees the observer and records for it, or the observer sees the commit's id.
    private let lastPublishing = ManagedAtomic<UInt64>(0)
    /// How many observers there are, for the commit's check without the lock. Sequentially
    /// consistent: an observer registers before it reads its first value, and a commit looks
    /// again after it published (see `committed`), so no commit falls between the two.
    private let count = ManagedAtomic<Int>(0)
    /// How many observers want the changed objects (a write transaction records them then).
    private let idCount = ManagedAtomic<Int>(0)
    /// The entities each tree belongs to, by tree name.
    private let treeEntities: [String: [UInt32]]
    /// Called by each commit after its `record` (or where it had no one to record for), before
    /// it becomes visible (tests widen that window with it; set before any commit).
    nonisolated(unsafe) var recordHook: (@Sendable () -> Void)?

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
        insert(Entry(entities: entities, wantsIds: wantsIds, journal: nil, signal: signal, finish: finish)).token
    }

    /// Registers a journal observer of `entities` (a live query): `journal` gets, in commit
    /// order, each commit that changed them with its id and what it changed (nil: not known
    /// object by object), before the commit becomes visible to readers; `signal` follows once it
    /// is visible, when the journal asks for it. Returns the token and the id of the last commit
    /// published before this observer registered (recorded for others, or for no one): commits
    /// after it are all recorded to it, while a reader opened now may still miss that one.
    func addJournal(entities: Set<UInt32>, journal: LiveJournal,
                    signal: @escaping @Sendable () -> Void) -> (token: Int, lastPublished: UInt64) {
        insert(Entry(entities: entities, wantsIds: true, journal: journal, signal: { _ in signal() }, finish: {}))
    }

    private func insert(_ entry: Entry) -> (token: Int, lastPublished: UInt64) {
        if entry.wantsIds { idCount.wrappingIncrement(ordering: .sequentiallyConsistent) }
        let token = entries.withLock { state in
            let token = state.next
            state.next += 1
            state.byToken[token] = entry
            state.all.append(entry)
            return token
        }
        count.wrappingIncrement(ordering: .sequentiallyConsistent)
        // After the count (see `lastPublishing`): a commit that found no one to record for has
        // its id here; one that recorded after the insert above recorded for this observer too.
        return (token, lastPublishing.load(ordering: .sequentiallyConsistent))
    }

    /// Removes an observer; nothing when it is gone already.
    func remove(_ token: Int) {
        let removed: Entry? = entries.withLock { state in
            guard let removed = state.byToken.removeValue(forKey: token) else { return nil }
            state.all = Array(state.byToken.values)
            return removed
        }
        guard let removed else { return }
        count.wrappingDecrement(ordering: .sequentiallyConsistent)
        if removed.wantsIds { idCount.wrappingDecrement(ordering: .sequentiallyConsistent) }
    }

    /// The entities behind `changedTrees` (nil: not collected, every entity).
    private func entities(of changedTrees: Set<String>?) -> [UInt32]? {
        guard let changedTrees else { return nil }
        var changed: [UInt32] = []
        for name in changedTrees {
            for entity in treeEntities[name] ?? [] where !changed.contains(entity) { changed.append(entity) }
        }
        return changed
    }

    /// Every commit, while it is being published (in the log, not yet visible; under the writer
    /// slot, so in commit order), before it looks whether anyone observes: a journal observer
    /// that registers from now on learns that this commit may be missing from a snapshot it
    /// opens before the commit is visible (see `addJournal`).
    func publishing(txnId: UInt64) {
        lastPublishing.store(txnId, ordering: .sequentiallyConsistent)
    }

    /// While commit `txnId` is being published, after `publishing`, when someone observes:
    /// hands it to the journal observers of the entities behind `changedTrees` (every one when
    /// nil). `changes`: what it put and removed, when recorded.
    func record(txnId: UInt64, changedTrees: Set<String>?, changes: CommittedChanges?) {
        let all = entries.withLock { $0.all }
        let entities = entities(of: changedTrees)
        for entry in all {
            if let journal = entry.journal, entry.observes(entities) {
                journal.record(txnId, changedTrees == nil ? nil : changes)
            }
        }
    }

    /// After a commit: signals the observers of the entities behind `changedTrees`; every
    /// observer when the commit did not collect them (nil: there was no observer before it).
    /// `changes`: the objects the commit put and removed, when it recorded them.
    func committed(changedTrees: Set<String>?, changes: CommittedChanges? = nil) {
        let entities = entities(of: changedTrees)
        let all = entries.withLock { $0.all }
        for entry in all {
            if let journal = entry.journal {
                // Recorded before; signalled only when that asked for an update.
                if journal.takeSignal() { entry.signal(nil) }
            } else if entry.observes(entities) {
                entry.signal(entry.wantsIds && entities != nil ? changes : nil)
            }
        }
    }

    /// When the store closes: every stream ends, and no observer is signalled again.
    func finishAll() {
        let finished = entries.withLock { state in
            let all = state.all
            state.byToken = [:]
            state.all = []
            return all
        }
        count.wrappingDecrement(by: finished.count, ordering: .sequentiallyConsistent)
        idCount.wrappingDecrement(by: finished.filter(\.wantsIds).count, ordering: .sequentiallyConsistent)
        for entry in finished { entry.finish() }
    }
}
