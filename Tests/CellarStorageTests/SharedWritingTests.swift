@testable import CellarStorage
import CellarTestSupport
import Dispatch
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// Several writing engines on one store (`StorageOptions.sharedWriting`), in one process: each
/// engine's `flock` is on a descriptor of its own, so they exclude each other as processes do.
/// The kill -9 test across processes is `SharedWritingProcessTests`.
@Suite("several writers on one store")
struct SharedWritingTests {
    static func options(_ durability: StorageOptions.Durability = .none, key: EncryptionKey? = nil) -> StorageOptions {
        var options = StorageOptions(durability: durability, initialMapSize: 1 << 20, superblockInterval: 5)
        options.sharedWriting = true
        options.automaticCompaction = nil
        options.encryptionKey = key
        return options
    }

    static func increment(_ engine: StorageEngine, writer: UInt8, step: UInt32) throws {
        try SharedCounterWorkload.increment(engine, writer: writer, step: step)
    }

    static func records(_ engine: StorageEngine) throws -> (counter: UInt64, records: Int) {
        try SharedCounterWorkload.records(engine)
    }

    @Test("two engines take turns: each write starts on the other's newest commit, readers see it, ids form one chain",
          arguments: [false, true])
    func takingTurns(encrypted: Bool) throws {
        let directory = TestDirectory("shared-turns")
        defer { directory.remove() }
        let key = encrypted ? TestKeys.encryption : nil
        let a = try StorageEngine(directory: directory.path, options: Self.options(key: key))
        let b = try StorageEngine(directory: directory.path, options: Self.options(key: key))
        var last: UInt64 = 0
        for step in 0..<40 {
            let (writer, other) = step % 3 == 0 ? (b, a) : (a, b)
            try Self.increment(writer, writer: writer === a ? 1 : 2, step: UInt32(step))
            // The writer's id is above every id before it, whoever made them.
            #expect(writer.lastTransactionId > last)
            last = writer.lastTransactionId
            // The other engine's next read starts on it.
            #expect(other.lastTransactionId <= last)
            #expect(try Self.records(other) == (UInt64(step + 1), step + 1))
            #expect(other.lastTransactionId == last)
        }
        a.close()
        b.close()
        // One chain, whole: a plain open (which takes the lock for good) recovers every commit.
        var plain = StorageOptions(initialMapSize: 1 << 20)
        plain.encryptionKey = key
        let reopened = try StorageEngine(directory: directory.path, options: plain)
        defer { reopened.close() }
        #expect(reopened.lastTransactionId == last)
        #expect(try Self.records(reopened) == (40, 40))
    }

    @Test("threads of three engines increment one counter in both durabilities: no increment is lost",
          arguments: [StorageOptions.Durability.none, .full])
    func noLostIncrements(durability: StorageOptions.Durability) throws {
        let directory = TestDirectory("shared-counter")
        defer { directory.remove() }
        let engines = try (0..<3).map { _ in try StorageEngine(directory: directory.path, options: Self.options(durability)) }
        let perThread = durability == .full ? 25 : 100
        let done = DispatchGroup()
        let failures = Locked<[String]>([])
        for (e, engine) in engines.enumerated() {
            for t in 0..<2 {
                done.enter()
                Threads.start {
                    defer { done.leave() }
                    for i in 0..<perThread {
                        do {
                            try Self.increment(engine, writer: UInt8(e * 2 + t), step: UInt32(i))
                        } catch {
                            failures.withLock { $0.append("engine \(e) thread \(t): \(error)") }
                            return
                        }
                    }
                }
            }
        }
        // A reader per engine meanwhile: the commit it reads never goes back (its engine's own
        // commits waiting for their sync are not walked to ahead of their publication).
        let stop = ManagedAtomicFlag()
        let readers = DispatchGroup()
        for (e, engine) in engines.enumerated() {
            readers.enter()
            Threads.start {
                defer { readers.leave() }
                var last: UInt64 = 0
                while !stop.isSet {
                    guard let id = try? engine.beginRead().transactionId else { continue }
                    if id < last { failures.withLock { $0.append("engine \(e) read \(id) after \(last)") } }
                    last = id
                }
            }
        }
        done.wait()
        stop.set()
        readers.wait()
        #expect(failures.withLock { $0 } == [])
        let total = 3 * 2 * perThread
        for engine in engines { #expect(try Self.records(engine) == (UInt64(total), total)) }
        for engine in engines { engine.close() }
        let reopened = try StorageEngine(directory: directory.path, options: StorageOptions(initialMapSize: 1 << 20))
        defer { reopened.close() }
        #expect(try Self.records(reopened) == (UInt64(total), total))
    }

    @Test("a compaction by one engine is followed by the other's writes and reads; compactions exclude each other's writes")
    func compactionIsFollowed() throws {
        let directory = TestDirectory("shared-compaction")
        defer { directory.remove() }
        let a = try StorageEngine(directory: directory.path, options: Self.options(.full))
        let b = try StorageEngine(directory: directory.path, options: Self.options(.full))
        for step in 0..<30 { try Self.increment(step % 2 == 0 ? a : b, writer: UInt8(step % 2), step: UInt32(step)) }
        let before = try Self.records(b)
        let report = try a.compact()
        #expect(report.bytesAfter < report.bytesBefore)
        // b reads the compacted file, then writes to it (not to the old, unlinked one).
        #expect(try Self.records(b) == before)
        try Self.increment(b, writer: 1, step: 100)
        try Self.increment(a, writer: 0, step: 101)
        #expect(try Self.records(a) == (32, 32))
        #expect(try Self.records(b) == (32, 32))
        // And the other way round, with writes of both going on during b's compaction.
        let writes = DispatchGroup()
        writes.enter()
        Threads.start {
            defer { writes.leave() }
            for step in 0..<20 { try? Self.increment(a, writer: 0, step: UInt32(200 + step)) }
        }
        try b.compact()
        writes.wait()
        try Self.increment(b, writer: 1, step: 300)
        #expect(try Self.records(a) == (53, 53))
        a.close()
        b.close()
        let reopened = try StorageEngine(directory: directory.path, options: StorageOptions(initialMapSize: 1 << 20))
        defer { reopened.close() }
        #expect(try Self.records(reopened) == (53, 53))
    }

    @Test("after its own compaction, an engine reads and writes the new file through a mapping that names it, and goes on after the other's writes")
    func ownCompactionNamesTheNewFile() throws {
        let directory = TestDirectory("shared-own-compaction")
        defer { directory.remove() }
        let a = try StorageEngine(directory: directory.path, options: Self.options(.full))
        let b = try StorageEngine(directory: directory.path, options: Self.options(.full))
        defer { a.close(); b.close() }
        for step in 0..<20 { try Self.increment(step % 2 == 0 ? a : b, writer: UInt8(step % 2), step: UInt32(step)) }
        try a.compact()
        // The follower and the writer's catch-up tell files apart by this name: a mapping that
        // names no file was once taken by a late look for a mapping of the old file, and the
        // next write after the other engine's was refused.
        let path = directory.path + "/" + StorageEngine.dataFileName
        let newFile = try #require(Syscall.identity(ofPath: path)).0
        #expect(a.current.load(ordering: .acquiring).generation.fileIdentity == newFile)
        #expect(a.log.fileIdentity == newFile)
        try Self.increment(a, writer: 0, step: 20)
        #expect(a.current.load(ordering: .acquiring).generation.fileIdentity == newFile)
        try Self.increment(b, writer: 1, step: 21)
        try Self.increment(a, writer: 0, step: 22)
        #expect(try Self.records(a) == (23, 23))
        #expect(try Self.records(b) == (23, 23))
    }

    @Test("a reader that looks while another engine's compaction swaps the files follows the new file; no writer clears another's commit")
    func lookDuringTheSwap() throws {
        let directory = TestDirectory("shared-swap-look")
        defer { directory.remove() }
        let a = try StorageEngine(directory: directory.path, options: Self.options(.full))
        let b = try StorageEngine(directory: directory.path, options: Self.options(.full))
        for step in 0..<30 { try Self.increment(step % 2 == 0 ? a : b, writer: UInt8(step % 2), step: UInt32(step)) }
        // a's reader looks after b counted its new file in the lock file, before b renamed it.
        var looked = false
        b.duringSwapForTesting = { looked = (try? Self.records(a)) != nil }
        try b.compact()
        b.duringSwapForTesting = nil
        #expect(looked)
        try Self.increment(b, writer: 1, step: 100)
        #expect(try Self.records(a) == (31, 31), "a's readers follow the new file")
        try Self.increment(a, writer: 0, step: 101)
        try Self.increment(b, writer: 1, step: 102)
        #expect(try Self.records(a) == (33, 33))
        try Self.increment(a, writer: 0, step: 103)
        #expect(try Self.records(b) == (34, 34), "a's catch-up kept b's commits")
        a.close()
        b.close()
        let reopened = try StorageEngine(directory: directory.path, options: StorageOptions(initialMapSize: 1 << 20))
        defer { reopened.close() }
        #expect(try Self.records(reopened) == (34, 34))
    }

    @Test("a compaction that died between renaming its file and its second count: readers still follow, the next writer settles the count")
    func compactionDiedBetweenItsCounts() throws {
        let directory = TestDirectory("shared-swap-died")
        defer { directory.remove() }
        let a = try StorageEngine(directory: directory.path, options: Self.options(.full))
        let b = try StorageEngine(directory: directory.path, options: Self.options(.full))
        for step in 0..<10 { try Self.increment(step % 2 == 0 ? a : b, writer: UInt8(step % 2), step: UInt32(step)) }
        let lockFile = try Syscall.open(directory.path + "/" + StorageEngine.lockFileName, flags: O_RDWR)
        defer { Syscall.close(lockFile) }
        var counted: UInt64 = 0
        b.duringSwapForTesting = {
            counted = SharedWriteLock.fileGeneration(lockFile)
            _ = try? Self.records(a)
        }
        try b.compact()
        b.duringSwapForTesting = nil
        #expect(SharedWriteLock.isSwapping(counted))
        // As if b had died after the rename: the count it would have made after is undone.
        var odd = counted.littleEndian
        #expect(withUnsafeBytes(of: &odd) { pwrite(lockFile, $0.baseAddress, 8, 0) } == 8)
        // a's next reader moves to the new file (it kept nothing from its look during the swap).
        _ = try Self.records(a)
        #expect(a.follower?.switches.load(ordering: .relaxed) == 1)
        try Self.increment(b, writer: 1, step: 100)
        #expect(try Self.records(a) == (11, 11), "a's readers follow the new file")
        try Self.increment(a, writer: 0, step: 101)
        #expect(!SharedWriteLock.isSwapping(SharedWriteLock.fileGeneration(lockFile)), "a's writer settled the count")
        try Self.increment(b, writer: 1, step: 102)
        #expect(try Self.records(a) == (13, 13))
        a.close()
        b.close()
    }

    @Test("what a writer that died left after the newest commit is cleared by the next writer, not read as a commit")
    func tornFrameOfADeadWriter() throws {
        let directory = TestDirectory("shared-torn")
        defer { directory.remove() }
        let a = try StorageEngine(directory: directory.path, options: Self.options(.full))
        for step in 0..<5 { try Self.increment(a, writer: 0, step: UInt32(step)) }
        // A frame cut short, as a killed writer leaves it: the start of a real one (another
        // engine's records, written at the log's end, never committed).
        let end = a.fileSize
        let victim = try StorageEngine(directory: directory.path, options: Self.options(.full))
        let txn = try victim.beginWrite()
        try txn.put(txn.tree("t")!, key: [9], value: [UInt8](repeating: 7, count: 3000))
        _ = try txn.mutator.writeFrame(to: victim.log.beginFrame(), sealing: victim.log.sealing)
        try victim.log.openFrame.flush()
        txn.abort()
        // The victim stays open (its close would clear the frame itself) but writes no more.
        defer { victim.close() }
        let file = try PosixFile(path: directory.sub(StorageEngine.dataFileName), create: false, readOnly: true)
        var head = (UInt64(0), UInt64(0))
        _ = try withUnsafeMutableBytes(of: &head) { try file.read(into: $0, at: end) }
        #expect(head != (0, 0), "the torn frame is in the file")
        // The next writer clears it: zeros after its commit, and every commit reads.
        try Self.increment(a, writer: 0, step: 5)
        let newEnd = a.fileSize
        var after = [UInt8](repeating: 1, count: 4096)
        let read = try after.withUnsafeMutableBytes { try file.read(into: $0, at: newEnd) }
        file.close()
        #expect(after.prefix(read).allSatisfy { $0 == 0 }, "zeros follow the newest commit")
        #expect(try Self.records(a) == (6, 6))
        a.close()
        let reopened = try StorageEngine(directory: directory.path, options: StorageOptions(initialMapSize: 1 << 20))
        defer { reopened.close() }
        #expect(try Self.records(reopened) == (6, 6))
    }

    @Test("while its commit waits for its sync, the engine keeps the lock and its readers do not walk to the commit")
    func unsyncedCommitsStayUnseen() throws {
        let directory = TestDirectory("shared-unsynced")
        defer { directory.remove() }
        let gate = SyncGate()
        var options = Self.options(.full)
        options.openFile = { path, create, readOnly in try GatedSyncFile(path: path, create: create, readOnly: readOnly, gate: gate) }
        let a = try StorageEngine(directory: directory.path, options: options)
        var timed = Self.options(.full)
        timed.lockWaitTimeout = .milliseconds(50)
        let b = try StorageEngine(directory: directory.path, options: timed)
        try Self.increment(a, writer: 0, step: 0)
        let before = a.lastTransactionId
        gate.close()
        let committed = DispatchSemaphore(value: 0)
        Threads.start {
            try? Self.increment(a, writer: 0, step: 1)
            committed.signal()
        }
        gate.waitForSyncer()
        // The commit is in the file, its sync held: a's readers stay before it, b cannot write.
        #expect(try a.beginRead().transactionId == before)
        #expect(throws: StorageError.storeLocked(path: directory.sub(StorageEngine.lockFileName))) { try b.beginWrite() }
        gate.open()
        committed.wait()
        #expect(try a.beginRead().transactionId > before)
        try Self.increment(b, writer: 1, step: 2)
        #expect(try Self.records(a) == (3, 3))
        a.close()
        b.close()
    }

    @Test("a write waits for another engine's transaction (without a timeout) or gives up with storeLocked after lockWaitTimeout")
    func waitingForTheOtherWriter() throws {
        let directory = TestDirectory("shared-wait")
        defer { directory.remove() }
        let a = try StorageEngine(directory: directory.path, options: Self.options())
        var timed = Self.options()
        timed.lockWaitTimeout = .milliseconds(50)
        let b = try StorageEngine(directory: directory.path, options: timed)
        let c = try StorageEngine(directory: directory.path, options: Self.options())
        let txn = try a.beginWrite()
        try txn.put(txn.tree("t")!, key: [0], value: withUnsafeBytes(of: UInt64(41)) { Array($0) })
        #expect(throws: StorageError.storeLocked(path: directory.sub(StorageEngine.lockFileName))) { try b.beginWrite() }
        // c waits for a's commit, then starts on it.
        let seen = Locked<UInt64?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Threads.start {
            try? Self.increment(c, writer: 2, step: 0)
            seen.withLock { $0 = try? Self.records(c).counter }
            finished.signal()
        }
        try txn.commit()
        finished.wait()
        #expect(seen.withLock { $0 } == 42)
        // A plain writer holds the lock from open to close: shared ones wait for it.
        a.close()
        b.close()
        c.close()
        let plain = try StorageEngine(directory: directory.path, options: StorageOptions(initialMapSize: 1 << 20))
        #expect(throws: StorageError.storeLocked(path: directory.sub(StorageEngine.lockFileName))) {
            try StorageEngine(directory: directory.path, options: timed)
        }
        plain.close()
    }
}

/// A flag set once, read by other threads.
final class ManagedAtomicFlag: @unchecked Sendable {
    private let value = Locked(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}

/// Holds every data sync while closed (a slow disk at a chosen moment), telling the test when a
/// sync waits.
final class SyncGate: @unchecked Sendable {
    private let state = Locked((closed: false, waiting: 0))
    private let opened = DispatchSemaphore(value: 0)
    private let arrived = DispatchSemaphore(value: 0)

    func close() { state.withLock { $0.closed = true } }

    func open() {
        let waiting = state.withLock { state -> Int in
            state.closed = false
            defer { state.waiting = 0 }
            return state.waiting
        }
        for _ in 0..<waiting { opened.signal() }
    }

    /// Returns once a sync waits at the closed gate.
    func waitForSyncer() { arrived.wait() }

    func pass() {
        guard state.withLock({ state -> Bool in
            guard state.closed else { return false }
            state.waiting += 1
            return true
        }) else { return }
        arrived.signal()
        opened.wait()
    }
}

/// A data file whose syncs wait at a `SyncGate`.
final class GatedSyncFile: StorageFile, @unchecked Sendable {
    private let real: PosixFile
    private let gate: SyncGate
    let path: String

    init(path: String, create: Bool, readOnly: Bool, gate: SyncGate) throws {
        real = try PosixFile(path: path, create: create, readOnly: readOnly)
        self.gate = gate
        self.path = path
    }

    func size() throws -> UInt64 { try real.size() }
    func readOnce(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int { try real.readOnce(into: buffer, at: offset) }
    func writeOnce(_ buffer: UnsafeRawBufferPointer, at offset: UInt64) throws -> Int { try real.writeOnce(buffer, at: offset) }
    func syncOnce() throws {
        gate.pass()
        try real.syncOnce()
    }
    func truncate(to length: UInt64) throws { try real.truncate(to: length) }
    func punchHoleOnce(at offset: UInt64, length: UInt64) throws -> Bool { try real.punchHoleOnce(at: offset, length: length) }
    func startWriteback(at offset: UInt64, length: UInt64) { real.startWriteback(at: offset, length: length) }
    func map(length: Int) throws -> MappedRegion { try real.map(length: length) }
    func identity() throws -> FileIdentity? { try real.identity() }
    func close() { real.close() }
}
