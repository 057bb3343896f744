import BenchSupport
import Cellar
import Foundation

/// The steps through Cellar's public API: the generated `Store(directoryPath:)` (model-embedded.json's
/// model: `OrderLine.sku` indexed) with default options, `Box<Order>`, the lines embedded in each
/// order's record, and queries through the embedded list.
enum CellarEngine {
    static func run(_ w: Workload, folder: String) throws -> RunResult {
        var result = RunResult()
        let store = try Store(directoryPath: folder + "/cellar")
        defer { store.close() }
        let box = store.box(for: Order.self)

        // insert: all N orders in one write transaction; the store assigns ids 1...N.
        var objects = w.orders
        objects.withUnsafeMutableBufferPointer { _ in }  // the copy the put writes ids into, made before the timer
        var start = now()
        let ids = try timedPut(box, &objects)
        result.seconds[.insert] = now() - start
        try check("cellar insert: \(w.n) ids", ids.count == w.n, "\(ids.count)")
        for (k, id) in ids.enumerated() where id.value != Id(k + 1) {
            throw BenchError("check failed: cellar insert: order \(k + 1) got id \(id.value)")
        }
        try check("cellar insert: box.count() == N", try box.count() == w.n)
        result.bytes = Int(store.fileSize.total)

        // get: one read transaction, every order by id in the random order, each built with its lines.
        start = now()
        result.answers.got = try timedGets(store, box, w.permutation)
        result.seconds[.get] = now() - start
        let expected = w.inserted
        try check("cellar get: totals", result.answers.got == Workload.totals(expected), "\(result.answers.got)")
        try store.runInReadOnlyTransaction {
            for order in expected where try box.get(order.id) != order {
                throw BenchError("check failed: cellar get: order \(order.id) reads back as \(String(describing: try box.get(order.id))), expected \(order)")
            }
        }

        // sku: 100 lookups through the embedded index, one query, its sku set as a parameter (as GRDB
        // binds one to its cached statement); each lookup its own read transaction.
        let skuQuery = try box.query { Order.lines.sku == w.lookupSkus[0] }.build()
        var lists = [[EntityId<Order>]](repeating: [], count: Workload.lookups)
        start = now()
        try timedSkuLookups(skuQuery, w.lookupSkus, into: &lists)
        result.seconds[.sku] = now() - start
        result.answers.sku = lists.map { $0.map { Int64($0.value) }.sorted() }
        try check("cellar sku: the orders of each sku", result.answers.sku == w.expectedIds(expected, Workload.hasSku))

        // sku-qty: both conditions on one line (`any`), the sku named so that it can be set.
        let anyQuery = try box.query {
            Order.lines.any { (OrderLine.sku == w.lookupSkus[0]).alias("sku") && OrderLine.quantity >= Workload.minQuantity }
        }.build()
        start = now()
        try timedAnyLookups(anyQuery, w.lookupSkus, into: &lists)
        result.seconds[.skuQuantity] = now() - start
        result.answers.skuQuantity = lists.map { $0.map { Int64($0.value) }.sorted() }
        try check("cellar sku-qty: the orders of each sku with quantity >= \(Workload.minQuantity)",
                  result.answers.skuQuantity == w.expectedIds(expected, Workload.hasSkuAndQuantity))

        // update: a tenth of the orders put again with new lines, one write transaction (the whole
        // record is written again; the index keys of the sku values that changed follow).
        var updates = w.updates
        updates.withUnsafeMutableBufferPointer { _ in }
        start = now()
        let updated = try timedUpdate(box, &updates)
        result.seconds[.update] = now() - start
        try check("cellar update: \(w.updates.count) ids kept", updated.map(\.value) == w.updates.map(\.id))

        // remove: another tenth by id, one write transaction: their records, and their lines with them.
        start = now()
        let removed = try timedRemove(box, w.removals)
        result.seconds[.remove] = now() - start
        try check("cellar remove: \(w.removals.count) removed", removed == w.removals.count, "\(removed)")

        // After the timers: every stored order is the expected one, the index answers as a scan would.
        let all = try box.all()
        try check("cellar final: the stored orders", all == w.final, "\(all.count) orders, expected \(w.final.count)")
        result.answers.final = Workload.totals(all)
        var finalLists = [[EntityId<Order>]](repeating: [], count: Workload.lookups)
        try timedSkuLookups(skuQuery, w.lookupSkus, into: &finalLists)
        result.answers.finalSku = finalLists.map { $0.map { Int64($0.value) }.sorted() }
        try check("cellar final: the orders of each sku", result.answers.finalSku == w.expectedIds(w.final, Workload.hasSku))
        return result
    }

    // The timed work of each step, one function each (never inlined), so that a profiler can
    // collect exactly it (`perf report --symbol-filter=timedGets`).

    @inline(never)
    static func timedPut(_ box: Box<Order>, _ objects: inout [Order]) throws -> [EntityId<Order>] {
        try box.put(&objects)
    }

    /// The update step's put: the same call as the insert's, a function of its own for the profiler.
    @inline(never)
    static func timedUpdate(_ box: Box<Order>, _ objects: inout [Order]) throws -> [EntityId<Order>] {
        try box.put(&objects)
    }

    /// Every id in `order` read as an Order in one read transaction; the orders found, summed (so
    /// that the build is used).
    @inline(never)
    static func timedGets(_ store: Store, _ box: Box<Order>, _ order: [UInt64]) throws -> Totals {
        try store.runInReadOnlyTransaction {
            var totals = Totals()
            for id in order {
                if let found = try box.get(Id(id)) { totals.add(found) }
            }
            return totals
        }
    }

    @inline(never)
    static func timedSkuLookups(_ query: Query<Order>, _ skus: [String], into lists: inout [[EntityId<Order>]]) throws {
        for k in lists.indices {
            query.setParameter(Order.lines.sku, to: skus[k])
            lists[k] = try query.findIds()
        }
    }

    @inline(never)
    static func timedAnyLookups(_ query: Query<Order>, _ skus: [String], into lists: inout [[EntityId<Order>]]) throws {
        for k in lists.indices {
            query.setParameter("sku", to: skus[k])
            lists[k] = try query.findIds()
        }
    }

    @inline(never)
    static func timedRemove(_ box: Box<Order>, _ ids: [UInt64]) throws -> Int {
        try box.remove(ids)
    }
}
