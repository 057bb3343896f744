@_spi(CellarGenerated) @_spi(Testing) import Cellar
import CellarStorage
import CellarTestSupport
import Dispatch
import Foundation
import Testing

/// `Store.compact()`: objects, IDs, ID sequences, indexes, unique constraints, relations, the
/// model and the UUID all survive it, also while another thread writes.
@Suite struct StoreCompactionTests {
    /// What the test reads back to compare, before and after: every item with its relations, and
    /// the answers of index and link queries.
    static func summary(_ store: Store) throws -> [String] {
        let items = store.box(for: QItem.self)
        var lines = try items.all().map { item in
            "\(item.id) \(item.title) \(item.score.map(String.init) ?? "-") author=\(item.author.target?.name ?? "-") tags=\(item.tags.map(\.label).sorted())"
        }
        lines.append("titled 7: \(try items.query { QItem.title == "item 7" }.build().findIds())")
        lines.append("score > 40: \(try items.query { QItem.score > 40 }.build().count())")
        lines.append("by author-3: \(try items.query().link(QItem.author) { QAuthor.name == "author-3" }.build().findIds())")
        lines.append("tagged even: \(try items.query().link(QItem.tags) { QTag.label == "even" }.build().count())")
        let authors = store.box(for: QAuthor.self)
        lines.append("author-2 notes: \(try authors.query { QAuthor.name == "author-2" }.build().findFirst()?.notes.map(\.id) ?? [])")
        return lines
    }

    /// Five authors (`author-0` …) and the tags `even` and `odd`, stored.
    static func putAuthorsAndTags(_ store: Store) throws -> (people: [QAuthor], even: QTag, odd: QTag) {
        let people = (0..<5).map { QAuthor("author-\($0)") }
        try store.box(for: QAuthor.self).put(people)
        let even = QTag(), odd = QTag()
        even.label = "even"
        odd.label = "odd"
        try store.box(for: QTag.self).put([even, odd])
        return (people, even, odd)
    }

    @Test func everythingSurvivesCompactionWhileAnotherThreadWrites() throws {
        let dir = TestDirectory("store-compact")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.path, model: queryModel(), options: StoreOptions(durability: .none, automaticCompaction: nil))
        let items = store.box(for: QItem.self), authors = store.box(for: QAuthor.self)
        let (people, even, odd) = try Self.putAuthorsAndTags(store)
        // Garbage: every item rewritten ten times, a third of them removed.
        var all: [QItem] = []
        for i in 0..<300 {
            let item = QItem()
            item.title = "item \(i)"
            item.author.target = people[i % 5]
            item.tags.append(i % 2 == 0 ? even : odd)
            all.append(item)
        }
        try items.put(all)
        for round in 0..<10 {
            for item in all { item.score = Int32(round * 5 + Int(item.id % 5)) }
            try items.put(all)
        }
        try items.remove(all.filter { $0.id % 3 == 0 }.map(\.id))
        let highest = all.map(\.id).max()!
        let identifier = try items.identifier(for: all[1])
        let before = try Self.summary(store)
        let sizeBefore = store.fileSize.total
        let notesOfFirst = try #require(try authors.get(people[0].id)).notes.count

        // Compact while another thread puts new items (each in its own transaction).
        let written = Locked<[Id]>([])
        let firstAuthor = people[0].id
        let reportHolder = Locked<CompactionReport?>(nil)
        DispatchQueue.concurrentPerform(iterations: 2) { thread in
            if thread == 0 {
                reportHolder.withLock { $0 = try? store.compact() }
            } else {
                for i in 0..<40 {
                    let item = QItem()
                    item.title = "new \(i)"
                    item.author.targetId = firstAuthor
                    if (try? items.put(item)) != nil { written.withLock { $0.append(item.id) } }
                }
            }
        }
        let report = try #require(reportHolder.withLock { $0 })
        let newIds = written.withLock { $0 }
        #expect(newIds.count == 40)
        #expect(report.bytesAfter < sizeBefore / 2, "\(report)")
        #expect(newIds.allSatisfy { $0 > highest } && Set(newIds).count == 40, "no ID handed out twice")

        // The new items are there; take them out and the rest reads as before.
        #expect(try items.get(newIds).map(\.title) == (0..<40).map { "new \($0)" })
        #expect(try authors.get(people[0].id)?.notes.count == notesOfFirst + 40, "backlinks include the new items")
        try items.remove(newIds)
        #expect(try Self.summary(store) == before)
        #expect(try items.get(identifier)?.title == "item 1", "identifiers resolve")
        // Unique constraints hold, the ID sequence goes on.
        #expect(throws: CellarError.self) { try authors.put(QAuthor("author-1")) }
        let next = QItem()
        try items.put(next)
        #expect(next.id > newIds.max()!)

        // And again through the async twin, then reopened.
        let again = try awaitResult { try await store.compact() }
        #expect(again.bytesAfter <= report.bytesAfter + 64 << 10)
        let uuid = store.uuid
        store.close()
        let reopened = try Store(directoryPath: dir.path, model: queryModel(), options: StoreOptions(durability: .none))
        defer { reopened.close() }
        #expect(reopened.uuid == uuid)
        try reopened.box(for: QItem.self).remove(next.id)
        #expect(try Self.summary(reopened) == before)
    }

    @Test func compactionDropsTheBytesOfRetiredProperties() throws {
        let dir = TestDirectory("store-compact-retired")
        defer { dir.remove() }
        let options = StoreOptions(durability: .none, automaticCompaction: nil)
        let body = String(repeating: "b", count: 2_000)
        var expected: [Id: [String: RowValue]] = [:]
        let sizeWithBody: UInt64 = try {
            let store = try Store(directoryPath: dir.path, model: testModel([DocV1.entity]), options: options)
            defer { store.close() }
            let docs = store.box(for: Row<DocV1>.self)
            for i in 0..<200 {
                let doc = Row<DocV1>(["title": .string("doc \(i)"), "body": .string(body), "count": .long(Int64(i))])
                try docs.put(doc)
                expected[doc.id] = ["title": .string("doc \(i)"), "count": .long(Int64(i))]
            }
            // Compacted with the body still in the model: every record is copied as it is.
            return try store.compact().bytesAfter
        }()
        // The body property is retired (removed from the model; its UID is kept as retired).
        let store = try Store(directoryPath: dir.path, model: testModel([DocV2.entity]), options: options)
        defer { store.close() }
        #expect(store.modelChanges.contains { "\($0)".contains("retired property") })
        let report = try store.compact()
        #expect(report.bytesAfter + 200 * 2_000 <= sizeWithBody, "\(report), \(sizeWithBody) before")
        let docs = store.box(for: Row<DocV2>.self)
        let read = try docs.all()
        #expect(read.count == 200)
        for doc in read { #expect(doc.values == expected[doc.id], "doc \(doc.id)") }
        // New objects go on with the same slots, and the store verifies.
        try docs.put(Row<DocV2>(["title": .string("new"), "count": .long(7)]))
        #expect(try docs.count() == 201)
    }

    @Test func anOpenCompactsALogOfMostlyGarbageWithTheModelsRewrites() throws {
        let dir = TestDirectory("store-compact-at-open")
        defer { dir.remove() }
        let body = String(repeating: "b", count: 2_000)
        var expected: [Id: [String: RowValue]] = [:]
        let sizeBefore: UInt64 = try {
            let store = try Store(directoryPath: dir.path, model: testModel([DocV1.entity]),
                                  options: StoreOptions(durability: .none, automaticCompaction: nil))
            defer { store.close() }
            let docs = store.box(for: Row<DocV1>.self)
            let all = (0..<100).map { i in Row<DocV1>(["title": .string("doc \(i)"), "body": .string(body)]) }
            for round in 0..<10 {  // every record written ten times: nine tenths garbage
                for doc in all { doc.values["count"] = .long(Int64(round)) }
                try docs.put(all)
            }
            for doc in all { expected[doc.id] = ["title": doc.values["title"]!, "count": .long(9)] }
            return store.fileSize.total
        }()
        // Opened with the body retired and a policy the log passes: compacted before it is handed
        // out, with the rewrites of that model (the retired bytes dropped).
        let policy = AutomaticCompaction(garbageShare: 0.5, minimumFileSize: 1 << 20)
        let store = try Store(directoryPath: dir.path, model: testModel([DocV2.entity]),
                              options: StoreOptions(durability: .none, automaticCompaction: policy))
        defer { store.close() }
        #expect(store.fileSize.total < 100 * 2_000, "compacted, without the retired bodies: \(sizeBefore) → \(store.fileSize.total) bytes")
        let docs = store.box(for: Row<DocV2>.self)
        let read = try docs.all()
        #expect(read.count == 100)
        for doc in read { #expect(doc.values == expected[doc.id], "doc \(doc.id)") }
        let new = Row<DocV2>(["title": .string("new"), "count": .long(7)])
        try docs.put(new)
        #expect(new.id == 101, "the id sequence goes on after the compaction at open")
    }

    @Test func compactionIsRefusedWhereItCannotRun() throws {
        let memory = try Store(directoryPath: "memory:compact", model: queryModel())
        defer { memory.close() }
        #expect(throws: CellarError.self) { try memory.compact() }
        let dir = TestDirectory("store-compact-refused")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.path, model: queryModel(), options: StoreOptions(durability: .none))
        try store.box(for: QAuthor.self).put(QAuthor("Ada"))
        // Inside a transaction it would wait for that transaction: refused, not a deadlock.
        try store.runInTransaction {
            #expect(throws: CellarError.self) { try store.compact() }
        }
        store.close()
        #expect(throws: CellarError.storeClosed) { try store.compact() }
        let reader = try Store(directoryPath: dir.path, model: queryModel(), options: StoreOptions(readOnly: true))
        defer { reader.close() }
        #expect(throws: CellarError.readOnly) { try reader.compact() }
    }
}

/// Runs an async throwing body to completion from synchronous test code.
private func awaitResult<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Locked<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let outcome: Result<T, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0 }!.get()
}

private enum DocV1: RowSchema {
    static let entity = testEntity("Doc", id: 1, uid: 8_100, [("id", 1, .long, [.id]), ("title", 2, .string, []),
                                                              ("body", 3, .string, []), ("count", 4, .long, [])])
}

private enum DocV2: RowSchema {
    static let entity = testEntity("Doc", id: 1, uid: 8_100, [("id", 1, .long, [.id]), ("title", 2, .string, []),
                                                              ("count", 4, .long, [])])
}
