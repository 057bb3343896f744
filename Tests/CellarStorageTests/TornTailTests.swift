import CellarStorage
import CellarTestSupport
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// A torn tail (the part of a frame a crash left without its commit record) is overwritten with
/// zeros by a writable open, never cut off: the data file never shrinks, so a process that has it
/// mapped (a read-only open of the same store) never reads past its end, which is SIGBUS.
@Suite("torn tails")
struct TornTailTests {
    /// A store of 20 small commits, then one commit of `values` values of 64 KiB, cut in the
    /// middle of that last frame, as `kill -9` during its write leaves it. Returns what is left of
    /// that frame (its first half, the torn tail) and the offset it starts at, and the content of
    /// the last whole commit.
    static func storeWithTornTail(_ path: String, values: Int) throws -> (torn: [UInt8], at: Int, content: Model) {
        let content: Model
        let frameStart: Int
        do {
            var options = StorageOptions(durability: .none)
            options.automaticCompaction = nil
            let engine = try StorageEngine(directory: path, options: options)
            defer { engine.close() }
            for k in 0..<20 {
                try engine.write { txn in
                    try txn.put(txn.tree("small")!, key: bigEndianKey(UInt64(k)), value: [UInt8](repeating: UInt8(k), count: 100))
                }
            }
            content = try engine.read { try Model(reading: $0) }
            frameStart = Int(engine.fileSize)
            try engine.write { txn in
                let tree = try txn.tree("large")!
                for k in 0..<values {
                    try txn.put(tree, key: bigEndianKey(UInt64(k)), value: [UInt8](repeating: UInt8(truncatingIfNeeded: k), count: 64 << 10))
                }
            }
        }
        let file = path + "/" + StorageEngine.dataFileName
        let bytes = TestDirectory.read(file)
        // The last frame is the large one: everything past the middle of its values.
        let cutAt = bytes.count - values * (64 << 10) / 2
        #expect(truncate(file, off_t(cutAt)) == 0)
        return (Array(bytes[frameStart..<cutAt]), frameStart, content)
    }

    /// Writes `bytes` at `offset` of `file` (no truncation).
    static func writeBack(_ bytes: [UInt8], at offset: Int, to file: String) {
        let fd = open(file, O_WRONLY)
        precondition(fd >= 0, "open \(file) failed")
        defer { close(fd) }
        bytes.withUnsafeBytes { b in
            var done = 0
            while done < b.count {
                let n = pwrite(fd, b.baseAddress! + done, b.count - done, off_t(offset + done))
                precondition(n > 0, "pwrite failed")
                done += n
            }
        }
    }

    @Test("a writable open zeros a torn tail in place: the file keeps its size, the store its last commit")
    func aTornTailIsZeroedNotCut() throws {
        let dir = TestDirectory("torn-tail")
        defer { dir.remove() }
        let (torn, frameStart, content) = try Self.storeWithTornTail(dir.path, values: 16)
        let file = dir.sub(StorageEngine.dataFileName)
        let sizeBefore = TestDirectory.read(file).count
        #expect(sizeBefore == frameStart + torn.count)
        for _ in 0..<2 {
            let engine = try StorageEngine(directory: dir.path)
            #expect(try engine.read { try Model(reading: $0) } == content)
            engine.close()
            let bytes = TestDirectory.read(file)
            #expect(bytes.count >= sizeBefore, "the data file shrank from \(sizeBefore) to \(bytes.count) bytes")
            let end = Int(try StorageEngine(directory: dir.path, options: StorageOptions(readOnly: true)).fileSize)
            #expect(bytes[end...].allSatisfy { $0 == 0 }, "the tail past the last commit is zeros")
        }
        // The zeros are the space ahead of the log: the next commits go there, and stay.
        let engine = try StorageEngine(directory: dir.path)
        try engine.write { txn in try txn.put(txn.tree("small")!, key: [1], value: [2]) }
        engine.close()
        let reopened = try StorageEngine(directory: dir.path, options: StorageOptions(readOnly: true))
        defer { reopened.close() }
        var expected = content
        expected.trees["small", default: [:]][[1]] = [2]
        #expect(try reopened.read { try Model(reading: $0) } == expected)
    }

    @Test("read-only opens in another process while this one reopens a store with a torn tail over and over: no crash")
    func readOnlyOpensSurviveTailRecovery() throws {
        let dir = TestDirectory("torn-tail-race")
        defer { dir.remove() }
        let (torn, frameStart, content) = try Self.storeWithTornTail(dir.path, values: 96)
        let file = dir.sub(StorageEngine.dataFileName)
        // Counted, not timed: at least 40 writable opens here and 40 read cycles there, on until
        // both, or until the reader died.
        let stopFile = dir.sub("stop-reading")
        let reader = try KillTests.spawn([dir.path, "0", "read-loop", stopFile])
        var writes = 0
        var output: [UInt8] = []
        var status: Int32 = 0
        var exited = false
        func cycles() -> Int { String(decoding: output, as: UTF8.self).split(separator: "\n").count { $0.hasPrefix("cycle ") } }
        while writes < 40 || cycles() < 40 {
            // What a crash during the large commit leaves, then the recovery of a writable open.
            Self.writeBack(torn, at: frameStart, to: file)
            let engine = try StorageEngine(directory: dir.path)
            engine.close()
            writes += 1
            ChildProcess.drain(reader.output, into: &output)
            if waitpid(reader.pid, &status, WNOHANG) == reader.pid { exited = true; break }
        }
        TestDirectory.write([], to: stopFile)
        if !exited { waitpid(reader.pid, &status, 0) }
        ChildProcess.drain(reader.output, into: &output)
        close(reader.output)
        let report = String(decoding: output, as: UTF8.self)
        let signal = status & 0x7f
        #expect(signal == 0, "the read-only process died of signal \(signal) (\(report)) after \(writes) writable opens")
        #expect(signal != 0 || (status >> 8) & 0xff == 0, "the read-only process failed: \(report)")
        let summary = report.split(separator: "\n").last { $0.hasPrefix("cycles ") }
        #expect(summary != nil, "the read-only process reported nothing")
        print("torn tail race: \(writes) writable opens beside \(summary ?? "")")
        let engine = try StorageEngine(directory: dir.path, options: StorageOptions(readOnly: true))
        defer { engine.close() }
        let model = try engine.read { try Model(reading: $0) }
        #expect(model == content, "trees \(model.trees.mapValues(\.count)), expected \(content.trees.mapValues(\.count))")
    }
}
