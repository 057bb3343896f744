import CellarStorage
import Dispatch
import Foundation

/// A live query as the store's hub updates it (`LiveQueryWorker`). Called on the live-query
/// thread only, inside the pass's read transaction.
protocol LiveQueryMember: AnyObject, Sendable {
    /// The entity whose objects make the results, and its schema.
    var entity: UInt32 { get }
    var schema: EntitySchema { get }
    /// The store (the hub holds none itself).
    var store: Store { get }
    /// Whether its first result is still to come (the pass that makes it is not paced by it).
    var awaitsFirstResult: Bool { get }
    /// Whether this pass can hand it its entity's changed records one by one (`consider`,
    /// then `finishRecords`); else `update` does all.
    func takesRecords(_ pass: LivePass) -> Bool
    /// One changed object of `entity`, in ascending id order: its record in the pass's snapshot
    /// (nil: gone) and the record's hash. `cell` holds the object built from that record by the
    /// first member that needed it (shared between the members of one entity).
    func consider(_ id: Id, record: UnsafeRawBufferPointer?, hash: UInt64, cell: inout AnyObject?,
                  context: TransactionContext) throws
    /// After the records: makes and hands over the update.
    func finishRecords(_ pass: LivePass)
    /// Any other update (the first result, a re-run, a query that cannot take records).
    func update(in context: TransactionContext, pass: LivePass) throws
    /// An update failed: the results stay as they were, and the next pass runs the query again.
    func failed(_ error: CellarError)
}

/// What one pass works on: the snapshot and what the commits up to it changed.
struct LivePass {
    /// The commit whose state the pass computes.
    let snapshot: UInt64
    /// The objects changed per entity, for the entities known object by object.
    let changed: [UInt32: Set<Id>]
    /// Entities changed without knowing which objects; `everything`: the whole store.
    let unknown: Set<UInt32>
    let everything: Bool
    /// Whether a commit recorded before the hub registered may be missing from this pass (a
    /// live query that starts or runs its query in it must run it again at the next: the
    /// journal never gets that commit).
    let mayMissCommits: Bool

    /// The changed objects of `entity`: empty when none, nil when not known.
    func ids(of entity: UInt32) -> Set<Id>? {
        everything || unknown.contains(entity) ? nil : (changed[entity] ?? [])
    }

    /// Whether any of `entities` changed.
    func touches(_ entities: Set<UInt32>) -> Bool {
        everything || !unknown.isDisjoint(with: entities) || entities.contains { changed[$0] != nil }
    }
}

/// Updates every live query of a store together: one journal of the commits (the writer appends
/// each commit once, whatever the number of live queries), and one pass at a time on the store's
/// live-query thread. A pass opens one read transaction at some commit N, takes the journal's
/// commits up to N, reads each changed object once, and hands it to every live query of its
/// entity (which tests it against its condition and compares its hash); a changed object is
/// built at most once for all of them. Live queries that cannot work from the changed objects
/// (an order, links, a vector search, a first result) run their query in the same transaction.
///
/// Passes are paced: at least 10 ms apart, and under a steady stream of commits at least 20
/// times the last pass's duration apart (at most 200 ms), so that all live queries of a store
/// together keep to about a twentieth of a core. Commits in between are folded in.
final class LiveQueryHub: @unchecked Sendable {
    // Thread safety: what changes is in `state`, under its lock; `passHook` is set before any
    // live query starts. Lock order: this lock, then a journal's (never the reverse).
    private struct State {
        var members: [ObjectIdentifier: any LiveQueryMember] = [:]
        /// The journal while registered with the store's observers (nil: no live query).
        var journal: LiveJournal?
        var token: Int?
        /// The last commit published before the journal registered (a pass older than it may
        /// miss it).
        var registeredAfter: UInt64 = 0
        var lastPass: UInt64 = 0
        var lastDuration: UInt64 = 0
    }

    private let state = Locked(State())
    private let observers: ChangeObservers
    private let executor = LiveQueryExecutor()
    /// Every entity of the model: the journal records commits to any of them.
    private let entities: Set<UInt32>
    /// Called by each pass once it has taken its members, before it opens its snapshot (tests
    /// add a live query there; set before any live query starts).
    nonisolated(unsafe) var passHook: (@Sendable () -> Void)?

    /// The shortest time between two passes' starts: 10 ms.
    static var minimumInterval: UInt64 { 10_000_000 }
    /// Under a steady stream of commits, the gap between two passes' starts is at least this
    /// many times the last pass's duration.
    static var busyFactor: UInt64 { 20 }
    /// The longest gap the busy factor may impose: 200 ms.
    static var maximumInterval: UInt64 { 200_000_000 }

    init(observers: ChangeObservers, entities: Set<UInt32>) {
        self.observers = observers
        self.entities = entities
    }

    /// Adds a live query; its first result comes with the next pass.
    func add(_ member: any LiveQueryMember) {
        let journal: LiveJournal = state.withLock { state in
            state.members[ObjectIdentifier(member)] = member
            if let journal = state.journal { return journal }
            let journal = LiveJournal()
            let (token, lastPublished) = observers.addJournal(entities: entities, journal: journal, signal: { [weak self] in
                self?.schedule()
            })
            (state.journal, state.token, state.registeredAfter) = (journal, token, lastPublished)
            return journal
        }
        if journal.requestUpdate() { schedule() }
    }

    /// Removes a live query; the journal unregisters with the last one.
    func remove(_ member: any LiveQueryMember) {
        let token: Int? = state.withLock { state in
            guard state.members.removeValue(forKey: ObjectIdentifier(member)) != nil, state.members.isEmpty else { return nil }
            state.journal?.close()
            state.journal = nil
            defer { state.token = nil }
            return state.token
        }
        if let token { observers.remove(token) }
    }

    /// Schedules a pass (the journal marked one scheduled).
    private func schedule() {
        let due: UInt64 = state.withLock { state in
            let now = DispatchTime.now().uptimeNanoseconds
            let gap = min(Self.maximumInterval, max(Self.minimumInterval, Self.busyFactor &* state.lastDuration))
            return state.lastPass == 0 ? now : max(now, state.lastPass &+ gap)
        }
        executor.schedule(at: due) { [self] in runPass() }
    }

    /// One pass (on the live-query thread).
    private func runPass() {
        // Before the snapshot is opened: a commit recorded from now on schedules another pass,
        // and every commit signalled before now is in the snapshot. With the members taken in
        // the same hold of the lock: a live query added after this pass took them asks for
        // another (its `requestUpdate` finds none scheduled).
        let (journal, members, registeredAfter): (LiveJournal?, [any LiveQueryMember], UInt64) = state.withLock { state in
            state.lastPass = DispatchTime.now().uptimeNanoseconds
            state.journal?.beginUpdate()
            return (state.journal, Array(state.members.values), state.registeredAfter)
        }
        passHook?()
        guard let journal, let store = members.first?.store else { return }
        let started = DispatchTime.now().uptimeNanoseconds
        var remaining = false
        // First results (a query run each, once) do not set the pace.
        var firstResults: UInt64 = 0
        do {
            try store.inReadContext { context in
                let snapshot = context.read!.transactionId
                let taken: [CommittedChanges?]
                (taken, remaining) = journal.take(through: snapshot)
                firstResults = try run(members, pass: Self.pass(snapshot: snapshot, taken: taken,
                                                                mayMissCommits: snapshot < registeredAfter), context: context)
            }
        } catch {
            let wrapped = CellarError.wrap(error)
            let failure = wrapped as? CellarError ?? CellarError.illegalArgument("live query update failed: \(wrapped)")
            for member in members { member.failed(failure) }
        }
        let took = (DispatchTime.now().uptimeNanoseconds &- started) &- firstResults
        state.withLock { $0.lastDuration = took }
        // Commits recorded but not yet visible when the snapshot was opened: their signal may
        // have come before this pass began (and scheduled nothing).
        if remaining && journal.requestUpdate() { schedule() }
    }

    /// What the commits `taken` changed.
    private static func pass(snapshot: UInt64, taken: [CommittedChanges?], mayMissCommits: Bool) -> LivePass {
        var changed: [UInt32: Set<Id>] = [:]
        var unknown = Set<UInt32>()
        var everything = false
        for changes in taken {
            guard let changes else {
                everything = true
                continue
            }
            for (entity, ids) in changes.ids { changed[entity, default: []].formUnion(ids) }
            unknown.formUnion(changes.whole)
        }
        return LivePass(snapshot: snapshot, changed: changed, unknown: unknown, everything: everything,
                        mayMissCommits: mayMissCommits)
    }

    /// Updates `members` in `context`: the changed records of each entity read once for all
    /// members that take records, the others one by one. A member that fails gets its error;
    /// the others go on. Returns the time spent on first results (ns).
    private func run(_ members: [any LiveQueryMember], pass: LivePass, context: TransactionContext) throws -> UInt64 {
        var byEntity: [UInt32: [any LiveQueryMember]] = [:]
        var firstResults: UInt64 = 0
        for member in members {
            if member.takesRecords(pass) {
                byEntity[member.entity, default: []].append(member)
                continue
            }
            let first = member.awaitsFirstResult
            let started = DispatchTime.now().uptimeNanoseconds
            do {
                try member.update(in: context, pass: pass)
            } catch {
                member.failed(CellarError.wrap(error) as? CellarError ?? .illegalArgument("live query update failed: \(error)"))
            }
            if first { firstResults &+= DispatchTime.now().uptimeNanoseconds &- started }
        }
        for (entity, group) in byEntity {
            guard let ids = pass.ids(of: entity), !ids.isEmpty else { continue }
            let schema = group[0].schema
            var live = group
            for id in ids.sorted() {
                try context.withRecord(schema, id) { record in
                    let hash = record.map(LiveQueryHub.hash) ?? 0
                    var cell: AnyObject?
                    live.removeAll { member in
                        do {
                            try member.consider(id, record: record, hash: hash, cell: &cell, context: context)
                            return false
                        } catch {
                            member.failed(CellarError.wrap(error) as? CellarError ?? .illegalArgument("live query update failed: \(error)"))
                            return true
                        }
                    }
                }
            }
            for member in live { member.finishRecords(pass) }
        }
        return firstResults
    }

    /// The hash of a stored record: Hasher's 64 bits, seeded per process. Two different records
    /// hash alike with a chance of about one in 2^64 (a live query would then miss one
    /// modification).
    static func hash(_ record: UnsafeRawBufferPointer) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(bytes: record)
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }
}
