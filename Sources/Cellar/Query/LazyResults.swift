import CellarStorage
import Foundation

extension Query {
    /// The matching objects as a lazy collection: the ids are found now, in the query's order
    /// (id order when it has none), and each object is built only when it is accessed. For long
    /// results of which only a part is looked at (a list on screen, paging), where `find()` would
    /// build every object up front.
    ///
    /// The results hold the read snapshot the ids were found in, and read every object from it:
    /// an object is never missing and never newer than the query, whatever is committed
    /// meanwhile. See ``LazyResults`` for what holding a snapshot costs.
    ///
    /// Inside a read-only transaction on this thread, the results read that transaction's
    /// snapshot (and stay usable after it ends).
    ///
    /// - Parameter cacheSize: how many built objects are kept, the most recently accessed ones
    ///   (``LazyResults/defaultCacheSize`` unless given). 0 keeps none: every access builds a new
    ///   object.
    /// - Throws: `illegalArgument` inside a write transaction on this thread (its changes are not
    ///   committed, so no snapshot holds them: use `find()` there) or for a negative `cacheSize`;
    ///   what `find()` throws.
    public func findLazy(cacheSize: Int = LazyResults<E>.defaultCacheSize) throws -> LazyResults<E> {
        try findLazy(offset: 0, limit: nil, cacheSize: cacheSize)
    }

    /// ``findLazy(cacheSize:)`` for the matches after skipping `offset` of them, at most `limit`
    /// (as `find(offset:limit:)` counts them).
    public func findLazy(offset: Int, limit: Int?,
                         cacheSize: Int = LazyResults<E>.defaultCacheSize) throws -> LazyResults<E> {
        guard cacheSize >= 0 else {
            throw CellarError.illegalArgument("findLazy(cacheSize: \(cacheSize)): the cache size may not be negative")
        }
        let store = box.store
        let txn: ReadTransaction
        if let outer = ThreadTransactions.current(for: store) {
            guard let read = outer.read else {
                throw CellarError.illegalArgument("findLazy() cannot run inside a write transaction: its changes are in no snapshot the results could hold; use find() there")
            }
            txn = try translatingErrors { try read.onSameSnapshot() }
        } else {
            txn = try translatingErrors { try store.engine.beginRead() }
        }
        // The query runs in the results' own transaction: the ids and the objects come from the
        // same snapshot.
        let context = TransactionContext(store: store, read: txn)
        ThreadTransactions.push(context)
        let ids: [EntityId<E>]
        do {
            defer { ThreadTransactions.pop(context) }
            ids = try findIds(offset: offset, limit: limit)
        }
        return LazyResults(box: box, ids: ids, context: context, cacheSize: cacheSize)
    }
}

/// The results of ``Query/findLazy(cacheSize:)``: a random-access collection of the matching
/// objects that builds each object only when it is accessed.
///
/// `count`, `ids`, `startIndex`, `endIndex`, `indices` and index arithmetic build no object;
/// `results[i]` builds the object at `i` (or takes it from the cache), and so do iteration and
/// the collection algorithms that read elements (`map`, `first(where:)`, …), one element at a
/// time.
///
/// **One snapshot.** The ids and every object come from the read snapshot the query ran in,
/// which the results hold: an object accessed later is as it was when the query ran, even when it
/// has been changed or removed since; nothing is ever missing. Relations (`ToOne`, `ToMany`) of
/// the objects are read when they are first accessed, like those of any object: from the newest
/// commit, or the transaction open on the calling thread.
///
/// **What holding a snapshot costs.** The snapshot keeps the file it reads alive: after a
/// compaction replaced the data file, the old file's disk space (and its mapping) is given back
/// only once no snapshot reads it any more. Release the results when done: drop the last reference
/// or call ``close()``. No writer and no reader ever waits for the results.
///
/// **The cache.** The most recently accessed built objects are kept, at most `cacheSize`
/// (``defaultCacheSize``, 64, unless given to `findLazy`): accessing a position again while its
/// object is cached returns the same instance; otherwise a new object is built. With a cache,
/// treat objects shared between threads as read-only; with `cacheSize: 0` every access builds an
/// object of its own.
///
/// **Threads.** The results may be used from several threads at once: objects are built one at a
/// time, under a lock (the snapshot is used from one thread at a time).
///
/// **Errors.** The subscript cannot throw: it stops the program when the object cannot be read
/// (the file fails a check, or the results were closed). ``object(at:)`` throws instead.
///
/// ```swift
/// let notes = try box.query { Note.done == false }.ordered(by: Note.created).build().findLazy()
/// print(notes.count)          // no object built
/// let first = notes.first     // builds one
/// for note in notes[100..<120] { … }   // builds 20
/// ```
public final class LazyResults<E: EntityInspectable>: RandomAccessCollection, @unchecked Sendable {
    // Thread safety: what changes is in `state`, used under its lock; the rest is immutable. The
    // context's read transaction (used from one thread at a time) is used only under the lock as
    // well.

    /// How many built objects the results keep unless `findLazy` is given another size.
    public static var defaultCacheSize: Int { 64 }

    /// The ids of the matching objects, in the order of the results; no object is built.
    public let ids: [EntityId<E>]

    /// How many built objects are kept at most.
    public let cacheSize: Int

    private let box: Box<E>
    private let state: Locked<State>

    private struct State {
        /// The snapshot the objects are built from; nil once closed.
        var context: TransactionContext?
        var cache: ObjectCache
        /// Objects built so far.
        var built = 0
    }

    init(box: Box<E>, ids: [EntityId<E>], context: TransactionContext, cacheSize: Int) {
        self.box = box
        self.ids = ids
        self.cacheSize = cacheSize
        state = Locked(State(context: context, cache: ObjectCache(capacity: cacheSize)))
    }

    // MARK: Collection

    /// The position of the first object: 0.
    public var startIndex: Int { 0 }

    /// The position after the last object: the number of objects.
    public var endIndex: Int { ids.count }

    /// The number of objects; none is built.
    public var count: Int { ids.count }

    /// The object at `position`, built now unless it is cached.
    ///
    /// Stops the program when the object cannot be read: after ``close()``, or when the stored
    /// record fails a check. Use ``object(at:)`` to get an error instead.
    public subscript(position: Int) -> E {
        do {
            return try object(at: position)
        } catch {
            fatalError("LazyResults<\(E.self)>[\(position)]: \(error)")
        }
    }

    // MARK: Reading

    /// The object at `position`, built now unless it is cached.
    /// - Throws: `illegalArgument` for a position outside `indices` or after ``close()``;
    ///   `fileCorrupt` when the stored record fails a check.
    public func object(at position: Int) throws -> E {
        guard indices.contains(position) else {
            throw CellarError.illegalArgument("LazyResults.object(at: \(position)): the results have \(ids.count) objects")
        }
        return try state.withLock { state in
            if let object = state.cache.object(at: position) { return object }
            guard let context = state.context else {
                throw CellarError.illegalArgument("LazyResults.object(at: \(position)): the results were closed")
            }
            let id = ids[position].value
            let schema = try box.schema.get()
            let found = try translatingErrors { try box.get(id, schema: schema, context: context) }
            guard let object = found else {
                // The ids were found in this very snapshot: a missing record is damage.
                throw CellarError.fileCorrupt("object \(id) of \(E.self), found by the query, has no record in the same snapshot")
            }
            state.built += 1
            state.cache.insert(object, at: position)
            return object
        }
    }

    /// Releases the snapshot and the cached objects. `count` and `ids` still work; reading an
    /// object afterwards fails (see ``object(at:)``). Idempotent; releasing the results does the
    /// same.
    public func close() {
        state.withLock { state in
            state.context = nil
            state.cache = ObjectCache(capacity: cacheSize)
        }
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { state.withLock { $0.context == nil } }

    // MARK: Testing

    /// How many objects have been built so far (cache hits not counted).
    @_spi(Testing) public var builtObjectCount: Int { state.withLock { $0.built } }

    /// How many built objects are cached now.
    @_spi(Testing) public var cachedObjectCount: Int { state.withLock { $0.cache.count } }

    // MARK: The cache

    /// At most `capacity` objects by position; when full, a new one replaces the least recently
    /// used (found by a scan of the slots: at most `capacity` comparisons, little next to building
    /// an object).
    private struct ObjectCache {
        let capacity: Int
        private var slotOf: [Int: Int] = [:]
        private var positions: [Int] = []
        private var objects: [E] = []
        private var lastUse: [UInt64] = []
        private var clock: UInt64 = 0

        init(capacity: Int) { self.capacity = capacity }

        var count: Int { objects.count }

        mutating func object(at position: Int) -> E? {
            guard let slot = slotOf[position] else { return nil }
            clock += 1
            lastUse[slot] = clock
            return objects[slot]
        }

        mutating func insert(_ object: E, at position: Int) {
            guard capacity > 0 else { return }
            clock += 1
            if objects.count < capacity {
                slotOf[position] = objects.count
                positions.append(position)
                objects.append(object)
                lastUse.append(clock)
                return
            }
            var oldest = 0
            for slot in 1..<lastUse.count where lastUse[slot] < lastUse[oldest] { oldest = slot }
            slotOf[positions[oldest]] = nil
            slotOf[position] = oldest
            positions[oldest] = position
            objects[oldest] = object
            lastUse[oldest] = clock
        }
    }
}
