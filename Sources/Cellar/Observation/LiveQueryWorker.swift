import Dispatch
import Foundation

/// The work behind a ``LiveResults``: collects what commits changed, computes each update on the
/// store's live-query thread (`LiveQueryExecutor`: never the writer's thread, never the delivery
/// queue), then hands it to the delivery queue. It holds the results object weakly, so releasing that stops everything.
///
/// **One snapshot per update.** The store records each commit's changed objects to the worker's
/// journal before the commit becomes visible, in commit order (`ChangeObservers.record`). An
/// update opens a read transaction at some commit N, takes the journal's entries up to N (all of
/// them are there), and computes the results of N from the previous results and those objects
/// (or by running the query in that same transaction). Entries after N stay for the next update,
/// which their commits' signals schedule once they are visible.
final class LiveQueryWorker<E: EntityInspectable & SendableMetatype>: @unchecked Sendable {
    // Thread safety: `journal` is itself thread-safe; `cancelled`, `token`, `registeredAfter`,
    // `runs`, `lastUpdate`, `lastDuration`, `waiting` and `delivered` under `lock`; `current`,
    // `currentObjects`, `currentSet`, `builder`, `started` and `rerunNext` only on the executor's
    // thread.
    private let query: Query<E>
    private let compiled: CompiledQuery
    private let entity: UInt32
    private let observed: Set<UInt32>
    /// Whether an update can be made from the changed objects alone (no order, no links, no
    /// vector search); else the query runs again.
    private let incremental: Bool
    private let delivery: DispatchQueue
    private let executor: LiveQueryExecutor
    private let observers: ChangeObservers

    private let lock = NSLock()
    /// The commits recorded and not yet taken by an update.
    private let journal = LiveJournal()
    private var cancelled = false
    private var token: Int?
    /// The last commit recorded before this worker registered: its changes may be missing from
    /// the journal while the first result was read before it.
    private var registeredAfter: UInt64 = 0

    /// The current results: their ids, objects (in the same order) and id set.
    private var current: [Id] = []
    private var currentObjects = LiveObjects<E>()
    private var currentSet: Set<Id> = []
    /// With `hashing`: the hashes of the current objects' stored records, in the same order.
    private var currentHashes: [UInt64] = []
    /// Whether "modified" is judged by a hash of the stored record (an incremental query that
    /// watches every property): a changed object is then built only when it came or its record
    /// differs, and nothing is encoded. Else by encoding the old and new objects (`differ`).
    /// Hasher's 64 bits, seeded per process: two different records hash alike with a chance of
    /// about one in 2^64, and would then miss one modification.
    private let hashing: Bool
    /// Builds stored forms: "modified" is judged by comparing an object's stored form before
    /// and after (so an app that changes an object it was handed, without putting it, changes
    /// what the next comparison sees: treat the results as read-only).
    private let builder = RecordBuilder()
    /// The properties a modification is judged by (nil: the whole stored object).
    private let watched: [PropertySchema]?
    private var started = false
    /// Whether the next update must run the query again (its journal may lack a commit).
    private var rerunNext = false
    /// When the last update started (uptime ns; 0: none yet); under `lock`.
    private var lastUpdate: UInt64 = 0
    /// How long the last update took (ns); under `lock`.
    private var lastDuration: UInt64 = 0
    /// Under a steady stream of commits, the gap between two updates' starts is at least this
    /// many times the last update's duration: a live query keeps to about a twentieth of a core.
    static var busyFactor: UInt64 { 19 }
    /// The longest gap the busy factor may impose: 200 ms.
    static var maximumInterval: UInt64 { 200_000_000 }
    /// The shortest time between two updates' starts: 10 ms.
    static var minimumInterval: UInt64 { 10_000_000 }
    private var runs = 0
    var queryRuns: Int { lock.withLock { runs } }

    init(query: Query<E>, delivery: DispatchQueue, properties: [Property<E>]?) throws {
        self.query = query
        compiled = try query.compiled
        let schema = compiled.schema
        watched = try properties?.map { try schema.property($0.id, named: $0.name) }
        entity = compiled.schema.id.id
        observed = try query.observedEntities()
        incremental = compiled.orders.isEmpty && compiled.links.isEmpty && compiled.vector == nil
        hashing = incremental && properties == nil
        self.delivery = delivery
        observers = query.box.store.observers
        executor = query.box.store.liveQueries
    }

    /// Registers with the store and schedules the first result.
    func start(publishingTo results: LiveResults<E>) {
        weak let target = results
        let publish: @Sendable (Update) -> Void = { [weak self] update in
            self?.handOver(update) { objects, ids, change, snapshot in
                nonisolated(unsafe) let objects = objects
                target?.publish(objects, ids, change, snapshot: snapshot)
            }
        }
        let fail: @Sendable (CellarError) -> Void = { [weak self] error in
            self?.deliver { target?.fail(error) }
        }
        let (token, lastRecorded) = observers.addJournal(entities: observed, journal: journal, signal: { [weak self] in
            self?.schedule(publish: publish, fail: fail)
        })
        lock.withLock { (self.token, registeredAfter) = (token, lastRecorded) }
        if journal.requestUpdate() { schedule(publish: publish, fail: fail) }
    }

    func cancel() {
        let token: Int? = lock.withLock {
            cancelled = true
            defer { self.token = nil }
            return self.token
        }
        journal.close()
        if let token { observers.remove(token) }
    }

    /// An update computed but not yet run on the delivery queue: a newer one replaces it (a
    /// slow consumer gets the latest results, not a backlog), its change then computed against
    /// what was last delivered, its modified objects the union of both.
    private var waiting: (update: Update, modified: Set<Id>, initial: Bool, folded: Bool)?
    /// The ids the delivery queue was last handed (nil: nothing yet).
    private var delivered: [Id]?

    /// Hands an update to the delivery queue, folding it into one still waiting there.
    private func handOver(_ update: Update, _ body: @escaping @Sendable (LiveObjects<E>, [Id], ResultsChange, UInt64) -> Void) {
        // An object that left, came or moved in either update may have changed between the two
        // (it did, unless it only moved): it counts as modified if it stays.
        let touched = update.contentChanged.union(update.change.insertedIds).union(update.change.deletedIds)
        let schedule: Bool = lock.withLock {
            if let previous = waiting {
                // Folded: the change is computed again at delivery, against what was delivered.
                waiting = (update, previous.modified.union(touched), previous.initial, true)
                return false
            }
            waiting = (update, touched, update.change.isInitial, false)
            return true
        }
        guard schedule else { return }
        deliver { [self] in
            let taken: (update: Update, change: ResultsChange)? = lock.withLock {
                guard let waiting else { return nil }
                self.waiting = nil
                let base = delivered
                delivered = waiting.update.ids
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
            guard !lock.withLock({ cancelled }) else { return }
            body()
        }
    }

    /// Schedules an update (the journal marked it scheduled: a commit asked for one, or the
    /// first result is due).
    private func schedule(publish: @escaping @Sendable (Update) -> Void, fail: @escaping @Sendable (CellarError) -> Void) {
        // At most one update per `minimumInterval`, or per 20 times the last update's duration
        // when that is longer (at most `maximumInterval`): a burst of commits is folded into a
        // few updates instead of one each, and the updates leave the cores to the writer (the
        // first after a quiet time starts at once).
        let due: UInt64? = lock.withLock {
            guard !cancelled else { return nil }
            let now = DispatchTime.now().uptimeNanoseconds
            let gap = min(Self.maximumInterval, max(Self.minimumInterval, (Self.busyFactor + 1) &* lastDuration))
            return lastUpdate == 0 ? now : max(now, lastUpdate &+ gap)
        }
        guard let due else { return }
        executor.schedule(at: due) { [self] in
            // Before the snapshot is opened: a signal from now on schedules another update, and
            // every commit signalled before now is in the snapshot.
            journal.beginUpdate()
            lock.withLock { lastUpdate = DispatchTime.now().uptimeNanoseconds }
            do {
                let started = DispatchTime.now().uptimeNanoseconds
                let (update, remaining) = try query.box.store.inReadContext { try self.update(in: $0) }
                // The first result (a full run, taken once) does not set the pace of the updates.
                let took = update?.change.isInitial == true ? 0 : DispatchTime.now().uptimeNanoseconds &- started
                lock.withLock { lastDuration = took }
                if let update { publish(update) }
                // Commits recorded but not yet visible when the snapshot was opened: their signal
                // may have come before this update began (and scheduled nothing).
                if remaining && journal.requestUpdate() { schedule(publish: publish, fail: fail) }
            } catch {
                let wrapped = CellarError.wrap(error)
                fail(wrapped as? CellarError ?? CellarError.illegalArgument("live query update failed: \(wrapped)"))
            }
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

    /// The results in `context`'s snapshot and their change from the previous ones (nil when
    /// they did not change), and whether the journal holds newer commits.
    private func update(in context: TransactionContext) throws -> (Update?, remaining: Bool) {
        let snapshot = context.read!.transactionId
        // The journal holds every commit up to the snapshot that changed the observed entities
        // since this worker registered (each was recorded before it became visible).
        let (taken, remaining) = journal.take(through: snapshot)
        return (try update(in: context, snapshot: snapshot, taken: taken), remaining)
    }

    /// The results in `context`'s snapshot, given what the commits up to it changed.
    private func update(in context: TransactionContext, snapshot: UInt64, taken: [CommittedChanges?]) throws -> Update? {
        let registeredAfter = lock.withLock { self.registeredAfter }
        if !started {
            started = true
            // A commit recorded before this worker registered but not yet in this snapshot is
            // missing from the journal: the next update runs the query.
            rerunNext = snapshot < registeredAfter
            let (ids, found) = try rerun()
            (current, currentObjects, currentSet) = (ids, LiveObjects(found.map(ObjectCell.init)), Set(ids))
            return Update(objects: currentObjects, ids: ids, change: .initial(ids), contentChanged: [], snapshot: snapshot)
        }
        // The objects of the query's entity that changed (nil: not known).
        var changed: Set<Id>? = rerunNext ? nil : []
        for changes in taken {
            guard let ids = changes?.ids(of: entity) else {
                changed = nil
                break
            }
            changed?.formUnion(ids)
        }
        guard rerunNext || !taken.isEmpty else { return nil }
        rerunNext = false
        // With links or a vector search, whether a changed object matches depends on others.
        guard let changed, compiled.links.isEmpty, compiled.vector == nil else {
            return try adoptRun(changed: changed, snapshot: snapshot)
        }
        if changed.isEmpty { return nil }
        if hashing { return try adoptRecords(changed.sorted(), context: context, snapshot: snapshot) }
        // Which of the changed objects match now.
        var matching: [Id: E] = [:]
        let (schema, condition, box) = (compiled.schema, compiled.condition, query.box)
        for id in changed {
            try context.withRecord(schema, id) { record in
                guard let record else { return }
                if try condition?.evaluate(RecordReader(record), id: id, links: [], context: context) ?? true {
                    matching[id] = try box.object(id: id, record: record)
                }
            }
        }
        // None of the query's objects changed and none came: nothing to publish.
        if matching.isEmpty && currentSet.isDisjoint(with: changed) { return nil }
        guard incremental else { return try adoptRun(changed: changed, snapshot: snapshot) }
        return try adoptChanges(changed.sorted(), matching, snapshot: snapshot)
    }

    /// Runs the query (in the thread's read transaction): its ids and objects (with `hashing`,
    /// also the hashes of their records, into `currentHashes`).
    private func rerun() throws -> ([Id], [E]) {
        lock.withLock { runs += 1 }
        guard hashing else {
            let found = try query.find()
            return (found.map { query.box.binding.id(of: $0) }, found)
        }
        var ids: [Id] = [], found: [E] = [], hashes: [UInt64] = []
        let box = query.box
        try query.visitRecords(offset: 0, limit: nil) { id, record in
            ids.append(id)
            found.append(try box.object(id: id, record: record))
            hashes.append(Self.hash(record))
            return true
        }
        currentHashes = hashes
        return (ids, found)
    }

    /// The hash of a stored record (see `hashing`).
    private static func hash(_ record: UnsafeRawBufferPointer) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(bytes: record)
        return UInt64(bitPattern: Int64(hasher.finalize()))
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

    /// Applies the changed objects `changed` (ascending) to results in id order (no order, no
    /// links): each one left (it no longer matches or is gone), came (`matching` has it and the
    /// results did not), or stayed (modified when its stored form differs). Each is found by
    /// binary search; the id list is copied around them and only the chunks of objects they
    /// touch are rebuilt.
    private func adoptChanges(_ changed: [Id], _ matching: [Id: E], snapshot: UInt64) throws -> Update? {
        var change = ResultsChange(deletions: [], insertions: [], modifications: [], modificationsInPrevious: [],
                                   deletedIds: [], insertedIds: [], modifiedIds: [], isInitial: false)
        var edits: [LiveObjects<E>.Edit] = []
        var contentChanged = Set<Id>()
        var nextIds: [Id] = []
        nextIds.reserveCapacity(current.count + changed.count)
        // `current[..<copied]` is in `nextIds` already.
        var copied = 0
        for id in changed {
            let at = Self.lowerBound(of: id, in: current)
            let isCurrent = at < current.count && current[at] == id
            if let object = matching[id] {
                if !isCurrent {
                    nextIds.append(contentsOf: current[copied..<at])
                    copied = at
                    change.insertions.append(nextIds.count)
                    change.insertedIds.append(id)
                    nextIds.append(id)
                    edits.append(.init(position: at, kind: .insert(ObjectCell(object))))
                } else if try differ(currentObjects[at].value, object, id: id) {
                    nextIds.append(contentsOf: current[copied..<at])
                    copied = at + 1
                    change.modifications.append(nextIds.count)
                    change.modificationsInPrevious.append(at)
                    change.modifiedIds.append(id)
                    nextIds.append(id)
                    edits.append(.init(position: at, kind: .replace(ObjectCell(object))))
                    contentChanged.insert(id)
                }
            } else if isCurrent {
                nextIds.append(contentsOf: current[copied..<at])
                copied = at + 1
                change.deletions.append(at)
                change.deletedIds.append(id)
                edits.append(.init(position: at, kind: .remove))
            }
        }
        if edits.isEmpty { return nil }
        nextIds.append(contentsOf: current[copied...])
        currentSet.subtract(change.deletedIds)
        currentSet.formUnion(change.insertedIds)
        current = nextIds
        currentObjects = currentObjects.applying(edits)
        return Update(objects: currentObjects, ids: nextIds, change: change, contentChanged: contentChanged, snapshot: snapshot)
    }

    /// `adoptChanges` for `hashing`: reads each changed object's record in `context` once, and
    /// builds the object only when it came or its record's hash differs from the current one's.
    private func adoptRecords(_ changed: [Id], context: TransactionContext, snapshot: UInt64) throws -> Update? {
        var change = ResultsChange(deletions: [], insertions: [], modifications: [], modificationsInPrevious: [],
                                   deletedIds: [], insertedIds: [], modifiedIds: [], isInitial: false)
        var edits: [LiveObjects<E>.Edit] = []
        var nextIds: [Id] = [], nextHashes: [UInt64] = []
        nextIds.reserveCapacity(current.count + changed.count)
        nextHashes.reserveCapacity(current.count + changed.count)
        // `current[..<copied]` is in `nextIds` already (and their hashes in `nextHashes`).
        var copied = 0
        func copy(upTo end: Int, skipping: Bool) {
            nextIds.append(contentsOf: current[copied..<end])
            nextHashes.append(contentsOf: currentHashes[copied..<end])
            copied = skipping ? end + 1 : end
        }
        let (schema, condition, box) = (compiled.schema, compiled.condition, query.box)
        for id in changed {
            let at = Self.lowerBound(of: id, in: current)
            let isCurrent = at < current.count && current[at] == id
            try context.withRecord(schema, id) { record in
                let matches = try record.map {
                    try condition?.evaluate(RecordReader($0), id: id, links: [], context: context) ?? true
                } ?? false
                if let record, matches {
                    let hash = Self.hash(record)
                    if !isCurrent {
                        copy(upTo: at, skipping: false)
                        change.insertions.append(nextIds.count)
                        change.insertedIds.append(id)
                        nextIds.append(id)
                        nextHashes.append(hash)
                        edits.append(.init(position: at, kind: .insert(ObjectCell(try box.object(id: id, record: record)))))
                    } else if hash != currentHashes[at] {
                        copy(upTo: at, skipping: true)
                        change.modifications.append(nextIds.count)
                        change.modificationsInPrevious.append(at)
                        change.modifiedIds.append(id)
                        nextIds.append(id)
                        nextHashes.append(hash)
                        edits.append(.init(position: at, kind: .replace(ObjectCell(try box.object(id: id, record: record)))))
                    }
                } else if isCurrent {
                    copy(upTo: at, skipping: true)
                    change.deletions.append(at)
                    change.deletedIds.append(id)
                    edits.append(.init(position: at, kind: .remove))
                }
            }
        }
        if edits.isEmpty { return nil }
        copy(upTo: current.count, skipping: false)
        currentSet.subtract(change.deletedIds)
        currentSet.formUnion(change.insertedIds)
        (current, currentHashes) = (nextIds, nextHashes)
        currentObjects = currentObjects.applying(edits)
        return Update(objects: currentObjects, ids: nextIds, change: change, contentChanged: Set(change.modifiedIds),
                      snapshot: snapshot)
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

    /// Whether two versions of object `id` differ in their stored form (in the watched
    /// properties only, when some are named).
    private func differ(_ old: E, _ new: E, id: Id) throws -> Bool {
        let (a, b) = (try encode(old), try encode(new))
        guard a != b else { return false }
        guard let watched else { return true }
        return try a.withUnsafeBytes { a in
            try b.withUnsafeBytes { b in
                let (ra, rb) = (try RecordReader(a), try RecordReader(b))
                return try watched.contains { try ra.value(of: $0, id: id) != rb.value(of: $0, id: id) }
            }
        }
    }

    /// The stored form of `object` (its record, as a put would write it).
    private func encode(_ object: E) throws -> [UInt8] {
        let binding = query.box.binding
        builder.start(slotCount: binding.slotCount)
        try binding.write(object, to: builder)
        return Array(builder.finished)
    }
}
