@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
@testable import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// Undo steps that name their commits: kept by an undoable write instead of values, made whole
/// from the two commits when first undone, and by every compaction and copy before it drops those
/// commits; a clear error when the commits are gone all the same.
@Suite struct UndoCommitStepTests {
    /// The format of each step the store keeps, oldest first.
    static func formats(_ store: Store) throws -> [UInt8] {
        try store.engine.read { read in
            let state = try UndoLog.State.read(read)
            guard let tree = try read.tree(UndoLog.tree), state.end >= state.first else { return [] }
            return try (state.first...state.end).map { number in
                try read.withValue(tree, key: UndoLog.key(number)) { $0?.first ?? 0 }
            }
        }
    }

    static func titles(_ store: Store) throws -> [Id: String] {
        Dictionary(uniqueKeysWithValues: try store.box(for: QItem.self).all().map { ($0.id, $0.title) })
    }

    /// Three items, then three undoable writes, each retitling one of them (one event an object:
    /// steps that name their commits), with a write of another property between them.
    static func threeSteps(_ store: Store) throws -> [[Id: String]] {
        let items = store.box(for: QItem.self)
        try items.put((0..<3).map { UndoTests.item("t\($0)") })
        var states = [try titles(store)]
        for (index, item) in try items.all().enumerated() {
            try store.write(actionName: "retitle \(index)") {
                item.title = "r\(index)"
                try items.put(item)
            }
            states.append(try titles(store))
            item.flag = true
            try items.put(item)
        }
        return states
    }

    @Test(arguments: [false, true]) func aStepNamesItsCommitsUntilItIsFirstUndone(inMemory: Bool) throws {
        let dir = TestDirectory("undo-commits")
        defer { dir.remove() }
        let store = inMemory
            ? try Store(directoryPath: Store.inMemoryPrefix + dir.path, model: queryModel(), options: StoreOptions(changeHistory: true))
            : try UndoTests.open(dir)
        defer { store.close() }
        let states = try Self.threeSteps(store)
        #expect(try Self.formats(store) == [4, 4, 4])
        #expect(try store.undo() == "retitle 2")
        #expect(try Self.titles(store) == states[2])
        // The flags set after each step are no part of it (its commit is the one after its base).
        #expect(try store.box(for: QItem.self).all().allSatisfy(\.flag))
        #expect(try Self.formats(store) == [4, 4, 3])
        #expect(try store.undo() == "retitle 1")
        #expect(try store.redo() == "retitle 1")
        #expect(try store.redo() == "retitle 2")
        #expect(try Self.titles(store) == states[3])
        #expect(try store.box(for: QItem.self).all().allSatisfy(\.flag))
        // A write that replaces an object twice keeps its values (only a look tells what it came to).
        let items = store.box(for: QItem.self)
        let item = try #require(try items.all().first)
        try store.write(actionName: "twice") {
            item.title = "a"
            try items.put(item)
            item.score = 7
            try items.put(item)
        }
        #expect(try Self.formats(store).last == 3)
        #expect(try store.undo() == "twice")
        #expect(try items.get(item.id)?.title == states[3][item.id] && items.get(item.id)?.score == nil)
    }

    @Test func compactionsAndCopiesMakeTheStepsWholeFirst() throws {
        let dir = TestDirectory("undo-commits-compacted")
        defer { dir.remove() }
        var store = try UndoTests.open(dir)
        defer { store.close() }
        let states = try Self.threeSteps(store)
        try store.compact()
        #expect(try Self.formats(store) == [3, 3, 3])
        #expect(try store.undo() == "retitle 2")
        #expect(try Self.titles(store) == states[2])

        // A step kept while a compaction copies: the catch-up makes it from the file being compacted.
        let items = store.box(for: QItem.self)
        let item = try #require(try items.all().last)
        let id = item.id, compacted = store
        // (What the write in the callback found: the format of the step it kept.)
        let written = Locked<Result<UInt8?, any Error>?>(nil)
        _ = try store.engine.compact(changingKey: nil) { _, _ in
            guard written.withLock({ $0 == nil }) else { return }
            let result = Result {
                try compacted.write(actionName: "during") {
                    let items = compacted.box(for: QItem.self)
                    if let item = try items.get(id) {
                        item.title = "during"
                        try items.put(item)
                    }
                }
                return try Self.formats(compacted).last
            }
            written.withLock { $0 = result }
        }
        #expect(try written.withLock { $0 }?.get() == 4)
        #expect(try Self.formats(store) == [3, 3, 3])
        #expect(try store.undo() == "during")
        #expect(try items.get(item.id)?.title == states[2][item.id])

        // A copy (a backup) makes them too: undone in the copy.
        try store.write(actionName: "before the copy") {
            item.title = "copied"
            try items.put(item)
        }
        let copyPath = dir.path + "/copy"
        try store.copy(to: copyPath)
        store.close()
        store = try Store(directoryPath: copyPath, model: queryModel(), options: StoreOptions(durability: .none, changeHistory: true))
        #expect(try Self.formats(store) == [3, 3, 3])
        #expect(try store.undo() == "before the copy")
        #expect(try store.box(for: QItem.self).get(item.id)?.title == states[2][item.id])
        #expect(try store.undo() == "retitle 1")
        #expect(try Self.titles(store) == states[1])
    }

    @Test func aCompactionKeepingAWindowMakesTheStepsWholeToo() throws {
        let dir = TestDirectory("undo-commits-window")
        defer { dir.remove() }
        var options = StoreOptions(durability: .none, changeHistory: true)
        options.pastRetention = .commits(2)
        let store = try Store(directoryPath: dir.path, model: queryModel(), options: options)
        defer { store.close() }
        let states = try Self.threeSteps(store)
        // The window's start is copied, and its commits replayed: each through the rewrite.
        try store.compact()
        #expect(try Self.formats(store) == [3, 3, 3])
        for (index, state) in states.dropLast().enumerated().reversed() {
            #expect(try store.undo() == "retitle \(index)")
            #expect(try Self.titles(store) == state)
        }
    }

    /// Undoable writes on one thread while another compacts, over and over: each step is made
    /// whole by the compaction (from a snapshot, or in a catch-up round) or stays as it is, and
    /// every one undoes. (Run under ThreadSanitizer by `scripts/test-tsan.sh`.)
    @Test func stepsKeptWhileCompactionsRunOnAnotherThreadAllUndo() throws {
        let dir = TestDirectory("undo-commits-threads")
        defer { dir.remove() }
        let store = try UndoTests.open(dir, depth: 300)
        defer { store.close() }
        let items = store.box(for: QItem.self)
        try items.put((0..<40).map { UndoTests.item("t\($0)") })
        let start = try Self.titles(store)
        // Each item retitled five times, one write each.
        let ids = Array(repeating: start.keys.sorted(), count: 5).flatMap { $0 }
        let done = Locked(false)
        let writer = Thread {
            defer { done.withLock { $0 = true } }
            for (k, id) in ids.enumerated() {
                try? store.write(actionName: "w\(k)") {
                    let items = store.box(for: QItem.self)
                    if let item = try items.get(id) {
                        item.title = "w\(k)"
                        try items.put(item)
                    }
                }
            }
        }
        writer.start()
        var compactions = 0
        while compactions < 2 || !done.withLock({ $0 }) {
            try store.compact()
            compactions += 1
        }
        #expect(try Self.titles(store).values.allSatisfy { $0.hasPrefix("w") })
        for k in ids.indices.reversed() { #expect(try store.undo() == "w\(k)") }
        #expect(try Self.titles(store) == start)
    }

    @Test func aStepWhoseCommitsAreGoneIsAClearError() throws {
        let dir = TestDirectory("undo-commits-gone")
        defer { dir.remove() }
        var store = try UndoTests.open(dir)
        defer { store.close() }
        let states = try Self.threeSteps(store)
        store.close()
        // Compacted without the object layer (`cellar compact` of a closed store).
        _ = try StorageEngine.compact(directory: dir.path, options: Store.storageOptions(StoreOptions(durability: .none)))
        store = try UndoTests.open(dir)
        #expect(try store.undoActionName() == "retitle 2")
        let error = #expect(throws: CellarError.self) { try store.undo() }
        #expect(error?.code == .illegalArgument && error?.message.contains("no longer holds") == true)
        #expect(try Self.titles(store) == states[3])
        try store.clearUndoLog()
        #expect(try store.undo() == nil)
    }
}
