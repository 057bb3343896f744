@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// Reading the store as it was: random commits compared with a model's snapshot at each, through
/// boxes, an index query and relations, after reopening, across a compaction (which keeps only
/// the newest commit, or the window `pastRetention` sets); by date; the vector index as it was;
/// refusals.
@Suite struct TimeTravelTests {
    struct Shape: Equatable {
        var title: String
        var score: Int32?
        var tags: Set<Id>
    }

    static func open(_ dir: TestDirectory) throws -> Store {
        try Store(directoryPath: dir.path, model: queryModel(), options: StoreOptions(durability: .none))
    }

    static func shapes(_ store: Store) throws -> [Id: Shape] {
        var shapes: [Id: Shape] = [:]
        for item in try store.box(for: QItem.self).all() {
            shapes[item.id] = Shape(title: item.title, score: item.score, tags: Set(item.tags.map(\.id)))
        }
        return shapes
    }

    /// `count` random commits (items made, changed, tagged, removed), each with the shapes after it.
    static func randomCommits(_ count: Int, _ store: Store, tags: [EntityId<QTag>], random: inout SplitMix64) throws
        -> [(commit: UInt64, shapes: [Id: Shape])] {
        func roll(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }
        var snapshots: [(commit: UInt64, shapes: [Id: Shape])] = []
        for _ in 0..<count {
            let items = store.box(for: QItem.self)
            try store.runInTransaction {
                let existing = try items.all()
                for _ in 0...roll(3) {
                    switch existing.isEmpty ? 0 : roll(4) {
                    case 0:
                        let item = QItem()
                        item.title = "n\(roll(20))"
                        item.score = roll(2) == 0 ? nil : Int32(roll(5))
                        if roll(2) == 0 { item.tags.append(try #require(try store.box(for: QTag.self).get(tags[roll(3)].value))) }
                        try items.put(item)
                    case 1:
                        let item = existing[roll(existing.count)]
                        item.title = "r\(roll(20))"
                        item.score = Int32(roll(5))
                        try items.put(item)
                    case 2:
                        let item = existing[roll(existing.count)]
                        let tag = try #require(try store.box(for: QTag.self).get(tags[roll(3)].value))
                        if item.tags.contains(where: { $0.id == tag.id }) { item.tags.removeAll { $0.id == tag.id } } else { item.tags.append(tag) }
                        try items.put(item)
                    default:
                        _ = try items.remove(existing[roll(existing.count)].id)
                    }
                }
            }
            // A transaction that changed nothing made no commit: its state is the one before.
            if snapshots.last?.commit == store.lastCommitId { snapshots.removeLast() }
            snapshots.append((store.lastCommitId, try Self.shapes(store)))
        }
        return snapshots
    }

    @Test(arguments: [1, 2, UInt64.random(in: 3...UInt64.max)] as [UInt64])
    func pastCommitsReadAsTheyWere(seed: UInt64) throws {
        let dir = TestDirectory("time-travel")
        defer { dir.remove() }
        var random = SplitMix64(seed: seed)
        func roll(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }
        var store = try Self.open(dir)
        defer { store.close() }
        let tags = try store.box(for: QTag.self).put((0..<3).map { QTag("t\($0)") })
        var snapshots: [(commit: UInt64, shapes: [Id: Shape])] = [(store.lastCommitId, [:])]
        snapshots += try Self.randomCommits(60, store, tags: tags, random: &random)
        func check(_ snapshot: (commit: UInt64, shapes: [Id: Shape]), _ store: Store) throws {
            try store.read(asOf: .commit(snapshot.commit)) {
                #expect(try Self.shapes(store) == snapshot.shapes, "seed \(seed), commit \(snapshot.commit)")
                // An index query answers as it did then.
                let title = "r\(roll(20))"
                let found = Set(try store.box(for: QItem.self).query { QItem.title == title }.build().findIds().map(\.value))
                #expect(found == Set(snapshot.shapes.filter { $0.value.title == title }.keys), "seed \(seed), commit \(snapshot.commit)")
                #expect(try store.box(for: QItem.self).count() == snapshot.shapes.count)
            }
        }
        for _ in 0..<20 { try check(snapshots[roll(snapshots.count)], store) }
        try check(snapshots[0], store)
        // The newest commit is read the same way, and writes are refused.
        try check(snapshots[snapshots.count - 1], store)
        #expect(throws: CellarError.self) {
            try store.read(asOf: .commit(snapshots[1].commit)) { _ = try store.box(for: QItem.self).put(QItem()) }
        }
        #expect(try Self.shapes(store) == snapshots.last!.shapes)
        // After reopening: the commits are in the file.
        store.close()
        store = try Self.open(dir)
        for _ in 0..<10 { try check(snapshots[roll(snapshots.count)], store) }
        let oldest = try #require(try store.oldestReadableCommit())
        #expect(oldest.commit <= snapshots[0].commit)
        #expect(try store.read(asOf: .commit(oldest.commit)) { try store.box(for: QItem.self).count() } == 0)
        // A compaction keeps only the newest commit: an older one is a clear error.
        try store.compact()
        #expect(try store.oldestReadableCommit()?.commit == store.lastCommitId)
        #expect { try store.read(asOf: .commit(snapshots[1].commit)) {} } throws: { error in
            let error = error as? CellarError
            return error?.code == .illegalArgument && error?.message.contains("oldest commit the file holds is \(store.lastCommitId)") == true
        }
        try check((store.lastCommitId, snapshots.last!.shapes), store)
        #expect(throws: CellarError.self) { try store.read(asOf: .commit(store.lastCommitId + 5)) {} }
    }

    @Test(arguments: [5, UInt64.random(in: 6...UInt64.max)] as [UInt64])
    func aWindowOutlivesCompactions(seed: UInt64) throws {
        let dir = TestDirectory("time-travel-window")
        defer { dir.remove() }
        var random = SplitMix64(seed: seed)
        var options = StoreOptions(durability: .none)
        options.pastRetention = .commits(40)
        var store = try Store(directoryPath: dir.path, model: queryModel(), options: options)
        defer { store.close() }
        let tags = try store.box(for: QTag.self).put((0..<3).map { QTag("t\($0)") })
        var snapshots = try Self.randomCommits(60, store, tags: tags, random: &random)
        func checkWindow() throws {
            let window = snapshots.suffix(40)
            #expect(try store.oldestReadableCommit()?.commit == window.first!.commit, "seed \(seed)")
            for snapshot in window {
                try store.read(asOf: .commit(snapshot.commit)) {
                    #expect(try Self.shapes(store) == snapshot.shapes, "seed \(seed), commit \(snapshot.commit)")
                    let found = Set(try store.box(for: QItem.self).query { QItem.title.startsWith(String("r")) }.build().findIds().map(\.value))
                    #expect(found == Set(snapshot.shapes.filter { $0.value.title.hasPrefix("r") }.keys), "seed \(seed)")
                }
            }
            #expect(throws: CellarError.self) { try store.read(asOf: .commit(snapshots[snapshots.count - 41].commit)) {} }
        }
        try store.compact()
        try checkWindow()
        store.close()
        store = try Store(directoryPath: dir.path, model: queryModel(), options: options)
        try checkWindow()
        for snapshot in try Self.randomCommits(15, store, tags: tags, random: &random) where snapshot.commit != snapshots.last?.commit {
            snapshots.append(snapshot)
        }
        try store.compact()
        try checkWindow()
        #expect(try Self.shapes(store) == snapshots.last!.shapes)
    }

    @Test func aDateReadsTheNewestCommitMadeByThen() throws {
        let dir = TestDirectory("time-travel-date")
        defer { dir.remove() }
        let store = try Self.open(dir)
        defer { store.close() }
        let items = store.box(for: QItem.self)
        // Each moment taken once the clock has moved on, in whole milliseconds (the commits' unit).
        func nextMillisecond() -> Date {
            let start = (Date().timeIntervalSince1970 * 1000).rounded(.down)
            while (Date().timeIntervalSince1970 * 1000).rounded(.down) <= start {}
            return Date()
        }
        let item = QItem()
        item.title = "first"
        try items.put(item)
        let afterFirst = nextMillisecond()
        _ = nextMillisecond()
        item.title = "second"
        try items.put(item)
        #expect(try store.read(asOf: .date(afterFirst)) { try items.get(item.id)?.title } == "first")
        #expect(try store.read(asOf: .date(Date())) { try items.get(item.id)?.title } == "second")
        #expect(throws: CellarError.self) { try store.read(asOf: .date(Date(timeIntervalSince1970: 1))) {} }
    }

    @Test func theVectorIndexAnswersAsItWas() throws {
        let dir = TestDirectory("time-travel-vectors")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.path, model: cellarModel(), options: StoreOptions(durability: .none))
        defer { store.close() }
        let box = store.box(for: Passage.self)
        let near: [Float] = [1, 0, 0, 0, 0, 0, 0, 0]
        let old = try box.put(Passage("old", near))
        let then = store.lastCommitId
        let query = try box.query { Passage.embedding.nearestNeighbors(to: near, maxCount: 1) }.build()
        #expect(try query.findIds().map(\.value) == [old.value])
        try box.remove(old.value)
        let new = try box.put(Passage("new", [0.9, 0.1, 0, 0, 0, 0, 0, 0]))
        // The graph of the newest commit is in memory now; the past one is read from its commit.
        #expect(try query.findIds().map(\.value) == [new.value])
        #expect(try store.read(asOf: .commit(then)) { try query.findIds().map(\.value) } == [old.value])
        #expect(try query.findIds().map(\.value) == [new.value])
    }
}
