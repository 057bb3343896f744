@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarStorage
import CellarTestSupport
import Dispatch
import Foundation
import Testing

/// Values an observation handed over, from whatever thread.
private final class Seen<T: Sendable>: Sendable {
    private let values = Locked<[T]>([])
    func append(_ value: T) { values.withLock { $0.append(value) } }
    var all: [T] { values.withLock { $0 } }
}

@Suite struct ObservationTests {
    static func titles(_ notes: [Note]) -> [String] { notes.map(\.title) }

    @Test func queryChangesStartWithTheCurrentResultAndSkipRollbacksAndOtherEntities() async throws {
        let store = try Store(directoryPath: "memory:observe-query", model: standardModel)
        let notes = store.box(for: Note.self)
        try notes.put(Note(title: "first"))
        let query = try notes.query().build()
        var iterator = try query.changes().makeAsyncIterator()
        #expect(try await iterator.next().map(Self.titles) == ["first"], "the current result, at once")

        // A rolled-back transaction and commits of another entity: no value.
        #expect(throws: CellarError.self) {
            try store.runInTransaction {
                try notes.put(Note(title: "rolled back"))
                throw CellarError.illegalArgument("roll back")
            }
        }
        try store.box(for: Tagged.self).put(Tagged(id: 5, tag: "other entity"))
        try store.box(for: AllTypes.self).put(AllTypes())
        // Then, later and from another thread, a commit that counts. Had anything above
        // signalled, the next value would come at once, before this put, without "second".
        let writer = Task.detached {
            try await Task.sleep(nanoseconds: 200_000_000)
            try notes.put(Note(title: "second"))
        }
        #expect(try await iterator.next().map(Self.titles) == ["first", "second"])
        try await writer.value
        #expect(!store.observers.isEmpty)
    }

    @Test func burstsCoalesceAndValuesComeInOrder() async throws {
        let store = try Store(directoryPath: "memory:observe-burst", model: standardModel)
        let notes = store.box(for: Note.self)
        let query = try notes.query().build()
        let commits = 300
        var seen: [Int] = []
        let writer = Task.detached {
            for i in 0..<commits {
                try notes.put(Note(title: "n\(i)"))
                if i % 50 == 0 { try await Task.sleep(nanoseconds: 1_000_000) }
            }
        }
        for try await result in try query.changes() {
            seen.append(result.count)
            if result.count == commits { break }
            try await Task.sleep(nanoseconds: 10_000_000)   // a slow consumer
        }
        try await writer.value
        #expect(seen.last == commits, "the last commit is always seen")
        #expect(seen == seen.sorted(), "never an older result after a newer one: \(seen)")
        #expect(await eventually { store.observers.isEmpty }, "breaking out of the loop unsubscribes")
    }

    @Test func commitsWhileNoValueIsAskedForMakeOneValue() async throws {
        let store = try Store(directoryPath: "memory:observe-coalesce", model: standardModel)
        let notes = store.box(for: Note.self)
        let computed = Locked(0)
        // A sequence over Note whose values count how often one was computed.
        let changes = Changes(store: store, entities: [Note.modelEntity.id.id], current: {
            computed.withLock { $0 += 1; return $0 }
        })
        var iterator = changes.makeAsyncIterator()
        #expect(try await iterator.next() == 1)
        for i in 0..<50 { try notes.put(Note(title: "n\(i)")) }
        // Closing ends the stream after what is pending: one signal for the 50 commits.
        store.close()
        var after: [Int] = []
        while let value = try await iterator.next() { after.append(value) }
        #expect(after == [2], "50 commits while no value was asked for give one value")
    }

    @Test func boxChangesFollowCommitsOfTheEntityOnly() async throws {
        let store = try Store(directoryPath: "memory:observe-box", model: standardModel)
        let notes = store.box(for: Note.self)
        let count = Locked(0)
        let consumer = Task {
            for try await _ in try notes.changes() {
                count.withLock { $0 += 1 }
            }
        }
        #expect(await eventually { count.withLock { $0 } == 1 }, "the first value at once")
        try store.box(for: Tagged.self).put(Tagged(id: 1, tag: "x"))
        try notes.put(Note(title: "a"))
        #expect(await eventually { count.withLock { $0 } == 2 })
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(count.withLock { $0 } == 2, "nothing for the other entity's commit")
        // removeAll and a relation-free remove count too.
        try notes.removeAll()
        #expect(await eventually { count.withLock { $0 } == 3 })
        consumer.cancel()
        _ = try? await consumer.value
        #expect(await eventually { store.observers.isEmpty }, "cancelling the task unsubscribes")
    }

    @Test func aCancelledSubscriptionLeavesNothingBehind() async throws {
        weak var released: Store?
        do {
            let store = try Store(directoryPath: "memory:observe-leak", model: standardModel)
            released = store
            let notes = store.box(for: Note.self)
            let values = Locked(0)
            let consumer = Task {
                for try await _ in try notes.query().build().changes() { values.withLock { $0 += 1 } }
            }
            var observation: ChangeObservation? = try notes.observe(on: DispatchQueue(label: "leak")) {}
            #expect(await eventually { values.withLock { $0 } == 1 })
            try notes.put(Note(title: "one"))
            #expect(await eventually { values.withLock { $0 } == 2 })
            consumer.cancel()
            _ = try? await consumer.value
            observation = nil
            _ = observation
            #expect(await eventually { store.observers.isEmpty })
        }
        // Nothing holds the store once its subscriptions ended: no cycle through a stream.
        #expect(await eventually { released == nil })
    }

    @Test func closingTheStoreEndsTheStreams() async throws {
        let store = try Store(directoryPath: "memory:observe-close", model: standardModel)
        let notes = store.box(for: Note.self)
        let values = Locked(0)
        let consumer = Task {
            for try await _ in try notes.query().build().changes() { values.withLock { $0 += 1 } }
            return "ended"
        }
        #expect(await eventually { values.withLock { $0 } == 1 })
        store.close()
        #expect(try await consumer.value == "ended")
        #expect(store.observers.isEmpty)
    }

    @Test func callbacksOnAQueueCoalesceAndStopWhenCancelled() async throws {
        let store = try Store(directoryPath: "memory:observe-callback", model: standardModel)
        let notes = store.box(for: Note.self)
        let queue = DispatchQueue(label: "observer")
        let results = Seen<Int>()
        let query = try notes.query().build()
        // A slow handler: its second call (for the first commit) returns only once the burst below
        // is committed, so the burst's commits pile up meanwhile however fast the machine is.
        let burstCommitted = DispatchSemaphore(value: 0)
        var observation: ChangeObservation? = try query.observe(on: queue) { result in
            dispatchPrecondition(condition: .onQueue(queue))
            results.append((try? result.get().count) ?? -1)
            if results.all.count == 2 { burstCommitted.wait() }
        }
        #expect(await eventually { results.all == [0] }, "called once at the start")
        try store.runInTransaction { try notes.put(Note(title: "kept")) }
        _ = try? store.runInTransaction { try notes.put(Note(title: "rolled back")); throw CellarError.readOnly }
        for i in 0..<200 { try notes.put(Note(title: "burst \(i)")) }
        burstCommitted.signal()
        // Every run the commits scheduled was queued during them: wait for the queue to pass them.
        await withCheckedContinuation { done in queue.async { done.resume() } }
        #expect(results.all.last == 201)
        #expect(results.all == results.all.sorted() && results.all.count < 100, "\(results.all.count) calls for 201 commits")
        let boxCalls = Seen<Bool>()
        var boxObservation: ChangeObservation? = try notes.observe(on: queue) { boxCalls.append(true) }
        #expect(await eventually { boxCalls.all.count == 1 })
        // Released: no more calls, no more observers.
        observation = nil
        boxObservation?.cancel()
        boxObservation = nil
        #expect(store.observers.isEmpty)
        let before = results.all.count
        try notes.put(Note(title: "after"))
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(results.all.count == before && boxCalls.all.count == 1)
        _ = observation
    }

    @Test func linkedEntitiesAreObservedToo() async throws {
        let model = try Cellar.Model(json: Array(ModelJSONSeed.text.utf8), file: "example model")
        let store = try Store(directoryPath: "memory:observe-link", model: model)
        let authors = store.box(for: SeedAuthor.self)
        let notes = store.box(for: SeedNote.self)
        let ada = SeedAuthor()
        ada.name = "Ada"
        try authors.put(ada)
        let note = SeedNote()
        note.title = "by Ada"
        note.author.target = ada
        try notes.put(note)
        let query = try notes.query().link(SeedNote.author) { SeedAuthor.name == "Ada" }.build()
        var iterator = try query.changes().makeAsyncIterator()
        #expect(try await iterator.next()?.count == 1)
        // Renaming the author changes which notes match: the author's commit is seen.
        ada.name = "Grace"
        try authors.put(ada)
        #expect(try await iterator.next()?.count == 0)
    }
}

/// An app's actor under Swift 6 strict concurrency: it awaits the async twins and iterates a
/// query's changes over a non-Sendable class entity without its values leaving the actor.
private actor NoteKeeper {
    let store: Store
    private(set) var titles: [[String]] = []

    init(store: Store) { self.store = store }

    func add(_ title: String) async throws {
        let notes = store.box(for: SeedNote.self)
        _ = try await store.write {
            let note = SeedNote()
            note.title = title
            return try notes.put(note)
        }
    }

    func count() async throws -> Int {
        let notes = store.box(for: SeedNote.self)
        return try await store.read { try notes.count() }
    }

    /// Follows the notes until `expected` of them are stored.
    func follow(until expected: Int) async throws {
        for try await notes in try store.box(for: SeedNote.self).query().build().changes() {
            titles.append(notes.map(\.title))   // SeedNote is a class, not Sendable: used here only
            if notes.count == expected { return }
        }
    }
}

@Suite struct ActorUseTests {
    @Test func anActorWritesReadsAndObserves() async throws {
        let model = try Cellar.Model(json: Array(ModelJSONSeed.text.utf8), file: "example model")
        let store = try Store(directoryPath: "memory:observe-actor", model: model)
        let keeper = NoteKeeper(store: store)
        let follower = Task { try await keeper.follow(until: 3) }
        for title in ["a", "b", "c"] { try await keeper.add(title) }
        try await follower.value
        #expect(try await keeper.count() == 3)
        let seen = await keeper.titles
        #expect(seen.last == ["a", "b", "c"] && seen.count <= 4)
        #expect(store.observers.isEmpty)
    }
}

/// The log of what a transaction changed stays bounded however large the transaction.
@Suite struct ChangeLogTests {
    @Test("past its limit of objects per entity, the log marks the entity whole and forgets its ids")
    func aHugeTransactionMarksTheEntityWhole() {
        let log = ChangeLog()
        for id in 1...Id(ChangeLog.maximumIdsPerEntity) { log.note(7, id) }
        log.note(8, 1)
        #expect(log.committed.ids(of: 7)?.count == ChangeLog.maximumIdsPerEntity, "at the limit, still object by object")
        log.note(7, 1)
        #expect(log.committed.ids(of: 7)?.count == ChangeLog.maximumIdsPerEntity, "an object noted twice counts once")
        log.note(7, Id(ChangeLog.maximumIdsPerEntity) + 1)
        #expect(log.committed.ids(of: 7) == nil, "one more: the whole entity")
        #expect(log.ids[7] == nil, "its ids are dropped")
        log.note(7, 5)
        #expect(log.ids[7] == nil, "and not recorded again")
        #expect(log.committed.ids(of: 8) == [1], "other entities are not affected")
    }
}
