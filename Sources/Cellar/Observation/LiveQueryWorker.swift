import CellarStorage
import Dispatch
import Foundation

/// The work behind a ``LiveResults``: one member of the store's `LiveQueryHub`, which computes
/// every update on the store's live-query thread (never the writer's thread, never the delivery
/// queue); the worker keeps the results and hands each update to the delivery queue. It holds
/// the results object weakly, so releasing that stops everything.
///
/// **One snapshot per update.** Each pass of the hub opens a read transaction at some commit N
/// and knows every object the commits up to N changed (see `LiveQueryHub`). The worker computes
/// the results of N from its previous results and those objects (or by running the query in
/// that same transaction): every publication is exactly the query's result in one commit.
final class LiveQueryWorker<E: EntityInspectable & SendableMetatype>: LiveQueryMember, @unchecked Sendable {
    // Thread safety: what the delivery queue and the app's threads share is in `shared`, under
    // its lock; everything else that changes does so only on the live-query thread (in the hub's
    // passes).
    private let query: Query<E>
    private let compiled: CompiledQuery
    let entity: UInt32
    var schema: EntitySchema { compiled.schema }
    var store: Store { query.box.store }
    private let observed: Set<UInt32>
    /// Whether an update can be made from the changed objects alone (no order, no links, no
    /// vector search); else the query runs again.
    private let incremental: Bool
    private let delivery: DispatchQueue
    private let hub: LiveQueryHub

    private struct Shared {
        var cancelled = false
        /// Where updates go (nil once released).
        weak var target: LiveResults<E>?
        /// An update computed but not yet run on the delivery queue: a newer one replaces it (a
        /// slow consumer gets the latest results, not a backlog), its change then computed
        /// against what was last delivered, its modified objects the union of both.
        var waiting: (update: Update, modified: Set<Id>, initial: Bool, folded: Bool)?
        /// The ids the delivery queue was last handed (nil: nothing yet).
        var delivered: [Id]?
        /// How many times the query ran.
        var runs = 0
    }

    private let shared = Locked(Shared())

    /// The current results: their ids, objects (in the same order) and id set.
    private var current: [Id] = []
    private var currentObjects = LiveObjects<E>()
    private var currentSet: Set<Id> = []
    /// With `incremental`: the hashes of the current objects' stored records, in the same order.
    /// The hub hands an incremental query each changed record; without watched properties it
    /// counts as modified when its hash differs (nothing is encoded), and an object is built only
    /// when it came or changed.
    private var currentHashes: [UInt64] = []
    /// Builds stored forms: "modified" is judged by comparing an object's stored form before
    /// and after (so an app that changes an object it was handed, without putting it, changes
    /// what the next comparison sees: treat the results as read-only).
    private let builder = RecordBuilder()
    /// The properties a modification is judged by (nil: the whole stored object).
    private let watched: [PropertySchema]?
    private var started = false
    /// Whether the next update must run the query again (a commit may be missing from the last
    /// run's snapshot and from the journal, or an update failed half-way).
    private var rerunNext = false
    /// The update being made from records in the current pass (see `consider`).
    private var merging: Merge?
    var queryRuns: Int { shared.withLock { $0.runs } }

    init(query: Query<E>, delivery: DispatchQueue, properties: [Property<E>]?) throws {
        self.query = query
        compiled = try query.compiled
        let schema = compiled.schema
        watched = try properties?.map { try schema.property($0.id, named: $0.name) }
        entity = compiled.schema.id.id
        observed = try query.observedEntities()
        incremental = compiled.orders.isEmpty && compiled.links.isEmpty && compiled.vector == nil
        self.delivery = delivery
        hub = query.box.store.liveQueries
    }

    /// Joins the store's hub, whose next pass makes the first result.
    func start(publishingTo results: LiveResults<E>) {
        shared.withLock { $0.target = results }
        hub.add(self)
    }

    func cancel() {
        shared.withLock { $0.cancelled = true }
        hub.remove(self)
    }

    /// Hands `update` to the delivery queue.
    private func publish(_ update: Update) {
        handOver(update) { [weak self] objects, ids, change, snapshot in
            nonisolated(unsafe) let objects = objects
            self?.shared.withLock { $0.target }?.publish(objects, ids, change, snapshot: snapshot)
        }
    }

    func failed(_ error: CellarError) {
        merging = nil
        rerunNext = true
        deliver { [weak self] in self?.shared.withLock { $0.target }?.fail(error) }
    }

    /// Hands an update to the delivery queue, folding it into one still waiting there.
    private func handOver(_ update: Update, _ body: @escaping @Sendable (LiveObjects<E>, [Id], ResultsChange, UInt64) -> Void) {
        // An object that left, came or moved in either update may have changed between the two
        // (it did, unless it only moved): it counts as modified if it stays.
        let touched = update.contentChanged.union(update.change.insertedIds).union(update.change.deletedIds)
        let schedule: Bool = shared.withLock { shared in
            if let previous = shared.waiting {
                // Folded: the change is computed again at delivery, against what was delivered.
                shared.waiting = (update, previous.modified.union(touched), previous.initial, true)
                return false
            }
            shared.waiting = (update, touched, update.change.isInitial, false)
            return true
        }
        guard schedule else { return }
        deliver { [self] in
            let taken: (update: Update, change: ResultsChange)? = shared.withLock { shared in
                guard let waiting = shared.waiting else { return nil }
                shared.waiting = nil
                let base = shared.delivered
                shared.delivered = waiting.update.ids
                let ids = waiting.update.ids
                let change = waiting.initial || base == nil
                    ? ResultsChange.initial(ids)
                    : waiting.folded ? ResultsChange.between(base!, ids, changed: waiting.modified) : waiting.update.change
                return (waiting.update, change)
            }
            if let taken, taken.change.isInitial || !taken.change.isEmpty {
                body(taken.update.objects, taken.update.ids, taken.change, taken.update.snapshot)
            }
        }
    }

    /// Runs `body` on the delivery queue unless cancelled by then.
    private func deliver(_ body: @escaping @Sendable () -> Void) {
        delivery.async { [self] in
            guard !shared.withLock({ $0.cancelled }) else { return }
            body()
        }
    }

    /// One computed update: the results, their change from the previous ones, the objects in
    /// both whose stored form changed (whatever their place), and the commit they are the state of.
    struct Update: @unchecked Sendable {
        let objects: LiveObjects<E>
        let ids: [Id]
        let change: ResultsChange
        let contentChanged: Set<Id>
        let snapshot: UInt64
    }

    // MARK: Passes

    var awaitsFirstResult: Bool { !started }

    /// The changed records can come one by one when the results are kept in id order and the
    /// pass knows which objects of the entity changed.
    func takesRecords(_ pass: LivePass) -> Bool {
        incremental && started && !rerunNext && pass.ids(of: entity) != nil
    }

    /// An update being made from the changed records: the new ids and hashes copied around the
    /// changed objects, the edits of the objects, and the change.
    private struct Merge {
        var change = ResultsChange(deletions: [], insertions: [], modifications: [], modificationsInPrevious: [],
                                   deletedIds: [], insertedIds: [], modifiedIds: [], isInitial: false)
        var edits: [LiveObjects<E>.Edit] = []
        var ids: [Id] = []
        var hashes: [UInt64] = []
        /// `current[..<copied]` is in `ids` already (and their hashes in `hashes`).
        var copied = 0
    }

    func consider(_ id: Id, record: UnsafeRawBufferPointer?, hash: UInt64, cell: inout AnyObject?,
                  context: TransactionContext) throws {
        let at = Self.lowerBound(of: id, in: current)
        let isCurrent = at < current.count && current[at] == id
        let matches = try record.map {
            try compiled.condition?.evaluate(RecordReader($0), id: id, links: [], context: context) ?? true
        } ?? false
        if matches, isCurrent, try !changed(at: at, to: record!, hash: hash, id: id) { return }
        if !matches && !isCurrent { return }
        if merging == nil {
            merging = Merge()
            merging!.ids.reserveCapacity(current.count + 8)
            merging!.hashes.reserveCapacity(current.count + 8)
        }
        // Copies the untouched ids before `at` (and skips the one at `at` when it is replaced or removed).
        func copy(skipping: Bool) {
            merging!.ids.append(contentsOf: current[merging!.copied..<at])
            merging!.hashes.append(contentsOf: currentHashes[merging!.copied..<at])
            merging!.copied = skipping ? at + 1 : at
        }
        guard matches, let record else {
            copy(skipping: true)
            merging!.change.deletions.append(at)
            merging!.change.deletedIds.append(id)
            merging!.edits.append(.init(position: at, kind: .remove))
            return
        }
        // The object, built once for all live queries of the entity.
        let object: ObjectCell<E>
        if let built = cell as? ObjectCell<E> {
            object = built
        } else {
            object = ObjectCell(try query.box.object(id: id, record: record))
            cell = object
        }
        copy(skipping: isCurrent)
        if isCurrent {
            merging!.change.modifications.append(merging!.ids.count)
            merging!.change.modificationsInPrevious.append(at)
            merging!.change.modifiedIds.append(id)
            merging!.edits.append(.init(position: at, kind: .replace(object)))
        } else {
            merging!.change.insertions.append(merging!.ids.count)
            merging!.change.insertedIds.append(id)
            merging!.edits.append(.init(position: at, kind: .insert(object)))
        }
        merging!.ids.append(id)
        merging!.hashes.append(hash)
    }

    func finishRecords(_ pass: LivePass) {
        guard var merge = merging else { return }
        merging = nil
        merge.ids.append(contentsOf: current[merge.copied...])
        merge.hashes.append(contentsOf: currentHashes[merge.copied...])
        currentSet.subtract(merge.change.deletedIds)
        currentSet.formUnion(merge.change.insertedIds)
        (current, currentHashes) = (merge.ids, merge.hashes)
        currentObjects = currentObjects.applying(merge.edits)
        publish(Update(objects: currentObjects, ids: current, change: merge.change,
                       contentChanged: Set(merge.change.modifiedIds), snapshot: pass.snapshot))
    }

    func update(in context: TransactionContext, pass: LivePass) throws {
        let snapshot = pass.snapshot
        if !started {
            // A commit recorded before the hub registered but not yet in this snapshot may be
            // missing from what the next pass knows: that one runs the query.
            rerunNext = pass.mayMissCommits
            let (ids, found) = try rerun()
            (current, currentObjects, currentSet) = (ids, LiveObjects(found.map(ObjectCell.init)), Set(ids))
            started = true
            publish(Update(objects: currentObjects, ids: ids, change: .initial(ids), contentChanged: [], snapshot: snapshot))
            return
        }
        guard rerunNext || pass.touches(observed) else { return }
        // The objects of the query's entity that changed (nil: not known).
        let changed = rerunNext ? nil : pass.ids(of: entity)
        // A run in a snapshot that may still miss a commit (it was not visible yet) leaves the
        // next pass to run again: only a run that sees every commit the journal never got ends it.
        rerunNext = pass.mayMissCommits
        // With links or a vector search, whether a changed object matches depends on others.
        guard let changed, compiled.links.isEmpty, compiled.vector == nil else {
            if let update = try adoptRun(changed: changed, snapshot: snapshot) { publish(update) }
            return
        }
        if changed.isEmpty { return }
        // An ordered query: whether any of the changed objects matches now.
        var anyMatches = false
        let (schema, condition) = (compiled.schema, compiled.condition)
        for id in changed where !anyMatches {
            try context.withRecord(schema, id) { record in
                guard let record else { return }
                anyMatches = try condition?.evaluate(RecordReader(record), id: id, links: [], context: context) ?? true
            }
        }
        // None of the query's objects changed and none came: nothing to publish.
        if !anyMatches && currentSet.isDisjoint(with: changed) { return }
        if let update = try adoptRun(changed: changed, snapshot: snapshot) { publish(update) }
    }

    /// Runs the query (in the thread's read transaction): its ids and objects (with
    /// `incremental`, also the hashes of their records, into `currentHashes`).
    private func rerun() throws -> ([Id], [E]) {
        shared.withLock { $0.runs += 1 }
        guard incremental else {
            let found = try query.find()
            return (found.map { query.box.binding.id(of: $0) }, found)
        }
        var ids: [Id] = [], found: [E] = [], hashes: [UInt64] = []
        let box = query.box
        try query.visitRecords(offset: 0, limit: nil, expecting: { count in
            ids.reserveCapacity(count)
            found.reserveCapacity(count)
            hashes.reserveCapacity(count)
        }) { id, record in
            ids.append(id)
            found.append(try box.object(id: id, record: record))
            hashes.append(LiveQueryHub.hash(record))
            return true
        }
        currentHashes = hashes
        return (ids, found)
    }

    /// Runs the query again and makes its results current; returns the update from the previous
    /// results, nil when nothing changed. The objects in both results that `changed` names
    /// (every one when nil) are compared: one whose stored form differs is modified.
    private func adoptRun(changed: Set<Id>?, snapshot: UInt64) throws -> Update? {
        let (ids, found) = try rerun()
        var modified = Set<Id>()
        var before: [Id: E] = [:]
        for (id, cell) in zip(current, currentObjects) where changed?.contains(id) ?? true { before[id] = cell.value }
        for (id, object) in zip(ids, found) {
            if let old = before[id], try differ(old, object, id: id) { modified.insert(id) }
        }
        let change = ResultsChange.between(current, ids, changed: modified)
        (current, currentObjects, currentSet) = (ids, LiveObjects(found.map(ObjectCell.init)), Set(ids))
        return change.isEmpty ? nil
            : Update(objects: currentObjects, ids: ids, change: change, contentChanged: modified, snapshot: snapshot)
    }

    /// The index of the first id in `ids` (ascending) that is not below `id`.
    private static func lowerBound(of id: Id, in ids: [Id]) -> Int {
        var (low, high) = (0, ids.count)
        while low < high {
            let mid = (low + high) / 2
            if ids[mid] < id { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Whether the current object at `at` changed to the stored `record` (hashed `hash`): its
    /// record's hash differs, and with watched properties, one of those values differs too.
    private func changed(at: Int, to record: UnsafeRawBufferPointer, hash: UInt64, id: Id) throws -> Bool {
        guard hash != currentHashes[at] else { return false }
        guard watched != nil else { return true }
        return try encode(currentObjects[at].value).withUnsafeBytes { try differ($0, record, id: id) }
    }

    /// Whether two versions of object `id` differ in their stored form (in the watched
    /// properties only, when some are named).
    private func differ(_ old: E, _ new: E, id: Id) throws -> Bool {
        let (a, b) = (try encode(old), try encode(new))
        guard a != b else { return false }
        return try a.withUnsafeBytes { a in try b.withUnsafeBytes { b in try differ(a, b, id: id) } }
    }

    /// Whether two different stored forms of object `id` differ in a watched property (any
    /// difference counts when none are named).
    private func differ(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, id: Id) throws -> Bool {
        guard let watched else { return true }
        let (ra, rb) = (try RecordReader(a), try RecordReader(b))
        return try watched.contains { try ra.value(of: $0, id: id) != rb.value(of: $0, id: id) }
    }

    /// The stored form of `object` (its record, as a put would write it).
    private func encode(_ object: E) throws -> [UInt8] {
        let binding = query.box.binding
        builder.start(slotCount: binding.slotCount)
        try binding.write(object, to: builder)
        return Array(builder.finished)
    }
}
