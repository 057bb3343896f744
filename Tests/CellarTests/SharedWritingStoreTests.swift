@_spi(CellarGenerated) @_spi(Testing) import Cellar
import CellarStorage
import CellarTestSupport
import Dispatch
import Testing

/// Several `Store`s writing one database (``StoreOptions/sharedWriting``), in one process: each
/// engine's lock is on a descriptor of its own, so they take turns as processes do.
@Suite("several stores writing one database")
struct SharedWritingStoreTests {
    static func options() -> StoreOptions {
        var options = StoreOptions(durability: .none)
        options.sharedWriting = true
        return options
    }

    /// Version 1 of `Person` with one property more: a newer app version's model.
    enum V1Plus: RowSchema {
        static let entity = MigrationWorkload.entity(last: 5, MigrationWorkload.V1.entity.properties + [
            ModelProperty(name: "nickname", id: IdUid(id: 5, uid: 5_005), type: .string),
        ])
    }

    @Test("threads of two stores put at once: ids are never handed out twice, a unique value is taken once")
    func idsAndUniqueValues() throws {
        let directory = TestDirectory("shared-store-ids")
        defer { directory.remove() }
        let model = MigrationWorkload.model(MigrationWorkload.V2.entity)
        let stores = try (0..<2).map { _ in try Store(directoryPath: directory.path, model: model, options: Self.options()) }
        let done = DispatchGroup()
        let results = Locked<(ids: [Id], duplicates: Int, errors: [String])>(([], 0, []))
        for (s, store) in stores.enumerated() {
            for t in 0..<2 {
                done.enter()
                Threads.start {
                    defer { done.leave() }
                    let box = store.box(for: Row<MigrationWorkload.V2>.self)
                    for i in 0..<40 {
                        let email = i == 20 ? "shared@example.com" : "s\(s)-t\(t)-\(i)@example.com"
                        do {
                            let id = try box.put(Row(["email": .string(email), "firstName": .string("n\(i)")]))
                            results.withLock { $0.ids.append(id.value) }
                        } catch let error as CellarError where error.code == .uniqueViolation {
                            results.withLock { $0.duplicates += 1 }
                        } catch {
                            results.withLock { $0.errors.append("\(error)") }
                        }
                    }
                }
            }
        }
        done.wait()
        let (ids, duplicates, errors) = results.withLock { $0 }
        #expect(errors == [])
        #expect(duplicates == 3, "one of the four puts of the shared email succeeds")
        #expect(Set(ids).count == ids.count, "an id was handed out twice")
        #expect(ids.count == 4 * 40 - 3)
        for store in stores {
            #expect(try store.box(for: Row<MigrationWorkload.V2>.self).count() == ids.count)
        }
        for store in stores { store.close() }
    }

    @Test("a store whose model is older than the one another process stored since is refused before it writes")
    func olderModelIsRefused() throws {
        let directory = TestDirectory("shared-store-model")
        defer { directory.remove() }
        let old = try Store(directoryPath: directory.path, model: MigrationWorkload.model(MigrationWorkload.V1.entity),
                            options: Self.options())
        try old.box(for: Row<MigrationWorkload.V1>.self).put(Row(["name": .string("before")]))
        // A newer version of the app opens the database: its model is stored.
        let newer = try Store(directoryPath: directory.path, model: MigrationWorkload.model(V1Plus.entity), options: Self.options())
        try newer.box(for: Row<V1Plus>.self).put(Row(["name": .string("newer"), "nickname": .string("n")]))
        #expect {
            try old.box(for: Row<MigrationWorkload.V1>.self).put(Row(["name": .string("after")]))
        } throws: { error in
            (error as? CellarError)?.code == .schema && "\(error)".contains("another process changed the database's model")
        }
        // Reading goes on; the newer store writes.
        #expect(try old.box(for: Row<MigrationWorkload.V1>.self).count() == 2)
        try newer.box(for: Row<V1Plus>.self).put(Row(["name": .string("again")]))
        #expect(try newer.box(for: Row<V1Plus>.self).count() == 3)
        old.close()
        newer.close()
    }

    @Test("vectors put and removed by two stores in turn: each store's graph starts on the other's commits")
    func vectorGraphsFollowTheOtherStore() throws {
        let directory = TestDirectory("shared-store-vectors")
        defer { directory.remove() }
        let stores = try (0..<2).map { _ in try Store(directoryPath: directory.path, model: VectorWorkload.model(), options: Self.options()) }
        var rng = SplitMix64(seed: SplitMix64.testSeed())
        func vector() -> [Float] { (0..<VectorWorkload.dimensions).map { _ in Float(rng.next() % 1000) / 1000 - 0.5 } }
        var live: [Int64: [Float]] = [:]
        var ids: [Int64: Id] = [:]
        var key: Int64 = 0
        for round in 0..<30 {
            let store = stores[round % 2]
            let box = store.box(for: VectorDoc.self)
            // A query in every round loads the graph of this store (before the other writes).
            _ = try box.query { VectorDoc.embedding.nearestNeighbors(to: vector(), maxCount: 3) }.build().findIds()
            try store.runInTransaction {
                for _ in 0..<4 {
                    key += 1
                    let v = vector()
                    live[key] = v
                    ids[key] = try box.put(VectorDoc(key: key, embedding: v)).value
                }
                if round % 3 == 2, let victim = live.keys.sorted().first {
                    live[victim] = nil
                    _ = try box.remove(ids[victim]!)
                }
            }
        }
        // Every live object is found by its own vector, in both stores and in a fresh one.
        let fresh = try Store(directoryPath: directory.path, model: VectorWorkload.model(), options: Self.options())
        for store in stores + [fresh] {
            let box = store.box(for: VectorDoc.self)
            #expect(try box.count() == live.count)
            var missed: [Int64] = []
            for (key, vector) in live {
                let found = try box.query { VectorDoc.embedding.nearestNeighbors(to: vector, maxCount: 1, searchWidth: 200) }.build().find()
                if found.first?.key != key { missed.append(key) }
            }
            #expect(missed == [], "objects not found by their own vector")
        }
        for store in stores + [fresh] { store.close() }
    }

    @Test("a store hears another's commits without reading: its observers are called, its live results equal a fresh query")
    func observersHearTheOtherStore() async throws {
        let directory = TestDirectory("shared-store-observers")
        defer { directory.remove() }
        let writer = try Store(directoryPath: directory.path, model: standardModel, options: Self.options())
        let listener = try Store(directoryPath: directory.path, model: standardModel, options: Self.options())
        defer {
            writer.close()
            listener.close()
        }
        let queue = DispatchQueue(label: "test.shared.observers")
        let calls = Locked(0)
        let observation = try listener.box(for: Note.self).observe(on: queue) { calls.withLock { $0 += 1 } }
        defer { observation.cancel() }
        let live = try listener.liveQuery(listener.box(for: Note.self).query { Note.titleProperty.startsWith("a") }.build(), queue: queue)
        defer { live.cancel() }
        #expect(await eventually { queue.sync { live.updateCount >= 1 } && calls.withLock { $0 } >= 1 })
        let before = calls.withLock { $0 }

        // Only the writer works from here on; the listener reads nothing.
        let notes = writer.box(for: Note.self)
        var ids: [EntityId<Note>] = []
        for i in 0..<20 { ids.append(try notes.put(Note(title: i % 2 == 0 ? "apple \(i)" : "banana \(i)"))) }
        _ = try notes.remove(ids[0])
        try notes.put(Note(id: ids[2], title: "avocado"))
        let expected = try notes.query { Note.titleProperty.startsWith("a") }.build().find().map(\.title).sorted()
        #expect(expected.count == 9)
        #expect(await eventually { queue.sync { live.map(\.title).sorted() == expected } })
        #expect(await eventually { calls.withLock { $0 } > before })
    }
}
