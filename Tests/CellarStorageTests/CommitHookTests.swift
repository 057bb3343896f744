import CellarStorage
import CellarTestSupport
import Dispatch
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// `WriteTransaction.commit(beforeRelease:)`: what a layer above keeps beside the store for the
/// next write transaction (the object layer's id sequences) is written after a successful commit
/// and before the next write transaction, on any thread, can begin; never after a failed commit.
@Suite("Commit hook")
struct CommitHookTests {
    /// State kept beside the store, touched only by whoever holds the write transaction: the
    /// engine's writer lock is all that orders its accesses (ThreadSanitizer checks that it does).
    final class Beside: @unchecked Sendable {
        var saved = 0
        var seenByNextWriter = -1
    }

    @Test("it runs after the commit is visible and before the next writer, waiting on another thread, begins")
    func runsBeforeTheNextWriterBegins() throws {
        let directory = TestDirectory("commit-hook")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path, options: StorageOptions(durability: .none))
        defer { engine.close() }
        for round in 1...10 {
            let beside = Beside()
            let txn = try engine.beginWrite()
            let waiting = DispatchSemaphore(value: 0)
            let done = DispatchGroup()
            DispatchQueue.global().async(group: done) {
                waiting.signal()
                do {
                    try engine.write { _ in beside.seenByNextWriter = beside.saved }
                } catch {
                    Issue.record("round \(round): the next writer failed: \(error)")
                }
            }
            waiting.wait()
            usleep(2_000)  // the other thread is (most likely) waiting in beginWrite by now
            try txn.put(txn.tree("t")!, key: bigEndianKey(UInt64(round)), value: [1])
            try txn.commit(beforeRelease: {
                #expect(engine.lastTransactionId == UInt64(round), "the commit is visible to readers already")
                usleep(5_000)  // a slow hook: the next writer must wait for it all the same
                beside.saved = round
            })
            done.wait()
            #expect(beside.seenByNextWriter == round, "round \(round)")
        }
    }

    @Test("a commit that fails (the Nth write fails) does not run it; one that succeeds does")
    func failedCommitsDoNotRunIt() throws {
        var failedCommits = 0, succeededCommits = 0
        let n = try FaultInjectionTests.forEveryN("commit-hook-fault") { n, directory, path, box in
            let engine: StorageEngine
            do {
                engine = try FaultInjectionTests.open(directory, { try box.make(path: path, fault: .failWrite(number: n, errno: EIO)) })
            } catch {
                return n < 1_000  // the fault hit the open
            }
            defer { engine.close() }
            var ran = false
            let txn = try engine.beginWrite()
            try txn.put(txn.tree("t")!, key: [1], value: [UInt8](repeating: 7, count: 3_000))
            do {
                try txn.commit(beforeRelease: { ran = true })
                #expect(ran, "N=\(n): the commit succeeded")
                succeededCommits += 1
            } catch {
                #expect(!ran, "N=\(n): the commit failed (\(error)) but its hook ran")
                failedCommits += 1
            }
            return n <= box.file!.counts.writes  // on until the fault is past the last write
        }
        #expect(failedCommits > 0 && succeededCommits > 0, "N up to \(n): \(failedCommits) failed, \(succeededCommits) succeeded")
    }
}
