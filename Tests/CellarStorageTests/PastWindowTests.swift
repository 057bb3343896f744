@testable import CellarStorage
import CellarTestSupport
import Testing

/// A compaction that keeps a window of past commits (`StorageOptions.pastRetention`): every commit
/// of the window reads as a model's snapshot at that commit (all trees, every entry), with its id
/// and time; the commit before the window is a clear error; commits made while the compaction
/// copies are kept one by one; a windowed file compacts again; the difference of two trees
/// equals a model's.
@Suite("a window of past commits kept by compaction")
struct PastWindowTests {
    /// Random commits on a few trees (puts of small and out-of-line values, deletes, a tree dropped
    /// and made again), with the model after each.
    struct Workload {
        var random: SplitMix64
        var model = Model()

        mutating func roll(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }

        mutating func commit(_ engine: StorageEngine) throws {
            let changes = 1 + roll(40)
            try engine.write { txn in
                for _ in 0..<changes {
                    let name = "t\(roll(3))"
                    let key = bigEndianKey(UInt64(roll(600)))
                    switch roll(20) {
                    case 0:
                        _ = try txn.dropTree(name)
                        model.trees[name] = nil
                    case 1...5:
                        if let tree = try txn.tree(name, create: false) { _ = try txn.delete(tree, key: key) }
                        model.trees[name]?[key] = nil
                    default:
                        let value = [UInt8](repeating: UInt8(truncatingIfNeeded: roll(256)), count: roll(4) == 0 ? 3000 + roll(3000) : 1 + roll(60))
                        try txn.put(try txn.tree(name, create: true)!, key: key, value: value)
                        model.trees[name, default: [:]][key] = value
                    }
                }
            }
        }
    }

    /// Notes the state after a commit of `Workload`: a commit that changed nothing (deletes of
    /// keys that were not there) made no commit, and its state is the one before; before the
    /// first commit that changed something there is no commit to read, and nothing is noted.
    static func note(_ engine: StorageEngine, _ model: Model, in states: inout [(id: UInt64, model: Model)]) {
        guard engine.lastTransactionId > 0 else { return }
        if states.last?.id == engine.lastTransactionId { states.removeLast() }
        states.append((engine.lastTransactionId, model))
    }

    static func options(_ retention: StorageOptions.PastRetention?, encrypted: Bool = false) -> StorageOptions {
        var options = StorageOptions(durability: .none, nodeSize: 512)
        options.automaticCompaction = nil
        options.pastRetention = retention
        if encrypted { options.encryptionKey = try! EncryptionKey(bytes: [UInt8](repeating: 7, count: 32)) }
        return options
    }

    /// Each whole commit's time, by id.
    static func commitTimes(_ engine: StorageEngine) throws -> [UInt64: UInt64] {
        var times: [UInt64: UInt64] = [:]
        try engine.walkCommits(back: try engine.beginRead().snapshot) { _, _, commit in
            times[commit.txnId] = commit.timeMs
            return true
        }
        return times
    }

    /// Reads commit `id` whole.
    static func model(at id: UInt64, _ engine: StorageEngine) throws -> Model {
        try Model(reading: try engine.beginRead(asOf: .transaction(id)))
    }

    @Test("each commit of the window reads as it was after compactions; the one before it is an error",
          arguments: [(1, false), (2, true), (SplitMix64.testSeed(), false)] as [(UInt64, Bool)])
    func theWindowReadsAsItWas(seed: UInt64, encrypted: Bool) throws {
        let dir = TestDirectory("past-window")
        defer { dir.remove() }
        var work = Workload(random: SplitMix64(seed: seed))
        var engine = try StorageEngine(directory: dir.path, options: Self.options(.commits(25), encrypted: encrypted))
        defer { engine.close() }
        var states: [(id: UInt64, model: Model)] = []
        for _ in 0..<70 {
            try work.commit(engine)
            Self.note(engine, work.model, in: &states)
        }
        for state in states.suffix(30) { #expect(try Self.model(at: state.id, engine) == state.model, "before compacting") }
        let times = try Self.commitTimes(engine)
        let before = engine.fileSize
        try engine.compact()
        #expect(engine.fileSize < before, "the commits before the window are dropped (seed \(seed))")
        #expect(engine.lastTransactionId == states.last!.id, "the copy ends on the newest commit's own id")
        func checkWindow(_ engine: StorageEngine) throws {
            let last = states.count
            let kept = states[(last - 25)..<last]
            #expect(try engine.oldestReadableCommit()?.transactionId == kept.first!.id, "seed \(seed)")
            let keptTimes = try Self.commitTimes(engine)
            for state in kept {
                let got = try Self.model(at: state.id, engine)
                #expect(got == state.model, "commit \(state.id), seed \(seed)")
                if let time = times[state.id] { #expect(keptTimes[state.id] == time, "the commit's own time") }
            }
            #expect { try engine.beginRead(asOf: .transaction(states[last - 26].id)) } throws: { error in
                guard case StorageError.illegalArgument(let message) = error else { return false }
                return message.contains("the oldest commit the file holds is \(kept.first!.id)")
            }
            // A commit and the one after it, from one walk: each pair of the window; the newest
            // has none after it, and the commit before the window is gone.
            for (state, next) in zip(kept, kept.dropFirst()) {
                let pair = try engine.beginRead(commitAndTheOneAfter: state.id)
                #expect(pair.commit.transactionId == state.id && pair.after.transactionId == next.id, "seed \(seed)")
                #expect(try Model(reading: pair.commit) == state.model && Model(reading: pair.after) == next.model, "commit \(state.id), seed \(seed)")
            }
            for (id, says) in [(kept.last!.id, "is the newest"), (states[last - 26].id, "the oldest commit the file holds is \(kept.first!.id)")] {
                #expect { try engine.beginRead(commitAndTheOneAfter: id) } throws: { error in
                    guard case StorageError.illegalArgument(let message) = error else { return false }
                    return message.contains(says)
                }
            }
        }
        try checkWindow(engine)
        // The times are the commits' own: a time between two commits of the window finds the first.
        let windowed = try engine.oldestReadableCommit()!
        #expect(try engine.beginRead(asOf: .time(millisecondsSince1970: windowed.millisecondsSince1970)).transactionId >= windowed.transactionId)
        // After reopening, and after more commits and a second compaction of the windowed file.
        engine.close()
        // Without its superblocks recovery walks the log from its start, through the copy's
        // partial commits and their seal, which all carry the id of the window's first commit.
        do {
            var bytes = TestDirectory.read(dir.sub(StorageEngine.dataFileName))
            for slot in [512, 1024] { for i in slot..<(slot + 64) { bytes[i] = 0 } }
            let copy = TestDirectory("past-window-no-superblocks")
            defer { copy.remove() }
            TestDirectory.write(bytes, to: copy.sub(StorageEngine.dataFileName))
            var options = Self.options(nil, encrypted: encrypted)
            options.readOnly = true
            let reader = try StorageEngine(directory: copy.path, options: options)
            defer { reader.close() }
            #expect(reader.lastTransactionId == states.last!.id)
            try checkWindow(reader)
        }
        engine = try StorageEngine(directory: dir.path, options: Self.options(.commits(25), encrypted: encrypted))
        try checkWindow(engine)
        for _ in 0..<10 {
            try work.commit(engine)
            Self.note(engine, work.model, in: &states)
        }
        try engine.compact()
        try checkWindow(engine)
        #expect(try Model(reading: engine.beginRead()) == work.model)
        // A later write goes on from the newest id.
        try engine.write { txn in try txn.put(txn.tree("t0", create: true)!, key: [1], value: [1]) }
        #expect(engine.lastTransactionId == states.last!.id + 1)
    }

    @Test("commits made while the compaction copies are kept one by one")
    func commitsDuringTheCopyAreKept() throws {
        let dir = TestDirectory("past-window-during")
        defer { dir.remove() }
        var work = Workload(random: SplitMix64(seed: SplitMix64.testSeed()))
        let engine = try StorageEngine(directory: dir.path, options: Self.options(.commits(1_000)))
        defer { engine.close() }
        var states: [(id: UInt64, model: Model)] = []
        for _ in 0..<30 {
            try work.commit(engine)
            Self.note(engine, work.model, in: &states)
        }
        // The copy reports its progress on the compacting thread, without the writer gate: commits
        // made there come after the snapshot it copies, and are caught up with.
        nonisolated(unsafe) var during = 0
        nonisolated(unsafe) var workDuring = work
        nonisolated(unsafe) var statesDuring: [(id: UInt64, model: Model)] = []
        _ = try engine.compact(changingKey: nil) { _, _ in
            guard during < 20 else { return }
            for _ in 0..<5 {
                try? workDuring.commit(engine)
                Self.note(engine, workDuring.model, in: &statesDuring)
                during += 1
            }
        }
        #expect(during > 0)
        states += statesDuring
        #expect(engine.lastTransactionId == states.last!.id)
        #expect(try engine.oldestReadableCommit()?.transactionId == states.first!.id)
        for state in states {
            #expect(try Self.model(at: state.id, engine) == state.model, "commit \(state.id)")
        }
    }

    @Test("under steady updates the automatic policy compacts now and then, and the window stays readable")
    func automaticCompactionKeepsTheWindow() throws {
        let dir = TestDirectory("past-window-automatic")
        defer { dir.remove() }
        var options = Self.options(.commits(50))
        options.nodeSize = 4096
        options.automaticCompaction = StorageOptions.AutomaticCompaction(garbageShare: 0.5, minimumFileSize: 1 << 20, atOpen: false)
        let engine = try StorageEngine(directory: dir.path, options: options)
        defer { engine.close() }
        var random = SplitMix64(seed: SplitMix64.testSeed())
        var model = Model()
        var states: [(id: UInt64, model: Model)] = []
        var largest: UInt64 = 0
        for n in 0..<400 {
            try engine.write { txn in
                let tree = try txn.tree("t")!
                for _ in 0..<(n == 0 ? 2_000 : 20) {
                    let key = bigEndianKey(random.next() % 2_000)
                    let value = [UInt8](repeating: UInt8(truncatingIfNeeded: random.next()), count: 1_000)
                    try txn.put(tree, key: key, value: value)
                    model.trees["t", default: [:]][key] = value
                }
            }
            states.append((engine.lastTransactionId, model))
            engine.compactionQueue.sync {}  // waits for a compaction the commit scheduled
            largest = max(largest, engine.fileSize)
        }
        let compactions = engine.compactions.load(ordering: .relaxed)
        // Each compaction drops the commits that left the window; with the window counted as kept,
        // the policy does not compact again at once (a compaction per commit would be 400).
        #expect(compactions >= 2 && compactions <= 40, "\(compactions) compactions")
        #expect(try engine.oldestReadableCommit()!.transactionId <= states[states.count - 50].id)
        for state in states.suffix(50) { #expect(try Self.model(at: state.id, engine) == state.model, "commit \(state.id)") }
        print("automatic compaction with a window of 50 commits: \(compactions) compactions in 400 commits, largest file \(largest >> 10) KiB, now \(engine.fileSize >> 10) KiB")
    }

    @Test("the window by time starts at the commit the store was at when it opens")
    func theWindowByTime() throws {
        let dir = TestDirectory("past-window-time")
        defer { dir.remove() }
        var work = Workload(random: SplitMix64(seed: 9))
        let engine = try StorageEngine(directory: dir.path, options: Self.options(.duration(.seconds(10))))
        defer { engine.close() }
        for _ in 0..<5 { try work.commit(engine) }
        var commits: [(id: UInt64, ms: UInt64)] = []
        try engine.walkCommits(back: try engine.beginRead().snapshot) { _, _, commit in
            commits.insert((commit.txnId, commit.timeMs), at: 0)
            return true
        }
        let newest = try engine.beginRead().snapshot
        // Ten seconds after the third commit: the window opens at it.
        let start = try engine.windowStart(of: newest, keeping: .duration(.seconds(10)), nowMs: commits[2].ms + 10_000)
        #expect(start?.snapshot.txnId == commits.filter { $0.ms <= commits[2].ms }.last!.id)
        // Seven seconds after the last commit, a window of ten reaches before the first (the five
        // commits take far less than three seconds): the file's oldest.
        #expect(try engine.windowStart(of: newest, keeping: .duration(.seconds(10)), nowMs: commits[4].ms + 7_000)?.snapshot.txnId == commits[0].id)
        // Before any commit is old enough: the file's oldest; long after: the newest alone.
        #expect(try engine.windowStart(of: newest, keeping: .duration(.seconds(10)), nowMs: commits[0].ms)?.snapshot.txnId == commits[0].id)
        #expect(try engine.windowStart(of: newest, keeping: .duration(.seconds(10)), nowMs: commits[4].ms + 60_000)?.snapshot.txnId == commits[4].id)
        #expect(try engine.windowStart(of: newest, keeping: .commits(2))?.snapshot.txnId == commits[3].id)
        // A span longer than the clock's range keeps every commit.
        #expect(try engine.windowStart(of: newest, keeping: .duration(.seconds(Int64.max)))?.snapshot.txnId == commits[0].id)
        #expect(throws: StorageError.self) {
            var options = Self.options(.commits(0))
            options.readOnly = false
            _ = try StorageEngine(directory: dir.path + "-bad", options: options)
        }
    }

    @Test("the difference of two commits' trees is the model's", arguments: [3, 4, SplitMix64.testSeed()] as [UInt64])
    func theDifferenceIsTheModels(seed: UInt64) throws {
        let dir = TestDirectory("tree-diff")
        defer { dir.remove() }
        var work = Workload(random: SplitMix64(seed: seed))
        let engine = try StorageEngine(directory: dir.path, options: Self.options(nil))
        defer { engine.close() }
        var states: [(id: UInt64, model: Model)] = []
        for _ in 0..<40 {
            try work.commit(engine)
            Self.note(engine, work.model, in: &states)
        }
        for _ in 0..<30 {
            let a = states[work.roll(states.count)], b = states[work.roll(states.count)]
            let older = try engine.beginRead(asOf: .transaction(a.id)), newer = try engine.beginRead(asOf: .transaction(b.id))
            for name in ["t0", "t1", "t2"] {
                var expected: [[UInt8]: [UInt8]?] = [:]
                let before = a.model.trees[name] ?? [:], after = b.model.trees[name] ?? [:]
                for (key, value) in after where before[key] != value { expected[key] = .some(value) }
                for key in before.keys where after[key] == nil { expected[key] = .some(nil) }
                var found: [[UInt8]: [UInt8]?] = [:]
                var lastKey: [UInt8]?
                try newer.forEachDifference(in: name, since: older) { key, value in
                    if let lastKey { #expect(lastKey.lexicographicallyPrecedes(Array(key)), "in key order") }
                    lastKey = Array(key)
                    found[Array(key)] = .some(value.map(Array.init))
                }
                let wrong = Set(found.keys).union(expected.keys).filter { found[$0] != expected[$0] }.count
                #expect(wrong == 0, "\(wrong) keys of \(expected.count) differ, tree \(name) from \(a.id) to \(b.id), seed \(seed)")
            }
        }
    }
}
