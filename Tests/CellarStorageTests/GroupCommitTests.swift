import CellarStorage
import CellarTestSupport
import Dispatch
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// Group commit: threads committing durable transactions at once share syncs, and each commit
/// returns only once it is durable and visible; commits become visible whole and in order; a
/// failed sync fails every commit it covered; a kill -9 loses no acknowledged commit.
@Suite("Group commit")
struct GroupCommitTests {
    static let options = StorageOptions(durability: .full, initialMapSize: 1 << 20, nodeSize: 512, superblockInterval: 7)

    /// Runs `body(t)` on `count` threads of their own (more than there are cores) and waits for all.
    static func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let done = DispatchGroup()
        for t in 0..<count {
            done.enter()
            Threads.start {
                defer { done.leave() }
                body(t)
            }
        }
        done.wait()
    }

    /// In a file's `beforeSync` hook: holds the sync until `ready()`; after 60 s (a guard against
    /// a hang, not a pace) records `failure` and lets it go.
    static func holdSync(until ready: () -> Bool, _ failures: Locked<[String]>, else failure: String) {
        let clock = ContinuousClock()
        let start = clock.now
        while !ready() {
            if clock.now - start > .seconds(60) {
                failures.add(failure)
                return
            }
            usleep(100)
        }
    }

    /// Checks what `txn` sees: whole commits only, and of each thread of each run a prefix of its
    /// commits (a thread commits in order, and a commit is visible only after the ones before it),
    /// one key per commit. Returns the keys, or nil after recording an issue.
    static func checkSnapshot(_ txn: ReadTransaction, context: String) throws -> Set<[UInt8]>? {
        switch try GroupCommitWorkload.wholeCommits(txn) {
        case .failure(let problem):
            Issue.record("\(context): \(problem)")
            return nil
        case .success(let keys):
            var counts: [[UInt64]: Int] = [:]  // [run, thread] → commits
            for key in keys {
                guard let parts = GroupCommitWorkload.parts(of: key) else { continue }
                counts[[parts.run, UInt64(parts.thread)], default: 0] += 1
            }
            for (thread, count) in counts {
                let last = GroupCommitWorkload.key(run: thread[0], thread: Int(thread[1]), index: count)
                guard keys.contains(last) else {
                    Issue.record("\(context): run \(thread[0]) thread \(thread[1]) has \(count) commits visible but not its commit \(count): not a prefix")
                    return nil
                }
            }
            return keys
        }
    }

    @Test("8 threads × 40 durable one-key commits: ids strictly increasing, readers see whole commits in order, all there after reopen")
    func concurrentCommitters() throws {
        let directory = TestDirectory("group")
        defer { directory.remove() }
        let threads = 8, perThread = 40
        let engine = try StorageEngine(directory: directory.path, options: Self.options)
        let ids = Locked<[[UInt64]]>(Array(repeating: [], count: threads))
        let failures = Locked<[String]>([])
        let stop = Locked(false)
        // A reader, all along: every snapshot holds whole commits, in commit order, one key per commit.
        let readerDone = DispatchSemaphore(value: 0)
        Threads.start {
            defer { readerDone.signal() }
            var last: UInt64 = 0
            var reads = 0
            while !stop.current {
                do {
                    try engine.read { txn in
                        if txn.transactionId < last { failures.add("a reader went back from commit \(last) to \(txn.transactionId)") }
                        last = txn.transactionId
                        if let keys = try Self.checkSnapshot(txn, context: "reader at commit \(last)"),
                           keys.count != Int(last) {
                            failures.add("the snapshot of commit \(last) holds \(keys.count) commits")
                        }
                    }
                    reads += 1
                } catch {
                    failures.add("reader: \(error)")
                }
            }
            if reads < 2 { failures.add("the reader read only \(reads) snapshots") }
        }
        Self.onThreads(threads) { t in
            for i in 1...perThread {
                do {
                    let txn = try engine.beginWrite()
                    let id = txn.transactionId
                    let key = GroupCommitWorkload.key(run: 1, thread: t, index: i)
                    let value = GroupCommitWorkload.value(run: 1, thread: t, index: i)
                    try txn.put(txn.tree(GroupCommitWorkload.objects)!, key: key, value: value)
                    try txn.put(txn.tree(GroupCommitWorkload.twins)!, key: key, value: value)
                    try txn.commit()
                    ids.withLock { $0[t].append(id) }
                    // Acknowledged: visible to any reader from now on.
                    let seen = try engine.read { try $0.get($0.tree(GroupCommitWorkload.objects)!, key: key) }
                    if seen != value { failures.add("thread \(t): commit \(id) returned but a reader does not see it") }
                } catch {
                    failures.add("thread \(t): \(error)")
                    return
                }
            }
        }
        stop.withLock { $0 = true }
        readerDone.wait()
        for failure in failures.current { Issue.record(Comment(rawValue: failure)) }
        let all = ids.current
        for (t, mine) in all.enumerated() {
            #expect(zip(mine, mine.dropFirst()).allSatisfy { $0 < $1 }, "thread \(t): ids \(mine) not strictly increasing")
        }
        let total = threads * perThread
        #expect(all.flatMap { $0 }.sorted() == (1...UInt64(total)).map { $0 }, "every commit has its own id, 1 to \(total)")
        let counts = engine.groupCommitCounts
        #expect(counts.commits == total)
        engine.close()

        let reopened = try StorageEngine(directory: directory.path, options: Self.options)
        defer { reopened.close() }
        #expect(reopened.lastTransactionId == UInt64(total))
        let keys = try reopened.read { try Self.checkSnapshot($0, context: "after reopen") }
        #expect(keys?.count == total)
        print("group commit: \(total) commits by \(threads) threads in \(counts.syncs) syncs")
    }

    /// Commits `perThread` one-key transactions on each of `threads` threads; returns the
    /// engine's counts. Each committer's sync is held until every thread still committing has a
    /// commit written and waiting (a disk slow enough for all of them, however the machine
    /// schedules the threads): then a sync and the one after it cover a commit of every thread
    /// between them, and the count of syncs does not depend on the machine's pace.
    static func countSyncs(threads: Int, perThread: Int) throws -> (syncs: Int, commits: Int) {
        let directory = TestDirectory("group-syncs")
        defer { directory.remove() }
        let path = directory.sub(StorageEngine.dataFileName)
        let opened = Locked<StorageEngine?>(nil)
        let done = Locked(0)
        let failures = Locked<[String]>([])
        var options = Self.options
        options.openFile = { _, _, _ in
            try FaultInjectingFile(path: path, create: true, readOnly: false, fault: .none, beforeSync: {
                guard let engine = opened.current else { return }  // the syncs of the creation
                // Only committers sync while the threads run (a checkpoint in `.full` durability
                // does not). A sync made holding the writer gate would wait here for commits that
                // cannot come.
                Self.holdSync(until: { engine.pendingCommits + done.current >= threads }, failures,
                              else: "a sync waited 60 s for every thread's commit: one made holding the writer gate?")
            })
        }
        let engine = try StorageEngine(directory: directory.path, options: options)
        opened.withLock { $0 = engine }
        defer { engine.close() }
        Self.onThreads(threads) { t in
            defer { done.withLock { $0 += 1 } }
            for i in 1...perThread {
                do {
                    try GroupCommitWorkload.commit(engine, run: 1, thread: t, index: i)
                } catch {
                    failures.add("thread \(t): \(error)")
                    return
                }
            }
        }
        opened.withLock { $0 = nil }  // the file's hook no longer holds the engine
        for failure in failures.current { Issue.record(Comment(rawValue: failure)) }
        let keys = try engine.read { try Self.checkSnapshot($0, context: "at the end") }
        #expect(keys?.count == threads * perThread)
        return engine.groupCommitCounts
    }

    @Test("with 8 threads committing at once, commits share syncs (at most half as many syncs as commits); alone, one sync each")
    func syncsAreShared() throws {
        let together = try Self.countSyncs(threads: 8, perThread: 25)
        #expect(together.commits == 200)
        #expect(together.syncs * 2 <= together.commits, "8 threads: \(together.syncs) syncs for \(together.commits) commits")
        let alone = try Self.countSyncs(threads: 1, perThread: 20)
        #expect(alone.commits == 20 && alone.syncs == 20, "1 thread: \(alone.syncs) syncs for \(alone.commits) commits")
        print("group commit, syncs held for every thread: 8 threads \(together.commits) commits in \(together.syncs) syncs")
    }

    @Test("a commit written while another's sync runs is synced with nobody committing after it: its committer is woken to lead the next sync")
    func waiterLeadsTheNextSync() throws {
        let directory = TestDirectory("group-next-leader")
        defer { directory.remove() }
        let path = directory.sub(StorageEngine.dataFileName)
        let opened = Locked<StorageEngine?>(nil)
        let held = Locked(false)
        let syncStarted = DispatchSemaphore(value: 0)
        let failures = Locked<[String]>([])
        var options = Self.options
        options.openFile = { _, _, _ in
            try FaultInjectingFile(path: path, create: true, readOnly: false, fault: .none, beforeSync: {
                guard let engine = opened.current else { return }  // the syncs of the creation
                // Only the first committer's sync is held: until the second commit is written
                // and waiting.
                guard held.withLock({ first in defer { first = true }; return !first }) else { return }
                syncStarted.signal()
                Self.holdSync(until: { engine.pendingCommits >= 2 }, failures, else: "the second commit never queued")
            })
        }
        let engine = try StorageEngine(directory: directory.path, options: options)
        opened.withLock { $0 = engine }
        let done = DispatchGroup()
        for thread in 0..<2 {
            done.enter()
            Threads.start {
                defer { done.leave() }
                // The second commits once the first's sync runs, and neither commits again.
                if thread == 1 { syncStarted.wait() }
                do {
                    try GroupCommitWorkload.commit(engine, run: 1, thread: thread, index: 1)
                } catch {
                    failures.add("thread \(thread): \(error)")
                }
            }
        }
        guard done.wait(timeout: .now() + .seconds(120)) == .success else {
            // The store cannot be closed under a committer that waits forever: left open.
            Issue.record("a commit written during another's sync was never synced (its committer not woken to lead)")
            return
        }
        opened.withLock { $0 = nil }
        defer { engine.close() }
        for failure in failures.current { Issue.record(Comment(rawValue: failure)) }
        #expect(engine.groupCommitCounts == (syncs: 2, commits: 2))
        let keys = try engine.read { try Self.checkSnapshot($0, context: "after both commits") }
        #expect(keys?.count == 2)
    }

    @Test("a sync that fails under 8 committing threads: no commit it covered returns, each acknowledged one is there after reopen, none is partial")
    func failedSyncWithConcurrentCommitters() throws {
        let threads = 8, perThread = 30
        var failedCommits = 0
        for n in [1, 2, 4, 7, 12] {
            let directory = TestDirectory("group-fault")
            defer { directory.remove() }
            let path = directory.sub(StorageEngine.dataFileName)
            // The sync at creation is the first; commits' syncs come after.
            var options = Self.options
            options.openFile = { _, _, _ in
                try FaultInjectingFile(path: path, create: true, readOnly: false, fault: .failSync(number: n + 1, errno: EIO),
                                       syncDelayMicroseconds: 500)
            }
            let engine = try StorageEngine(directory: directory.path, options: options)
            // Per thread: the ids of its acknowledged commits, and of the one that failed its sync.
            let acknowledged = Locked<[(key: [UInt8], id: UInt64)]>([])
            let failed = Locked<[(key: [UInt8], id: UInt64)]>([])
            let failures = Locked<[String]>([])
            Self.onThreads(threads) { t in
                for i in 1...perThread {
                    let key = GroupCommitWorkload.key(run: 1, thread: t, index: i)
                    let value = GroupCommitWorkload.value(run: 1, thread: t, index: i)
                    var id: UInt64 = 0
                    do {
                        let txn = try engine.beginWrite()
                        id = txn.transactionId
                        try txn.put(txn.tree(GroupCommitWorkload.objects)!, key: key, value: value)
                        try txn.put(txn.tree(GroupCommitWorkload.twins)!, key: key, value: value)
                        try txn.commit()
                        acknowledged.withLock { $0.append((key, id)) }
                    } catch StorageError.io {
                        failed.withLock { $0.append((key, id)) }
                        return
                    } catch StorageError.commitsRefused {
                        // Refused before it was written (at `beginWrite`, or at commit, having
                        // begun on a commit whose sync then failed).
                        return
                    } catch {
                        failures.add("thread \(t): \(error)")
                        return
                    }
                }
            }
            for failure in failures.current { Issue.record(Comment(rawValue: failure)) }
            let acked = acknowledged.current, lost = failed.current
            #expect(!lost.isEmpty, "N=\(n): sync \(n) failed but no committer was told")
            failedCommits += lost.count
            let newestAcknowledged = acked.map(\.id).max() ?? 0
            // Every commit the failed sync covered is newer than every acknowledged one, and none is visible.
            #expect(lost.allSatisfy { $0.id > newestAcknowledged }, "N=\(n): a commit failed before one that was acknowledged")
            #expect(engine.lastTransactionId == newestAcknowledged,
                    "N=\(n): readers see commit \(engine.lastTransactionId), the newest acknowledged is \(newestAcknowledged)")
            #expect(throws: StorageError.self) { _ = try engine.beginWrite() }
            engine.close()

            let reopened = try StorageEngine(directory: directory.path, options: Self.options)
            defer { reopened.close() }
            #expect(reopened.lastTransactionId >= newestAcknowledged)
            guard let keys = try reopened.read({ try Self.checkSnapshot($0, context: "N=\(n), after reopen") })
            else { continue }
            let missing = acked.filter { !keys.contains($0.key) }
            #expect(missing.isEmpty, "N=\(n): \(missing.count) acknowledged commits lost, ids \(missing.map(\.id))")
            let attempted = Set(acked.map(\.key) + lost.map(\.key))
            #expect(keys.isSubset(of: attempted), "N=\(n): the store holds commits nobody made")
        }
        print("group commit, failed syncs: \(failedCommits) commits got the sync's error")
    }

    @Test("a power loss at a sync under 8 committing threads, unsynced writes kept, dropped, garbled or half kept: every acknowledged commit is there, none partial, the store opens",
          arguments: FaultInjectingFile.CrashMode.allCases)
    func crashAtSyncWithConcurrentCommitters(mode: FaultInjectingFile.CrashMode) throws {
        let threads = 8, perThread = 20
        var crashes = 0
        for n in [2, 3, 5, 8, 13] {
            let directory = TestDirectory("group-crash")
            defer { directory.remove() }
            let path = directory.sub(StorageEngine.dataFileName)
            let box = FileBox()
            var options = Self.options
            options.openFile = { _, _, _ in
                // The sync at creation is the first; commits' syncs come after.
                try box.make(path: path, fault: .crashAtSync(number: n + 1), mode: mode, seed: UInt64(n), syncDelayMicroseconds: 300)
            }
            let engine = try StorageEngine(directory: directory.path, options: options)
            let acknowledged = Locked<[[UInt8]]>([])
            let attempted = Locked<[[UInt8]]>([])
            Self.onThreads(threads) { t in
                for i in 1...perThread {
                    let key = GroupCommitWorkload.key(run: 1, thread: t, index: i)
                    attempted.withLock { $0.append(key) }
                    do {
                        try GroupCommitWorkload.commit(engine, run: 1, thread: t, index: i)
                        acknowledged.withLock { $0.append(key) }
                    } catch {
                        return  // the crash, or the refusal after it
                    }
                }
            }
            engine.close()
            guard let image = box.file?.crashImage else {
                Issue.record("N=\(n), \(mode): no crash at sync \(n + 1)")
                continue
            }
            crashes += 1
            // Power comes back: the disk holds the crash image.
            let after = TestDirectory("group-crash-after")
            defer { after.remove() }
            TestDirectory.write(image, to: after.sub(StorageEngine.dataFileName))
            let reopened = try StorageEngine(directory: after.path, options: Self.options)
            defer { reopened.close() }
            guard let keys = try reopened.read({ try Self.checkSnapshot($0, context: "N=\(n), \(mode), after the crash") }) else { continue }
            let acked = acknowledged.current
            let missing = acked.filter { !keys.contains($0) }
            #expect(missing.isEmpty, "N=\(n), \(mode): \(missing.count) of \(acked.count) acknowledged commits lost")
            #expect(keys.isSubset(of: Set(attempted.current)), "N=\(n), \(mode): the store holds commits nobody made")
        }
        #expect(crashes == 5)
    }

    @Test("20 kills of a process committing on 8 threads: every acknowledged commit is there, whole, and each thread's commits are a prefix")
    func killNineWithConcurrentCommitters() throws {
        let directory = TestDirectory("group-kill")
        defer { directory.remove() }
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let threads = 8, kills = 20
        var acknowledged: [UInt64: [Set<Int>]] = [:]  // run → per thread, the indexes acknowledged
        var total = 0, waitedFor = 0
        for run in 1...UInt64(kills) {
            // Killed at a counted point: after 1 to 24 acknowledged commits of any threads, or one
            // run in eight as soon as the child says `opening`.
            let target = ChildProcess.killPoint(&rng, most: 24)
            waitedFor += target
            var ackedNow = 0
            let output = try KillTests.run([directory.path, String(run), "threads", String(threads)], acknowledged: &ackedNow) { _, output in
                ChildProcess.reached(target, in: output, counting: "gack ")
            }
            var mine = [Set<Int>](repeating: [], count: threads)
            for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
                if line.hasPrefix("child error") { Issue.record("run \(run): \(line)") }
                let words = line.split(separator: " ")
                guard words.count == 3, words[0] == "gack", let t = Int(words[1]), let i = Int(words[2]) else { continue }
                mine[t].insert(i)
            }
            acknowledged[run] = mine
            total += mine.reduce(0) { $0 + $1.count }

            let engine = try StorageEngine(directory: directory.path, options: Self.options)
            defer { engine.close() }
            guard let keys = try engine.read({ try Self.checkSnapshot($0, context: "run \(run)") }) else { return }
            // Every acknowledged commit of this run and the ones before.
            for (r, perThread) in acknowledged {
                for (t, indexes) in perThread.enumerated() {
                    let missing = indexes.filter { !keys.contains(GroupCommitWorkload.key(run: r, thread: t, index: $0)) }
                    #expect(missing.isEmpty, "after run \(run): run \(r) thread \(t) lost acknowledged commits \(missing.sorted()) (seed \(seed))")
                }
            }
        }
        #expect(total >= waitedFor && waitedFor > 0, "the children acknowledged \(total) commits, the runs waited for \(waitedFor)")
        print("group commit kill -9: \(kills) kills, \(total) acknowledged commits on \(threads) threads")
    }
}
