import CellarStorage
import CellarTestSupport
import Testing

/// Truncation and bit flips across the whole file: the store opens at an earlier commit with
/// exactly that commit's content, or throws a `StorageError`. Never a crash, never wrong data.
@Suite("Corruption sweeps")
struct CorruptionSweepTests {
    static let seed: UInt64 = 23
    static let commits = 40

    /// A store of `commits` commits of the crash workload (small nodes: many records), its bytes,
    /// and the model after each commit.
    /// The key of the encrypted variants of the sweeps.
    static let key = try! EncryptionKey(bytes: (0..<32).map { UInt8($0 * 7 + 1) })

    static func makeStore(key: EncryptionKey? = nil) throws -> (bytes: [UInt8], models: [Model]) {
        let directory = TestDirectory("sweep-source")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path, options: StorageOptions(initialMapSize: 1 << 20, nodeSize: 512, superblockInterval: 8,
                                                                                          encryptionKey: key))
        var models = [Model()]
        for k in 1...commits {
            let operations = CrashWorkload.transaction(k, seed: seed)
            try engine.write { txn in try CrashWorkload.apply(operations, to: txn) }
            var next = models[k - 1]
            next.apply(operations)
            models.append(next)
        }
        // The file goes on past the log with zeros written ahead; the sweeps work on the log.
        let logEnd = Int(engine.fileSize)
        engine.close()
        let bytes = TestDirectory.read(directory.sub(StorageEngine.dataFileName))
        #expect(bytes.count >= logEnd && bytes[logEnd...].allSatisfy { $0 == 0 }, "past the log there are only zeros")
        return (Array(bytes[..<logEnd]), models)
    }

    enum Outcome { case opened(commit: Int), refused }

    /// Opens `bytes` as a store and reads everything; checks the content against the model of the
    /// commit it opened at.
    static func open(_ bytes: [UInt8], in directory: TestDirectory, models: [Model], readOnly: Bool, key: EncryptionKey? = nil,
                     context: String) -> Outcome {
        // A new file each time: ext4 flushes a file truncated and written again when it is closed
        // (auto_da_alloc), which made the sweeps wait on the disk thousands of times.
        TestDirectory.replace(directory.sub(StorageEngine.dataFileName), with: bytes)
        do {
            let engine = try StorageEngine(directory: directory.path, options: StorageOptions(readOnly: readOnly, initialMapSize: 1 << 20, encryptionKey: key))
            defer { engine.close() }
            let t = Int(engine.lastTransactionId)
            guard t <= commits else {
                Issue.record("\(context): opened at commit \(t), past the last one")
                return .refused
            }
            let content = try engine.read { try Model(reading: $0) }
            #expect(content == models[t], "\(context): content at commit \(t) is wrong: \(content.difference(from: models[t]) ?? "")")
            if !readOnly {
                // A writable open cut the torn tail; the store takes a new commit and keeps it.
                try engine.write { txn in try txn.put(txn.tree("after")!, key: [1], value: [2]) }
                #expect(engine.lastTransactionId == UInt64(t + 1), "\(context): commit after recovery")
            }
            return .opened(commit: t)
        } catch is StorageError {
            return .refused
        } catch {
            Issue.record("\(context): unexpected error \(error)")
            return .refused
        }
    }

    @Test("truncating the file at every offset of its last 8 KiB gives an earlier commit, whole", arguments: [false, true])
    func truncateEveryOffset(encrypted: Bool) throws {
        let key = encrypted ? Self.key : nil
        let (bytes, models) = try Self.makeStore(key: key)
        let directory = TestDirectory("sweep-truncate")
        defer { directory.remove() }
        var opened = 0, refused = 0, earliest = Self.commits
        for cut in max(4096, bytes.count - 8192)...bytes.count {
            // Every 64th cut opens writable: recovery cuts the tail and the store goes on.
            let outcome = Self.open(Array(bytes[0..<cut]), in: directory, models: models, readOnly: cut % 64 != 0, key: key,
                                     context: "cut at \(cut)")
            switch outcome {
            case .opened(let t):
                opened += 1
                earliest = min(earliest, t)
                if cut == bytes.count { #expect(t == Self.commits) }
            case .refused:
                refused += 1
            }
        }
        // A cut never makes the store unreadable: the commits before it are intact.
        #expect(refused == 0, "\(refused) truncations made the store unopenable")
        #expect(earliest < Self.commits)
        print("truncation sweep: \(opened) opened, \(refused) refused, earliest commit \(earliest), file \(bytes.count) bytes")
    }

    @Test("flipping single bits across the header, superblocks, nodes, values and commit records", arguments: [false, true])
    func flipBits(encrypted: Bool) throws {
        let key = encrypted ? Self.key : nil
        let (bytes, models) = try Self.makeStore(key: key)
        let directory = TestDirectory("sweep-flip")
        defer { directory.remove() }
        // Every byte of the header and both superblock slots (and of an encrypted file's key
        // block and epoch slots); every 5th byte of the log.
        var positions = Array(0..<64) + Array(512..<576) + Array(1024..<1088)
        if encrypted { positions += Array(128..<240) + Array(1536..<1600) + Array(2048..<2112) }
        positions += stride(from: 4096, to: bytes.count, by: 5)
        var opened = 0, refused = 0, openedEarlier = 0
        for (i, position) in positions.enumerated() {
            var flipped = bytes
            flipped[position] ^= UInt8(1 << (i % 8))
            switch Self.open(flipped, in: directory, models: models, readOnly: true, key: key,
                                 context: "bit \(i % 8) of byte \(position)") {
            case .opened(let t):
                opened += 1
                if t < Self.commits { openedEarlier += 1 }
            case .refused:
                refused += 1
            }
        }
        #expect(refused > 0, "no flip was ever detected: the sweep is not reaching the data")
        print("bit-flip sweep: \(positions.count) flips, \(opened) opened (\(openedEarlier) at an earlier commit), \(refused) refused with an error")
    }
}
