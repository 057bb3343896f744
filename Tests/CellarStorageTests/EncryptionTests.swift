@testable import CellarStorage
import CellarTestSupport
import Dispatch
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// Encryption at rest: what the file holds (no plaintext), which keys open it, that a changed or
/// moved record is refused, that compaction changes keys, and that no nonce is ever used twice.
@Suite("Encryption at rest")
struct EncryptionTests {
    static let key = try! EncryptionKey(bytes: (0..<32).map { UInt8($0) })
    static let otherKey = try! EncryptionKey(bytes: (0..<32).map { UInt8(255 - $0) })
    static let marker = Array("PLAINTEXT-MARKER-7f3a".utf8)

    static func options(_ key: EncryptionKey?, compression: Compression = .none) -> StorageOptions {
        var options = StorageOptions(initialMapSize: 1 << 20, nodeSize: 512, compression: compression, encryptionKey: key)
        options.automaticCompaction = nil
        return options
    }

    /// Keys and values holding the marker: in keys, in small values (inline in leaves), in large
    /// ones (value records), compressible ones (zstd frames when compression is on).
    static func fill(_ engine: StorageEngine, rounds: Int = 3) throws -> Model {
        var model = Model()
        for round in 0..<rounds {
            var operations: [Operation] = []
            for i in 0..<200 {
                let key = bigEndianKey(UInt64(round * 1000 + i)) + marker
                let value: [UInt8] = switch i % 3 {
                case 0: marker + [UInt8(i)]
                case 1: Array(repeating: marker, count: 300).flatMap { $0 } + [UInt8(i)]
                default: (0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) } + marker
                }
                operations.append(.put(tree: "notes", key: key, value: value))
            }
            try engine.write { txn in try apply(operations, to: txn) }
            model.apply(operations)
        }
        return model
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        let first = needle[0]
        var i = 0
        while i <= haystack.count - needle.count {
            if haystack[i] == first && Array(haystack[i..<(i + needle.count)]) == needle { return true }
            i += 1
        }
        return false
    }

    @Test("no plaintext in the file or in a compacted copy, and everything reads back", arguments: [Compression.none, .zstd()].filter(\.isAvailable))
    func noPlaintext(compression: Compression) throws {
        let directory = TestDirectory("enc-plaintext")
        defer { directory.remove() }
        var engine = try StorageEngine(directory: directory.path, options: Self.options(Self.key, compression: compression))
        let model = try Self.fill(engine)
        engine.close()
        let path = directory.sub(StorageEngine.dataFileName)
        #expect(!Self.contains(TestDirectory.read(path), Self.marker), "the marker is in the encrypted file")
        engine = try StorageEngine(directory: directory.path, options: Self.options(Self.key))
        #expect(try engine.read { try Model(reading: $0) } == model)
        try engine.compact()
        engine.close()
        #expect(!Self.contains(TestDirectory.read(path), Self.marker), "the marker is in the compacted file")
        engine = try StorageEngine(directory: directory.path, options: Self.options(Self.key))
        defer { engine.close() }
        #expect(try engine.read { try Model(reading: $0) } == model)

        // The same writes without a key: the scan finds the marker (it can fail).
        let plain = TestDirectory("enc-plaintext-control")
        defer { plain.remove() }
        let control = try StorageEngine(directory: plain.path, options: Self.options(nil, compression: compression))
        _ = try Self.fill(control)
        control.close()
        #expect(Self.contains(TestDirectory.read(plain.sub(StorageEngine.dataFileName)), Self.marker))
    }

    @Test("a wrong key, no key, a key for a plain store, passphrases: each its own error, the file untouched")
    func keysThatDoNotFit() throws {
        let directory = TestDirectory("enc-keys")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path, options: Self.options(Self.key))
        let model = try Self.fill(engine, rounds: 1)
        engine.close()
        let path = directory.sub(StorageEngine.dataFileName)
        let before = TestDirectory.read(path)
        #expect(throws: StorageError.wrongEncryptionKey) { try StorageEngine(directory: directory.path, options: Self.options(Self.otherKey)) }
        #expect(throws: StorageError.wrongEncryptionKey) {
            var options = Self.options(Self.otherKey)
            options.readOnly = true
            return try StorageEngine(directory: directory.path, options: options)
        }
        #expect(throws: StorageError.encryptionKeyRequired(path: path)) { try StorageEngine(directory: directory.path, options: Self.options(nil)) }
        #expect(throws: StorageError.wrongEncryptionKey) {
            try StorageEngine(directory: directory.path, options: Self.options(EncryptionKey(passphrase: "not the key")))
        }
        #expect(TestDirectory.read(path) == before, "a refused open changed the file")
        #expect(throws: StorageError.illegalArgument("an encryption key is 32 bytes (256 bits), not 16")) {
            try EncryptionKey(bytes: Array(repeating: 1, count: 16))
        }

        let plain = TestDirectory("enc-keys-plain")
        defer { plain.remove() }
        try StorageEngine(directory: plain.path, options: Self.options(nil)).close()
        let plainPath = plain.sub(StorageEngine.dataFileName)
        #expect(throws: StorageError.notEncrypted(path: plainPath)) { try StorageEngine(directory: plain.path, options: Self.options(Self.key)) }

        // A passphrase: the right one opens, another one and the raw key do not.
        let phrase = TestDirectory("enc-keys-phrase")
        defer { phrase.remove() }
        let withPhrase = try StorageEngine(directory: phrase.path, options: Self.options(EncryptionKey(passphrase: "correct horse")))
        _ = try Self.fill(withPhrase, rounds: 1)
        withPhrase.close()
        #expect(throws: StorageError.wrongEncryptionKey) {
            try StorageEngine(directory: phrase.path, options: Self.options(EncryptionKey(passphrase: "correct horsf")))
        }
        #expect(throws: StorageError.wrongEncryptionKey) { try StorageEngine(directory: phrase.path, options: Self.options(Self.key)) }
        let reopened = try StorageEngine(directory: phrase.path, options: Self.options(EncryptionKey(passphrase: "correct horse")))
        defer { reopened.close() }
        #expect(try reopened.read { try Model(reading: $0) } == model)
        #expect("\(Self.key)" == "EncryptionKey(256-bit key)", "a key's description shows no key material")
    }

    /// The offsets and lengths of the log's records, walked from the header on.
    static func records(_ bytes: [UInt8]) -> [(offset: Int, length: Int, kind: UInt8)] {
        var result: [(Int, Int, UInt8)] = []
        var at = 4096
        while at + 16 <= bytes.count {
            let length = Int(bytes[at + 8]) | Int(bytes[at + 9]) << 8 | Int(bytes[at + 10]) << 16 | Int(bytes[at + 11]) << 24
            guard length >= 16, at + length <= bytes.count else { break }
            result.append((at, length, bytes[at + 12]))
            at += length
        }
        return result
    }

    @Test("a record copied over another of the same length, its checksum redone, is refused")
    func movedRecordsAreRefused() throws {
        let directory = TestDirectory("enc-moved")
        defer { directory.remove() }
        let engine = try StorageEngine(directory: directory.path, options: Self.options(Self.key))
        let model = try Self.fill(engine)
        engine.close()
        let path = directory.sub(StorageEngine.dataFileName)
        let bytes = TestDirectory.read(path)
        let salt = bytes[32..<40].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        let nodes = Self.records(bytes).filter { $0.kind == 1 }
        var tried = 0, refused = 0
        for (i, target) in nodes.enumerated() {
            guard let source = nodes[(i + 1)...].first(where: { $0.length == target.length }) else { continue }
            var moved = bytes
            moved.replaceSubrange(target.offset..<(target.offset + target.length), with: bytes[source.offset..<(source.offset + source.length)])
            // The checksum made right for the new place: only the cipher can tell.
            let sum = moved.withUnsafeBytes { buffer in
                Checksum.xxh64(UnsafeRawBufferPointer(rebasing: buffer[(target.offset + 8)..<(target.offset + target.length)]),
                              seed: UInt64(target.offset) ^ salt)
            }
            for b in 0..<8 { moved[target.offset + b] = UInt8(truncatingIfNeeded: sum >> (8 * UInt64(b))) }
            TestDirectory.replace(path, with: moved)
            tried += 1
            do {
                let opened = try StorageEngine(directory: directory.path, options: Self.options(Self.key))
                defer { opened.close() }
                let content = try opened.read { try Model(reading: $0) }
                #expect(content == model, "a moved record at \(target.offset) gave wrong data")
            } catch let error as StorageError {
                if case .fileCorrupt = error { refused += 1 } else { Issue.record("unexpected \(error)") }
            }
            if tried >= 40 { break }
        }
        // A moved record that no commit reaches any more (garbage) is never read: it cannot be
        // noticed, nor does it matter. Every other one is refused (and none gave wrong data).
        #expect(tried > 10)
        #expect(refused >= tried * 3 / 4, "\(tried - refused) of \(tried) moved records were not refused")
    }

    @Test("compaction adds, changes and removes the key; the engine goes on with the new one")
    func compactionChangesKeys() throws {
        let directory = TestDirectory("enc-rekey")
        defer { directory.remove() }
        let path = directory.sub(StorageEngine.dataFileName)
        var engine = try StorageEngine(directory: directory.path, options: Self.options(nil))
        var model = try Self.fill(engine, rounds: 2)
        #expect(Self.contains(TestDirectory.read(path), Self.marker))
        // Add encryption while open, then write with the new key.
        try engine.compact(newKey: Self.key)
        let more: [Operation] = [.put(tree: "notes", key: [9, 9], value: Self.marker)]
        try engine.write { try apply(more, to: $0) }
        model.apply(more)
        #expect(try engine.read { try Model(reading: $0) } == model)
        engine.close()
        #expect(!Self.contains(TestDirectory.read(path), Self.marker))
        #expect(throws: StorageError.encryptionKeyRequired(path: path)) { try StorageEngine(directory: directory.path, options: Self.options(nil)) }

        // Change it, with the store closed.
        try StorageEngine.compact(directory: directory.path, options: Self.options(Self.key), newKey: Self.otherKey)
        #expect(throws: StorageError.wrongEncryptionKey) { try StorageEngine(directory: directory.path, options: Self.options(Self.key)) }
        engine = try StorageEngine(directory: directory.path, options: Self.options(Self.otherKey))
        #expect(try engine.read { try Model(reading: $0) } == model)
        // A passphrase, then none.
        try engine.compact(newKey: EncryptionKey(passphrase: "a long passphrase"))
        engine.close()
        engine = try StorageEngine(directory: directory.path, options: Self.options(EncryptionKey(passphrase: "a long passphrase")))
        #expect(try engine.read { try Model(reading: $0) } == model)
        try engine.compact()  // keeps the passphrase
        try engine.compact(newKey: nil)
        engine.close()
        engine = try StorageEngine(directory: directory.path, options: Self.options(nil))
        defer { engine.close() }
        #expect(try engine.read { try Model(reading: $0) } == model)
    }

    @Test("a small decrypted cache: readers on many threads, old transactions outliving replaced views")
    func smallCacheUnderReaders() throws {
        let directory = TestDirectory("enc-cache")
        defer { directory.remove() }
        var options = Self.options(Self.key)
        options.decryptedCacheSize = 1 << 20
        let engine = try StorageEngine(directory: directory.path, options: options)
        defer { engine.close() }
        let model = try Self.fill(engine, rounds: 4)  // about 5 MB of records
        let old = try engine.beginRead()
        let first = try Model(reading: old)
        let failures = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<3 {
                do {
                    let content = try engine.read { try Model(reading: $0) }
                    if content != model { failures.withLock { $0 += 1 } }
                } catch {
                    failures.withLock { $0 += 1 }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(engine.decryptedViewsMade > 3, "the cache was never replaced: \(engine.decryptedViewsMade) views")
        // The transaction that began on the first view still reads it, and the bytes it returned.
        #expect(try Model(reading: old) == first)
        #expect(first == model)
    }

    @Test("no (offset, epoch) nonce is ever written with two different records")
    func noncesNeverRepeat() throws {
        let directory = TestDirectory("enc-nonce")
        defer { directory.remove() }
        let path = directory.sub(StorageEngine.dataFileName)
        var writes: [(offset: UInt64, bytes: [UInt8])] = []
        var rewrittenOffsets = 0
        for session in 0..<4 {
            let box = Locked<FaultInjectingFile?>(nil)
            var options = Self.options(Self.key)
            options.transactionMemoryBudget = 64 << 10
            // The session's 30th write fails: a commit fails, and the next one writes there again.
            let fault: FaultInjectingFile.Fault = session == 2 ? .failWrite(number: 30, errno: EIO) : .none
            options.openFile = { filePath, create, readOnly in
                let file = try FaultInjectingFile(path: filePath, create: create, readOnly: readOnly, fault: fault)
                file.recordsWrites = true
                box.withLock { $0 = file }
                return file
            }
            let engine = try StorageEngine(directory: directory.path, options: options)
            for round in 0..<6 {
                // A transaction that spills and is aborted: its records are overwritten next.
                // (The failing write may hit a spill: the transaction is aborted all the same.)
                let txn = try engine.beginWrite()
                let tree = try txn.tree("bulk")!
                for i in 0..<3_000 {
                    guard (try? txn.put(tree, key: bigEndianKey(UInt64(i)), value: Array(repeating: UInt8(round), count: 40))) != nil else { break }
                }
                txn.abort()
                _ = try? engine.write { txn in
                    try txn.put(txn.tree("notes")!, key: bigEndianKey(UInt64(session * 100 + round)), value: Self.marker)
                }
            }
            engine.close()
            writes += box.withLock { $0 }?.everyWrite ?? []
        }
        _ = path
        var seen: [String: [UInt8]] = [:]
        var offsetsSeen: [UInt64: Set<UInt32>] = [:]
        for write in writes where write.offset >= 4096 && write.bytes.contains(where: { $0 != 0 }) {
            var at = 0
            while at + 16 <= write.bytes.count {
                let b = write.bytes
                let length = Int(b[at + 8]) | Int(b[at + 9]) << 8 | Int(b[at + 10]) << 16 | Int(b[at + 11]) << 24
                guard length >= 32, at + length <= b.count else { break }
                let offset = write.offset + UInt64(at)
                let epoch = UInt32(b[at + 13]) | UInt32(b[at + 14]) << 8 | UInt32(b[at + 15]) << 16
                let sealed = Array(b[(at + 8)..<(at + length)])
                let nonce = "\(offset)/\(epoch)"
                if let earlier = seen[nonce] {
                    if earlier != sealed { Issue.record("nonce \(nonce) sealed two different records") }
                } else {
                    seen[nonce] = sealed
                }
                offsetsSeen[offset, default: []].insert(epoch)
                at += length
            }
        }
        rewrittenOffsets = offsetsSeen.values.filter { $0.count > 1 }.count
        // The workload does write at the same offsets again (else this test could not fail).
        #expect(rewrittenOffsets > 100, "only \(rewrittenOffsets) offsets were written in two epochs")
        #expect(seen.count > 1000)
    }

    @Test("a read-only engine follows an encrypted writer's commits and compactions; after a new key it says so")
    func readOnlyFollowerOfAnEncryptedStore() throws {
        let directory = TestDirectory("enc-follow")
        defer { directory.remove() }
        let writer = try StorageEngine(directory: directory.path, options: Self.options(Self.key))
        defer { writer.close() }
        var model = try Self.fill(writer, rounds: 1)
        var readOptions = Self.options(Self.key)
        readOptions.readOnly = true
        let reader = try StorageEngine(directory: directory.path, options: readOptions)
        defer { reader.close() }
        #expect(try reader.read { try Model(reading: $0) } == model)
        let more: [Operation] = [.put(tree: "notes", key: [1, 2, 3], value: Self.marker)]
        try writer.write { try apply(more, to: $0) }
        model.apply(more)
        #expect(try reader.read { try Model(reading: $0) } == model)
        try writer.compact()
        #expect(try reader.read { try Model(reading: $0) } == model)
        #expect(reader.followedCompactions == 1)
        // The writer changes the key: the reader, opened with the old one, cannot follow.
        try writer.compact(newKey: Self.otherKey)
        #expect(throws: StorageError.wrongEncryptionKey) { try reader.read { try Model(reading: $0) } }
    }

    @Test("a key change whose copy fails at its Nth write or sync leaves the store under its old key; the one that succeeds, under the new",
          arguments: [true, false])
    func failedKeyChangesLeaveTheOldKey(failWrites: Bool) throws {
        let dir = TestDirectory("enc-rekey-faults")
        defer { dir.remove() }
        let model = try CompactionTests.makeStoreWithGarbage(dir.path, seed: 9)
        // Plain → `key`, then `key` → `otherKey`.
        for (old, new) in [(nil, Self.key), (Self.key, Self.otherKey)] as [(EncryptionKey?, EncryptionKey)] {
            var failures = 0
            for n in 1...400 {
                let fault: FaultInjectingFile.Fault = failWrites ? .failWrite(number: n, errno: EIO) : .failSync(number: n, errno: EIO)
                var options = StorageOptions(encryptionKey: old)
                options.openFile = { path, create, readOnly -> any StorageFile in
                    guard path.contains("/" + StorageEngine.compactionDirectoryName + "/") else {
                        return try PosixFile(path: path, create: create, readOnly: readOnly)
                    }
                    return try FaultInjectingFile(path: path, create: create, readOnly: readOnly, fault: fault)
                }
                do {
                    try StorageEngine.compact(directory: dir.path, options: options, newKey: new)
                    break
                } catch StorageError.io {
                    failures += 1
                    let engine = try StorageEngine(directory: dir.path, options: StorageOptions(encryptionKey: old))
                    #expect(try engine.read { try Model(reading: $0) } == model, "n = \(n): the store under its old key is unchanged")
                    engine.close()
                }
            }
            #expect(failures > 0)
            #expect(throws: (any Error).self) { try StorageEngine(directory: dir.path, options: StorageOptions(encryptionKey: old)) }
            let engine = try StorageEngine(directory: dir.path, options: StorageOptions(encryptionKey: new))
            #expect(try engine.read { try Model(reading: $0) } == model)
            engine.close()
        }
    }
}
