// libFuzzer target: the input is the whole content of a store's data file.
//
// Each run writes the bytes to `data.cellar` in a scratch directory of this process (see
// `Scratch.directory`), opens the store read-only (a read-only open neither writes nor locks)
// and, if it opens, reads everything it can reach: every tree named in the catalog, every entry
// forwards and backwards, and a few point lookups. Compressed values are decoded on each read path
// (both scans, `get`, `withValue`), with the dictionaries of the engine's reserved tree; that tree
// is not in `treeNames()` and is read only through those dictionary lookups. Then it does the same
// with the input's checksums recomputed (`Reseal`), when that changes anything: a mutated record
// nearly always fails its checksum, so without this second pass the fuzzer would never reach the
// checks behind it (node validation, the commit chain, references between records).
//
// An encrypted store (header flag bit 1) does not open without its key: when the open throws
// `encryptionKeyRequired`, it is opened again with the key of the encrypted seeds (`FuzzKey`, bytes
// 0..<32) and read the same way, which decrypts (and authenticates) every record it reaches. There
// resealing gets a mutated record past its checksum and into AES-GCM, whose authentication must
// refuse it (`fileCorrupt`); a mutated encryption block (resealed too) must give `fileCorrupt` or
// `wrongEncryptionKey`. So that mutations also reach what lies behind the authentication (the
// decrypted nodes, values and commit records), an encrypted input is taken a third time as a
// *plaintext image*: every record body is encrypted as it stands (`Reencrypt`, with the same key)
// and the checksums resealed, then opened and read with the key; not when its first record
// authenticates as it stands (ciphertext, not an image). `MakeCorpus` writes an image of an
// encrypted seed (`encrypted-commits-plaintext`). Only a `StorageError` may come out of an
// encrypted store: another error (one of swift-crypto's, say) stops the fuzzer as a finding.
//
// Any thrown error is a correct answer to a bad file; a crash, a trap or an AddressSanitizer report
// is a bug in CellarStorage.
//
// Nothing here runs at top level: libFuzzer supplies `main`, so top-level code in this file would
// never run. Per-process state lives in static properties, which are initialized lazily.
import CellarStorage
import FuzzSupport
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum Scratch {
    /// A directory of this process, made on first use, in `$CELLAR_FUZZ_SCRATCH`, else in /dev/shm
    /// (tmpfs: on ext4, truncating and rewriting a file costs a device flush each time, which
    /// makes a run ten times slower), else in `$TMPDIR` or /tmp.
    static let directory: String = {
        func env(_ name: String) -> String? {
            guard let value = getenv(name), value.pointee != 0 else { return nil }
            return String(cString: value)
        }
        var info = stat()
        let shm = stat("/dev/shm", &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR && access("/dev/shm", W_OK) == 0
        let base = env("CELLAR_FUZZ_SCRATCH") ?? (shm ? "/dev/shm" : env("TMPDIR") ?? "/tmp")
        let path = "\(base)/cellar-fuzz-open-store.\(getpid())"
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            fatalError("FuzzOpenStore: cannot create \(path): errno \(errno)")
        }
        // Best effort: remove the scratch files when libFuzzer exits normally.
        atexit {
            unlink(Scratch.dataPath)
            rmdir(Scratch.directory)
        }
        return path
    }()

    static let dataPath = directory + "/" + StorageEngine.dataFileName

    /// Replaces the data file's content with `bytes`.
    static func writeDataFile(_ bytes: UnsafeRawBufferPointer) {
        let fd = open(dataPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { fatalError("FuzzOpenStore: cannot open \(dataPath): errno \(errno)") }
        defer { close(fd) }
        var done = 0
        while done < bytes.count {
            let n = write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { fatalError("FuzzOpenStore: cannot write \(dataPath): errno \(errno)") }
            done += n
        }
    }
}

/// Keeps the bytes read from being unused (debug builds do not drop them anyway).
@inline(never)
func consume(_ value: UInt64) {
    withExtendedLifetime(value) {}
}

/// Reads the first and the last byte of `bytes`. The bytes of a read transaction point into the
/// mapped file, where ASan checks nothing; what catches a pointer outside the file is the fault
/// (SIGSEGV, or SIGBUS past its end) when a byte is touched. Both ends suffice for that and keep
/// the run fast: the bytes between lie in the same range.
@inline(__always)
func touch(_ bytes: UnsafeRawBufferPointer, into sum: inout UInt64) {
    sum &+= UInt64(bytes.count)
    if let first = bytes.first, let last = bytes.last { sum = sum &* 31 &+ UInt64(first) &+ UInt64(last) }
}

/// Reads everything reachable in `engine`. Throws what the engine throws.
func readEverything(_ engine: StorageEngine, probe: [UInt8]) throws {
    var sum: UInt64 = 0
    try engine.read { txn in
        for name in try txn.treeNames() {
            // A name that is not valid UTF-8 comes back with replacement characters and is then not
            // found under its decoded spelling: that is not a bug.
            guard let tree = try txn.tree(name) else { continue }
            sum &+= UInt64(try txn.count(tree))
            var firstKey: [UInt8]?
            var lastKey: [UInt8]?
            try txn.cursor(tree).scan { key, value in
                touch(key, into: &sum)
                touch(value, into: &sum)
                if firstKey == nil { firstKey = Array(key) }
                return true
            }
            // Backwards too: `previous` walks the tree by a path of its own. With stable values, so
            // that compressed ones are decoded the other way (into the transaction's memory, not
            // the cursor's buffer).
            try txn.cursor(tree).scan(reverse: true, stableValues: true) { key, value in
                touch(key, into: &sum)
                touch(value, into: &sum)
                if lastKey == nil { lastKey = Array(key) }
                return true
            }
            // Point lookups: present keys, and a key taken from the input; through `get` and through
            // `withValue` (which decodes a compressed value into memory of its own).
            for key in [firstKey, lastKey, probe].compactMap({ $0 }) {
                if let value = try key.withUnsafeBytes({ try txn.get(tree, key: $0) }) { touch(value, into: &sum) }
                try txn.withValue(tree, key: key) { if let value = $0 { touch(value, into: &sum) } }
            }
            // A short range scan, which starts with a seek.
            var seen = 0
            try txn.cursor(tree).scan(KeyRange(lower: firstKey ?? probe, lowerInclusive: false)) { key, value in
                touch(key, into: &sum)
                touch(value, into: &sum)
                seen += 1
                return seen < 8
            }
        }
    }
    consume(sum)
}

/// The key of the encrypted seeds (a static property: lazily initialized, unlike a global of
/// main.swift, whose top-level code never runs).
enum Keys {
    static let seeds = try! EncryptionKey(bytes: FuzzKey.bytes)
}

/// Stops the fuzzer when an encrypted store threw something other than a `StorageError`: the
/// engine's own errors are the only right answers to a bad file, with or without a key.
func expectStorageError(_ error: any Error, _ what: String) {
    guard error is StorageError else { fatalError("FuzzOpenStore: \(what) of an encrypted store threw \(type(of: error)): \(error)") }
}

/// Writes `bytes` as the data file, opens the store read-only and reads it all; an encrypted one
/// with `Keys.seeds`.
func openAndRead(_ bytes: UnsafeRawBufferPointer) {
    Scratch.writeDataFile(bytes)
    let engine: StorageEngine
    var encrypted = false
    do {
        engine = try StorageEngine(directory: Scratch.directory, options: StorageOptions(readOnly: true))
    } catch StorageError.encryptionKeyRequired {
        encrypted = true
        do {
            engine = try StorageEngine(directory: Scratch.directory, options: StorageOptions(readOnly: true, encryptionKey: Keys.seeds))
        } catch {
            expectStorageError(error, "opening")
            return
        }
    } catch {
        return
    }
    defer { engine.close() }
    // A lookup key that the fuzzer controls: the last (up to) 16 bytes of the input.
    let probe = Array(bytes.suffix(16))
    do {
        try readEverything(engine, probe: probe)
    } catch {
        // A corrupt store is reported by throwing; that is the expected answer.
        if encrypted { expectStorageError(error, "reading") }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    openAndRead(input)
    var resealed = Array(input)
    if Reseal.reseal(&resealed) {
        resealed.withUnsafeBytes { openAndRead($0) }
    }
    // An encrypted file (flag bit 1, a raw key) as a plaintext image: its records encrypted as they
    // stand with the fuzz key, resealed (unless it is ciphertext already).
    var encrypted = Array(input)
    if Reencrypt.encryptRecords(&encrypted, key: FuzzKey.bytes) {
        encrypted.withUnsafeBytes { openAndRead($0) }
    }
    return 0
}
