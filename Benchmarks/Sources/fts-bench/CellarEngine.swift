import BenchSupport
import Cellar
import Foundation

/// The steps through Cellar's public API: the generated `Store(directoryPath:)` (model-fts-bench.json's
/// model: `Doc.text` with a full-text index) with default options (durable commits), `Box<Doc>`,
/// and one built query per step whose string is changed with `setParameter` (as GRDB binds a
/// value to its cached statement).
enum CellarEngine {
    static func run(_ w: Workload, folder: String) throws -> RunResult {
        var result = RunResult()
        let store = try Store(directoryPath: folder + "/cellar")
        defer { store.close() }
        let box = store.box(for: Doc.self)

        // index: all N documents in one write transaction; the store assigns ids 1...N.
        var objects = w.texts.map { Doc(text: $0) }
        objects.withUnsafeMutableBufferPointer { _ in }  // the copy the put writes ids into, made before the timer
        var start = now()
        let ids = try timedPut(box, &objects)
        result.seconds[.index] = now() - start
        objects = []
        try check("cellar index: \(w.n) ids", ids.count == w.n, "\(ids.count)")
        for (k, id) in ids.enumerated() where id.value != Id(k + 1) {
            throw BenchError("check failed: cellar index: document \(k + 1) got id \(id.value)")
        }
        try check("cellar index: box.count() == N", try box.count() == w.n)

        // The query steps: each query its own read transaction (findIds opens one).
        for step in Step.queries {
            let queries = w.queries(step)
            let query = try box.query { Doc.text.matches(queries[0].cellar) }.build()
            var lists = [[EntityId<Doc>]](repeating: [], count: queries.count)
            var each = [Double](repeating: 0, count: queries.count)
            start = now()
            try timedQueries(query, queries, into: &lists, seconds: &each)
            result.seconds[step] = now() - start
            result.perQuery[step] = each
            result.answers[step] = lists.map { $0.map { Int64($0.value) } }
            // count() answers from the postings alone: it must agree with findIds.
            for k in queries.indices.prefix(20) {
                query.setParameter(Doc.text, to: queries[k].cellar)
                let count = try query.count()
                try check("cellar \(step.rawValue): count() of `\(queries[k].cellar)` == findIds().count", count == lists[k].count,
                          "\(count) vs \(lists[k].count)")
            }
        }

        // top10: the same ranked query, its string set for each query, the first ten ids.
        if !w.ranked.isEmpty {
            let ranked = try box.query { Doc.text.matches(w.ranked[0].cellar) }.ordered(byRelevanceTo: Doc.text).build()
            var lists = [[EntityId<Doc>]](repeating: [], count: w.ranked.count)
            var each = [Double](repeating: 0, count: w.ranked.count)
            start = now()
            try timedRanked(ranked, w.ranked, into: &lists, seconds: &each)
            result.seconds[.ranked] = now() - start
            result.perQuery[.ranked] = each
            result.top10 = lists.map { $0.map { Int64($0.value) } }
        }

        // The index's size: this store compacted, against a second store holding the same texts as
        // `PlainDoc`s (no index), compacted too.
        try store.compact()
        result.indexedBytes = Int(store.fileSize.total)
        let live = store.fileSize.live
        store.close()
        let plain = try Store(directoryPath: folder + "/plain")
        defer { plain.close() }
        var plainObjects = w.texts.map { PlainDoc(text: $0) }
        _ = try plain.box(for: PlainDoc.self).put(&plainObjects)
        try plain.compact()
        result.plainBytes = Int(plain.fileSize.total)
        result.sizeNote = "cellar after compact(): with the index \(grouped(result.indexedBytes)) bytes (live \(grouped(Int(live)))), "
            + "the same texts without it \(grouped(result.plainBytes)) (live \(grouped(Int(plain.fileSize.live))))"
        return result
    }

    // The timed work of each step, one function each (never inlined), so that a profiler can
    // collect exactly it (`perf report --symbol-filter=timedQueries`).

    @inline(never)
    static func timedPut(_ box: Box<Doc>, _ objects: inout [Doc]) throws -> [EntityId<Doc>] {
        try box.put(&objects)
    }

    @inline(never)
    static func timedQueries(_ query: Query<Doc>, _ queries: [SearchQuery], into lists: inout [[EntityId<Doc>]],
                             seconds: inout [Double]) throws {
        for k in lists.indices {
            let start = now()
            query.setParameter(Doc.text, to: queries[k].cellar)
            lists[k] = try query.findIds()
            seconds[k] = now() - start
        }
    }

    @inline(never)
    static func timedRanked(_ query: Query<Doc>, _ queries: [SearchQuery], into lists: inout [[EntityId<Doc>]],
                             seconds: inout [Double]) throws {
        for k in lists.indices {
            let start = now()
            query.setParameter(Doc.text, to: queries[k].cellar)
            lists[k] = try query.findIds(offset: 0, limit: 10)
            seconds[k] = now() - start
        }
    }
}
