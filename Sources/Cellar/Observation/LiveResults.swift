import Dispatch
import Foundation
import Observation

/// A query's results that keep themselves up to date: after each commit that changes them, the
/// new results and exactly what changed (``ResultsChange``) are published on the delivery queue
/// (the main queue unless another is given). `@Observable`: a SwiftUI view that reads `results`
/// redraws when they change; elsewhere `withObservationTracking` sees the same.
///
/// ```swift
/// @Observable final class NotesModel {
///     let live: LiveResults<Note>
///     init(store: Store) throws {
///         live = try store.liveQuery(try store.box(for: Note.self).query { Note.done == false }.build())
///     }
/// }
/// // In a view: ForEach(model.live.results, id: \.id) { … }
/// ```
///
/// Read the properties on the delivery queue (for the main queue: on the main actor). The first
/// result is published shortly after creation (``lastChange`` then has `isInitial`). Updates
/// coalesce: commits that come while one is being computed are folded into the next, whose
/// change spans all of them. Nothing is published after ``cancel()`` or once the object is
/// released; neither holds the store open.
///
/// **What an update costs.** Every commit records which objects it put or removed. A commit
/// that changed none of the query's objects and made none of them match is dismissed after
/// checking those objects alone (no query run). For a query without an order, links to other
/// entities or a nearest-neighbour search, the results are updated from those objects alone
/// too. Otherwise (an order, links, a vector search, a `removeAll`, or an observer that
/// registered while the commit was being written) the query runs again and the change is
/// computed by comparing the two results.
@Observable
public final class LiveResults<E: EntityInspectable & SendableMetatype>: @unchecked Sendable {
    /// The current results, in the query's order.
    public private(set) var results: [E] = []
    /// The ids of `results`, in the same order.
    public private(set) var ids: [Id] = []
    /// What the last update changed (nil before the first result).
    public private(set) var lastChange: ResultsChange?
    /// The error of the last update that failed (the results are then those before it); nil
    /// after a successful one.
    public private(set) var error: CellarError?
    /// How many updates were published (the first result included).
    public private(set) var updateCount = 0

    @ObservationIgnored private let worker: LiveQueryWorker<E>
    /// Called on the delivery queue after each publication (tests).
    @ObservationIgnored var publishHook: (([Id], ResultsChange) -> Void)?
    /// How many times the query ran in full for this object (tests).
    var queryRuns: Int { worker.queryRuns }

    init(query: Query<E>, queue: DispatchQueue, properties: [Property<E>]?) throws {
        worker = try LiveQueryWorker(query: query, delivery: queue, properties: properties)
        worker.start(publishingTo: self)
    }

    /// Stops the updates (one already on its way to the delivery queue is dropped). Idempotent.
    public func cancel() { worker.cancel() }

    deinit { worker.cancel() }

    /// Called on the delivery queue.
    fileprivate func publish(_ objects: [E], _ ids: [Id], _ change: ResultsChange) {
        results = objects
        self.ids = ids
        lastChange = change
        error = nil
        updateCount += 1
        publishHook?(ids, change)
    }

    fileprivate func fail(_ error: CellarError) { self.error = error }
}

extension Store {
    /// Live results of `query`, published on `queue` (the main queue by default): see
    /// ``LiveResults``. Keep the returned object as long as you want the updates.
    ///
    /// - Parameters:
    ///   - query: The query whose results are kept up to date.
    ///   - queue: Where the results are published (and are to be read): the main queue unless
    ///     given; a serial queue.
    ///   - properties: When given, an object that stays in the results counts as modified only
    ///     when one of these properties changed (Realm's key-path filtering): a commit that
    ///     changes only other properties of the query's objects, and no membership or order,
    ///     publishes nothing. Nil (the default): any change of the stored object counts.
    public func liveQuery<E: EntityInspectable & SendableMetatype>(_ query: Query<E>, queue: DispatchQueue = .main,
                                                                  properties: [Property<E>]? = nil) throws -> LiveResults<E> {
        try LiveResults(query: query, queue: queue, properties: properties)
    }
}

/// The work behind a ``LiveResults``: collects what commits changed, computes each update on a
/// queue of its own (never the writer's thread, never the delivery queue), then hands it to the
/// delivery queue. It holds the results object weakly, so releasing that stops everything.
final class LiveQueryWorker<E: EntityInspectable & SendableMetatype>: @unchecked Sendable {
    // Thread safety: `pending`, `pendingUnknown`, `scheduled`, `cancelled`, `token`, `runs`,
    // `lastUpdate`, `lastDuration`, `waiting` and `delivered` under `lock`; `current`,
    // `currentObjects`, `currentSet`, `builder` and `started` only on `queue`.
    private let query: Query<E>
    private let compiled: CompiledQuery
    private let entity: UInt32
    private let observed: Set<UInt32>
    /// Whether an update can be made from the changed objects alone (no order, no links, no
    /// vector search); else the query runs again.
    private let incremental: Bool
    private let delivery: DispatchQueue
    private let queue = DispatchQueue(label: "cellar.live-query")
    private let observers: ChangeObservers

    private let lock = NSLock()
    private var pending: CommittedChanges?
    private var pendingUnknown = false
    private var scheduled = false
    private var cancelled = false
    private var token: Int?

    /// The current results: their ids, objects (in the same order) and id set.
    private var current: [Id] = []
    private var currentObjects: [E] = []
    private var currentSet: Set<Id> = []
    /// Builds stored forms: "modified" is judged by comparing an object's stored form before
    /// and after (so an app that changes an object it was handed, without putting it, changes
    /// what the next comparison sees: treat the results as read-only).
    private let builder = RecordBuilder()
    /// The properties a modification is judged by (nil: the whole stored object).
    private let watched: [PropertySchema]?
    private var started = false
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
        self.delivery = delivery
        observers = query.box.store.observers
    }

    /// Registers with the store and schedules the first result.
    func start(publishingTo results: LiveResults<E>) {
        weak let target = results
        let publish: @Sendable (Update) -> Void = { [weak self] update in
            self?.handOver(update) { objects, ids, change in
                nonisolated(unsafe) let objects = objects
                target?.publish(objects, ids, change)
            }
        }
        let fail: @Sendable (CellarError) -> Void = { [weak self] error in
            self?.deliver { target?.fail(error) }
        }
        let token = observers.add(entities: observed, wantsIds: true, signal: { [weak self] changes in
            self?.signal(changes, publish: publish, fail: fail)
        }, finish: {})
        lock.withLock { self.token = token }
        signal(nil, publish: publish, fail: fail)
    }

    func cancel() {
        let token: Int? = lock.withLock {
            cancelled = true
            defer { self.token = nil }
            return self.token
        }
        if let token { observers.remove(token) }
    }

    /// An update computed but not yet run on the delivery queue: a newer one replaces it (a
    /// slow consumer gets the latest results, not a backlog), its change then computed against
    /// what was last delivered, its modified objects the union of both.
    private var waiting: (objects: [E], ids: [Id], modified: Set<Id>, initial: Bool, change: ResultsChange?)?
    /// The ids the delivery queue was last handed (nil: nothing yet).
    private var delivered: [Id]?

    /// Hands an update to the delivery queue, folding it into one still waiting there.
    private func handOver(_ update: Update, _ body: @escaping @Sendable ([E], [Id], ResultsChange) -> Void) {
        let schedule: Bool = lock.withLock {
            if let previous = waiting {
                // An object that left, came or moved in either update may have changed between
                // the two (it did, unless it only moved): it counts as modified if it stays.
                let touched = update.contentChanged.union(update.change.insertedIds).union(update.change.deletedIds)
                // Folded: the change is computed again at delivery, against what was delivered.
                waiting = (update.objects, update.ids, previous.modified.union(touched), previous.initial, nil)
                return false
            }
            let touched = update.contentChanged.union(update.change.insertedIds).union(update.change.deletedIds)
            waiting = (update.objects, update.ids, touched, update.change.isInitial, update.change)
            return true
        }
        guard schedule else { return }
        deliver { [self] in
            let taken: (objects: [E], ids: [Id], change: ResultsChange)? = lock.withLock {
                guard let update = waiting else { return nil }
                waiting = nil
                let base = delivered
                delivered = update.ids
                let change = update.initial || base == nil
                    ? ResultsChange.initial(update.ids)
                    : update.change ?? ResultsChange.between(base!, update.ids, changed: update.modified)
                return (update.objects, update.ids, change)
            }
            if let taken, taken.change.isInitial || !taken.change.isEmpty { body(taken.objects, taken.ids, taken.change) }
        }
    }

    /// Runs `body` on the delivery queue unless cancelled by then.
    private func deliver(_ body: @escaping @Sendable () -> Void) {
        delivery.async { [self] in
            guard !lock.withLock({ cancelled }) else { return }
            body()
        }
    }

    /// A commit changed the observed entities (`changes` nil: not known object by object, or
    /// the first run): folds it into the pending update and schedules one when none is.
    private func signal(_ changes: CommittedChanges?, publish: @escaping @Sendable (Update) -> Void,
                        fail: @escaping @Sendable (CellarError) -> Void) {
        let schedule: Bool = lock.withLock {
            guard !cancelled else { return false }
            if let changes {
                if pending == nil { pending = changes } else { pending!.merge(changes) }
            } else {
                pendingUnknown = true
            }
            guard !scheduled else { return false }
            scheduled = true
            return true
        }
        guard schedule else { return }
        // At most one update per `minimumInterval`, or per 20 times the last update's duration
        // when that is longer (at most `maximumInterval`): a burst of commits is folded into a few updates instead of one
        // each, and the updates leave the cores to the writer (the first after a quiet time
        // starts at once).
        let now = DispatchTime.now().uptimeNanoseconds
        let (last, duration) = lock.withLock { (lastUpdate, lastDuration) }
        let gap = min(Self.maximumInterval, max(Self.minimumInterval, (Self.busyFactor + 1) &* duration))
        let due = last == 0 ? now : max(now, last &+ gap)
        queue.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: due)) { [self] in
            let (changes, unknown): (CommittedChanges?, Bool) = lock.withLock {
                lastUpdate = DispatchTime.now().uptimeNanoseconds
                let taken = (pending, pendingUnknown)
                (pending, pendingUnknown, scheduled) = (nil, false, false)
                return taken
            }
            do {
                let started = DispatchTime.now().uptimeNanoseconds
                let update = try update(changes: unknown ? nil : changes)
                // The first result (a full run, taken once) does not set the pace of the updates.
                let took = update?.change.isInitial == true ? 0 : DispatchTime.now().uptimeNanoseconds &- started
                lock.withLock { lastDuration = took }
                if let update { publish(update) }
            } catch {
                let wrapped = CellarError.wrap(error)
                fail(wrapped as? CellarError ?? CellarError.illegalArgument("live query update failed: \(wrapped)"))
            }
        }
    }

    /// One computed update: the results, their change from the previous ones, and the objects
    /// in both whose stored form changed (whatever their place).
    struct Update: @unchecked Sendable {
        let objects: [E]
        let ids: [Id]
        let change: ResultsChange
        let contentChanged: Set<Id>
    }

    /// The next results and their change, nil when the query's results did not change.
    private func update(changes: CommittedChanges?) throws -> Update? {
        let box = query.box
        if !started {
            started = true
            let (ids, found) = try rerun()
            (current, currentObjects, currentSet) = (ids, found, Set(ids))
            return Update(objects: found, ids: ids, change: .initial(ids), contentChanged: [])
        }
        // The objects of the query's entity that changed (nil: not known). With links or a vector
        // search, whether a changed object matches depends on others: the query runs again.
        let changed = changes?.ids(of: entity)
        guard let changed, compiled.links.isEmpty, compiled.vector == nil else {
            let (ids, found) = try rerun()
            return try adoptRun(ids, found)
        }
        if changed.isEmpty { return nil }
        // Which of the changed objects match now, read in one snapshot.
        var matching: [Id: E] = [:]
        let (schema, condition) = (compiled.schema, compiled.condition)
        try box.store.inReadContext { context in
            for id in changed {
                try context.withRecord(schema, id) { record in
                    guard let record else { return }
                    if try condition?.evaluate(RecordReader(record), id: id, links: [], context: context) ?? true {
                        matching[id] = try box.object(id: id, record: record)
                    }
                }
            }
        }
        // None of the query's objects changed and none came: nothing to publish.
        if matching.isEmpty && currentSet.isDisjoint(with: changed) { return nil }
        guard incremental else {
            let (ids, found) = try rerun()
            return try adoptRun(ids, found)
        }
        return try adoptChanges(changed.sorted(), matching)
    }

    /// Runs the query: its ids and objects.
    private func rerun() throws -> ([Id], [E]) {
        let found = try query.find()
        lock.withLock { runs += 1 }
        return (found.map { query.box.binding.id(of: $0) }, found)
    }

    /// Makes the query's new run (`ids`, `found`) current; returns the update from the previous
    /// results, nil when nothing changed. Every object in both is compared: one whose stored form
    /// differs is modified (the run's snapshot may hold commits not yet signalled, whose objects
    /// are not among the recorded ones yet).
    private func adoptRun(_ ids: [Id], _ found: [E]) throws -> Update? {
        var before: [Id: E] = [:]
        for (id, object) in zip(current, currentObjects) { before[id] = object }
        var modified = Set<Id>()
        for (id, object) in zip(ids, found) {
            if let old = before[id], try differ(old, object, id: id) { modified.insert(id) }
        }
        let change = ResultsChange.between(current, ids, changed: modified)
        (current, currentObjects, currentSet) = (ids, found, Set(ids))
        return change.isEmpty ? nil : Update(objects: found, ids: ids, change: change, contentChanged: modified)
    }

    /// Applies the changed objects `changed` (ascending) to results in id order (no order, no
    /// links): each one left (it no longer matches or is gone), came (`matching` has it and the
    /// results did not), or stayed (modified when its stored form differs). One pass over the
    /// results merges them; nothing else is rebuilt.
    private func adoptChanges(_ changed: [Id], _ matching: [Id: E]) throws -> Update? {
        var leaving = Set<Id>(), coming: [(id: Id, object: E)] = [], staying: [Id: E] = [:]
        for id in changed {
            let isCurrent = currentSet.contains(id)
            if let object = matching[id] {
                if !isCurrent {
                    coming.append((id, object))
                } else if let i = Self.position(of: id, in: current), try differ(currentObjects[i], object, id: id) {
                    staying[id] = object
                }
            } else if isCurrent {
                leaving.insert(id)
            }
        }
        if leaving.isEmpty && coming.isEmpty && staying.isEmpty { return nil }
        var change = ResultsChange(deletions: [], insertions: [], modifications: [], modificationsInPrevious: [],
                                   deletedIds: [], insertedIds: [], modifiedIds: [], isInitial: false)
        var nextIds: [Id] = [], nextObjects: [E] = []
        nextIds.reserveCapacity(current.count + coming.count)
        nextObjects.reserveCapacity(current.count + coming.count)
        var c = 0
        // Appends the coming objects whose ids are below `limit` (nil: all that are left).
        func insertComing(below limit: Id?) {
            while c < coming.count && limit.map({ coming[c].id < $0 }) ?? true {
                change.insertions.append(nextIds.count)
                change.insertedIds.append(coming[c].id)
                nextIds.append(coming[c].id)
                nextObjects.append(coming[c].object)
                c += 1
            }
        }
        for (i, id) in current.enumerated() {
            insertComing(below: id)
            if leaving.contains(id) {
                change.deletions.append(i)
                change.deletedIds.append(id)
                continue
            }
            if let object = staying[id] {
                change.modifications.append(nextIds.count)
                change.modificationsInPrevious.append(i)
                change.modifiedIds.append(id)
                nextObjects.append(object)
            } else {
                nextObjects.append(currentObjects[i])
            }
            nextIds.append(id)
        }
        insertComing(below: nil)
        currentSet.subtract(leaving)
        for (id, _) in coming { currentSet.insert(id) }
        (current, currentObjects) = (nextIds, nextObjects)
        return Update(objects: nextObjects, ids: nextIds, change: change, contentChanged: Set(staying.keys))
    }

    /// The index of `id` in `ids` (ascending), by binary search.
    private static func position(of id: Id, in ids: [Id]) -> Int? {
        var (low, high) = (0, ids.count)
        while low < high {
            let mid = (low + high) / 2
            if ids[mid] < id { low = mid + 1 } else { high = mid }
        }
        return low < ids.count && ids[low] == id ? low : nil
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
