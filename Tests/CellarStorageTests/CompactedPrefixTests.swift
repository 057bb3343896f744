import CellarStorage
import CellarTestSupport
import Testing

/// Every prefix of a data file opens at a state some commit had, whole, or is refused: also a
/// prefix that ends inside the copy a compaction wrote (its commits add one tree after another,
/// states the store never had), as a failing disk, an interrupted file copy or a partial restore
/// of a backup can leave it.
@Suite("prefixes of a compacted file")
struct CompactedPrefixTests {
    @Test("a compacted file cut at any offset opens at a committed state or throws fileCorrupt, read-only and writable",
          arguments: [nil, .commits(5)] as [StorageOptions.PastRetention?])
    func everyPrefixOpensWholeOrNotAtAll(window: StorageOptions.PastRetention?) throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let dir = TestDirectory("compacted-prefix")
        defer { dir.remove() }
        var states: [Model] = []
        do {
            var options = StorageOptions(durability: .none)
            options.automaticCompaction = nil
            // With a window, the copy's partial commits and their seal carry one id, and the
            // commits kept after the seal are states too.
            options.pastRetention = window
            let engine = try StorageEngine(directory: dir.path, options: options)
            defer { engine.close() }
            for k in 0..<12 {
                try engine.write { txn in
                    let tree = try txn.tree("t\(k % 3)")!
                    for i in 0..<8 {
                        try txn.put(tree, key: bigEndianKey(UInt64(k * 8 + i)),
                                    value: [UInt8](repeating: UInt8(truncatingIfNeeded: k), count: 16 << 10))
                    }
                }
                if window != nil { states.append(try engine.read { try Model(reading: $0) }) }
            }
            try engine.compact()
            states.append(try engine.read { try Model(reading: $0) })
            for k in 0..<10 {
                try engine.write { txn in try txn.put(txn.tree("t\(k % 3)")!, key: [0xFF, UInt8(k)], value: [UInt8(k)]) }
                states.append(try engine.read { try Model(reading: $0) })
            }
        }
        let bytes = TestDirectory.read(dir.sub(StorageEngine.dataFileName))
        var cuts = Array(stride(from: 4096, to: bytes.count, by: 4096))
        for _ in 0..<60 { cuts.append(4096 + Int(rng.next() % UInt64(bytes.count - 4096))) }
        cuts.append(bytes.count)

        let copy = TestDirectory("compacted-prefix-cut")
        defer { copy.remove() }
        let path = copy.sub(StorageEngine.dataFileName)
        var refused = 0, opened = 0
        for (n, cut) in cuts.enumerated() {
            let prefix = Array(bytes[0..<cut])
            for writable in n % 4 == 0 ? [false, true] : [false] {
                TestDirectory.replace(path, with: prefix)
                do {
                    let engine = try StorageEngine(directory: copy.path, options: StorageOptions(readOnly: !writable))
                    defer { engine.close() }
                    let model = try engine.read { try Model(reading: $0) }
                    #expect(states.contains(model),
                            "cut at \(cut) of \(bytes.count) (\(writable ? "writable" : "read-only")) opened at a state no commit had: trees \(model.trees.mapValues(\.count)) (seed \(seed))")
                    opened += 1
                } catch StorageError.fileCorrupt {
                    refused += 1
                    #expect(Bytes.equal(TestDirectory.read(path), prefix), "a refused open changed the file (cut at \(cut))")
                }
            }
        }
        // The copy's commits come first in the file: cuts inside them exist, and are refused.
        #expect(refused > 0 && opened > 0, "\(refused) refused, \(opened) opened (seed \(seed))")
        print("compacted prefixes: \(cuts.count) cuts of \(bytes.count) bytes, \(opened) opens at a committed state, \(refused) refused")
    }

    @Test("a compacted file's header says so; a file from before the header flags reads as not compacted")
    func headerFlagsRoundTripAndOldHeadersStillOpen() throws {
        let dir = TestDirectory("compacted-header")
        defer { dir.remove() }
        let engine = try StorageEngine(directory: dir.path)
        try engine.write { txn in try txn.put(txn.tree("t")!, key: [1], value: [1]) }
        engine.close()
        let path = dir.sub(StorageEngine.dataFileName)
        var bytes = TestDirectory.read(path)
        // A header as builds before the flags wrote it: zeros past the first checksum.
        for i in 56..<72 { bytes[i] = 0 }
        TestDirectory.replace(path, with: bytes)
        let old = try StorageEngine(directory: dir.path, options: StorageOptions(readOnly: true))
        #expect(old.lastTransactionId == 1)
        old.close()
        // A flipped flag bit fails the header's second checksum.
        _ = try StorageEngine.compact(directory: dir.path)
        let compacted = TestDirectory.read(path)
        #expect(compacted[56] & 1 == 1, "the compacted file's header carries the flag")
        var flipped = compacted
        flipped[56] ^= 1
        TestDirectory.replace(path, with: flipped)
        #expect(throws: StorageError.self) { try StorageEngine(directory: dir.path, options: StorageOptions(readOnly: true)) }
    }
}
