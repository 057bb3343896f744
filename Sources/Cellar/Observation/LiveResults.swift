import Dispatch
import Foundation
import Observation

/// A query's results that keep themselves up to date: after each commit that changes them, the
/// new results and exactly what changed (``ResultsChange``) are published on the delivery queue
/// (the main queue unless another is given). `@Observable`: a SwiftUI view that reads the results
/// redraws when they change; elsewhere `withObservationTracking` sees the same.
///
/// ```swift
/// @Observable final class NotesModel {
///     let live: LiveResults<Note>
///     init(store: Store) throws {
///         live = try store.liveQuery(try store.box(for: Note.self).query { Note.done == false }.build())
///     }
/// }
/// // In a view: ForEach(model.live, id: \.id) { … }
/// ```
///
/// Read the properties on the delivery queue (for the main queue: on the main actor). The first
/// result is published shortly after creation (``lastChange`` then has `isInitial`). Updates
/// coalesce: commits that come while one is being computed are folded into the next, whose
/// change spans all of them. Nothing is published after ``cancel()`` or once the object is
/// released; neither holds the store open.
///
/// **Each update is one snapshot.** The results published are exactly what the query finds in
/// one committed state of the store (no mix of an older object with a newer one), and the change
/// is exactly the difference between two such states.
///
/// **Reading the objects.** `LiveResults` is itself a random-access collection of the current
/// objects (`count`, `live[i]`, `for note in live`, `ForEach(live)`): the objects are built
/// by the update, off the delivery queue, and reading them builds nothing. ``results`` is the
/// same as an array; the first read after an update assembles it (O(results), once).
///
/// **What an update costs.** Every commit records which objects it put or removed, once for all
/// live queries of the store. The live queries update together, in passes on one background
/// thread per store, paced so that together they keep to about a twentieth of a core. A pass
/// reads each changed object once and hands it to every live query of its entity. A commit that
/// changed none of the query's objects and made none of them match costs it a condition test per
/// changed object (no query run). For a query without an order, links to other entities or a
/// nearest-neighbour search, the results are updated from those objects alone:
/// O(changed objects · log results) plus a copy of the id list, whatever the size of the
/// results. Otherwise (an order, links, a vector search, a `removeAll`, or a commit that was
/// already being written when the live query started) the query runs again in the same snapshot
/// and the change is computed by comparing the two results.
@Observable
public final class LiveResults<E: EntityInspectable & SendableMetatype>: @unchecked Sendable {
    /// The current objects, in the query's order, shared with the update that made them.
    /// Observed by hand through `objectsKey`: a key path literal of a generic class is built anew
    /// at every use, which the collection's per-element reads should not pay for.
    @ObservationIgnored private var storedObjects = LiveObjects<E>()
    @ObservationIgnored private let objectsKey: KeyPath<LiveResults, LiveObjects<E>> = \.storedObjects
    private var objects: LiveObjects<E> {
        access(keyPath: objectsKey)
        return storedObjects
    }
    /// `results` as assembled at its first read after an update (nil: not read since).
    @ObservationIgnored private var assembled: [E]?
    /// The current results, in the query's order, as an array (assembled at the first read after
    /// each update; the collection itself serves them without that).
    public var results: [E] {
        let objects = self.objects
        if let assembled { return assembled }
        let array = objects.map(\.value)
        assembled = array
        return array
    }
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
    /// Called on the delivery queue after each publication with the ids, the change and the id
    /// of the commit whose state they are (tests).
    @ObservationIgnored var publishHook: (([Id], ResultsChange, UInt64) -> Void)?
    /// Called on the delivery queue after each publication, before `publishHook`: what sectioned
    /// results build on (`SectionedLiveResults`).
    @ObservationIgnored var sectioningHook: ((ResultsChange) -> Void)?
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
    func publish(_ objects: LiveObjects<E>, _ ids: [Id], _ change: ResultsChange, snapshot: UInt64) {
        withMutation(keyPath: objectsKey) { storedObjects = objects }
        assembled = nil
        self.ids = ids
        lastChange = change
        error = nil
        updateCount += 1
        sectioningHook?(change)
        publishHook?(ids, change, snapshot)
    }

    func fail(_ error: CellarError) {
        self.error = error
        failureHook?(error)
    }

    /// Called on the delivery queue when an update fails (`SectionedLiveResults`).
    @ObservationIgnored var failureHook: ((CellarError) -> Void)?
}

/// The current objects, in the query's order (read on the delivery queue; each read is observed).
extension LiveResults: RandomAccessCollection {
    /// 0.
    public var startIndex: Int { 0 }
    /// The number of current objects.
    public var endIndex: Int { objects.endIndex }
    /// The object at `position` of the current results.
    public subscript(position: Int) -> E { objects[position].value }
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
