import Atomics
import CellarStorage
import CellarTestSupport
import Dispatch
import Testing

/// Readers see one commit, whole, whatever the writer does meanwhile.
@Suite("Snapshot isolation")
struct SnapshotIsolationTests {
    /// Transaction k writes value k under every one of `width` keys, so a reader that sees two
    /// different values in one snapshot has seen part of a transaction.
    static func writeGeneration(_ engine: StorageEngine, _ k: UInt64, width: Int) throws {
        try engine.write { txn throws in
            let tree = try txn.tree("t")!
            for i in 0..<width {
                // Some values out of line, so readers also follow value records.
                let filler = [UInt8](repeating: UInt8(truncatingIfNeeded: k), count: i % 10 == 0 ? 3000 : 50)
                try txn.put(tree, key: bigEndianKey(UInt64(i)), value: bigEndianKey(k) + filler)
            }
        }
    }

    @Test("a reader keeps its snapshot while the writer commits 300 times")
    func readerKeepsItsSnapshot() throws {
        let directory = TestDirectory("snapshot")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path, options: StorageOptions(durability: .none, initialMapSize: 1 << 20, nodeSize: 512))
        defer { engine.close() }
        try Self.writeGeneration(engine, 1, width: 200)
        let reader = try engine.beginRead()
        let tree = try reader.tree("t")!
        for k in 2...300 { try Self.writeGeneration(engine, UInt64(k), width: 200) }
        // The file grew far past the 1 MiB initial mapping while the reader held its view.
        #expect(engine.fileSize > 4 << 20)
        for i in 0..<200 {
            let value = try reader.get(tree, key: bigEndianKey(UInt64(i)))
            #expect(value.map { Array($0.prefix(8)) } == bigEndianKey(1))
        }
        #expect(try reader.count(tree) == 200)
        #expect(reader.transactionId == 1)
        let latest = try engine.beginRead()
        #expect(try latest.get(latest.tree("t")!, key: bigEndianKey(0)).map { Array($0.prefix(8)) } == bigEndianKey(300))
    }

    @Test("4 reader threads during 400 commits never see part of a transaction")
    func concurrentReaders() throws {
        let directory = TestDirectory("readers")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path, options: StorageOptions(durability: .none, initialMapSize: 1 << 20, nodeSize: 512))
        defer { engine.close() }
        let width = 120
        try Self.writeGeneration(engine, 1, width: width)
        let done = ManagedAtomic<Bool>(false)
        let failures = Locked<[String]>([])
        let snapshotsRead = ManagedAtomic<Int>(0)
        let group = DispatchGroup()
        for reader in 0..<4 {
            DispatchQueue.global().async(group: group) {
                var lastSeen: UInt64 = 0
                while !done.load(ordering: .acquiring) {
                    do {
                        try engine.read { txn throws in
                            let tree = try txn.tree("t")!
                            var generation: UInt64?
                            // Alternate between gets and a scan.
                            if reader % 2 == 0 {
                                for i in 0..<width {
                                    let value = try txn.get(tree, key: bigEndianKey(UInt64(i)))!
                                    let k = value.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                                    if generation == nil { generation = k }
                                    if generation != k { throw Failure("reader \(reader): key \(i) has generation \(k), key 0 had \(generation!)") }
                                }
                            } else {
                                var seen = 0
                                try txn.cursor(tree).scan { _, value in
                                    let k = value.loadUnaligned(as: UInt64.self).bigEndian
                                    if generation == nil { generation = k }
                                    seen += 1
                                    return generation == k
                                }
                                if seen != width { throw Failure("reader \(reader): scan saw a mixed snapshot after \(seen) entries") }
                            }
                            if generation! < lastSeen { throw Failure("reader \(reader): went back from \(lastSeen) to \(generation!)") }
                            lastSeen = generation!
                        }
                        snapshotsRead.wrappingIncrement(ordering: .relaxed)
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                        return
                    }
                }
            }
        }
        // Commit at least 400 times, and on until the readers have read 40 snapshots between them.
        var k: UInt64 = 2
        while k <= 400 || (snapshotsRead.load(ordering: .relaxed) < 40 && failures.withLock({ $0.isEmpty }) && k < 100_000) {
            try Self.writeGeneration(engine, k, width: width)
            k += 1
        }
        done.store(true, ordering: .releasing)
        group.wait()
        let problems = failures.withLock { $0 }
        #expect(problems.isEmpty, "\(problems.prefix(3))")
        #expect(snapshotsRead.load(ordering: .relaxed) >= 40)
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
