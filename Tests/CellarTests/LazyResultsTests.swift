@_spi(CellarGenerated) @_spi(Testing) import Cellar
import CellarStorage
import CellarTestSupport
import Dispatch
import Foundation
import Testing

/// `Query.findLazy()`: the same objects as `find()`, built only when accessed, from the snapshot
/// the query ran in, with a bounded cache.
@Suite struct LazyResultsTests {
    /// `count` items: title `t<i % 7>`, score `i % 50` (nil for every 11th), rank `i % 5`.
    func store(_ name: String, count: Int = 300) throws -> (Store, Box<QItem>) {
        let store = try Store(directoryPath: "memory:lazy-\(name)", model: queryModel())
        let box = store.box(for: QItem.self)
        try box.put((0..<count).map { i in
            let item = QItem()
            item.title = "t\(i % 7)"
            item.score = i % 11 == 0 ? nil : Int32(i % 50)
            item.rank = UInt64(i % 5)
            return item
        })
        return (store, box)
    }

    /// Whether `body` throws a `CellarError` with `code`.
    func fails(_ code: CellarError.Code, _ body: () throws -> Void) -> Bool {
        do { try body(); return false } catch { return (error as? CellarError)?.code == code }
    }

    func summary(_ item: QItem) -> String { "\(item.id) \(item.title) \(item.score.map(String.init) ?? "-") \(item.rank)" }

    @Test func sameObjectsAsFind() throws {
        let (_, box) = try store("same")
        let queries: [(String, Query<QItem>)] = [
            ("all", try box.query().build()),
            ("condition", try box.query { QItem.score > 30 && QItem.title != "t3" }.build()),
            ("index", try box.query { QItem.rank == 3 }.build()),
            ("ordered", try box.query { QItem.score < 20 }.ordered(by: QItem.score, flags: .descending).build()),
            ("two orders", try box.query().ordered(by: QItem.title).ordered(by: QItem.score, flags: .descending).build()),
            ("empty", try box.query { QItem.score == 9_999 }.build()),
        ]
        let pages: [(Int, Int?)] = [(0, nil), (0, 10), (7, nil), (25, 13), (290, 50), (1_000, nil), (3, 0)]
        for (name, query) in queries {
            for (offset, limit) in pages {
                let eager = try query.find(offset: offset, limit: limit)
                let lazy = try query.findLazy(offset: offset, limit: limit)
                let label = "\(name) offset \(offset) limit \(limit.map(String.init) ?? "nil")"
                #expect(lazy.count == eager.count, "\(label)")
                #expect(lazy.ids == eager.map { EntityId($0.id) }, "\(label)")
                #expect(lazy.ids == (try query.findIds(offset: offset, limit: limit)), "\(label)")
                #expect(lazy.map(summary) == eager.map(summary), "\(label)")
                // Random access, backwards.
                for i in lazy.indices.reversed() {
                    #expect(summary(lazy[i]) == summary(eager[i]), "\(label) at \(i)")
                }
            }
            #expect(try query.findLazy().map(summary) == (try query.find()).map(summary), "\(name)")
        }
        #expect(try box.query { QItem.score == 9_999 }.build().findLazy().isEmpty)
    }

    @Test func countIdsAndIndexingBuildNothing() throws {
        let (_, box) = try store("nothing-built")
        let lazy = try box.query { QItem.rank == 2 }.ordered(by: QItem.title).build().findLazy()
        #expect(lazy.count == 60)
        #expect(lazy.ids.count == 60)
        #expect(lazy.startIndex == 0 && lazy.endIndex == 60)
        #expect(lazy.indices == 0..<60)
        #expect(lazy.index(after: 4) == 5 && lazy.index(before: 4) == 3 && lazy.index(4, offsetBy: 10) == 14)
        #expect(lazy.distance(from: 3, to: 50) == 47)
        #expect(!lazy.isEmpty)
        let slice = lazy[10..<20]
        #expect(slice.count == 10)
        #expect(lazy.builtObjectCount == 0)
        #expect(lazy.cachedObjectCount == 0)

        let first = lazy[5]
        #expect(lazy.builtObjectCount == 1)
        #expect(lazy[5] === first)   // from the cache
        #expect(lazy.builtObjectCount == 1)
        _ = slice.first
        #expect(lazy.builtObjectCount == 2)
    }

    @Test func cacheStaysBoundedAndKeepsTheMostRecentlyUsed() throws {
        let (_, box) = try store("bounded", count: 10_000)
        let lazy = try box.query().build().findLazy()
        #expect(lazy.cacheSize == LazyResults<QItem>.defaultCacheSize)
        #expect(lazy.count == 10_000)
        var seen = 0
        var largest = 0
        for (i, item) in lazy.enumerated() {
            #expect(item.id == Id(i + 1))
            seen += 1
            if i % 100 == 0 { largest = max(largest, lazy.cachedObjectCount) }
        }
        #expect(seen == 10_000)
        #expect(largest <= 64)
        #expect(lazy.cachedObjectCount == 64)
        #expect(lazy.builtObjectCount == 10_000)

        // Least recently used out: fill 0..<64, touch 0, add 64 (evicts 1, not 0).
        let small = try box.query().build().findLazy()
        let zero = small[0]
        for i in 1..<64 { _ = small[i] }
        #expect(small[0] === zero)
        _ = small[64]
        #expect(small.builtObjectCount == 65)
        #expect(small[0] === zero)
        #expect(small.builtObjectCount == 65)
        _ = small[1]
        #expect(small.builtObjectCount == 66)
        #expect(small.cachedObjectCount == 64)

        // Another size, and none.
        let tiny = try box.query().build().findLazy(cacheSize: 3)
        for i in 0..<10 { _ = tiny[i] }
        #expect(tiny.cachedObjectCount == 3)
        let uncached = try box.query().build().findLazy(cacheSize: 0)
        let a = uncached[7]
        let b = uncached[7]
        #expect(a !== b && a.id == b.id)
        #expect(uncached.builtObjectCount == 2 && uncached.cachedObjectCount == 0)
    }

    @Test func readsTheSnapshotTheQueryRanIn() throws {
        let (store, box) = try store("snapshot", count: 40)
        let query = try box.query { QItem.rank == 1 }.build()
        let lazy = try query.findLazy(cacheSize: 0)
        let before = try query.find().map(summary)
        #expect(lazy.count == 8)

        // Change one match, remove another, add a new one, remove all the rest of the entity.
        let changed = try #require(try box.get(lazy.ids[0]))
        changed.title = "changed"
        try box.put(changed)
        try box.remove(lazy.ids[1].value)
        let added = QItem()
        added.rank = 1
        try box.put(added)
        #expect(try query.count() == 8)
        #expect(try box.get(lazy.ids[1]) == nil)

        #expect(lazy.map(summary) == before)   // nothing missing, nothing newer
        #expect(lazy[0].title == "t1")
        #expect(try query.findLazy().map(\.title).first == "changed")
        #expect(try !query.findLazy().ids.contains(lazy.ids[1]))

        try box.removeAll()
        #expect(lazy.map(summary) == before)

        // Inside a read-only transaction: its snapshot, also when the results outlive it.
        let (_, box2) = try self.store("snapshot-in-read", count: 40)
        let query2 = try box2.query { QItem.rank == 1 }.build()
        let expected = try query2.find().map(summary)
        let inside = try box2.store.runInReadOnlyTransaction {
            // A commit from another thread, after this transaction's snapshot was taken.
            let group = DispatchGroup()
            let failure = Locked<String?>(nil)
            group.enter()
            DispatchQueue.global().async {
                defer { group.leave() }
                do { try box2.removeAll() } catch { failure.withLock { $0 = "\(error)" } }
            }
            group.wait()
            #expect(failure.current == nil)
            return try query2.findLazy()
        }
        #expect(try box2.count() == 0)
        #expect(inside.map(summary) == expected)
        _ = store
    }

    @Test func survivesCompaction() throws {
        let dir = TestDirectory("lazy-compaction"); defer { dir.remove() }
        let store = try Store(directoryPath: dir.path, model: queryModel())
        let box = store.box(for: QItem.self)
        try box.put((0..<500).map { i in
            let item = QItem()
            item.title = String(repeating: "x", count: 100) + "\(i)"
            item.rank = UInt64(i % 2)
            return item
        })
        let query = try box.query { QItem.rank == 0 }.build()
        let expected = try query.find().map(summary)
        let lazy = try query.findLazy(cacheSize: 0)
        try box.query { QItem.rank == 0 }.build().remove()
        try store.compact()
        #expect(lazy.map(summary) == expected)
        lazy.close()
        store.close()
    }

    @Test func closeAndErrors() throws {
        let (store, box) = try store("errors", count: 20)
        let lazy = try box.query().build().findLazy()
        _ = lazy[3]
        #expect(fails(.illegalArgument) { _ = try lazy.object(at: 20) })
        #expect(fails(.illegalArgument) { _ = try lazy.object(at: -1) })
        #expect(!lazy.isClosed)
        lazy.close()
        lazy.close()
        #expect(lazy.isClosed)
        #expect(lazy.count == 20 && lazy.ids.count == 20)
        #expect(lazy.cachedObjectCount == 0)
        #expect(fails(.illegalArgument) { _ = try lazy.object(at: 3) })

        #expect(fails(.illegalArgument) { _ = try box.query().build().findLazy(offset: -1, limit: nil) })
        #expect(fails(.illegalArgument) { _ = try box.query().build().findLazy(offset: 0, limit: -2) })
        #expect(fails(.illegalArgument) { _ = try box.query().build().findLazy(cacheSize: -1) })
        // Inside a write transaction: refused, and the transaction goes on.
        try store.runInTransaction {
            #expect(fails(.illegalArgument) { _ = try box.query().build().findLazy() })
        }
        #expect(try box.count() == 20)
        store.close()
        #expect(fails(.storeClosed) { _ = try box.query().build().findLazy() })
    }

    @Test func concurrentReadersSeeTheSameObjects() throws {
        let (_, box) = try store("threads", count: 2_000)
        let query = try box.query { QItem.score >= 10 }.ordered(by: QItem.title).build()
        let expected = try query.find().map(summary)
        let lazy = try query.findLazy(cacheSize: 16)
        let failures = Locked<[String]>([])
        let seed = SplitMix64.testSeed()
        let group = DispatchGroup()
        // A writer changes every object meanwhile: the results must not see it.
        group.enter()
        DispatchQueue.global().async {
            defer { group.leave() }
            do {
                for round in 0..<20 {
                    try box.store.runInTransaction {
                        let rank = UInt64(round % 5)
                        for item in try box.query({ QItem.rank == rank }).build().find() {
                            item.title = "w\(round)"
                            try box.put(item)
                        }
                    }
                }
            } catch {
                failures.add("writer: \(error)")
            }
        }
        // Readers of two results: one with a small cache (mostly builds and evictions), one that
        // caches everything (mostly hits, which update the cache's use order).
        let cached = try query.findLazy(cacheSize: expected.count)
        // Threads of their own: the global queue may run its blocks one after the other on few cores.
        for reader in 0..<4 {
            group.enter()
            Thread {
                defer { group.leave() }
                var rng = SplitMix64(seed: seed &+ UInt64(reader))
                for _ in 0..<3_000 {
                    let i = Int.random(in: 0..<expected.count, using: &rng)
                    for results in [lazy, cached] {
                        let got = summary(results[i])
                        if got != expected[i] { failures.add("seed \(seed): reader \(reader) at \(i): \(got), expected \(expected[i])") }
                    }
                }
                for results in [lazy, cached] where results.map(summary) != expected {
                    failures.add("seed \(seed): reader \(reader): iteration differs")
                }
            }.start()
        }
        group.wait()
        let found = failures.current
        let failureCount = found.count
        #expect(failureCount == 0, "\(found.prefix(3))")
        #expect(lazy.cachedObjectCount <= 16)
        #expect(cached.builtObjectCount == expected.count)
    }
}
