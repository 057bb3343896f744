// The child of the kill -9 test: commits a deterministic sequence of transactions into a store and
// reports each acknowledged commit on standard output, until it is killed.
//
//   CellarCrashChild <directory> <seed> <full|none|compact|spill> [max-commits]
//   CellarCrashChild <directory> <seed> compact-large <plain|dictionary> [encrypted] [spill]
//   CellarCrashChild <directory> 0 read-loop <stop-file>
//   CellarCrashChild <directory> <run> threads <thread-count>
//
// Each mode first prints `opening`, before it opens the store.
//
// Transaction k (1-based) is `CrashWorkload.transaction(k, seed)`; the parent replays the same
// sequence in memory to know what the store must hold after any number of commits.
//
// `compact`: each transaction also writes k into the tree `~progress` (compaction changes
// transaction ids, so the store says how far the workload got), while another thread compacts
// the open store over and over (`StorageEngine.compact()`), announcing each compaction with a
// `compacting` line and its end with `compacted`, followed by `dictionaries` when the store then
// has trained dictionaries.
//
// `compact-large <plain|dictionary> [encrypted] [spill]`: the same with
// `CrashWorkload.largeTransaction` (keys up to 40 KiB) in 4 KiB nodes, values stored plain or
// compressed with trained dictionaries; in a store encrypted with `TestKeys.encryption`, and with
// a 64 KiB transaction memory budget (the large transactions spill), when asked.
//
// `spill`: transaction k is `SpillWorkload.transaction(k, seed)` with `SpillWorkload.options()`:
// each one writes its changes into the log ahead of its commit several times.
// `encrypted-spill`: the same in a store encrypted with `TestKeys.encryption`.
//
// `copy <target> <kill-at>`: copies the store (`StorageEngine.writeCopy`) into <target> and kills
// itself with SIGKILL once the copy's progress reports <kill-at> entries copied or more (a counted
// point, not a time); prints `copied` if the copy ends first.
//
//   CellarCrashChild <directory> 0 copy <target> <kill-at>
//
// `shared-writer` (SharedWriter.swift): one of several writing processes.
//
//   CellarCrashChild <directory> <seed> shared-writer <writer> [encrypted]
//
// `publish` and `verify` (Follow.swift): the writer and the readers of the multi-process test.
//
//   CellarCrashChild <directory> <seed> publish <published-file>
//   CellarCrashChild <directory> 0 verify <published-file> <milliseconds>
//   CellarCrashChild <directory> 0 read-cost        (a measurement: build in release)
//
// `read-loop`: until the stop file exists, opens the store read-only, reads every value of every
// tree and closes it, over and over, while the parent opens it for writing; prints `cycle N` after
// each and `cycles N errors M` at the end (an open that throws is an error; a crash, SIGBUS above
// all, is what the parent looks for).
//
// `threads`: that many threads commit at once in `.full` durability (group commit), thread t its
// transactions 1, 2, … of `GroupCommitWorkload` for run `run`, each acknowledged with a line
// `gack <t> <i>` once its `commit` returned.
import CellarStorage
import Dispatch
import CellarTestSupport
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let arguments = CommandLine.arguments
guard arguments.count >= 4, let seed = UInt64(arguments[2]) else {
    fputs("usage: CellarCrashChild <directory> <seed> <full|none> [max-commits]\n", stderr)
    exit(2)
}
let durability: StorageOptions.Durability = arguments[3] == "none" ? .none : .full
let maxCommits = arguments.count > 4 ? Int(arguments[4]) ?? Int.max : Int.max

/// The `compact` and `compact-large` modes: commits on this thread, compactions of the same open
/// store on another.
func commitAndCompact(_ directory: String, large: Bool, compression: Compression, variants: [String] = []) throws {
    // Compressed, with dictionaries trained by each compaction (small trees: a low sample floor),
    // so that kills also land while the copy trains and installs them.
    var options = StorageOptions(initialMapSize: 1 << 20, nodeSize: large ? 4096 : 512, superblockInterval: 7, compression: compression)
    options.automaticCompaction = nil
    if variants.contains("encrypted") { options.encryptionKey = TestKeys.encryption }
    if variants.contains("spill") { options.transactionMemoryBudget = 64 << 10 }
    if variants.contains("window") { options.pastRetention = .commits(20) }
    options.dictionaryMinimumSamples = 16
    var progressOptions = StorageOptions(initialMapSize: 1 << 20)
    progressOptions.encryptionKey = options.encryptionKey
    var k = try CrashWorkload.progress(in: directory, options: progressOptions)
    let engine = try StorageEngine(directory: directory, options: options)
    // At the writer's priority: on Linux a utility queue's threads run at nice 2. On a busy
    // machine, compacting there with a window (which replays each of the writer's commits), the
    // child once finished no compaction in five minutes while its writer committed 14,000
    // transactions, and the round waiting for a compaction gave up.
    DispatchQueue.global(qos: .default).async {
        while true {
            print("compacting")
            fflush(stdout)
            do {
                try engine.compact()
            } catch {
                // On standard output too: the parent reads it and fails the test.
                print("compaction error: \(error)")
                fflush(stdout)
                exit(1)
            }
            print("compacted")
            if let ids = try? engine.read({ try $0.dictionaryIds() }), !ids.isEmpty { print("dictionaries") }
            fflush(stdout)
        }
    }
    while k < maxCommits {
        k += 1
        try engine.write { txn in
            try CrashWorkload.apply(large ? CrashWorkload.largeTransaction(k, seed: seed) : CrashWorkload.transaction(k, seed: seed), to: txn)
            try txn.put(txn.tree(CrashWorkload.progressTree)!, key: [0], value: bigEndianKey(UInt64(k)))
        }
        print("ack \(k)")
        fflush(stdout)
    }
}

/// The `threads` mode.
func commitOnThreads(_ directory: String, run: UInt64, threads: Int) throws {
    let engine = try StorageEngine(directory: directory,
                                   options: StorageOptions(initialMapSize: 1 << 20, nodeSize: 512, superblockInterval: 7))
    // Not a `Locked<Void>`: ThreadSanitizer reports the accesses to its zero-sized value as races.
    let output = Locked<Int>(0)
    for thread in 0..<threads {
        Threads.start {
            var index = 0
            while true {
                index += 1
                do {
                    try GroupCommitWorkload.commit(engine, run: run, thread: thread, index: index)
                } catch {
                    output.withLock { _ in print("child error: \(error)"); fflush(stdout) }
                    exit(1)
                }
                output.withLock { _ in print("gack \(thread) \(index)"); fflush(stdout) }
            }
        }
    }
    while true { sleep(1) }
}

/// The `read-loop` mode.
func readLoop(_ directory: String, stopFile: String) {
    var cycles = 0, errors = 0
    while access(stopFile, F_OK) != 0 {
        cycles += 1
        do {
            let engine = try StorageEngine(directory: directory, options: StorageOptions(readOnly: true))
            defer { engine.close() }
            try engine.read { txn in
                for name in try txn.treeNames() {
                    try txn.cursor(txn.tree(name)!).scan { _, value in value.count >= 0 }
                }
            }
        } catch {
            errors += 1
        }
        print("cycle \(cycles)")
        fflush(stdout)
    }
    print("cycles \(cycles) errors \(errors)")
    fflush(stdout)
}

// Before the store's open: a parent that kills at once waits for this line, so that the kill lands
// in the open and its recovery (or the first commit), not before the program started.
print("opening")
fflush(stdout)
do {
    if arguments[3] == "publish", arguments.count > 4 {
        try publishingWriter(arguments[1], published: arguments[4], seed: seed)
        exit(0)
    }
    if arguments[3] == "verify", arguments.count > 5 {
        try verifyingReader(arguments[1], published: arguments[4], milliseconds: Int(arguments[5]) ?? 1_000)
        exit(0)
    }
    if arguments[3] == "shared-writer", arguments.count > 4, let writer = UInt8(arguments[4]) {
        try sharedWriter(arguments[1], writer: writer, seed: seed, encrypted: arguments.count > 5 && arguments[5] == "encrypted")
        exit(0)
    }
    if arguments[3] == "read-cost" {
        try measureReadCost(arguments[1])
        exit(0)
    }
    if arguments[3] == "copy", arguments.count == 6, let killAt = Int(arguments[5]) {
        let engine = try StorageEngine(directory: arguments[1], options: StorageOptions(durability: .full))
        try engine.writeCopy(to: arguments[4]) { copied, _ in
            if copied >= killAt { kill(getpid(), SIGKILL) }
        }
        print("copied")
        exit(0)
    }
    if arguments[3] == "read-loop" {
        readLoop(arguments[1], stopFile: arguments[4])
        exit(0)
    }
    if arguments[3] == "threads" {
        try commitOnThreads(arguments[1], run: seed, threads: Int(arguments[4]) ?? 8)
    }
    if arguments[3] == "compact" {
        try commitAndCompact(arguments[1], large: false, compression: Compression.zstdDictionary().isAvailable ? .zstdDictionary() : .none)
        exit(0)
    }
    if arguments[3] == "compact-large" {
        let dictionaries = arguments.count > 4 && arguments[4] == "dictionary"
        try commitAndCompact(arguments[1], large: true, compression: dictionaries ? .zstdDictionary() : .none,
                             variants: Array(arguments.dropFirst(5)))
        exit(0)
    }
    // `spill`: the transactions of `SpillWorkload`, each several times its memory budget, so that
    // kills land while a transaction writes its changes ahead of its commit.
    let encrypted = arguments[3] == "encrypted-spill"
    let spills = arguments[3] == "spill" || encrypted
    var options = spills ? SpillWorkload.options()
        : StorageOptions(durability: durability, initialMapSize: 1 << 20, nodeSize: 512, superblockInterval: 7)
    if encrypted { options.encryptionKey = TestKeys.encryption }
    let engine = try StorageEngine(directory: arguments[1], options: options)
    var k = Int(engine.lastTransactionId)
    while k < maxCommits {
        k += 1
        try engine.write { txn in
            try apply(spills ? SpillWorkload.transaction(k, seed: seed) : CrashWorkload.transaction(k, seed: seed), to: txn)
        }
        // Acknowledged: the commit returned.
        print("ack \(k)")
        fflush(stdout)
    }
    engine.close()
} catch {
    fputs("child error: \(error)\n", stderr)
    exit(1)
}
