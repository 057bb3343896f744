@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// Vector search through the generated `Passage` (cosine, 8 dimensions) and `City` (ObjectBox's
/// annotation spelling, geo distance) bindings: recall against brute force on clustered data,
/// filtered search, scores, upkeep through updates, removals and rollbacks (checked by
/// `RecordCheck`), the index built at open and dropped, and refused input.
@Suite struct VectorSearchTests {
    /// The HNSW graph holds vectors, not elements: a condition on the elements reads the records.
    @Test func aConditionOnTheVectorsElementsReadsTheRecords() throws {
        let store = try Store(directoryPath: "memory:vector-elements", model: cellarModel())
        let box = store.box(for: Passage.self)
        let vectors: [[Float]] = [[0.5, 1, 0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0.5], [0, 1, 0, 0, 0, 0, 0, 0]]
        try box.put(vectors.map { Passage("p", $0) })
        let query = try box.query { Passage.embedding.contains(Float(0.5)) }.build()
        if case .index = try query.compiled.plan.source { Issue.record("contains reads the graph's keys as elements") }
        #expect(try query.findIds().map(\.value) == [1, 2])
    }

    /// `cellarModel()` without Passage's HNSW index.
    static func unindexedModel() -> Cellar.Model {
        var model = cellarModel()
        let at = model.entities.firstIndex { $0.name == "Passage" }!
        for i in model.entities[at].properties.indices {
            model.entities[at].properties[i].flags.subtract([.indexed])
            model.entities[at].properties[i].indexId = nil
            model.entities[at].properties[i].hnswParams = nil
        }
        return model
    }

    /// `cellarModel()` with Passage's HNSW index quantized to int8.
    static func quantizedModel() throws -> Cellar.Model {
        var model = cellarModel()
        let at = model.entities.firstIndex { $0.name == "Passage" }!
        for i in model.entities[at].properties.indices {
            guard let json = model.entities[at].properties[i].hnswParams else { continue }
            var parameters = try HNSWParameters(json: json)
            parameters.quantization = .int8
            model.entities[at].properties[i].hnswParams = parameters.jsonObject
        }
        return model
    }

    /// Clustered unit vectors: 20 centres, each point a centre plus noise, normalized.
    static func clustered(_ count: Int, seed: UInt64) -> [[Float]] {
        var random = SplitMix64(seed: seed)
        func gaussian() -> Float {
            let u = Double(random.next() >> 11) / Double(1 << 53) + 1e-12, v = Double(random.next() >> 11) / Double(1 << 53)
            return Float(sqrt(-2 * log(u)) * cos(2 * .pi * v))
        }
        let centres = (0..<20).map { _ in (0..<8).map { _ in gaussian() } }
        return (0..<count).map { _ in
            let centre = centres[Int(random.next() % 20)]
            let point = centre.map { $0 + 0.5 * gaussian() }
            let norm = sqrt(point.reduce(0) { $0 + $1 * $1 })
            return point.map { $0 / norm }
        }
    }

    static func cosineDistance(_ a: [Float], _ b: [Float]) -> Float {
        var (dot, na, nb): (Float, Float, Float) = (0, 0, 0)
        for i in a.indices { dot += a[i] * b[i]; na += a[i] * a[i]; nb += b[i] * b[i] }
        return 1 - dot / (na.squareRoot() * nb.squareRoot())
    }

    /// The `k` nearest ids by brute force among `objects`.
    static func exact(_ query: [Float], _ objects: [Id: Passage], k: Int, where keep: (Passage) -> Bool = { _ in true }) -> [Id] {
        objects.filter { keep($0.value) }.map { ($0.key, cosineDistance(query, $0.value.embedding)) }
            .sorted { ($0.1, $0.0) < ($1.1, $1.0) }.prefix(k).map(\.0)
    }

    static func recall(_ found: [Id], _ expected: [Id]) -> Double {
        expected.isEmpty ? 1 : Double(Set(found).intersection(expected).count) / Double(expected.count)
    }

    /// With the index as declared, and quantized to int8 (whose searches re-score their
    /// candidates with the vectors in the records: the distances are exact either way).
    @Test(arguments: [false, true])
    func nearestNeighborsMatchBruteForceAndFollowUpdatesAndRemovals(quantized: Bool) throws {
        let store = try Store(directoryPath: "memory:vector-recall-\(quantized)", model: quantized ? try Self.quantizedModel() : cellarModel())
        let box = store.box(for: Passage.self)
        var objects: [Id: Passage] = [:]
        let vectors = Self.clustered(2_000, seed: 7)
        try store.runInTransaction {
            for (k, vector) in vectors.enumerated() {
                let passage = Passage("p\(k)", vector, group: k % 10)
                objects[try box.put(passage).value] = passage
            }
        }
        let queries = Self.clustered(50, seed: 99)
        func measure(_ step: String) throws {
            var total = 0.0
            for vector in queries {
                let query = try box.query { Passage.embedding.nearestNeighbors(to: vector, maxCount: 10) }.build()
                let found = try query.findIds().map(\.value)
                total += Self.recall(found, Self.exact(vector, objects, k: 10))
                // Nearest first, with the index's distances.
                let scored = try query.findIdsWithScores()
                #expect(scored.map(\.id.value) == found, "\(step)")
                #expect(scored.map(\.score) == scored.map(\.score).sorted(), "\(step)")
                for hit in scored { #expect(abs(hit.score - Double(Self.cosineDistance(vector, objects[hit.id.value]!.embedding))) < 1e-4) }
            }
            #expect(total / Double(queries.count) >= 0.95, "\(step): recall@10 \(total / Double(queries.count))")
            #expect(try RecordCheck.verify(store.engine).objects == objects.count, "\(step)")
        }
        try measure("after the puts")
        // A third updated, a third removed.
        var random = SplitMix64(seed: 1)
        let ids = objects.keys.sorted()
        let fresh = Self.clustered(ids.count, seed: 3)
        try store.runInTransaction {
            for (k, id) in ids.enumerated() where k % 3 != 0 {
                if random.next() % 2 == 0 {
                    objects[id]!.embedding = fresh[k]
                    try box.put(objects[id]!)
                } else {
                    #expect(try box.remove(id))
                    objects[id] = nil
                }
            }
        }
        try measure("after updating and removing a third")
    }

    /// The graph in memory is loaded once: commits that change other things keep it (it still
    /// reflects the index), commits that change it change it in place, and every reader's answer
    /// is its snapshot's.
    @Test func theGraphOutlivesCommitsElsewhere() throws {
        let store = try Store(directoryPath: "memory:vector-kept", model: cellarModel())
        let passages = store.box(for: Passage.self), tags = store.box(for: Tag.self)
        let vectors = Self.clustered(400, seed: 5)
        var objects: [Id: Passage] = [:]
        try store.runInTransaction {
            for (i, vector) in vectors.enumerated() {
                let passage = Passage("p\(i)", vector)
                objects[try passages.put(passage).value] = passage
            }
        }
        func check() throws {
            for vector in Self.clustered(5, seed: 6) {
                let found = try passages.query { Passage.embedding.nearestNeighbors(to: vector, maxCount: 5, searchWidth: 400) }.build().findIds()
                #expect(found.map(\.value) == Self.exact(vector, objects, k: 5))
            }
        }
        try check()
        #expect(store.vectorIndexes.loads.withLock { $0 } == 1)
        for round in 0..<3 {
            try tags.put(Tag(name: "t\(round)"))
            try check()
            let passage = Passage("new\(round)", vectors[round])
            objects[try passages.put(passage).value] = passage
            try check()
            let gone = objects.keys.min()!
            #expect(try passages.remove(Id(gone)))
            objects[gone] = nil
            try check()
        }
        #expect(store.vectorIndexes.loads.withLock { $0 } == 1)
        // A reader of an older snapshot, while newer commits changed the graph, still gets its
        // snapshot's objects only.
        let added = Locked<Id>(0)
        let before = try store.runInReadOnlyTransaction { () throws -> [Id] in
            let query = try passages.query { Passage.embedding.nearestNeighbors(to: vectors[0], maxCount: 3, searchWidth: 400) }.build()
            #expect(try query.findIds().count == 3)
            // The other commit, from another thread (this one is in its read transaction).
            let written = DispatchSemaphore(value: 0)
            let first = vectors[0]
            let writer = Thread {
                let id = (try? passages.put(Passage("later", first)).value) ?? 0
                added.withLock { $0 = id }
                written.signal()
            }
            writer.start()
            written.wait()
            return try query.findIds().map(\.value)
        }
        let id = added.withLock { $0 }
        #expect(id != 0 && !before.contains(id))
        #expect(try passages.query { Passage.embedding.nearestNeighbors(to: vectors[0], maxCount: 3, searchWidth: 400) }.build().findIds().map(\.value).contains(id))
    }

    /// The rules by which a graph in memory is carried from one commit to the next: only the
    /// graph a commit changed, or one of the commit before that it did not change.
    @Test func aGraphIsCarriedToTheNextCommitOnlyWhenItReflectsIt() throws {
        let store = try Store(directoryPath: "memory:vector-carried", model: cellarModel())
        let schema = try #require(store.schemas.values.first { $0.name == "Passage" }?.vectorProperties.first?.index)
        let indexes = VectorIndexes()
        let graph = { try HNSWGraph(parameters: HNSWParameters(dimensions: 8)) }
        // Loaded at 5; commit 6 changes something else: carried.
        var entry = try indexes.entry(schema, version: 5, load: graph)
        indexes.committed(changed: [], version: 6)
        #expect(entry.version == 6 && entry.reflects(5) && entry.reflects(6) && !entry.reflects(7))
        // Commit 8 (not 7: a commit this store did not see came between) changes something else:
        // not carried, the readers of 8 load it again.
        indexes.committed(changed: [], version: 8)
        #expect(entry.version == 6)
        entry = try indexes.entry(schema, version: 8, load: graph)
        #expect(entry.version == 8 && indexes.loads.withLock { $0 } == 2)
        // Commit 9 changes it: from then on it reflects 9 only.
        entry.writing { _ in entry.changing(toward: 9) }
        #expect(!entry.reflects(8))
        indexes.committed(changed: [schema.id], version: 9)
        #expect(entry.version == 9 && entry.reflects(9) && !entry.reflects(8))
        // Commit 10 rebuilt the index's tree without this graph (it was not changing toward
        // 10): left at 9, loaded again by the readers of 10.
        indexes.committed(changed: [schema.id], version: 10)
        #expect(entry.version == 9 && !entry.reflects(10))
    }

    @Test func theSearchWidthTradesSpeedForRecall() throws {
        let store = try Store(directoryPath: "memory:vector-width", model: cellarModel())
        let box = store.box(for: Passage.self)
        var objects: [Id: Passage] = [:]
        let vectors = Self.clustered(3_000, seed: 11)
        try store.runInTransaction {
            for (i, vector) in vectors.enumerated() {
                let passage = Passage("p\(i)", vector)
                objects[try box.put(passage).value] = passage
            }
        }
        let queries = Self.clustered(40, seed: 12)
        var (narrow, whole) = (0.0, 0.0)
        for vector in queries {
            let expected = Self.exact(vector, objects, k: 10)
            // As wide as the graph: every reachable node is a candidate, so the answer is exact.
            let exact = try box.query { Passage.embedding.nearestNeighbors(to: vector, maxCount: 10, searchWidth: 3_000) }.build().find()
            whole += Self.recall(exact.map(\.id), expected)
            // As narrow as it can be (raised to maxCount).
            let quick = try box.query { Passage.embedding.nearestNeighbors(to: vector, maxCount: 10, searchWidth: 1) }.build().find()
            #expect(quick.count == 10)
            narrow += Self.recall(quick.map(\.id), expected)
        }
        #expect(whole == Double(queries.count))
        #expect(narrow < whole)
        for width in [0, -3, 1_000_001] {
            #expect(throws: CellarError.self) {
                _ = try box.query { Passage.embedding.nearestNeighbors(to: vectors[0], maxCount: 10, searchWidth: width) }.build()
            }
        }
    }

    /// With the index as declared, and quantized (where the one-by-one comparisons read the
    /// exact vectors, so their answers stay exact).
    @Test(arguments: [false, true])
    func aFilterAppliesDuringTheSearch(quantized: Bool) throws {
        let store = try Store(directoryPath: "memory:vector-filter-\(quantized)", model: quantized ? try Self.quantizedModel() : cellarModel())
        let box = store.box(for: Passage.self)
        var objects: [Id: Passage] = [:]
        for (k, vector) in Self.clustered(1_500, seed: 11).enumerated() {
            let passage = Passage("p\(k)", vector, group: k % 50)
            objects[try box.put(passage).value] = passage
        }
        var total = 0.0
        let queries = Self.clustered(20, seed: 12)
        for vector in queries {
            // One group in fifty: 30 objects, of which the 10 nearest. No index answers the
            // condition and it is selective: the search gives up early and the objects are
            // checked in one scan, then compared one by one, so the answer is exact.
            let found = try box.query { Passage.embedding.nearestNeighbors(to: vector, maxCount: 10) && Passage.group == 7 }.build().find()
            #expect(found.count == 10)
            #expect(found.allSatisfy { $0.group == 7 })
            #expect(found.map(\.id) == Self.exact(vector, objects, k: 10) { $0.group == 7 })
            // Half of the objects: the condition filters the graph search.
            let half = try box.query { Passage.embedding.nearestNeighbors(to: vector, maxCount: 10) && Passage.group < 25 }.build().find()
            #expect(half.count == 10 && half.allSatisfy { $0.group < 25 })
            total += Self.recall(half.map(\.id), Self.exact(vector, objects, k: 10) { $0.group < 25 })
        }
        #expect(total / Double(queries.count) >= 0.95)
        // A condition an index (here the ids) answers with few objects: they are compared one
        // by one, so the answer is exact.
        for vector in queries.prefix(5) {
            let found = try box.query { Passage.embedding.nearestNeighbors(to: vector, maxCount: 10) && Passage.id <= 60 }.build().findIds()
            #expect(found.map(\.value) == Self.exact(vector, objects, k: 10) { $0.id <= 60 })
        }
        // Many such objects: they filter the graph search.
        var wide = 0.0
        for vector in queries {
            let found = try box.query { Passage.embedding.nearestNeighbors(to: vector, maxCount: 10) && Passage.id > 750 }.build().findIds()
            #expect(found.count == 10 && found.allSatisfy { $0.value > 750 })
            wide += Self.recall(found.map(\.value), Self.exact(vector, objects, k: 10) { $0.id > 750 })
        }
        #expect(wide / Double(queries.count) >= 0.95)
    }

    @Test func scoresParametersAndTransactions() throws {
        let store = try Store(directoryPath: "memory:vector-scores", model: cellarModel())
        let box = store.box(for: Passage.self)
        let axis = (0..<8).map { i in (0..<8).map { Float($0 == i ? 1 : 0) } }
        for (k, vector) in axis.enumerated() { try box.put(Passage("axis\(k)", vector)) }
        let query = try box.query { Passage.embedding.nearestNeighbors(to: axis[2], maxCount: 1) }.build()
        let best = try query.findWithScores()
        #expect(best.map(\.object.title) == ["axis2"] && abs(best[0].score) < 1e-6)
        query.setParameter(Passage.embedding, to: axis[5])
        #expect(try query.find().map(\.title) == ["axis5"])
        // Inside a transaction its own puts are searched; after a rollback they are gone.
        let near5: [Float] = [0, 0, 0, 0, 0, 1, 0.01, 0]
        #expect(throws: CellarError.self) {
            try store.runInTransaction {
                try box.put(Passage("close", near5))
                #expect(try box.query { Passage.embedding.nearestNeighbors(to: near5, maxCount: 1) }.build().find().map(\.title) == ["close"])
                throw CellarError.illegalArgument("roll back")
            }
        }
        #expect(try box.query { Passage.embedding.nearestNeighbors(to: near5, maxCount: 1) }.build().find().map(\.title) == ["axis5"])
        #expect(try RecordCheck.verify(store.engine).indexEntries == 8)
        // An object without a vector (empty, or nil in an optional property) is not in the index.
        try box.put(Passage("empty", []))
        #expect(try RecordCheck.verify(store.engine).indexEntries == 8)
        let cities = store.box(for: City.self)
        let nowhere = City()
        nowhere.name = "nowhere"
        try cities.put(nowhere)
        #expect(try cities.count() == 1)
        #expect(try RecordCheck.verify(store.engine).indexEntries == 8)
    }

    @Test func badVectorsAreRefusedAndNothingIsWritten() throws {
        let store = try Store(directoryPath: "memory:vector-errors", model: cellarModel())
        let box = store.box(for: Passage.self)
        try box.put(Passage("good", [Float](repeating: 0.5, count: 8)))
        for (bad, fragment) in [([Float](repeating: 1, count: 7), "7 dimensions; its HNSW index expects 8"),
                                ([1, 0, 0, .nan, 0, 0, 0, 0], "nan at component 3"),
                                ([1, 0, 0, 0, 0, 0, 0, .infinity], "inf at component 7")] {
            do {
                try box.put(Passage("bad", bad))
                Issue.record("a bad vector was stored")
            } catch let error as CellarError {
                #expect(error.code == .illegalArgument && error.message.contains("Passage.embedding") && error.message.contains(fragment), "\(error)")
            }
        }
        #expect(try box.count() == 1)
        for build in [
            { _ = try box.query { Passage.embedding.nearestNeighbors(to: [1, 2], maxCount: 3) }.build() },
            { _ = try box.query { Passage.embedding.nearestNeighbors(to: [], maxCount: 3) }.build() },
            { _ = try box.query { Passage.embedding.nearestNeighbors(to: [Float](repeating: 1, count: 8), maxCount: 0) }.build() },
            { _ = try box.query { Passage.embedding.nearestNeighbors(to: [Float](repeating: 1, count: 8), maxCount: 3) || Passage.group == 1 }.build() },
            { _ = try box.query { Passage.group == 1 }.build().findWithScores() },
        ] {
            do {
                try build()
                Issue.record("a bad query ran")
            } catch let error as CellarError {
                #expect(error.code == .illegalArgument, "\(error)")
            }
        }
    }

    @Test func anIndexAddedLaterIsBuiltAtOpenAndDroppedWhenRemoved() throws {
        let directory = TestDirectory("vector-index-build")
        defer { directory.remove() }
        let vectors = Self.clustered(300, seed: 5)
        do {
            let store = try Store(directoryPath: directory.path, model: Self.unindexedModel())
            try store.box(for: Passage.self).put(vectors.enumerated().map { Passage("p\($0.offset)", $0.element) })
            store.close()
        }
        let index = try #require(cellarModel().entities.first { $0.name == "Passage" }?.properties.first { $0.name == "embedding" }?.indexId)
        do {
            let store = try Store(directoryPath: directory.path, model: cellarModel())
            #expect(try store.engine.read { try $0.tree(StorageLayout.indexTree(index.id)) != nil })
            let found = try store.box(for: Passage.self).query { Passage.embedding.nearestNeighbors(to: vectors[17], maxCount: 1) }.build().findIds()
            #expect(found.map(\.value) == [18])
            #expect(try RecordCheck.verify(store.engine).indexEntries == 300)
            store.close()
        }
        let store = try Store(directoryPath: directory.path, model: Self.unindexedModel())
        #expect(try store.engine.read { try $0.tree(StorageLayout.indexTree(index.id)) == nil })
        store.close()
    }

    @Test func objectBoxSpellingAndGeoDistance() throws {
        let store = try Store(directoryPath: "memory:vector-cities", model: cellarModel())
        let box = store.box(for: City.self)
        try box.put([City("Berlin", 52.52, 13.40), City("Copenhagen", 55.68, 12.57), City("Vienna", 48.21, 16.37),
                     City("Madrid", 40.42, -3.70), City("Lisbon", 38.72, -9.14), City("Nowhere", 0, 0)])
        try box.put(City())   // no location: not in the index
        let nearest = try box.query { City.location.nearestNeighbors(to: [53, 15], maxCount: 3) }.build().findWithScores()
        #expect(nearest.map(\.object.name) == ["Berlin", "Copenhagen", "Vienna"])
        #expect(abs(nearest[0].score - 120) < 5, "Berlin is about 120 km away: \(nearest[0].score)")
    }
}
