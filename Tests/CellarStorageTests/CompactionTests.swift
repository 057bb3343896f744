@testable import CellarStorage
import CellarTestSupport
import Testing

/// Offline compaction (`StorageEngine.compact`): the same content, UUID and transaction ids in a
/// smaller file; leftovers of an unfinished one removed by the next writable open.
@Suite struct CompactionTests {
    /// A store with garbage: overwrites, deletes, out-of-line values and a dropped tree over many
    /// commits. Returns its model.
    static func makeStoreWithGarbage(_ path: String, seed: UInt64) throws -> Model {
        let engine = try StorageEngine(directory: path, options: StorageOptions(durability: .none, nodeSize: 1024))
        defer { engine.close() }
        var rng = SplitMix64(seed: seed)
        for round in 0..<30 {
            try engine.write { txn in
                for name in ["a", "b", "dropped"] {
                    let tree = try txn.tree(name)!
                    for _ in 0..<200 {
                        let key = bigEndianKey(rng.next() % 1_500)
                        if rng.next() % 4 == 0 {
                            try txn.delete(tree, key: key)
                        } else {
                            let size = rng.next() % 40 == 0 ? 3_000 + Int(rng.next() % 5_000) : Int(rng.next() % 120)
                            try txn.put(tree, key: key, value: [UInt8](repeating: UInt8(truncatingIfNeeded: round), count: size))
                        }
                    }
                }
                _ = try txn.tree("empty")
            }
        }
        try engine.write { txn in _ = try txn.dropTree("dropped") }
        return try engine.read { try Model(reading: $0) }
    }

    /// Makes the store's compaction folder with files of the given sizes (bytes 0xEE); its path.
    static func compactingFolder(in dir: TestDirectory, with files: [String: Int]) throws -> String {
        let work = dir.sub(StorageEngine.compactionDirectoryName)
        try #require(mkdirForTest(work))
        for (name, size) in files { TestDirectory.write([UInt8](repeating: 0xEE, count: size), to: work + "/" + name) }
        return work
    }

    @Test func theSameContentIdsAndUuidInASmallerFile() throws {
        let seed = SplitMix64.testSeed()
        let dir = TestDirectory("compact")
        defer { dir.remove() }
        let model = try Self.makeStoreWithGarbage(dir.path, seed: seed)
        let (uuid, lastTxn, sizeBefore): (StoreUUID, UInt64, UInt64) = try {
            let engine = try StorageEngine(directory: dir.path, options: StorageOptions(readOnly: true))
            defer { engine.close() }
            return (engine.uuid, engine.lastTransactionId, engine.fileSize)
        }()

        let report = try StorageEngine.compact(directory: dir.path)
        #expect(report.bytesBefore == sizeBefore && report.transactionId > lastTxn)
        #expect(report.bytesAfter * 2 < report.bytesBefore, "\(report) (seed \(seed))")
        #expect(!TestDirectory.exists(dir.sub(StorageEngine.compactionDirectoryName)), "nothing left behind")

        do {
            let engine = try StorageEngine(directory: dir.path)
            #expect(engine.uuid == uuid)
            #expect(engine.fileSize == report.bytesAfter)
            #expect(try engine.read { try Model(reading: $0) } == model, "content (seed \(seed))")
            #expect(try engine.read { try $0.treeNames() }.contains("empty"), "an empty tree is kept")
            // Transaction ids go on: the copy's commits come after the last one copied.
            let copied = engine.lastTransactionId
            #expect(copied == report.transactionId)
            try engine.write { txn in try txn.put(txn.tree("a")!, key: [9], value: [9]) }
            #expect(engine.lastTransactionId == copied + 1)
            engine.close()
        }
        // Without its superblocks, recovery walks the log from its start: a first commit that is
        // not transaction 1 is accepted there too.
        do {
            var bytes = TestDirectory.read(dir.sub(StorageEngine.dataFileName))
            for slot in [512, 1024] { for i in slot..<(slot + 64) { bytes[i] = 0 } }
            let copy = TestDirectory("compact-no-superblocks")
            defer { copy.remove() }
            TestDirectory.write(bytes, to: copy.sub(StorageEngine.dataFileName))
            let engine = try StorageEngine(directory: copy.path, options: StorageOptions(readOnly: true))
            defer { engine.close() }
            var withPut = model
            withPut.trees["a", default: [:]][[9]] = [9]
            #expect(try engine.read { try Model(reading: $0) } == withPut)
        }
        // Reopened, compacted again.
        var expected = model
        expected.trees["a", default: [:]][[9]] = [9]
        let again = try StorageEngine.compact(directory: dir.path)
        let engine = try StorageEngine(directory: dir.path)
        defer { engine.close() }
        #expect(engine.uuid == uuid)
        #expect(try engine.read { try Model(reading: $0) } == expected)
        #expect(again.bytesAfter <= report.bytesAfter + 4096)
    }

    @Test func leftoversOfAnUnfinishedCompactionAreRemovedByAWritableOpen() throws {
        let dir = TestDirectory("compact-leftovers")
        defer { dir.remove() }
        let model = try Self.makeStoreWithGarbage(dir.path, seed: 5)
        // What a crash before the rename leaves: the work directory with a partial file and a lock.
        let work = try Self.compactingFolder(in: dir, with: [StorageEngine.dataFileName: 10_000, StorageEngine.lockFileName: 0])
        do {
            let reader = try StorageEngine(directory: dir.path, options: StorageOptions(readOnly: true))
            #expect(try reader.read { try Model(reading: $0) } == model)
            reader.close()
            #expect(TestDirectory.exists(work), "a read-only open changes nothing")
        }
        let engine = try StorageEngine(directory: dir.path)
        defer { engine.close() }
        #expect(!TestDirectory.exists(work))
        #expect(try engine.read { try Model(reading: $0) } == model)
    }

    @Test func aCompactingFolderThatCannotBeRemovedIsLeftAndNamed() throws {
        let dir = TestDirectory("compact-foreign")
        defer { dir.remove() }
        let model = try Self.makeStoreWithGarbage(dir.path, seed: 7)
        let work = try Self.compactingFolder(in: dir, with: ["notes.txt": 3, StorageEngine.dataFileName: 100])
        do {
            // The store opens; the leftover data file goes, the folder with the foreign file stays.
            let engine = try StorageEngine(directory: dir.path)
            #expect(try engine.read { try Model(reading: $0) } == model)
            engine.close()
        }
        #expect(TestDirectory.exists(work + "/notes.txt") && !TestDirectory.exists(work + "/" + StorageEngine.dataFileName))
        do {
            _ = try StorageEngine.compact(directory: dir.path)
            Issue.record("compaction started beside a foreign file")
        } catch let StorageError.io(operation, _, path) {
            #expect(operation == "rmdir" && path == work)
        }
        let engine = try StorageEngine(directory: dir.path, options: StorageOptions(readOnly: true))
        defer { engine.close() }
        #expect(try engine.read { try Model(reading: $0) } == model, "the store is unchanged")
    }

    @Test("the Nth write or sync of the copy fails (ENOSPC, EIO): compaction throws, the store is as it was",
          arguments: [true, false], [Compression.none, .zstdDictionary()].filter(\.isAvailable))
    func failuresWhileCopyingLeaveTheStore(failWrites: Bool, compression: Compression) throws {
        let dir = TestDirectory("compact-faults")
        defer { dir.remove() }
        let model = try Self.makeStoreWithGarbage(dir.path, seed: 8)
        // The copy's file is opened twice: to write its header (open 0), then by the engine that
        // fills it (open 1). Each counts its own writes and syncs; each gets the fault in turn,
        // at N = 1, 2, 3 … until compaction gets past it.
        var failures = [0, 0]
        for target in 0..<2 {
            for n in 1...400 {
                let fault: FaultInjectingFile.Fault = failWrites ? .failWrite(number: n, errno: n % 2 == 0 ? ENOSPC : EIO)
                                                                : .failSync(number: n, errno: EIO)
                let opens = Locked(0)
                // With dictionaries, the copy also trains and stores one per tree before copying it.
                var options = StorageOptions(compression: compression)
                options.openFile = { path, create, readOnly -> any StorageFile in
                    guard path.contains("/" + StorageEngine.compactionDirectoryName + "/") else {
                        return try PosixFile(path: path, create: create, readOnly: readOnly)
                    }
                    let open = opens.withLock { $0 += 1; return $0 - 1 }
                    return try FaultInjectingFile(path: path, create: create, readOnly: readOnly, fault: open == target ? fault : .none)
                }
                do {
                    _ = try StorageEngine.compact(directory: dir.path, options: options)
                    break
                } catch StorageError.io {
                    failures[target] += 1
                    #expect(!TestDirectory.exists(dir.sub(StorageEngine.compactionDirectoryName)), "open \(target), n = \(n): cleaned up")
                    let engine = try StorageEngine(directory: dir.path)
                    #expect(try engine.read { try Model(reading: $0) } == model, "open \(target), n = \(n): the store is unchanged")
                    engine.close()
                }
            }
        }
        #expect(failures[0] > 0 && failures[1] > 0, "\(failures)")
        print("compaction (\(compression)) with the Nth \(failWrites ? "write" : "sync") failing: \(failures[0]) failed attempts on the header's file, \(failures[1]) on the engine's, then it succeeded")
        let engine = try StorageEngine(directory: dir.path)
        defer { engine.close() }
        #expect(try engine.read { try Model(reading: $0) } == model)
    }

    @Test func aStoreOpenElsewhereIsNotCompacted() throws {
        let dir = TestDirectory("compact-locked")
        defer { dir.remove() }
        _ = try Self.makeStoreWithGarbage(dir.path, seed: 6)
        let engine = try StorageEngine(directory: dir.path)
        defer { engine.close() }
        #expect(throws: StorageError.storeLocked(path: dir.sub(StorageEngine.lockFileName))) {
            try StorageEngine.compact(directory: dir.path)
        }
        #expect(throws: StorageError.self) { try StorageEngine.compact(directory: "x", options: StorageOptions(inMemory: true)) }
    }
}

private func mkdirForTest(_ path: String) -> Bool {
    #if canImport(Glibc)
    return Glibc.mkdir(path, 0o755) == 0
    #else
    return Darwin.mkdir(path, 0o755) == 0
    #endif
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
