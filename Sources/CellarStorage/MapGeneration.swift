import Atomics
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One read-only mapping of the data file together with the set of records already verified in
/// it. Readers reach every committed byte through a generation; when the file outgrows the mapping
/// the writer makes a larger generation, and readers on the old one finish on it undisturbed (it is
/// unmapped when the last snapshot that holds it goes away).
///
/// Verification is lazy: the first time a record is read, its checksum and structure are checked
/// and one bit per 8 file bytes is set (atomically; racing readers may both verify, which is
/// harmless). Later reads only test the bit. So a bit flip anywhere in committed data is caught
/// before its bytes are used, without reading the whole file at open.
package final class MapGeneration: @unchecked Sendable {
    // `region` is immutable; `verifiedWords` is only touched through atomic operations.
    let region: MappedRegion
    /// `region.base` and `region.length`, copied: reading them then retains nothing.
    let base: UnsafeRawPointer
    let regionLength: Int
    private let verifiedWords: UnsafeMutablePointer<UInt64.AtomicRepresentation>
    private let verifiedBytes: Int
    let salt: UInt64

    init(region: MappedRegion, salt: UInt64) {
        self.region = region
        self.base = region.base
        self.regionLength = region.length
        self.salt = salt
        // One bit per 8 bytes of the mapping, in lazily zeroed anonymous memory.
        let words = (region.length / 8 + 63) / 64
        let bytes = max(words * 8, 8)
        var pointer = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        if pointer == MAP_FAILED { pointer = nil }
        if let pointer {
            verifiedWords = pointer.bindMemory(to: UInt64.AtomicRepresentation.self, capacity: words)
            verifiedBytes = bytes
        } else {
            // Without the bitmap every read verifies; slower, still correct.
            verifiedWords = UnsafeMutablePointer<UInt64.AtomicRepresentation>.allocate(capacity: 1)
            verifiedWords.initialize(to: .init(UInt64.max))
            verifiedBytes = 0
        }
    }

    deinit {
        if verifiedBytes > 0 {
            munmap(UnsafeMutableRawPointer(verifiedWords), verifiedBytes)
        } else {
            verifiedWords.deallocate()
        }
    }

    @inline(__always)
    private func isVerified(_ offset: UInt64) -> Bool {
        if verifiedBytes == 0 { return false }
        let bit = offset >> 3
        let word = UnsafeAtomic<UInt64>(at: verifiedWords + Int(bit >> 6)).load(ordering: .relaxed)
        return word & (1 << (bit & 63)) != 0
    }

    /// Records that `offset` holds a record that needs no verification (one this process wrote).
    @inline(__always)
    func markVerified(_ offset: UInt64) {
        if verifiedBytes == 0 { return }
        let bit = offset >> 3
        _ = UnsafeAtomic<UInt64>(at: verifiedWords + Int(bit >> 6)).loadThenBitwiseOr(with: 1 << (bit & 63), ordering: .relaxed)
    }

    /// The body of the node record at `offset`, verified. `limit` is the committed length of the
    /// caller's snapshot; `below` is the offset of the record that refers to this one (children are
    /// always written before their parents, so a reference that does not point down is corrupt; this
    /// also rules out cycles).
    @inline(__always)
    func node(at offset: UInt64, below: UInt64, limit: UInt64) throws -> NodeView {
        guard offset >= UInt64(FileHeader.size), offset < below, offset < limit else {
            throw StorageError.fileCorrupt(offset: offset, reason: "node reference out of bounds (referenced below \(below))")
        }
        if !isVerified(offset) {
            try verifyNode(at: offset, limit: limit)
        } else if recordKind(at: offset) != RecordKind.node.rawValue {
            // Verified as another kind of record: a corrupt reference, not a node.
            throw StorageError.fileCorrupt(offset: offset, reason: "expected a node record, found kind \(recordKind(at: offset))")
        }
        return NodeView(body: base + Int(offset) + LogRecord.headerSize)
    }

    private func verifyNode(at offset: UInt64, limit: UInt64) throws {
        guard let (length, kind) = LogRecord.verify(base, offset: offset, available: min(limit, UInt64(regionLength)), salt: salt) else {
            throw StorageError.fileCorrupt(offset: offset, reason: "node record fails its checksum")
        }
        guard kind == .node else {
            throw StorageError.fileCorrupt(offset: offset, reason: "expected a node record, found kind \(kind)")
        }
        if let problem = NodeView.validate(base + Int(offset) + LogRecord.headerSize, length: length - LogRecord.headerSize) {
            throw StorageError.fileCorrupt(offset: offset, reason: problem)
        }
        markVerified(offset)
    }

    /// The bytes of the value record at `offset`, verified, holding `length` bytes.
    func value(at offset: UInt64, length: Int, below: UInt64, limit: UInt64) throws -> UnsafeRawBufferPointer {
        guard offset >= UInt64(FileHeader.size), offset < below, offset < limit else {
            throw StorageError.fileCorrupt(offset: offset, reason: "value reference out of bounds (referenced below \(below))")
        }
        if !isVerified(offset) {
            guard let (recordLength, kind) = LogRecord.verify(base, offset: offset, available: min(limit, UInt64(regionLength)), salt: salt) else {
                throw StorageError.fileCorrupt(offset: offset, reason: "value record fails its checksum")
            }
            guard kind == .value, recordLength == LogRecord.paddedLength(body: length) else {
                throw StorageError.fileCorrupt(offset: offset, reason: "value record does not match the \(length)-byte value that refers to it")
            }
            markVerified(offset)
        } else if recordKind(at: offset) != RecordKind.value.rawValue || recordLength(at: offset) != LogRecord.paddedLength(body: length) {
            // Verified, but as a node or as a value of another length: the reference is corrupt.
            throw StorageError.fileCorrupt(offset: offset, reason: "value record does not match the \(length)-byte value that refers to it")
        }
        return UnsafeRawBufferPointer(start: base + Int(offset) + LogRecord.headerSize, count: length)
    }

    /// The length of a verified record.
    @inline(__always)
    func recordLength(at offset: UInt64) -> Int {
        Int((base + Int(offset)).loadLE(UInt32.self, at: 8))
    }

    /// The kind byte of a verified record (see `RecordKind`). The verified set has one bit per
    /// record start whatever its kind, so a reference must still be checked against the kind (and
    /// a value's length) it expects: a corrupt one may point at a record verified as another.
    @inline(__always)
    func recordKind(at offset: UInt64) -> UInt8 {
        (base + Int(offset)).load(fromByteOffset: 12, as: UInt8.self)
    }
}

/// What a reader sees: one committed state of the store. Published by the writer with one atomic
/// store and taken by readers with one atomic load; immutable.
package final class Snapshot: AtomicReference, @unchecked Sendable {
    let txnId: UInt64
    /// Offset of the catalog tree's root node, 0 when the store has no trees.
    let catalogRoot: UInt64
    /// Everything below this offset is committed and readable.
    let committedLength: UInt64
    let commitOffset: UInt64
    let liveBytes: UInt64
    let generation: MapGeneration

    init(txnId: UInt64, catalogRoot: UInt64, committedLength: UInt64, commitOffset: UInt64,
         liveBytes: UInt64, generation: MapGeneration) {
        self.txnId = txnId
        self.catalogRoot = catalogRoot
        self.committedLength = committedLength
        self.commitOffset = commitOffset
        self.liveBytes = liveBytes
        self.generation = generation
    }
}
