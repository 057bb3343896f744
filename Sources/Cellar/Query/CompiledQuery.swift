import CellarStorage

/// A query checked against the store's model: its condition, plan, links and order, and how to
/// run them in a transaction.
struct CompiledQuery {
    let schema: EntitySchema
    let condition: CompiledCondition?
    let plan: QueryPlan
    /// Queries on related entities whose matching ids link conditions test against.
    let links: [CompiledQuery]
    let orders: [CompiledOrder]
    /// The `nearestNeighbors` condition, when the query has one (at its top, alone or joined by
    /// `&&`): its search runs first, `condition` filtering the objects it visits.
    var vector: VectorLeaf? = nil

    // MARK: Matching

    /// The ids of the matching objects, in id order.
    func matchingIds(_ context: TransactionContext) throws -> [Id] {
        if vector != nil { return try nearest(context).map(\.id) }
        if plan.exact, let ids = try idsFromSource(context) { return ids }
        var ids: [Id] = []
        try forEachMatch(context) { id, _ in ids.append(id); return true }
        return ids
    }

    /// The number of matching objects.
    func count(_ context: TransactionContext) throws -> Int {
        if vector != nil { return try nearest(context).count }
        if plan.exact {
            switch plan.source {
            case .scan: return try context.count(schema)
            case .index(let index, let ranges) where !plan.mayRepeat:
                guard let cursor = try context.cursor(indexTree: index) else { break }
                return try ranges.reduce(0) { $0 + (try cursor.countKeys($1)) }
            case .index, .fullText:
                break   // an object may have keys in several ranges: its ids are made distinct
            case .ids(let ranges):
                guard let cursor = try context.cursor(schema) else { return 0 }
                return try ranges.reduce(0) { $0 + (try cursor.countKeys($1)) }
            }
        }
        return try matchingIds(context).count
    }

    /// Whether every object of the entity matches (no condition, no link): a scan of its tree
    /// answers the query.
    var matchesEveryObject: Bool { condition == nil && links.isEmpty && vector == nil }

    /// Visits the matching objects (id and record) in id order until `body` returns false. Each
    /// record is valid during its call, or, when `stable`, until the transaction ends (a
    /// compressed one is then decoded into the transaction's memory). `expecting` is called
    /// before the first match with how many there are, when the source knows that without
    /// reading them (every object; an index or the full-text index that decides the condition
    /// alone; the nearest neighbours), so that a caller collecting them can reserve room once.
    func forEachMatch(_ context: TransactionContext, stable: Bool = false, expecting: (Int) -> Void = { _ in },
                      _ body: (Id, UnsafeRawBufferPointer) throws -> Bool) throws {
        if vector != nil {
            // The nearest first.
            let ids = try nearest(context).map(\.id)
            expecting(ids.count)
            try context.forEachRecord(schema, ids: ids, stable: stable, body)
            return
        }
        if matchesEveryObject {
            guard let cursor = try context.cursor(schema) else { return }
            expecting(try context.count(schema))
            try cursor.scan(stableValues: stable) { key, record in try body(try StorageLayout.objectId(key), record) }
            return
        }
        let linkSets = try links.map { Set(try $0.matchingIds(context)) }
        let evaluate: (Id, UnsafeRawBufferPointer) throws -> Bool = { id, record in
            guard let condition = self.condition else { return true }
            return try condition.evaluate(RecordReader(record), id: id, links: linkSets, context: context)
        }
        // An exact source decides the condition by itself.
        let check: (Id, UnsafeRawBufferPointer) throws -> Bool = plan.exact ? { _, _ in true } : evaluate
        switch plan.source {
        case .scan:
            try scan(context, range: .all, stable: stable, check: check, body)
        case .ids(let ranges):
            for range in ranges {
                var more = true
                try scan(context, range: range, stable: stable, check: check) { id, record in
                    more = try body(id, record)
                    return more
                }
                if !more { return }
            }
        case .index, .fullText:
            guard let ids = try idsFromSource(context) else {
                // The index was never built (a store opened read-only): every record is read and
                // the whole condition checked, whatever the plan thought of the index.
                try scan(context, range: .all, stable: stable, check: evaluate, body)
                return
            }
            if plan.exact {
                // Every id matches: the records go to `body` with nothing in between.
                expecting(ids.count)
                try context.forEachRecord(schema, ids: ids, stable: stable, body)
                return
            }
            try context.forEachRecord(schema, ids: ids, stable: stable) { id, record in
                try !evaluate(id, record) || body(id, record)
            }
        }
    }

    private func scan(_ context: TransactionContext, range: KeyRange, stable: Bool, check: (Id, UnsafeRawBufferPointer) throws -> Bool,
                      _ body: (Id, UnsafeRawBufferPointer) throws -> Bool) throws {
        guard let cursor = try context.cursor(schema) else { return }
        try cursor.scan(range, stableValues: stable) { key, record in
            let id = try StorageLayout.objectId(key)
            guard try check(id, record) else { return true }
            return try body(id, record)
        }
    }

    /// The candidate ids the plan's source gives, in id order; nil when it gives none by itself
    /// (a scan, or an index that was never built).
    private func idsFromSource(_ context: TransactionContext) throws -> [Id]? {
        switch plan.source {
        case .scan:
            guard plan.exact else { return nil }
            var ids: [Id] = []
            guard let cursor = try context.cursor(schema) else { return [] }
            ids.reserveCapacity(try context.count(schema))
            try cursor.appendKeySuffixes(.all, to: &ids)
            return ids
        case .ids(let ranges):
            var ids: [Id] = []
            guard let cursor = try context.cursor(schema) else { return [] }
            for range in ranges { try cursor.appendKeySuffixes(range, to: &ids) }
            return ids
        case .index(let index, let ranges):
            guard let cursor = try context.cursor(indexTree: index) else { return nil }
            var ids: [Id] = []
            for range in ranges { try cursor.appendKeySuffixes(range, to: &ids) }
            // One equality gives its ids in order; ranges and several values do not.
            if !plan.inIdOrder {
                ids.sort()
                if ranges.count > 1 || plan.mayRepeat { ids = ids.uniqued() }
            }
            return ids
        case .fullText(let index, let query):
            guard let cursor = try context.cursor(indexTree: index) else { return nil }
            return try FullTextIndex.matchingIds(query, cursor: cursor, index: index)
        }
    }
}

extension Array where Element: Equatable {
    /// Without repeats (the array is sorted): ids, index keys.
    func uniqued() -> [Element] {
        var out: [Element] = []
        out.reserveCapacity(count)
        for element in self where out.last != element { out.append(element) }
        return out
    }
}

extension Array where Element: Comparable {
    /// Whether each element is above the one before (sorted, without repeats).
    var isStrictlyAscending: Bool {
        indices.dropFirst().allSatisfy { self[$0 - 1] < self[$0] }
    }
}
