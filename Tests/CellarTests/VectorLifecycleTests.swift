// The HNSW index through compaction (alone, and on another thread while vectors change) and
// reopening after churn, and observers of a nearest-neighbour query (the kill -9 test is in
// VectorCrashTests).

@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import Atomics
import CellarStorage
import CellarTestSupport
import Dispatch
import Foundation
import Testing

/// Values an observation handed over, from whatever thread.
private final class Received<T: Sendable>: Sendable {
    private let values = Locked<[T]>([])
    func append(_ value: T) { values.withLock { $0.append(value) } }
    var all: [T] { values.withLock { $0 } }
}

@Suite struct VectorLifecycleTests {
    /// The HNSW index's tree: every key and value (the nodes and the entry point).
    static func indexTree(_ store: Store) throws -> [[UInt8]: [UInt8]] {
        let index = try #require(VectorWorkload.model().entities[0].properties[2].indexId)
        return try store.engine.read { txn in
            var entries: [[UInt8]: [UInt8]] = [:]
            guard let tree = try txn.tree(StorageLayout.indexTree(index.id)) else { return entries }
            try txn.cursor(tree).scan { key, value in
                entries[Array(key)] = Array(value)
                return true
            }
            return entries
        }
    }

    /// The hits (id and distance, nearest first) of a 10-nearest-neighbour query for each of `queries`.
    static func results(_ store: Store, _ queries: [[Float]]) throws -> [[Hit]] {
        let box = store.box(for: VectorDoc.self)
        return try queries.map { vector in
            try box.query { VectorDoc.embedding.nearestNeighbors(to: vector, maxCount: 10) }.build()
                .findIdsWithScores().map { Hit(id: $0.id.value, score: $0.score) }
        }
    }

    struct Hit: Equatable { var id: Id; var score: Double }

    /// Every object with a vector, by id.
    static func vectors(_ store: Store) throws -> [Id: [Float]] {
        var vectors: [Id: [Float]] = [:]
        for doc in try store.box(for: VectorDoc.self).all() { vectors[doc.id] = doc.embedding }
        return vectors
    }

    /// Mean recall@10 of `results` for `queries` against brute force over `vectors`.
    static func recall(_ results: [[Hit]], _ queries: [[Float]], _ vectors: [Id: [Float]]) -> Double {
        var total = 0.0
        for (hits, query) in zip(results, queries) {
            let exact = vectors.map { ($0.key, VectorWorkload.distance(query, $0.value)) }
                .sorted { ($0.1, $0.0) < ($1.1, $1.0) }.prefix(10).map(\.0)
            total += Double(Set(hits.map(\.id)).intersection(exact).count) / Double(max(exact.count, 1))
        }
        return total / Double(queries.count)
    }

    /// 900 clustered vectors, then a third removed and a third updated in 30 transactions: the
    /// graph, reloaded from its tree at reopen, keeps a recall@10 of at least 0.95; compaction
    /// copies the tree byte for byte, and the search results stay identical, in the same process
    /// and after reopening; commits after the compaction keep the graph in memory and the one in
    /// the tree the same, a rolled-back transaction among them.
    @Test func compactionAndReopeningAfterChurnKeepTheGraphAndTheResults() throws {
        let directory = TestDirectory("vector-compact")
        defer { directory.remove() }
        let options = StoreOptions(automaticCompaction: nil)
        let seed: UInt64 = 31
        var rng = SplitMix64(seed: seed)
        let queries = VectorWorkload.queries(40, seed: seed)
        var store = try Store(directoryPath: directory.path, model: VectorWorkload.model(), options: options)
        var box = store.box(for: VectorDoc.self)
        var ids: [Id] = []
        for batch in 0..<9 {
            let docs = (0..<100).map { i in VectorDoc(key: Int64(batch * 100 + i), embedding: VectorWorkload.vector(&rng, seed: seed)) }
            ids += try box.put(docs).map(\.value)
        }
        for round in 0..<30 {
            try store.runInTransaction {
                for (n, id) in ids.enumerated() where n % 30 == round {
                    switch n % 3 {
                    case 0: #expect(try box.remove(id))
                    case 1: try box.put(VectorDoc(key: Int64(n), embedding: VectorWorkload.vector(&rng, seed: seed)).with(id: id))
                    default: break
                    }
                }
            }
        }
        #expect(try box.count() == 600)
        let vectors = try Self.vectors(store)
        let churned = try Self.results(store, queries)
        let recall = Self.recall(churned, queries, vectors)
        #expect(recall >= 0.95, "recall@10 after the churn: \(recall)")
        #expect(try RecordCheck.verify(store.engine).indexEntries == 600)
        let tree = try Self.indexTree(store)
        #expect(tree.count == 602, "600 nodes, the entry point and the stamp")

        // Reopened: the graph read back from its image answers the same, and so does the graph
        // loaded from the tree (without the image).
        store.close()
        store = try Store(directoryPath: directory.path, model: VectorWorkload.model(), options: options)
        box = store.box(for: VectorDoc.self)
        #expect(try Self.results(store, queries) == churned, "after reopening")
        #expect(store.vectorIndexes.imageLoads.withLock { $0 } == 1)
        store.close()
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".graph") {
            try FileManager.default.removeItem(atPath: directory.path + "/" + name)
        }
        store = try Store(directoryPath: directory.path, model: VectorWorkload.model(), options: options)
        box = store.box(for: VectorDoc.self)
        #expect(try Self.results(store, queries) == churned, "after reopening without the image")
        #expect(store.vectorIndexes.imageLoads.withLock { $0 } == 0)

        // Compacted: the same tree, the same results, verified; smaller.
        let report = try store.compact()
        #expect(report.bytesAfter < report.bytesBefore, "\(report)")
        #expect(try Self.indexTree(store) == tree, "compaction changed the index's tree")
        #expect(try Self.results(store, queries) == churned, "after compacting")
        #expect(try RecordCheck.verify(store.engine).indexEntries == 600)
        store.close()
        store = try Store(directoryPath: directory.path, model: VectorWorkload.model(), options: options)
        box = store.box(for: VectorDoc.self)
        #expect(try Self.indexTree(store) == tree)
        #expect(try Self.results(store, queries) == churned, "after compacting and reopening")

        // Commits after a compaction: the graph in memory and the one written agree.
        _ = try Self.results(store, queries)   // the graph is in memory
        try store.compact()
        for round in 0..<10 {
            if round == 5 {
                // A transaction that changes vectors, searches (applying its changes to the graph in
                // memory) and rolls back: nothing of it may stay.
                #expect(throws: CellarError.self) {
                    try store.runInTransaction {
                        for (n, id) in ids.enumerated() where n % 3 != 0 && n % 7 == 0 {
                            if n % 2 == 0 {
                                _ = try box.remove(id)
                            } else {
                                try box.put(VectorDoc(key: Int64(n), embedding: VectorWorkload.vector(&rng, seed: seed)).with(id: id))
                            }
                        }
                        _ = try Self.results(store, queries)
                        throw CellarError.illegalArgument("roll back")
                    }
                }
            }
            try store.runInTransaction {
                for (n, id) in ids.enumerated() where n % 10 == round && n % 3 != 0 {
                    if n % 3 == 1 {
                        #expect(try box.remove(id))
                    } else {
                        try box.put(VectorDoc(key: Int64(n), embedding: VectorWorkload.vector(&rng, seed: seed)).with(id: id))
                    }
                }
            }
        }
        let inMemory = try Self.results(store, queries)
        #expect(try RecordCheck.verify(store.engine).indexEntries == 300)
        let recallAfter = Self.recall(inMemory, queries, try Self.vectors(store))
        #expect(recallAfter >= 0.95, "recall@10 after the second churn: \(recallAfter)")
        store.close()
        store = try Store(directoryPath: directory.path, model: VectorWorkload.model(), options: options)
        #expect(try Self.results(store, queries) == inMemory, "the graph in memory differed from the one in the tree")
        store.close()
        print("HNSW after churn: recall@10 \(recall) (600 of 900 left), \(recallAfter) (300 left); \(report)")
    }

    /// Compactions on another thread while vectors are inserted, updated and removed (with
    /// rollbacks): the store verifies, and the graph in memory answers as the one loaded from the
    /// tree at reopen.
    @Test func compactionWhileVectorsChangeKeepsTheGraphAndTheTreeTogether() throws {
        let directory = TestDirectory("vector-compact-concurrent")
        defer { directory.remove() }
        let options = StoreOptions(automaticCompaction: nil)
        let queries = VectorWorkload.queries(20, seed: 8)
        var store = try Store(directoryPath: directory.path, model: VectorWorkload.model(), options: options)
        let writer = try VectorWorkloadWriter(store: store, seed: 8)
        for _ in 0..<20 { try writer.commitNext() }
        let done = ManagedAtomic<Bool>(false)
        let compactions = ManagedAtomic<Int>(0)
        let failure = Locked<String?>(nil)
        let compactor = Thread { [store] in
            while !done.load(ordering: .acquiring) {
                do {
                    try store.compact()
                    compactions.wrappingIncrement(ordering: .relaxed)
                } catch {
                    failure.withLock { $0 = "\(error)" }
                    return
                }
            }
        }
        compactor.start()
        for k in 0..<120 {
            if k % 4 == 3 { try writer.rollBack() }
            try writer.commitNext()
            // Writers wait for the end of a compaction's copy now and then: let a few happen.
            if k % 30 == 29 { Thread.sleep(forTimeInterval: 0.02) }
        }
        done.store(true, ordering: .releasing)
        while !compactor.isFinished { Thread.sleep(forTimeInterval: 0.005) }
        #expect(failure.withLock { $0 } == nil, "compaction failed: \(failure.withLock { $0 } ?? "")")
        #expect(compactions.load(ordering: .relaxed) > 0)
        let expected = writer.state.filter { !$0.value.isEmpty }.count
        #expect(try RecordCheck.verify(store.engine).indexEntries == expected)
        let inMemory = try Self.results(store, queries)
        store.close()
        store = try Store(directoryPath: directory.path, model: VectorWorkload.model(), options: options)
        #expect(try RecordCheck.verify(store.engine).indexEntries == expected)
        #expect(try Self.results(store, queries) == inMemory, "the graph in memory differed from the one in the tree")
        let docs = try store.box(for: VectorDoc.self).all()
        #expect(Dictionary(uniqueKeysWithValues: docs.map { ($0.key, $0.embedding ?? []) }) == writer.state)
        store.close()
        print("HNSW with concurrent compaction: 140 commits, 30 rollbacks, \(compactions.load(ordering: .relaxed)) compactions, \(expected) nodes")
    }

    /// Moves the object of `id` to `vector` (nil: no vector), in its own commit.
    static func move(_ box: Box<VectorDoc>, _ id: Id, to vector: [Float]?) throws {
        let doc = try #require(try box.get(id))
        doc.embedding = vector
        try box.put(doc)
    }

    /// The keys of the `k` nearest objects by brute force.
    static func exactKeys(_ box: Box<VectorDoc>, _ query: [Float], k: Int) throws -> [Int64] {
        try box.all().compactMap { doc in doc.embedding.map { (doc.key, VectorWorkload.distance(query, $0)) } }
            .sorted { ($0.1, $0.0) < ($1.1, $1.0) }.prefix(k).map(\.0)
    }

    @Test func observersOfANearestNeighbourQueryGetTheNewResultAfterCommitsThatChangeVectors() async throws {
        let store = try Store(directoryPath: "memory:vector-observe", model: VectorWorkload.model())
        let box = store.box(for: VectorDoc.self)
        var rng = SplitMix64(seed: 5)
        let ids = try box.put((0..<200).map { VectorDoc(key: Int64($0), embedding: VectorWorkload.vector(&rng, seed: 5)) }).map(\.value)
        let target = VectorWorkload.queries(1, seed: 5)[0]
        let query = try box.query { VectorDoc.embedding.nearestNeighbors(to: target, maxCount: 3) }.build()
        let keys: @Sendable ([VectorDoc]) -> [Int64] = { $0.map(\.key) }

        // Through `changes()`: the current result, then one after each commit.
        var iterator = try query.changes().makeAsyncIterator()
        let initial = try #require(try await iterator.next())
        #expect(keys(initial) == (try Self.exactKeys(box, target, k: 3)))
        let far = try #require(ids.first { id in !initial.contains { $0.id == id } })
        // An update that moves a far object onto the query vector: it comes first.
        try Self.move(box, far, to: target)
        var result = try #require(try await iterator.next())
        var exact = try Self.exactKeys(box, target, k: 3)
        #expect(result.first?.id == far && keys(result) == exact, "\(keys(result))")
        // Its vector removed (nil): out of the index, and of the result.
        try Self.move(box, far, to: nil)
        result = try #require(try await iterator.next())
        #expect(keys(result) == keys(initial), "\(keys(result))")
        // The nearest removed: the fourth nearest comes in.
        #expect(try box.remove(initial[0].id))
        result = try #require(try await iterator.next())
        exact = try Self.exactKeys(box, target, k: 3)
        #expect(keys(result) == exact && !result.contains { $0.id == initial[0].id }, "\(keys(result))")
        // A new object near the query vector, in a transaction with other changes.
        var near = target
        near[0] += 0.001
        let added = try store.runInTransaction {
            try Self.move(box, ids[150], to: VectorWorkload.vector(&rng, seed: 5))
            return try box.put(VectorDoc(key: 1_000, embedding: near)).value
        }
        result = try #require(try await iterator.next())
        exact = try Self.exactKeys(box, target, k: 3)
        #expect(result.first?.id == added && keys(result) == exact, "\(keys(result))")

        // Through a callback on a queue: called at once, then after a commit with the new result.
        let queue = DispatchQueue(label: "vector-observer")
        let received = Received<[Int64]>()
        let observation = try query.observe(on: queue) { result in received.append((try? result.get()).map(keys) ?? [-1]) }
        #expect(await eventually { !received.all.isEmpty }, "the first call")
        await withCheckedContinuation { done in queue.async { done.resume() } }
        let before = received.all
        exact = try Self.exactKeys(box, target, k: 3)
        #expect(before.count == 1 && before.last == exact, "\(before)")
        try Self.move(box, ids[199], to: target)
        #expect(await eventually { received.all.count > before.count }, "a call after the commit")
        await withCheckedContinuation { done in queue.async { done.resume() } }
        exact = try Self.exactKeys(box, target, k: 3)
        #expect(received.all.last?.first == 199 && received.all.last == exact, "\(received.all)")
        observation.cancel()
        store.close()
    }
}

extension VectorDoc {
    /// The object with its id set (a put then replaces the stored one).
    func with(id: Id) -> VectorDoc {
        self.id = id
        return self
    }
}
