import CellarStorage
import CellarTestSupport
import Testing

/// The engine's promises outside the tree itself: locking, identity, read-only, abort, drop.
@Suite("Engine behaviour")
struct EngineBehaviourTests {
    @Test("a second writer on the same store gets storeLocked; it opens once the first closes")
    func secondWriterIsLockedOut() throws {
        let directory = TestDirectory("lock")
        defer { directory.remove() }
        let first = try StorageEngine(directory: directory.path)
        #expect(throws: StorageError.storeLocked(path: directory.sub(StorageEngine.lockFileName))) {
            _ = try StorageEngine(directory: directory.path)
        }
        first.close()
        let second = try StorageEngine(directory: directory.path)
        second.close()
    }

    @Test("in-memory engines: private, empty at open, no files, no lock, growing past the first map")
    func inMemory() throws {
        let directory = TestDirectory("in-memory")
        defer { directory.remove() }
        let name = directory.sub("not-created")
        let options = StorageOptions(inMemory: true, initialMapSize: 1 << 16)
        let a = try StorageEngine(directory: name, options: options)
        let b = try StorageEngine(directory: name, options: options)
        let value = [UInt8](repeating: 9, count: 1000)
        for batch in 0..<20 {
            try a.write { txn in
                let tree = try txn.tree("t")!
                for i in 0..<100 { try txn.put(tree, key: bigEndianKey(UInt64(batch * 100 + i)), value: value) }
            }
        }
        #expect(try a.read { try $0.count($0.tree("t")!) } == 2000)
        #expect(try a.read { try $0.get($0.tree("t")!, key: bigEndianKey(1999)) } == value)
        #expect(try b.read { try $0.tree("t") } == nil)
        #expect(!TestDirectory.exists(name))
        a.close()
        b.close()
        #expect(throws: StorageError.self) { try StorageEngine(directory: name, options: StorageOptions(readOnly: true, inMemory: true)) }
    }

    @Test("the store UUID is created once and kept across reopen")
    func uuidIsKept() throws {
        let directory = TestDirectory("uuid")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path)
        let uuid = engine.uuid
        try engine.write { txn in try txn.put(txn.tree("t")!, key: [1], value: [2]) }
        engine.close()
        let reopened = try StorageEngine(directory: directory.path)
        #expect(reopened.uuid == uuid)
        #expect(StoreUUID(string: uuid.description) == uuid)
        #expect(reopened.lastTransactionId == 1)
        reopened.close()
    }

    @Test("a file that is not a Cellar store is refused with fileCorrupt, and left alone")
    func foreignFileIsRefused() throws {
        let directory = TestDirectory("foreign")
        defer { directory.remove() }
        let bytes = Array("SQLite format 3\0 and then some more bytes of somebody else's file".utf8) + [UInt8](repeating: 7, count: 5000)
        TestDirectory.write(bytes, to: directory.sub(StorageEngine.dataFileName))
        #expect(throws: StorageError.self) { _ = try StorageEngine(directory: directory.path) }
        #expect(TestDirectory.read(directory.sub(StorageEngine.dataFileName)) == bytes)
    }

    @Test("read-only: reads work, writes throw readOnly, a missing store is an error")
    func readOnly() throws {
        let directory = TestDirectory("readonly")
        defer { directory.remove() }
        #expect(throws: StorageError.self) { _ = try StorageEngine(directory: directory.sub("missing"), options: StorageOptions(readOnly: true)) }
        let writer = try StorageEngine(directory: directory.path)
        try writer.write { txn in try txn.put(txn.tree("t")!, key: [1], value: [42]) }
        // A reader process may open while the writer holds the lock.
        let reader = try StorageEngine(directory: directory.path, options: StorageOptions(readOnly: true))
        #expect(try reader.read { try $0.get($0.tree("t")!, key: [1]) } == [42])
        #expect(throws: StorageError.readOnly) { _ = try reader.beginWrite() }
        reader.close()
        writer.close()
    }

    @Test("abort and a throwing write body discard everything, trees included")
    func abortDiscards() throws {
        let directory = TestDirectory("abort")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path)
        defer { engine.close() }
        try engine.write { txn in try txn.put(txn.tree("kept")!, key: [1], value: [1]) }
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try engine.write { txn throws in
                try txn.put(txn.tree("kept")!, key: [2], value: [2])
                try txn.put(txn.tree("new")!, key: [3], value: [3])
                throw Boom()
            }
        }
        let txn = try engine.beginWrite()
        try txn.put(txn.tree("kept")!, key: [4], value: [4])
        txn.abort()
        #expect(throws: StorageError.transactionClosed) { try txn.commit() }
        try engine.read { txn throws in
            #expect(try txn.treeNames() == ["kept"])
            let kept = try txn.tree("kept")!
            #expect(try txn.count(kept) == 1)
            #expect(try txn.get(kept, key: [2]) == nil)
        }
        #expect(engine.lastTransactionId == 1)
    }

    @Test("trees: created on first use, listed, dropped with their data, recreated empty")
    func namedTrees() throws {
        let directory = TestDirectory("trees")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path, options: StorageOptions(nodeSize: 512))
        defer { engine.close() }
        try engine.write { txn throws in
            for name in ["b", "a", "c"] {
                let tree = try txn.tree(name)!
                for i in 0..<500 { try txn.put(tree, key: bigEndianKey(UInt64(i)), value: Array(name.utf8)) }
            }
            #expect(try txn.treeNames() == ["a", "b", "c"])
            #expect(try txn.tree("missing", create: false) == nil)
        }
        let liveWithB = engine.liveBytes
        try engine.write { txn throws in
            #expect(try txn.dropTree("b"))
            #expect(try txn.dropTree("b") == false)
            #expect(try txn.treeNames() == ["a", "c"])
        }
        #expect(engine.liveBytes < liveWithB * 3 / 4)
        try engine.write { txn throws in
            let b = try txn.tree("b")!
            #expect(try txn.count(b) == 0)
            #expect(try txn.get(b, key: bigEndianKey(1)) == nil)
            try txn.put(b, key: [9], value: [9])
        }
        try engine.read { txn throws in
            #expect(try txn.treeNames() == ["a", "b", "c"])
            #expect(try txn.count(txn.tree("b")!) == 1)
            #expect(try txn.count(txn.tree("a")!) == 500)
        }
    }

    @Test("a cursor in a write transaction finds its place again after the tree changes under it")
    func writeCursorSurvivesChanges() throws {
        let directory = TestDirectory("cursor")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path, options: StorageOptions(nodeSize: 256))
        defer { engine.close() }
        try engine.write { txn throws in
            let tree = try txn.tree("t")!
            for i in stride(from: 0, to: 1000, by: 2) { try txn.put(tree, key: bigEndianKey(UInt64(i)), value: [1]) }
            // Walk the tree, deleting each key we stand on and inserting its odd neighbour behind us.
            let cursor = try txn.cursor(tree)
            var visited: [UInt64] = []
            var more = try cursor.first()
            while more {
                let k = cursor.key.loadUnaligned(as: UInt64.self).bigEndian
                visited.append(k)
                try txn.delete(tree, key: bigEndianKey(k))
                if k > 0 { try txn.put(tree, key: bigEndianKey(k - 1), value: [2]) }
                more = try cursor.next()
            }
            #expect(visited == Array(stride(from: 0, to: 1000, by: 2)))
            #expect(try txn.count(tree) == 499)
        }
    }

    @Test("the zeros written ahead of the log stay through reopen; a torn frame written into them is zeroed, not cut")
    func zerosAheadOfTheLog() throws {
        let directory = TestDirectory("ahead")
        defer { directory.remove() }
        let path = directory.sub(StorageEngine.dataFileName)
        var engine = try StorageEngine(directory: directory.path)
        for i in 0..<20 { try engine.write { txn in try txn.put(txn.tree("t")!, key: bigEndianKey(UInt64(i)), value: [1, 2, 3]) } }
        let logEnd = Int(engine.fileSize)
        engine.close()
        let physical = TestDirectory.read(path).count
        #expect(physical > logEnd, "zeros are kept ahead of the log")
        engine = try StorageEngine(directory: directory.path)
        #expect(engine.lastTransactionId == 20)
        #expect(TestDirectory.read(path).count == physical, "a writable open leaves the zeros in place")
        try engine.write { txn in try txn.put(txn.tree("t")!, key: [9], value: [9]) }
        let end = Int(engine.fileSize)
        engine.close()
        // A torn frame: bytes that are not a record, where the next frame would go.
        var bytes = TestDirectory.read(path)
        for i in end..<(end + 100) { bytes[i] = 0xAB }
        TestDirectory.write(bytes, to: path)
        engine = try StorageEngine(directory: directory.path)
        defer { engine.close() }
        #expect(engine.lastTransactionId == 21)
        let after = TestDirectory.read(path)
        #expect(after.count == bytes.count, "the file keeps its size (a mapping elsewhere must not be cut short)")
        #expect(after[end...].allSatisfy { $0 == 0 }, "the torn tail is zeros again")
        #expect(try engine.read { txn in try txn.count(txn.tree("t")!) } == 21)
        try engine.write { txn in try txn.put(txn.tree("t")!, key: [10], value: [10]) }
        #expect(engine.lastTransactionId == 22)
    }

    @Test("dropping a transaction without commit or abort releases the writer")
    func forgottenTransactionReleasesWriter() throws {
        let directory = TestDirectory("forgotten")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path)
        defer { engine.close() }
        do {
            let txn = try engine.beginWrite()
            try txn.put(txn.tree("t")!, key: [1], value: [1])
        }
        try engine.write { txn in try txn.put(txn.tree("t")!, key: [2], value: [2]) }
        #expect(try engine.read { try $0.get($0.tree("t")!, key: [1]) } == nil)
    }
}
