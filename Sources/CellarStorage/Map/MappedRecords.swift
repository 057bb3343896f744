#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Atomics

/// Reads and verifies the records of one mapping of the data file (see `MapGeneration`, which owns
/// the mapping and the verified bitmap and keeps them alive). A plain struct of pointers: a
/// transaction keeps a copy, and following a reference then retains and releases nothing.
struct MappedRecords {
    let base: UnsafeRawPointer
    let regionLength: Int
    /// One bit per 8 file bytes: the record starting there was verified (or written here).
    let verifiedWords: UnsafeMutablePointer<UInt64.AtomicRepresentation>
    /// False when the bitmap could not be mapped: every read verifies.
    let hasBitmap: Bool
    let salt: UInt64

    @inline(__always)
    private func isVerified(_ offset: UInt64) -> Bool {
        if !hasBitmap { return false }
        let bit = offset >> 3
        let word = UnsafeAtomic<UInt64>(at: verifiedWords + Int(bit >> 6)).load(ordering: .relaxed)
        return word & (1 << (bit & 63)) != 0
    }

    /// Records that `offset` holds a record that needs no verification (one this process wrote).
    @inline(__always)
    func markVerified(_ offset: UInt64) {
        if !hasBitmap { return }
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
