import CellarStorage
import Foundation

/// A built query: finds, counts and removes the objects of entity `E` that meet its conditions.
/// Get one from `QueryBuilder.build()`; keep it and run it as often as needed.
///
/// Each call runs in the transaction open on the calling thread, or in a read (or, for
/// `remove`, write) transaction of its own. Conditions are evaluated on the stored records;
/// objects are built only for the results. A query may be used from several threads;
/// `setParameter` changes it for the calls that start afterwards.
public final class Query<E: EntityInspectable>: @unchecked Sendable {
    // Thread safety: `builder` is immutable; the condition and its compiled form change together,
    // under `state`'s lock (`setParameter`). A condition changed by `setParameter` is compiled by
    // the next call that runs the query (nil until then), so that setting several parameters
    // compiles once.
    private let builder: QueryBuilder<E>
    private let state: Locked<(condition: QueryCondition<E>.Node?, compiled: Result<CompiledQuery, CellarError>?)>

    @usableFromInline let box: Box<E>

    init(builder: QueryBuilder<E>, compiled: CompiledQuery) {
        self.builder = builder
        box = builder.box
        state = Locked((builder.condition?.node, .success(compiled)))
    }

    var compiled: CompiledQuery {
        get throws {
            // The common case first, as short as it was before parameters compiled lazily (a
            // count by index runs in about a microsecond).
            if let ready = state.withLock({ $0.compiled }) { return try ready.get() }
            return try state.withLock { state in
                if let compiled = state.compiled { return compiled }
                let compiled: Result<CompiledQuery, CellarError>
                do {
                    compiled = .success(try builder.compile(replacing: state.condition))
                } catch let error as CellarError {
                    compiled = .failure(error)
                } catch {
                    compiled = .failure(.illegalArgument("\(error)"))
                }
                state.compiled = compiled
                return compiled
            }.get()
        }
    }

    // MARK: Results

    /// The matching objects, in the query's order (id order when it has none).
    @inlinable
    public func find() throws -> [E] { try find(offset: 0, limit: nil) }

    /// The matching objects after skipping `offset` of them, at most `limit`.
    @inlinable
    public func find(offset: Int, limit: Int?) throws -> [E] {
        var objects: [E] = []
        try visitRecords(offset: offset, limit: limit, expecting: { objects.reserveCapacity($0) }) { id, record in
            objects.append(try box.object(id: id, record: record))
            return true
        }
        return objects
    }

    /// Calls `body` with each matching object in the query's order, building one object at a time
    /// (no array of all of them), while it returns true: the first false stops the visit.
    @inlinable
    public func forEach(while body: (E) throws -> Bool) throws {
        try visitRecords(offset: 0, limit: nil) { id, record in try body(try box.object(id: id, record: record)) }
    }

    /// Calls `body` with a view of each matching object's stored record, in the query's order,
    /// until it returns false: reads single properties without building the object (as
    /// ObjectBox's `obx_query_visit` hands out the stored bytes). The view is valid only inside
    /// `body`.
    @inlinable
    public func visit(_ body: (ObjectView<E>) throws -> Bool) throws {
        var view = ObjectView<E>(store: box.store)
        try withExtendedLifetime(box.store) {
            // Every object in id order: straight from the cursor, one closure between it and
            // `body` (a full scan makes one call per object of each closure on the way).
            let scanned = try withEveryRecord { cursor in
                try cursor.scan { key, record in
                    try view.move(to: StorageLayout.objectId(key), bytes: record)
                    return try body(view)
                }
            }
            if scanned { return }
            try visitRecords(offset: 0, limit: nil) { id, record in
                try view.move(to: id, bytes: record)
                return try body(view)
            }
        }
    }

    /// When the query matches every object in id order (no condition, link or order): runs
    /// `body` with a cursor over the entity's records, in the thread's transaction or a read
    /// transaction of its own, and returns true. Returns false otherwise.
    @usableFromInline
    func withEveryRecord(_ body: (Cursor) throws -> Void) throws -> Bool {
        let query = try compiled
        guard query.matchesEveryObject && query.orders.isEmpty else { return false }
        try box.store.inReadContext { context in
            try translatingErrors {
                if let cursor = try context.cursor(query.schema) { try body(cursor) }
            }
        }
        return true
    }

    /// Runs the query in the thread's transaction (or a read transaction of its own) and calls
    /// `body` with each match's id and record, from `offset`, at most `limit`, until it returns false.
    /// `expecting` is called before the first with how many `body` will be given, when that is
    /// known before reading them.
    @usableFromInline
    func visitRecords(offset: Int, limit: Int?, expecting: (Int) -> Void = { _ in },
                      _ body: (Id, UnsafeRawBufferPointer) throws -> Bool) throws {
        guard offset >= 0, (limit ?? 0) >= 0 else {
            throw CellarError.illegalArgument("find(offset: \(offset), limit: \(limit.map(String.init) ?? "nil")): neither may be negative")
        }
        let query = try compiled
        try box.store.inReadContext { context in
            try translatingErrors {
                try self.visit(query, offset: offset, limit: limit, context: context, expecting: expecting, body)
            }
        }
    }

    /// The first matching object in the query's order; nil when none matches.
    public func findFirst() throws -> E? { try find(offset: 0, limit: 1).first }

    /// The one matching object; nil when none matches.
    /// - Throws: `CellarError.nonUniqueResult` when more than one matches.
    public func findUnique() throws -> E? {
        let found = try find(offset: 0, limit: 2)
        guard found.count < 2 else { throw CellarError.nonUniqueResult(count: try count()) }
        return found.first
    }

    /// The ids of the matching objects, in the query's order; no object is built.
    @inlinable
    public func findIds() throws -> [EntityId<E>] {
        try findIds(offset: 0, limit: nil)
    }

    /// The ids of the matching objects after skipping `offset`, at most `limit`.
    @inlinable
    public func findIds(offset: Int, limit: Int?) throws -> [EntityId<E>] {
        let ids = try rawIds(offset: offset, limit: limit)
        return ids.withUnsafeBufferPointer { raw in
            [EntityId<E>](unsafeUninitializedCapacity: raw.count) { buffer, count in
                for i in 0..<raw.count { buffer[i] = EntityId(raw[i]) }
                count = raw.count
            }
        }
    }

    /// The matching ids as plain `Id`s.
    @usableFromInline
    func rawIds(offset: Int, limit: Int?) throws -> [Id] {
        let query = try compiled
        if query.orders.isEmpty && offset == 0 && limit == nil {
            return try box.store.inReadContext { context in try translatingErrors { try query.matchingIds(context) } }
        }
        var ids: [Id] = []
        try visitRecords(offset: offset, limit: limit) { id, _ in ids.append(id); return true }
        return ids
    }

    /// The number of matching objects (from the index alone when one indexed condition is the
    /// whole query).
    public func count() throws -> Int {
        let query = try compiled
        return try box.store.inReadContext { context in try translatingErrors { try query.count(context) } }
    }

    /// Removes the matching objects in one transaction; returns how many.
    @discardableResult
    public func remove() throws -> Int {
        let query = try compiled
        return try box.store.inWriteContext { context in
            try translatingErrors {
                let ids = try query.matchingIds(context)
                var removed = 0
                for id in ids where try context.removeObject(query.schema, id: id) { removed += 1 }
                return removed
            }
        }
    }

    /// Queries the values of one property of the matching objects.
    public func property(_ property: Property<E>) -> PropertyQuery<E> {
        PropertyQuery(query: self, property: property)
    }

    /// Visits the matches in the query's order, from `offset`, at most `limit`, until `body`
    /// returns false; `expecting` as `visitRecords` has it.
    func visit(_ query: CompiledQuery, offset: Int, limit: Int?, context: TransactionContext,
               expecting: (Int) -> Void = { _ in }, _ body: (Id, UnsafeRawBufferPointer) throws -> Bool) throws {
        if limit == 0 { return }
        // Unordered and unpaged: the matches as forEachMatch finds them, no closure in between.
        if offset == 0 && limit == nil && query.orders.isEmpty {
            try query.forEachMatch(context, expecting: expecting, body)
            return
        }
        if query.orders.isEmpty {
            var skipped = 0
            var taken = 0
            let page = { (count: Int) in expecting(Swift.min(Swift.max(count - offset, 0), limit ?? .max)) }
            try query.forEachMatch(context, expecting: page) { id, record in
                if skipped < offset { skipped += 1; return true }
                guard try body(id, record) else { return false }
                taken += 1
                return limit.map { taken < $0 } ?? true
            }
            return
        }
        // The best few by relevance alone: from the index, only the winners' records read.
        if query.orders.count == 1, let ranking = query.orders[0].relevance, query.vector == nil, let limit,
           case (let k, false) = offset.addingReportingOverflow(limit) {
            var candidates = try query.matchingIds(context)
            if !candidates.isStrictlyAscending {
                candidates.sort()
                candidates = candidates.uniqued()
            }
            for id in try ranking.best(k, among: candidates, context).dropFirst(offset) {
                let more = try context.withRecord(query.schema, id) { record in try record.map { try body(id, $0) } ?? true }
                if !more { return }
            }
            return
        }
        var matches: [(id: Id, keys: [CompiledOrder.Key?])] = []
        var records: [Id: UnsafeRawBufferPointer] = [:]
        // The records are kept until sorted: stable ones (a compressed record decoded into the
        // transaction's memory).
        let scorers = try query.orders.map { try $0.relevance?.scorer(context) }
        var linked = [[Id: CompiledOrder.Key?]](repeating: [:], count: query.orders.count)
        try query.forEachMatch(context, stable: true) { id, record in
            let reader = try RecordReader(record)
            matches.append((id, try query.orders.indices.map {
                try query.orders[$0].key(reader, id: id, scorer: scorers[$0], context: context, linked: &linked[$0])
            }))
            records[id] = record
            return true
        }
        CompiledOrder.sort(&matches, by: query.orders)
        let end = limit.map { Swift.min(matches.count, offset + $0) } ?? matches.count
        guard offset < end else { return }
        expecting(end - offset)
        for match in matches[offset..<end] where try !body(match.id, records[match.id]!) { return }
    }

    // MARK: Parameters

    /// Sets the value of the condition on `property` (there must be exactly one; give conditions
    /// an `alias` otherwise). An error (no such condition, a value of the wrong type) is thrown by
    /// the next call that runs the query.
    public func setParameter<V: QueryValueConvertible>(_ property: Property<E>, to value: V) {
        update(.property(property.id, property.name, property.via)) { $0.values = [value.queryValue] }
    }

    /// Sets both values of an `isBetween` condition on `property`.
    public func setParameters<V: QueryValueConvertible>(_ property: Property<E>, from lower: V, to upper: V) {
        update(.property(property.id, property.name, property.via)) { $0.values = [lower.queryValue, upper.queryValue] }
    }

    /// Sets the values of an `isIn` or `isNotIn` condition on `property`.
    public func setParameter<V: QueryValueConvertible>(_ property: Property<E>, to values: [V]) {
        update(.property(property.id, property.name, property.via)) { $0.values = values.map(\.queryValue) }
    }

    /// Sets the query vector of the `nearestNeighbors` condition on `property`: a new search
    /// without building the query again.
    public func setParameter(_ property: Property<E>, to vector: [Float]) {
        update(.property(property.id, property.name, property.via)) { $0.vector = vector }
    }

    /// Sets the value of the condition named `alias`.
    public func setParameter<V: QueryValueConvertible>(_ alias: String, to value: V) {
        update(.alias(alias)) { $0.values = [value.queryValue] }
    }

    /// Sets both values of the `isBetween` condition named `alias`.
    public func setParameters<V: QueryValueConvertible>(_ alias: String, from lower: V, to upper: V) {
        update(.alias(alias)) { $0.values = [lower.queryValue, upper.queryValue] }
    }

    /// Sets the values of the `isIn` or `isNotIn` condition named `alias`.
    public func setParameter<V: QueryValueConvertible>(_ alias: String, to values: [V]) {
        update(.alias(alias)) { $0.values = values.map(\.queryValue) }
    }

    private enum Target {
        case property(UInt32, String, [PropertyRef])
        case alias(String)
    }

    private func update(_ target: Target, _ change: (inout PropertyCondition) -> Void) {
        state.withLock { state in
            var matches = 0
            let changed = state.condition.map { Self.rewrite($0, target, &matches, change) }
            guard matches == 1 else {
                let described: String = switch target {
                case .property(_, let name, let via): "on \(E.self).\((via.map(\.name) + [name]).joined(separator: "."))"
                case .alias(let alias): "named \"\(alias)\""
                }
                state.compiled = .failure(.illegalArgument(matches == 0
                    ? "setParameter: the query has no condition \(described)"
                    : "setParameter: the query has \(matches) conditions \(described); give them an alias (`.alias(\"name\")`) and set each by its name"))
                return
            }
            state.condition = changed
            // A parameter set after an earlier one failed its match starts afresh from here.
            state.compiled = nil
        }
    }

    private static func rewrite(_ node: QueryCondition<E>.Node, _ target: Target, _ matches: inout Int,
                                _ change: (inout PropertyCondition) -> Void) -> QueryCondition<E>.Node {
        switch node {
        case .property(var condition):
            let hit: Bool = switch target {
            case .property(let id, _, let via): condition.propertyId == id && condition.via == via
            case .alias(let alias): condition.alias == alias
            }
            guard hit else { return node }
            matches += 1
            change(&condition)
            return .property(condition)
        case .all(let nodes): return .all(nodes.map { rewrite($0, target, &matches, change) })
        case .any(let nodes): return .any(nodes.map { rewrite($0, target, &matches, change) })
        case .embedded(let path, let inner):
            // Inside, conditions are on the embedded type's properties: only an alias reaches them.
            guard case .alias = target else { return node }
            return .embedded(path, rewrite(inner, target, &matches, change))
        }
    }
}
