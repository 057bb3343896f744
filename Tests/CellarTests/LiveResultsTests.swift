@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarStorage
import CellarTestSupport
import Dispatch
import Foundation
import Observation
import Testing

/// Live results (`store.liveQuery`): the first result, exact change sets (checked by applying
/// each to the previous result), commits that do not concern the query (no update, no query
/// run), cancellation and release, Observation, and a randomized run with several writers.
@Suite struct LiveResultsTests {
    /// What a live query published, in order, read on its delivery queue.
    final class Published: @unchecked Sendable {
        let lock = NSLock()
        var updates: [(ids: [Id], titles: [String], change: ResultsChange, snapshot: UInt64)] = []
    }

    /// Starts a live query (`make`) and records every publication of it, the first included:
    /// its delivery queue is held while the query starts and the hook is set, so that the first
    /// result, however quickly it is computed, cannot be published before the hook is there.
    static func recording(
        on queue: DispatchQueue, into published: Published, _ make: () throws -> LiveResults<Note>
    ) rethrows -> LiveResults<Note> {
        queue.suspend()
        defer { queue.resume() }
        let live = try make()
        live.publishHook = { ids, change, snapshot in
            let titles = live.results.map(\.title)
            // The collection serves the same objects as the array.
            #expect(live.map(\.title) == titles && live.count == ids.count)
            published.lock.withLock { published.updates.append((ids, titles, change, snapshot)) }
        }
        return live
    }

    /// A live query started while a pass is under way, after it took its members (here: during
    /// the first live query's first pass), asks for a pass of its own: its first result comes
    /// though no commit follows.
    @Test func aLiveQueryStartedDuringAPassGetsItsFirstResult() async throws {
        let store = try Store(directoryPath: "memory:live-during-pass", model: standardModel)
        let notes = store.box(for: Note.self)
        try notes.put(Note(title: "apple"))
        let query = try notes.query { Note.titleProperty.startsWith("a") }.build()
        let queue = DispatchQueue(label: "test.live.during-pass")
        let second = Locked<LiveResults<Note>?>(nil)
        store.liveQueries.passHook = {
            // On the live-query thread, the first pass's members taken: the second starts now.
            guard second.withLock({ $0 == nil }) else { return }
            do {
                let live = try store.liveQuery(query, queue: queue)
                second.withLock { $0 = live }
            } catch {
                Issue.record("liveQuery failed: \(error)")
            }
        }
        let first = try store.liveQuery(query, queue: queue)
        defer { first.cancel() }
        #expect(await eventually { queue.sync { first.updateCount >= 1 } })
        let later = try #require(await eventually { second.withLock { $0 != nil } } ? second.withLock { $0 } : nil)
        defer { later.cancel() }
        #expect(await eventually { queue.sync { later.updateCount >= 1 && later.map(\.title) == ["apple"] } })
    }

    /// A live query that starts while a commit no one recorded for it is being published takes
    /// its first result from the commit before, and must run again once that commit is visible.
    /// Here a second pass opens its snapshot while the commit is still not visible (a second live
    /// query starts then): the rerun in that pass does not see the commit either, so the one
    /// after must run the query again, not just take the recorded changes.
    @Test func aRerunBeforeAMissedCommitIsVisibleIsNotTheLast() async throws {
        let store = try Store(directoryPath: "memory:live-missed-commit", model: standardModel)
        let notes = store.box(for: Note.self)
        let apple = try notes.put(Note(title: "apple")).value
        let query = try notes.query { Note.titleProperty.startsWith("a") }.build()
        let queue = DispatchQueue(label: "test.live.missed-commit")
        // Someone observes, so that the commit is recorded (for that observer, not the live queries).
        let other = try notes.observe(on: DispatchQueue(label: "test.live.missed-commit.other")) {}
        defer { other.cancel() }
        // The commit that removes the apple stops after it was recorded, before it is visible.
        let (held, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let holding = Locked(true)
        store.observers.recordHook = {
            guard holding.withLock({ hold in defer { hold = false }; return hold }) else { return }
            held.signal()
            release.wait()
        }
        let writer = Thread {
            do { try notes.remove(apple) } catch { Issue.record("remove failed: \(error)") }
        }
        writer.start()
        held.wait()
        // Two live queries start in turn; each first result, and the first one's rerun in the
        // second's pass, come from the store without the removal.
        let first = try store.liveQuery(query, queue: queue)
        defer { first.cancel() }
        #expect(await eventually { queue.sync { first.updateCount == 1 && first.ids == [apple] } })
        let second = try store.liveQuery(query, queue: queue)
        defer { second.cancel() }
        #expect(await eventually { queue.sync { second.updateCount == 1 && second.ids == [apple] } })
        release.signal()
        // A later commit that changes neither result: the next pass must see the removal for both.
        try notes.put(Note(title: "banana"))
        #expect(await eventually { queue.sync { first.ids.isEmpty && second.ids.isEmpty } })
    }

    @Test func firstResultThenExactChanges() async throws {
        let store = try Store(directoryPath: "memory:live-basic", model: standardModel)
        let notes = store.box(for: Note.self)
        let a = try notes.put(Note(title: "apple")).value
        let b = try notes.put(Note(title: "avocado")).value
        try notes.put(Note(title: "banana"))
        let queue = DispatchQueue(label: "test.live")
        let live = try store.liveQuery(try notes.query { Note.titleProperty.startsWith("a") }.build(), queue: queue)
        #expect(await eventually { queue.sync { live.updateCount == 1 } })
        queue.sync {
            #expect(live.ids == [a, b])
            #expect(live.results.map(\.title) == ["apple", "avocado"])
            #expect(live.lastChange?.isInitial == true && live.lastChange?.insertions == [0, 1])
        }
        // One object changed in place, one came, one left.
        try store.runInTransaction {
            try notes.put(Note(id: EntityId(a), title: "apricot"))
            try notes.remove(b)
            try notes.put(Note(title: "almond"))
        }
        #expect(await eventually { queue.sync { live.updateCount == 2 } })
        queue.sync {
            #expect(live.results.map(\.title) == ["apricot", "almond"])
            let change = live.lastChange!
            #expect(change.deletions == [1] && change.deletedIds == [b])
            #expect(change.insertions == [1] && change.modifications == [0] && change.modifiedIds == [a])
            #expect(change.modificationsInPrevious == [0])
        }
    }

    @Test func commitsThatDoNotConcernTheQueryCauseNoUpdateAndNoRun() async throws {
        let store = try Store(directoryPath: "memory:live-quiet", model: standardModel)
        let notes = store.box(for: Note.self)
        for i in 0..<50 { try notes.put(Note(title: i % 2 == 0 ? "a\(i)" : "b\(i)")) }
        let queue = DispatchQueue(label: "test.live")
        let live = try store.liveQuery(try notes.query { Note.titleProperty.startsWith("a") }.build(), queue: queue)
        #expect(await eventually { queue.sync { live.updateCount == 1 } })
        let runs = live.queryRuns
        // Objects that neither matched nor match, and another entity.
        let b1 = try notes.query { Note.titleProperty.startsWith("b") }.build().findIds()[0].value
        try notes.put(Note(id: EntityId(b1), title: "b-renamed"))
        try notes.put(Note(title: "zzz"))
        try store.box(for: Tagged.self).put(Tagged(tag: "other"))
        // A commit that does concern it, as a marker that the ones before were handled.
        try notes.put(Note(title: "a-marker"))
        #expect(await eventually { queue.sync { live.updateCount == 2 } })
        queue.sync { #expect(live.lastChange?.insertions.count == 1 && live.lastChange?.deletions.isEmpty == true) }
        #expect(live.queryRuns == runs, "updated from the changed objects alone, no query run")
    }

    /// A put of the same values is no modification; a put of other values is one (for the
    /// hashed records of an unordered query and the compared objects of an ordered one).
    @Test(arguments: [false, true])
    func onlyAChangedStoredFormIsAModification(ordered: Bool) async throws {
        let store = try Store(directoryPath: "memory:live-same-\(ordered)", model: standardModel)
        let notes = store.box(for: Note.self)
        let a = try notes.put(Note(title: "a", text: "x")).value
        let b = try notes.put(Note(title: "b", text: "y")).value
        var builder = notes.query()
        if ordered { builder = builder.ordered(by: Note.titleProperty) }
        let queue = DispatchQueue(label: "test.live")
        let live = try store.liveQuery(try builder.build(), queue: queue)
        #expect(await eventually { queue.sync { live.updateCount == 1 } })
        try notes.put(Note(id: EntityId(a), title: "a", text: "x"))
        try notes.put(Note(id: EntityId(b), title: "b", text: "changed"))
        #expect(await eventually { queue.sync { live.updateCount == 2 } })
        queue.sync {
            #expect(live.lastChange?.modifiedIds == [b], "only the object whose values changed")
            #expect(live.map(\.text) == ["x", "changed"])
        }
        // The same values again, alone: nothing to publish.
        try notes.put(Note(id: EntityId(b), title: "b", text: "changed"))
        try await Task.sleep(nanoseconds: 100_000_000)
        queue.sync { #expect(live.updateCount == 2) }
    }

    @Test func orderedQueriesRunAgainAndStillGiveExactChanges() async throws {
        let store = try Store(directoryPath: "memory:live-ordered", model: standardModel)
        let notes = store.box(for: Note.self)
        let ids = try ["d", "b", "c", "a"].map { try notes.put(Note(title: $0)).value }
        let queue = DispatchQueue(label: "test.live")
        let published = Published()
        let live = try Self.recording(on: queue, into: published) {
            try store.liveQuery(try notes.query().ordered(by: Note.titleProperty).build(), queue: queue)
        }
        #expect(await eventually { queue.sync { live.updateCount == 1 } })
        queue.sync { #expect(live.results.map(\.title) == ["a", "b", "c", "d"]) }
        // "d" moves to the front as "0"; "b" changes in place.
        try store.runInTransaction {
            try notes.put(Note(id: EntityId(ids[0]), title: "0"))
            try notes.put(Note(id: EntityId(ids[1]), title: "bb"))
        }
        #expect(await eventually { queue.sync { live.updateCount == 2 } })
        queue.sync {
            #expect(live.results.map(\.title) == ["0", "a", "bb", "c"])
            let change = live.lastChange!
            #expect(change.deletedIds == [ids[0]] && change.insertedIds == [ids[0]])
            #expect(change.modifiedIds == [ids[1]])
        }
    }

    @Test func cancellationAndReleaseStopUpdatesAndKeepNothingAlive() async throws {
        weak var weakStore: Store?
        weak var weakReleased: LiveResults<Note>?
        do {
            let store = try Store(directoryPath: "memory:live-release", model: standardModel)
            weakStore = store
            let notes = store.box(for: Note.self)
            let queue = DispatchQueue(label: "test.live")
            let cancelled = try store.liveQuery(try notes.query().build(), queue: queue)
            var released: LiveResults<Note>? = try store.liveQuery(try notes.query().build(), queue: queue)
            weakReleased = released
            #expect(await eventually { queue.sync { cancelled.updateCount == 1 && released!.updateCount == 1 } })
            cancelled.cancel()
            released = nil
            #expect(weakReleased == nil, "nothing keeps released live results alive")
            try notes.put(Note(title: "after"))
            try await Task.sleep(nanoseconds: 100_000_000)
            queue.sync { #expect(cancelled.updateCount == 1, "no update after cancel()") }
            store.close()
        }
        // Once the live results are gone, nothing of them holds the store.
        #expect(await eventually { weakStore == nil }, "live results do not keep the store alive")
    }

    @Test func onlyTheNamedPropertiesCountAsModifications() async throws {
        let store = try Store(directoryPath: "memory:live-keypaths", model: standardModel)
        let notes = store.box(for: Note.self)
        let id = try notes.put(Note(title: "t", text: "x")).value
        let queue = DispatchQueue(label: "test.live")
        let all = try store.liveQuery(try notes.query().build(), queue: queue)
        let titles = try store.liveQuery(try notes.query().build(), queue: queue, properties: [Note.titleProperty])
        #expect(await eventually { queue.sync { all.updateCount == 1 && titles.updateCount == 1 } })
        try notes.put(Note(id: EntityId(id), title: "t", text: "y"))      // text only
        #expect(await eventually { queue.sync { all.updateCount == 2 } })
        try notes.put(Note(id: EntityId(id), title: "t2", text: "y"))     // the title
        #expect(await eventually { queue.sync { all.updateCount == 3 && titles.updateCount == 2 } })
        queue.sync {
            #expect(all.lastChange?.modifiedIds == [id])
            #expect(titles.lastChange?.modifiedIds == [id] && titles.results.map(\.title) == ["t2"])
        }
    }

    @Test func aBlockedDeliveryQueueNeverBlocksTheWriter() async throws {
        let store = try Store(directoryPath: "memory:live-slow", model: standardModel)
        let notes = store.box(for: Note.self)
        let queue = DispatchQueue(label: "test.live")
        let query = try notes.query().build()
        let live = try store.liveQuery(query, queue: queue)
        #expect(await eventually { queue.sync { live.updateCount == 1 } })
        // The delivery queue is stuck; the writer goes on.
        let release = DispatchSemaphore(value: 0)
        queue.async { release.wait() }
        // 300 commits end while the queue is still stuck (were the writer waiting for it, they
        // would not end before the release below).
        let wrote = Locked(false)
        let writer = Task.detached {
            for i in 0..<300 { try notes.put(Note(title: "n\(i)")) }
            wrote.withLock { $0 = true }
        }
        #expect(await eventually { wrote.withLock { $0 } }, "commits went on while the consumer was stuck")
        // Updates computed meanwhile were folded into the one waiting on the queue: no backlog.
        release.signal()
        try await writer.value
        #expect(queue.sync { live.updateCount } <= 3, "updates coalesced while the consumer was stuck")
        let expected = try query.findIds().map(\.value)
        #expect(await eventually { queue.sync { live.ids == expected } })
    }

    @Test func oneObjectsChanges() async throws {
        let store = try Store(directoryPath: "memory:live-one", model: standardModel)
        let notes = store.box(for: Note.self)
        let watched = try notes.put(Note(title: "watched")).value
        let other = try notes.put(Note(title: "other")).value
        var iterator = try notes.changes(of: watched).makeAsyncIterator()
        #expect(try await iterator.next()??.title == "watched")
        // Other objects written: nothing; then the watched one.
        try notes.put(Note(id: EntityId(other), title: "other 2"))
        try notes.put(Note(title: "third"))
        try notes.put(Note(id: EntityId(watched), title: "watched 2"))
        #expect(try await iterator.next()??.title == "watched 2")
        try notes.put(Note(id: EntityId(other), title: "other 3"))
        try notes.remove(watched)
        let last = try await iterator.next()
        #expect(last != nil && last! == nil, "nil once removed")

        // Counted as a loop sees them: commits of other objects yield nothing at all.
        let again = try notes.put(Note(title: "again")).value
        final class Titles: @unchecked Sendable {
            let lock = NSLock()
            var seen: [String?] = []
        }
        let titles = Titles()
        let loop = Task {
            for try await note in try notes.changes(of: again) { titles.lock.withLock { titles.seen.append(note?.title) } }
        }
        #expect(await eventually { titles.lock.withLock { titles.seen.count == 1 } })
        for i in 0..<5 { try notes.put(Note(id: EntityId(other), title: "other \(i)")) }
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(titles.lock.withLock { titles.seen } == ["again"])
        try notes.put(Note(id: EntityId(again), title: "again 2"))
        #expect(await eventually { titles.lock.withLock { titles.seen == ["again", "again 2"] } })
        loop.cancel()
    }

    @Test func aRegionOfSeveralEntities() async throws {
        let store = try Store(directoryPath: "memory:live-region", model: standardModel)
        let notes = store.box(for: Note.self), tagged = store.box(for: Tagged.self)
        let region = try ObservationRegion().including(notes).including(try tagged.query().build())
        var iterator = try store.changes(in: region, value: { (try notes.count(), try tagged.count()) }).makeAsyncIterator()
        var value = try await iterator.next()
        #expect(value?.0 == 0 && value?.1 == 0)
        try tagged.put(Tagged(tag: "x"))
        value = try await iterator.next()
        #expect(value?.0 == 0 && value?.1 == 1)
        try store.box(for: AllTypes.self).put(AllTypes())   // outside the region: nothing
        try notes.put(Note(title: "n"))
        value = try await iterator.next()
        #expect(value?.0 == 1 && value?.1 == 1)
        #expect(throws: CellarError.self) { _ = try store.changes(in: ObservationRegion(), value: { 0 }) }
    }

    @Test func observationTrackingSeesUpdates() async throws {
        let store = try Store(directoryPath: "memory:live-observation", model: standardModel)
        let notes = store.box(for: Note.self)
        let queue = DispatchQueue(label: "test.live")
        let live = try store.liveQuery(try notes.query().build(), queue: queue)
        #expect(await eventually { queue.sync { live.updateCount == 1 } })
        final class Flag: @unchecked Sendable { var fired = false }
        // Reading the array, the collection's count, or one element: each is tracked.
        let flags = [Flag(), Flag(), Flag()]
        queue.sync {
            withObservationTracking { _ = live.results } onChange: { flags[0].fired = true }
            withObservationTracking { _ = live.count } onChange: { flags[1].fired = true }
        }
        try notes.put(Note(title: "new"))
        #expect(await eventually { queue.sync { flags[0].fired && flags[1].fired } })
        #expect(await eventually { queue.sync { live.count == 1 } })
        queue.sync {
            withObservationTracking { _ = live[0].title } onChange: { flags[2].fired = true }
        }
        try notes.put(Note(title: "newer"))
        #expect(await eventually { queue.sync { flags[2].fired } })
        queue.sync { #expect(live.map(\.title) == ["new", "newer"] && live.results.map(\.title) == ["new", "newer"]) }
    }

    /// Durable commits from several threads at once on disk (their syncs shared, each group's
    /// commits published by one thread): every publication is a state the store was in, which
    /// here means each thread's notes form a prefix of what it wrote (a commit never shows
    /// without the ones its thread made before it), and the last one holds everything.
    @Test func concurrentDurableCommitsPublishWholeStates() async throws {
        let dir = TestDirectory("live-group")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.path, model: standardModel)
        defer { store.close() }
        let notes = store.box(for: Note.self)
        let queue = DispatchQueue(label: "test.live")
        let published = Published()
        let live = try Self.recording(on: queue, into: published) {
            try store.liveQuery(try notes.query { Note.titleProperty.startsWith("a") }.build(), queue: queue)
        }
        // A while between each commit's record and its publication (see the random test).
        store.observers.recordHook = { usleep(200) }
        // The first result (empty) is published before the writers start: then at least one
        // more follows, however the writers' commits coalesce.
        #expect(await eventually { published.lock.withLock { published.updates.count } == 1 })
        let (threads, perThread) = (4, 60)
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for k in 0..<perThread {
                do {
                    try notes.put(Note(title: "a-\(t)-\(k)"))
                    if k % 3 == 0 { try notes.put(Note(title: "b-\(t)-\(k)")) }
                } catch {
                    Issue.record("put failed: \(error)")
                }
            }
        }
        #expect(await eventually { queue.sync { live.count == threads * perThread } })
        let updates = published.lock.withLock { published.updates }
        #expect(updates.count >= 2)
        for update in updates {
            var written = [[Int]](repeating: [], count: threads)
            for title in update.titles {
                let parts = title.split(separator: "-")
                written[Int(parts[1])!].append(Int(parts[2])!)
            }
            for (t, ks) in written.enumerated() {
                #expect(ks.sorted() == Array(0..<ks.count), "thread \(t)'s notes in commit \(update.snapshot): \(ks.sorted())")
            }
        }
    }

    /// Random puts, renames and removes from several threads (their commits noted, with the
    /// store's contents after each, in a model); every published result is exactly the query's
    /// result in the commit it names (ids, order and titles); every published change, applied
    /// to the previous result, gives the new one; every object whose title changed between two
    /// results is marked modified or inserted; at rest the live result equals the query's.
    /// With restarts, no live query lives throughout: each one started during the writes is
    /// cancelled a moment later, so the store starts journalling anew for every one of them;
    /// beside another observer (the store records every commit for it), or alone (between two
    /// live queries no one observes, and a commit being published when one starts was not
    /// recorded for anyone).
    enum Restarts: String, CaseIterable, Sendable { case never, besideAnObserver, alone }

    @Test(arguments: [false, true], Restarts.allCases)
    func randomWritersAgainstTheQuery(ordered: Bool, restarting: Restarts) async throws {
        let restarts = restarting != .never
        let store = try Store(directoryPath: "memory:live-random-\(ordered)-\(restarting)", model: standardModel)
        let notes = store.box(for: Note.self)
        var builder = notes.query { Note.titleProperty.startsWith("a") }
        if ordered { builder = builder.ordered(by: Note.titleProperty) }
        let query = try builder.build()
        /// The query's result in a store holding `contents` (id, title): ids in id order, or
        /// by title then id.
        func expected(_ contents: [(Id, String)]) -> [(Id, String)] {
            let matching = contents.filter { $0.1.hasPrefix("a") }
            return ordered ? matching.sorted { ($0.1, $0.0) < ($1.1, $1.0) } : matching.sorted { $0.0 < $1.0 }
        }
        // The model: the store's contents after each commit, by commit id.
        let model = Locked<[UInt64: [(Id, String)]]>([:])
        let writeLock = NSLock()
        @Sendable func noteCommit() throws {
            let contents = try notes.all().map { ($0.id.value, $0.title) }
            let txnId = store.engine.lastTransactionId
            model.withLock { $0[txnId] = contents }
        }
        try noteCommit()
        let queue = DispatchQueue(label: "test.live")
        // One live query from the start, more started while the writers write (a commit may be
        // recorded before one registers and become visible after its first result).
        let lives = Locked<[(live: LiveResults<Note>, published: Published)]>([])
        @Sendable func startLive() throws {
            let published = Published()
            let live = try Self.recording(on: queue, into: published) { try store.liveQuery(query, queue: queue) }
            lives.withLock { $0.append((live, published)) }
        }
        if !restarts { try startLive() }
        // Beside an observer, the store records every commit for it, so that a live query can
        // start while a commit is between its record and its publication; alone, while a commit
        // that no one recorded is being published.
        let other = restarting == .besideAnObserver ? try notes.observe(on: DispatchQueue(label: "test.other")) {} : nil
        defer { other?.cancel() }
        // Between being recorded (or not, when no one observes) and becoming visible, a commit
        // now takes a while: an update often opens its snapshot in between (and must leave that
        // commit's changes for later).
        store.observers.recordHook = { usleep(restarts ? 1_500 : 300) }
        // A thread of its own (the writers take the shared pool's threads).
        let started = DispatchSemaphore(value: 0)
        Thread {
            for _ in 0..<6 {
                // With restarts, longer than the pause between two passes: the new live query's
                // first pass starts at once, often while a commit is recorded but not visible.
                usleep(restarts ? 15_000 : 3_000)
                do { try startLive() } catch { Issue.record("liveQuery failed: \(error)") }
                if restarts {
                    usleep(25_000)
                    lives.withLock { $0.last!.live.cancel() }
                }
            }
            if restarts { try? startLive() }
            started.signal()
        }.start()
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            var rng = SplitMix64(seed: UInt64(thread + 1) * 7919)
            for _ in 0..<150 {
                do {
                    try writeLock.withLock {
                        try store.runInTransaction {
                            for _ in 0..<Int(rng.next() % 3 + 1) {
                                let title = (rng.next() % 2 == 0 ? "a" : "b") + String(rng.next() % 1000)
                                let existing = try notes.query().build().findIds()
                                switch rng.next() % 3 {
                                case 0 where !existing.isEmpty:
                                    try notes.remove(existing[Int(rng.next() % UInt64(existing.count))].value)
                                case 1 where !existing.isEmpty:
                                    try notes.put(Note(id: existing[Int(rng.next() % UInt64(existing.count))], title: title))
                                default:
                                    try notes.put(Note(title: title))
                                }
                            }
                        }
                        try noteCommit()
                    }
                } catch {
                    Issue.record("write failed: \(error)")
                }
            }
        }
        started.wait()
        // The live queries still running (all of them, or the last one started with restarts)
        // published a first result; a last commit changes the result, so that they publish again
        // (at least two results each), however the writers' commits coalesced.
        let all = lives.withLock { $0 }
        let running = restarts ? [all.last!] : all
        for (_, published) in running {
            #expect(await eventually { published.lock.withLock { published.updates.count } >= 1 })
        }
        try writeLock.withLock {
            try store.runInTransaction { _ = try notes.put(Note(title: "a-last")) }
            try noteCommit()
        }
        let expectedIds = try query.findIds().map(\.value)
        let states = model.withLock { $0 }
        for (live, _) in running {
            #expect(await eventually { queue.sync { live.ids == expectedIds } })
        }
        for (index, (_, published)) in all.enumerated() {
            let updates = published.lock.withLock { published.updates }
            for (number, update) in updates.enumerated() {
                guard let contents = states[update.snapshot] else {
                    Issue.record("an update names commit \(update.snapshot), which no writer made")
                    continue
                }
                let want = expected(contents)
                let wantIds = want.map { $0.0 }
                #expect(update.ids == wantIds && update.titles == want.map { $0.1 },
                        """
                        the published result is the query's result in commit \(update.snapshot) (live query \(index + 1) \
                        of \(all.count), update \(number + 1) of \(updates.count), initial: \(update.change.isInitial)): \
                        published but not there \(update.ids.filter { !wantIds.contains($0) }), there but not published \
                        \(wantIds.filter { !update.ids.contains($0) }); the commits whose result it is: \
                        \(states.keys.sorted().filter { expected(states[$0]!).map(\.0) == update.ids })
                        """)
            }
            for (previous, next) in zip(updates, updates.dropFirst()) {
                #expect(next.snapshot > previous.snapshot)
                let change = next.change
                let rebuilt = change.applied(to: previous.ids, inserted: { next.ids[$0] })
                #expect(rebuilt == next.ids)
                // Titles that differ at the same id: the object is marked modified or re-inserted.
                let before = Dictionary(uniqueKeysWithValues: zip(previous.ids, previous.titles))
                for (id, title) in zip(next.ids, next.titles) where before[id] != nil && before[id] != title {
                    #expect(change.modifiedIds.contains(id) || change.insertedIds.contains(id))
                }
            }
        }
        #expect(all.count == 7)
        #expect(all.contains { entry in entry.published.lock.withLock { entry.published.updates.count } >= 2 })
    }
}
