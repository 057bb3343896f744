import Atomics
import Dispatch

/// The values of a box or query over time, as an `AsyncSequence`: the current value first, then a
/// new one after each commit that changes the observed entities. Get it from ``Box/changes()`` or
/// ``Query/changes()``.
///
/// ```swift
/// for try await notes in query.changes() { show(notes) }
/// ```
///
/// - Commits that come faster than the loop takes values coalesce: the next value reflects all
///   of them, and no commit is missed (the last value is computed after the last commit).
/// - A rolled-back transaction, and a commit that changes only other entities, yield nothing.
/// - Each value is read in a read transaction of its own, on the iterating task, when the loop
///   asks for it.
/// - The sequence ends when the task is cancelled or the store is closed; breaking out of the
///   loop ends it too. Either way the subscription is removed from the store.
public struct Changes<Element>: AsyncSequence, Sendable {
    /// The error a failed read of a value throws out of the loop.
    public typealias Failure = any Error

    let store: Store
    let entities: Set<UInt32>
    let current: @Sendable () throws -> Element
    /// Which commits yield a value, from the objects they changed (nil: not known); nil: every
    /// commit that changes the entities.
    var accepts: (@Sendable (CommittedChanges?) -> Bool)? = nil

    /// Subscribes to the store's commits and returns the iterator that yields the values; the
    /// subscription ends with the iteration.
    public func makeAsyncIterator() -> Iterator {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let observers = store.observers
        let accepts = self.accepts
        let token = observers.add(entities: entities, wantsIds: accepts != nil,
                                  signal: { changes in if accepts?(changes) ?? true { continuation.yield() } },
                                  finish: { continuation.finish() })
        // Ends with the stream: cancellation, store.close(), or the iterator going away.
        continuation.onTermination = { _ in observers.remove(token) }
        return Iterator(signals: stream.makeAsyncIterator(), current: current)
    }

    /// Yields the values of a ``Changes`` sequence: the current one first, then one per change.
    public struct Iterator: AsyncIteratorProtocol {
        var signals: AsyncStream<Void>.Iterator
        let current: @Sendable () throws -> Element
        var started = false

        /// The next value: the current one on the first call, else the one after the next change
        /// (nil once the task is cancelled or the store closed).
        public mutating func next() async throws -> Element? {
            if started {
                guard await signals.next() != nil else { return nil }
            }
            return try value()
        }

        /// The next value, as ``next()`` gives it, on the caller's actor. The requirement it
        /// implements, and `AsyncStream`'s, are macOS 15 / iOS 18 API; before those, `for await`
        /// calls ``next()``.
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> Element? {
            if started {
                guard await signals.next(isolation: actor) != nil else { return nil }
            }
            return try value()
        }

        /// The value after a signal (or the first one).
        private mutating func value() throws -> Element? {
            started = true
            if Task.isCancelled { return nil }
            return try current()
        }
    }
}

/// An observation started with `observe(on:)`: its handler runs on the queue it was given after
/// each commit that changes the observed entities, until `cancel()`, the store's `close()`, or this
/// object's release (keep it as long as you want the calls).
public final class ChangeObservation: Sendable {
    private let observers: ChangeObservers
    private let token: Int

    init(store: Store, entities: Set<UInt32>, queue: DispatchQueue, _ run: @escaping @Sendable () -> Void) {
        observers = store.observers
        // Set while a run is scheduled: signals meanwhile coalesce into it; cleared before the
        // run starts, so a commit during a run schedules the next one.
        let scheduled = ManagedAtomic<Bool>(false)
        let signal: @Sendable () -> Void = {
            guard !scheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
            queue.async {
                scheduled.store(false, ordering: .releasing)
                run()
            }
        }
        token = observers.add(entities: entities, signal: signal, finish: {})
        signal()
    }

    /// Stops the calls (one already scheduled may still run). Idempotent.
    public func cancel() { observers.remove(token) }

    deinit { observers.remove(token) }
}

extension Box {
    /// A `Void` now and after each commit that changes this entity's objects (coalesced; see
    /// ``Changes``): `for try await _ in box.changes() { redraw() }`.
    public func changes() throws -> Changes<Void> {
        let schema = try self.schema.get()
        return Changes(store: store, entities: [schema.id.id], current: {})
    }

    /// The object `id` now (nil when there is none), then after each commit that puts or
    /// removes it: `for try await note in notes.changes(of: id) { show(note) }`. Commits that
    /// write only other objects yield nothing (coalescing as ``Changes``).
    public func changes(of id: Id) throws -> Changes<E?> where E: SendableMetatype {
        let schema = try self.schema.get()
        let entity = schema.id.id
        var changes = Changes(store: store, entities: [entity], current: { try self.get(id) })
        changes.accepts = { committed in committed?.ids(of: entity).map { $0.contains(id) } ?? true }
        return changes
    }

    /// Calls `handler` on `queue` now and after each commit that changes this entity's objects
    /// (bursts coalesce into one call). Keep the returned observation: releasing it stops the calls.
    public func observe(on queue: DispatchQueue, _ handler: @escaping @Sendable () -> Void) throws -> ChangeObservation {
        let schema = try self.schema.get()
        return ChangeObservation(store: store, entities: [schema.id.id], queue: queue, handler)
    }
}

// `SendableMetatype`: the results are read later, wherever the loop or the queue runs, which
// needs the entity type (any entity type not isolated to a global actor is one).
extension Query where E: SendableMetatype {
    /// The query's results now and after each commit that changes its entity, or an entity it
    /// links to (coalesced; see ``Changes``): `for try await notes in query.changes() { … }`.
    public func changes() throws -> Changes<[E]> {
        let entities = try observedEntities()
        return Changes(store: box.store, entities: entities, current: { try self.find() })
    }

    /// Runs the query on `queue` now and after each commit that changes its entity or an entity
    /// it links to, and hands `handler` the results or the error (bursts coalesce into one run).
    /// Keep the returned observation: releasing it stops the calls.
    public func observe(on queue: DispatchQueue, _ handler: @escaping @Sendable (Result<[E], any Error>) -> Void) throws -> ChangeObservation {
        let entities = try observedEntities()
        return ChangeObservation(store: box.store, entities: entities, queue: queue) {
            handler(Result { try self.find() })
        }
    }

    /// The query's entity and every entity its links reach.
    func observedEntities() throws -> Set<UInt32> {
        func collect(_ query: CompiledQuery, into set: inout Set<UInt32>) {
            set.insert(query.schema.id.id)
            for link in query.links { collect(link, into: &set) }
        }
        var entities = Set<UInt32>()
        collect(try compiled, into: &entities)
        return entities
    }
}
