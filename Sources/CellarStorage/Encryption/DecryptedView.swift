import Atomics
import Dispatch
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the records of an encrypted data file are read decrypted: an anonymous mapping as long as
/// the file's mapping, in which a record's plaintext body lies at the record's own offset, and one
/// bit per 8 bytes saying which records are there (decrypted, authenticated, and for a node
/// checked). A reader that finds the bit set reads the plaintext in place, as it reads a plain
/// file's mapping: no lock, no copy. One that does not decrypts the record from the file's
/// mapping (the ciphertext) under one of 64 locks chosen by offset, so that two readers never
/// write the same bytes, then sets the bit. The 16 bytes in front of a record's plaintext hold
/// its length, kind and epoch (the checksum's 8 are left zero).
///
/// Only committed records are decrypted into a view readers share: a committed record never
/// changes in its file, so what a view holds stays true. The memory is bounded by replacing the
/// view (`DecryptedViews`) once it holds more than the cache size: transactions that began on the
/// old one finish on it, and it is unmapped when the last of them ends. Plaintext lives only in
/// this anonymous memory, never in a file.
final class DecryptedView: @unchecked Sendable {
    // The mappings are immutable; their bytes are written only under `locks` before the bit that
    // publishes them is set (release), and read after it is seen (acquire).
    let cipher: RecordCipher
    let shadow: UnsafeMutableRawPointer
    let length: Int
    let bits: UnsafeMutablePointer<UnsafeAtomic<UInt64>.Storage>
    private let bitBytes: Int
    /// Bytes decrypted into this view so far.
    let decryptedBytes = ManagedAtomic<Int>(0)
    /// Not `Locked<Void>`: ThreadSanitizer reports the exclusivity accesses to a zero-sized value
    /// as races when several threads take the lock at once.
    private let locks: [Locked<Int>]

    /// A view for the records of a mapping of `length` bytes of the file `cipher` opens.
    init(cipher: RecordCipher, length: Int) throws {
        self.cipher = cipher
        self.length = length
        let words = (length / 8 + 63) / 64
        bitBytes = max(words * 8, 8)
        let flags = MAP_PRIVATE | MAP_ANONYMOUS | Self.noReserve
        guard let shadow = mmap(nil, max(length, 8), PROT_READ | PROT_WRITE, flags, -1, 0), shadow != MAP_FAILED else {
            throw StorageError.io(operation: "mmap (decrypted records)", errno: Syscall.errno(), path: "")
        }
        guard let bits = mmap(nil, bitBytes, PROT_READ | PROT_WRITE, flags, -1, 0), bits != MAP_FAILED else {
            munmap(shadow, max(length, 8))
            throw StorageError.io(operation: "mmap (decrypted records)", errno: Syscall.errno(), path: "")
        }
        self.shadow = shadow
        self.bits = bits.bindMemory(to: UnsafeAtomic<UInt64>.Storage.self, capacity: words)
        locks = (0..<64).map { _ in Locked(0) }
    }

    deinit {
        // Unmapping hundreds of megabytes takes a while: not on the thread of the transaction
        // that happened to release the view last.
        let shadow = UInt(bitPattern: shadow), length = max(length, 8)
        let bits = UInt(bitPattern: bits), bitBytes = bitBytes
        DispatchQueue.global(qos: .utility).async {
            munmap(UnsafeMutableRawPointer(bitPattern: shadow), length)
            munmap(UnsafeMutableRawPointer(bitPattern: bits), bitBytes)
        }
    }

    #if canImport(Glibc) && !CELLAR_PORTABLE_POSIX
    private static let noReserve = MAP_NORESERVE
    #else
    private static let noReserve: Int32 = 0
    #endif

    /// Whether the record at `offset` is decrypted here; its bytes may be read once this is true.
    @inline(__always)
    func holds(_ offset: UInt64) -> Bool { Self.holds(offset, in: bits) }

    /// Whether `bits` (a view's bitmap) has the bit of the record at `offset` set; its plaintext
    /// may be read once this is true. Also what a transaction's `MappedRecords` tests.
    @inline(__always)
    static func holds(_ offset: UInt64, in bits: UnsafeMutablePointer<UnsafeAtomic<UInt64>.Storage>) -> Bool {
        let bit = offset >> 3
        let word = UnsafeAtomic<UInt64>(at: bits + Int(bit >> 6)).load(ordering: .acquiring)
        return word & (1 << (bit & 63)) != 0
    }

    /// Decrypts the record of `recordLength` bytes at `record` (file offset `offset`, its
    /// checksum verified) into this view, unless another reader did meanwhile. `check` looks at
    /// the plaintext body (padded) and returns a problem, which is thrown as `fileCorrupt` without
    /// publishing the record.
    func decrypt(_ record: UnsafeRawPointer, recordLength: Int, at offset: UInt64,
                 check: (UnsafeRawPointer, Int) -> String?) throws {
        guard offset + UInt64(recordLength) <= UInt64(length) else {
            throw StorageError.fileCorrupt(offset: offset, reason: "record reaches past the mapping")
        }
        try locks[Int((offset >> 12) & 63)].withLock { _ in
            if holds(offset) { return }
            let body = shadow + Int(offset) + LogRecord.headerSize
            guard cipher.open(record, length: recordLength, fileOffset: offset, into: body) else {
                throw StorageError.fileCorrupt(offset: offset, reason: "record fails authentication (changed, moved, or written under another key)")
            }
            if let problem = check(UnsafeRawPointer(body), recordLength - LogRecord.headerSize - RecordCipher.tagSize) {
                throw StorageError.fileCorrupt(offset: offset, reason: problem)
            }
            // The record's length, kind and epoch in front of its plaintext, so that a read checks
            // them on the same cache line as the data.
            (shadow + Int(offset) + 8).copyMemory(from: record + 8, byteCount: 8)
            decryptedBytes.wrappingIncrement(by: recordLength, ordering: .relaxed)
            let bit = offset >> 3
            _ = UnsafeAtomic<UInt64>(at: bits + Int(bit >> 6)).loadThenBitwiseOr(with: 1 << (bit & 63), ordering: .releasing)
        }
    }
}

/// The decrypted view readers of an encrypted store share, replaced when it outgrows the cache
/// size (`StorageOptions.decryptedCacheSize`), the file's mapping, or the file (a compaction
/// swapped in another). Each transaction takes the current view when it begins and keeps it.
final class DecryptedViews: @unchecked Sendable {
    // `current` is atomic; replacing it is serialized by `replacing`.
    private let current = ManagedAtomic<DecryptedView?>(nil)
    private let replacing = Locked<Int>(0)  // (not `Locked<Void>`: see `DecryptedView.locks`)
    let cacheSize: Int
    /// Views made so far (for tests and diagnostics).
    let made = ManagedAtomic<Int>(0)

    init(cacheSize: Int) {
        self.cacheSize = cacheSize
    }

    /// The view to read `generation`'s records through; nil when its file is not encrypted.
    func view(for generation: MapGeneration) throws -> DecryptedView? {
        guard let cipher = generation.cipher else { return nil }
        if let view = current.load(ordering: .acquiring), fits(view, cipher, generation) { return view }
        return try replacing.withLock { _ in
            if let view = current.load(ordering: .acquiring), fits(view, cipher, generation) { return view }
            let view = try DecryptedView(cipher: cipher, length: generation.region.length)
            current.store(view, ordering: .releasing)
            made.wrappingIncrement(ordering: .relaxed)
            return view
        }
    }

    private func fits(_ view: DecryptedView, _ cipher: RecordCipher, _ generation: MapGeneration) -> Bool {
        view.cipher === cipher && view.length >= generation.region.length
            && view.decryptedBytes.load(ordering: .relaxed) < cacheSize
    }
}

extension DecryptedView: AtomicReference {}
