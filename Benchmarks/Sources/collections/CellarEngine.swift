import BenchSupport
@_spi(CellarGenerated) import Cellar
import Foundation

/// The steps through Cellar's public API: the generated `Store(directoryPath:)` (model-collections.json's
/// model: `tags` element-indexed) with default options, `Box<Item>`, and queries on the collections.
/// tag-scan runs on a second store whose model is the same without the element index.
enum CellarEngine {
    /// `cellarModel()` without the element index on `tags` (the same properties, nothing indexed).
    static func unindexedModel() -> Cellar.Model {
        var model = cellarModel()
        let at = model.entities.firstIndex { $0.name == "Item" }!
        for i in model.entities[at].properties.indices {
            model.entities[at].properties[i].flags.subtract([.indexed, .indexHash, .indexHash64])
            model.entities[at].properties[i].indexId = nil
        }
        return model
    }

    static func run(_ w: Workload, folder: String) throws -> RunResult {
        let n = w.n
        var result = RunResult()
        var expectedItems = w.items
        for k in expectedItems.indices { expectedItems[k].id = Id(k + 1) }

        do {
            let path = folder + "/cellar"
            let store = try Store(directoryPath: path)
            defer { store.close() }
            let box = store.box(for: Item.self)

            // put: all N in one write transaction; the store assigns ids 1...N.
            var objects = w.items
            objects.withUnsafeMutableBufferPointer { _ in }  // the copy the put writes ids into, made before the timer
            var start = now()
            let ids = try timedPut(box, &objects)
            result.seconds[.put] = now() - start
            try checkIds("put", ids, objects, n: n)
            try check("put: box.count() == N", try box.count() == n)
            result.logBytes = Int(store.fileSize.total)

            // get: one read transaction, every item by id in the random order, each built.
            start = now()
            let found = try timedGets(store, box, w.permutation)
            result.seconds[.get] = now() - start
            try w.checkGet("cellar", found: found)
            try store.runInReadOnlyTransaction {
                for k in 0..<n {
                    let item = try box.get(Id(k + 1))
                    guard item == expectedItems[k] else {
                        throw BenchError("check failed: cellar get: item \(k + 1) reads back as \(item.map { "\($0)" } ?? "nil"), expected \(expectedItems[k])")
                    }
                }
            }

            // tag: 100 lookups through the element index, the ids of the items holding the tag; one query,
            // its tag set as a parameter (as GRDB binds one to its cached statement).
            let query = try box.query { Item.tags.contains(w.lookupTags[0]) }.build()
            var lists = [[EntityId<Item>]](repeating: [], count: Workload.tagLookups)
            start = now()
            try timedTagLookups(query, w.lookupTags, into: &lists)
            result.seconds[.tag] = now() - start
            try w.checkIds("cellar tag", lists.map { $0.map { Int64($0.value) } }, lookups: Workload.tagLookups)

            // map: count the items whose attributes["color"] is the lookup's color (one query per color, built before).
            let colors = Workload.attributeValues[0].values
            var mapQueries: [String: Query<Item>] = [:]
            for color in colors { mapQueries[color] = try box.query { Item.attributes["color"] == color }.build() }
            let queries = w.lookupColors.map { mapQueries[$0]! }
            var counts = [Int](repeating: -1, count: queries.count)
            start = now()
            try timedCounts(queries, into: &counts)
            result.seconds[.map] = now() - start
            try w.checkMapCounts("cellar map", counts)
        }

        // The same items in a store without the element index (put-noindex, then tag-scan), and in
        // one whose element index is a hash index (put-hash, then tag-hash).
        (result.seconds[.putNoIndex], result.seconds[.tagScan], result.logBytesNoIndex) =
            try variant("noindex", unindexedModel(), w, folder: folder, lookups: Workload.scanLookups)
        (result.seconds[.putHash], result.seconds[.tagHash], result.logBytesHash) =
            try variant("hash", hashIndexModel(), w, folder: folder, lookups: Workload.tagLookups)

        // Record bytes: each item encoded as Box.put encodes it (no compression: the store's default).
        let builder = RecordBuilder()
        var total = 0
        for item in w.items {
            builder.begin(slotCount: Item.entityBinding.slotCount)
            try Item.entityBinding.write(item, to: builder)
            total += builder.bytes.count
        }
        result.recordBytes = Double(total) / Double(n)
        return result
    }

    /// `cellarModel()` with a hash index on `tags` instead of the value index `// cellar: index` makes
    /// for list elements (what `// cellar: index = "hash"` declares): 4-byte keys, candidates checked.
    static func hashIndexModel() -> Cellar.Model {
        var model = cellarModel()
        let at = model.entities.firstIndex { $0.name == "Item" }!
        for i in model.entities[at].properties.indices where model.entities[at].properties[i].name == "tags" {
            model.entities[at].properties[i].flags.insert(.indexHash)
        }
        return model
    }

    /// A store of its own in `folder/cellar-<name>` with `model`: the timed put of every item, then
    /// the first `lookups` tag lookups; their seconds and the log's length after the put.
    static func variant(_ name: String, _ model: Cellar.Model, _ w: Workload, folder: String, lookups: Int) throws -> (Double, Double, Int) {
        let path = folder + "/cellar-" + name
        let store = try Store(directoryPath: path, model: model)
        defer { store.close() }
        let box = store.box(for: Item.self)
        var objects = w.items
        objects.withUnsafeMutableBufferPointer { _ in }
        var start = now()
        let ids = try timedPut(box, &objects)
        let put = now() - start
        try checkIds("put-\(name)", ids, objects, n: w.n)
        let logBytes = Int(store.fileSize.total)

        let query = try box.query { Item.tags.contains(w.lookupTags[0]) }.build()
        var lists = [[EntityId<Item>]](repeating: [], count: lookups)
        start = now()
        try timedTagLookups(query, Array(w.lookupTags.prefix(lookups)), into: &lists)
        let lookup = now() - start
        try w.checkIds("cellar tag (\(name))", lists.map { $0.map { Int64($0.value) } }, lookups: lookups)
        return (put, lookup, logBytes)
    }

    static func checkIds(_ step: String, _ ids: [EntityId<Item>], _ objects: [Item], n: Int) throws {
        try check("\(step): \(n) ids", ids.count == n, "\(ids.count)")
        for (k, id) in ids.enumerated() where id.value != Id(k + 1) || objects[k].id != Id(k + 1) {
            throw BenchError("check failed: \(step): item \(k + 1) got id \(id.value), expected \(k + 1)")
        }
    }

    // The timed work of each step, one function each (never inlined), so that a profiler can
    // collect exactly it: `callgrind --toggle-collect='*timedGets*'`.

    @inline(never)
    static func timedPut(_ box: Box<Item>, _ objects: inout [Item]) throws -> [EntityId<Item>] {
        try box.put(&objects)
    }

    /// Every id in `order` read as an Item in one read transaction; the count found (each item's
    /// element counts summed, so that the build is used).
    @inline(never)
    static func timedGets(_ store: Store, _ box: Box<Item>, _ order: [UInt64]) throws -> Int {
        try store.runInReadOnlyTransaction {
            var found = 0
            var elements = 0
            for id in order {
                if let item = try box.get(Id(id)) {
                    found += 1
                    elements &+= item.tags.count + item.scores.count + item.attributes.count
                }
            }
            return elements >= 0 ? found : -1
        }
    }

    @inline(never)
    static func timedTagLookups(_ query: Query<Item>, _ tags: [String], into lists: inout [[EntityId<Item>]]) throws {
        for k in lists.indices {
            query.setParameter(Item.tags, to: tags[k])
            lists[k] = try query.findIds()
        }
    }

    @inline(never)
    static func timedCounts(_ queries: [Query<Item>], into counts: inout [Int]) throws {
        for k in counts.indices { counts[k] = try queries[k].count() }
    }
}
