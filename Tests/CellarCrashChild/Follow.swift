import CellarStorage
import CellarTestSupport
import Dispatch
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `publish` mode: random commits (a compaction now and then), each announced in `published`
/// (id and digest of the content it will leave) before it is made; a compaction is announced
/// before (the id it starts from) and after (its id, which may be higher, with the same content).
func publishingWriter(_ directory: String, published: String, seed: UInt64) throws {
    var options = StorageOptions(durability: .none, initialMapSize: 1 << 20, nodeSize: 512, superblockInterval: 16)
    options.automaticCompaction = nil
    let engine = try StorageEngine(directory: directory, options: options)
    let fd = open(published, O_WRONLY | O_APPEND | O_CREAT, 0o644)
    guard fd >= 0 else { throw StorageError.io(operation: "open", errno: errno, path: published) }
    var rng = SplitMix64(seed: seed ^ UInt64(getpid()))
    var model = try engine.read { try Model(reading: $0) }
    var commits = 0
    while true {
        var operations: [Operation] = []
        for _ in 0..<(1 + Int(rng.next() % 8)) {
            let tree = "t\(rng.next() % 3)"
            let key = bigEndianKey(rng.next() % 64)
            if rng.next() % 4 == 0 {
                operations.append(.delete(tree: tree, key: key))
            } else {
                let size = rng.next() % 8 == 0 ? 5_000 : Int(rng.next() % 200)
                operations.append(.put(tree: tree, key: key, value: (0..<size).map { _ in UInt8(truncatingIfNeeded: rng.next()) }))
            }
        }
        var next = model
        next.apply(operations)
        // Deletes of keys that are not there change nothing, and make no commit.
        if next == model { continue }
        let id = engine.lastTransactionId + 1
        PublishedStates.announce(id: id, digest: next.digest, to: fd)
        try engine.write { txn in try apply(operations, to: txn) }
        model = next
        guard engine.lastTransactionId == id else {
            print("error: committed as \(engine.lastTransactionId), announced as \(id)")
            fflush(stdout)
            exit(1)
        }
        commits += 1
        print("ack \(commits)")
        if rng.next() % 50 == 0 {
            print("compacting")
            fflush(stdout)
            PublishedStates.announce(id: id, digest: 0, compaction: true, to: fd)
            try engine.compact()
            // Same content, maybe a higher id.
            PublishedStates.announce(id: engine.lastTransactionId, digest: model.digest, to: fd)
            print("compacted")
        }
        fflush(stdout)
        usleep(UInt32(rng.next() % 1_000))
    }
}

/// The `verify` mode: for `milliseconds`, read transaction after read transaction on a read-only
/// engine, each snapshot checked against the announced states and ids never going back. Prints
/// `checked N distinct D` every 20 checks and at the end; `bad ...` on a failure (and exits 1).
func verifyingReader(_ directory: String, published: String, milliseconds: Int) throws {
    let engine = try StorageEngine(directory: directory, options: StorageOptions(readOnly: true, initialMapSize: 1 << 20))
    var states = PublishedStates(path: published)
    let until = DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds) * 1_000_000
    var last: UInt64 = 0, checked = 0, distinct = 0
    while DispatchTime.now().uptimeNanoseconds < until {
        let txn = try engine.beginRead()
        let id = txn.transactionId
        let digest = try Model(reading: txn).digest
        guard id >= last else {
            print("bad: id \(id) after \(last)")
            fflush(stdout)
            exit(1)
        }
        guard states.contains(id: id, digest: digest) else {
            print("bad: id \(id) digest \(digest) was never announced (announced for it: \(states.states[id] ?? []))")
            fflush(stdout)
            exit(1)
        }
        if id != last { distinct += 1 }
        last = id
        checked += 1
        if checked % 20 == 0 {
            print("checked \(checked) distinct \(distinct) compactions \(engine.followedCompactions)")
            fflush(stdout)
        }
    }
    print("checked \(checked) distinct \(distinct) compactions \(engine.followedCompactions)")
    fflush(stdout)
    engine.close()
}

/// The `read-cost` mode (a measurement, not a test): in `directory` (a new store), the time of a
/// read transaction's start on the writing engine and on a read-only engine of the same store,
/// when nothing changed and after each commit of the writer (the read-only engine then walks the
/// new frame). Build it in release to mean anything.
func measureReadCost(_ directory: String) throws {
    var options = StorageOptions(durability: .none)
    options.automaticCompaction = nil
    let writer = try StorageEngine(directory: directory, options: options)
    for k in 0..<1_000 {
        try writer.write { try $0.put($0.tree("t")!, key: bigEndianKey(UInt64(k)), value: [UInt8](repeating: 1, count: 100)) }
    }
    let reader = try StorageEngine(directory: directory, options: StorageOptions(readOnly: true))
    func nanoseconds(_ count: Int, _ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<count { try body() }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / Double(count)
    }
    for run in 0..<3 {
        let writing = try nanoseconds(200_000) { _ = try writer.beginRead() }
        let unchanged = try nanoseconds(200_000) { _ = try reader.beginRead() }
        var commitAndWriterRead = 0.0, commitAndReaderRead = 0.0
        for k in 0..<2_000 {
            let key = bigEndianKey(UInt64(k % 1_000))
            commitAndWriterRead += try nanoseconds(1) {
                try writer.write { try $0.put($0.tree("t")!, key: key, value: [UInt8](repeating: 2, count: 100)) }
                _ = try writer.beginRead()
            }
            commitAndReaderRead += try nanoseconds(1) {
                try writer.write { try $0.put($0.tree("t")!, key: key, value: [UInt8](repeating: 3, count: 100)) }
                _ = try reader.beginRead()
            }
        }
        guard reader.lastTransactionId == writer.lastTransactionId else { throw StorageError.closed }
        print("run \(run): beginRead, nothing changed: writer \(Int(writing)) ns, read-only \(Int(unchanged)) ns; "
              + "after a one-put commit: read-only's first beginRead costs \(Int((commitAndReaderRead - commitAndWriterRead) / 2_000)) ns more than the writer's")
    }
}
