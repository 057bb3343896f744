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
    let verifiedWords: UnsafeMutablePointer<UnsafeAtomic<UInt64>.Storage>
    /// False when the bitmap could not be mapped: every read verifies.
    let hasBitmap: Bool
    let salt: UInt64
    /// In an encrypted file, where its records are read decrypted (`DecryptedView`), which the
    /// holder of this struct keeps alive; nil in a plain file (see `decrypting(through:)`).
    private(set) var view: Unmanaged<DecryptedView>?
    /// `view`'s memory and its bitmap, held here so that a read of a record already decrypted
    /// touches neither the view object nor the ciphertext.
    private var shadow: UnsafeMutableRawPointer?
    private var shadowBits: UnsafeMutablePointer<UnsafeAtomic<UInt64>.Storage>?

    init(base: UnsafeRawPointer, regionLength: Int, verifiedWords: UnsafeMutablePointer<UnsafeAtomic<UInt64>.Storage>,
         hasBitmap: Bool, salt: UInt64) {
        self.base = base
        self.regionLength = regionLength
        self.verifiedWords = verifiedWords
        self.hasBitmap = hasBitmap
        self.salt = salt
    }

    /// These records read through `view` (nil: as they are in the mapping). The caller keeps
    /// `view` alive as long as it uses the result.
    func decrypting(through view: DecryptedView?) -> MappedRecords {
        var records = self
        records.view = view.map { Unmanaged.passUnretained($0) }
        records.shadow = view?.shadow
        records.shadowBits = view?.bits
        return records
    }

    /// The length of a record holding `body` bytes in this file (with the tag when encrypted).
    @inline(__always)
    func recordLength(body: Int) -> Int {
        LogRecord.paddedLength(body: body) + (view == nil ? 0 : RecordCipher.tagSize)
    }

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
        if let shadow {
            return try decryptedNode(at: offset, limit: limit, shadow: shadow)
        }
        if !isVerified(offset) {
            try verifyNode(at: offset, limit: limit)
        } else if recordKind(at: offset) != RecordKind.node.rawValue {
            // Verified as another kind of record: a corrupt reference, not a node.
            throw StorageError.fileCorrupt(offset: offset, reason: "expected a node record, found kind \(recordKind(at: offset))")
        }
        return NodeView(body: base + Int(offset) + LogRecord.headerSize)
    }

    /// `node(at:below:limit:)` in an encrypted file: the plaintext in `view`, decrypted on the
    /// first read (its checksum, tag and structure checked).
    @inline(__always)
    private func decryptedNode(at offset: UInt64, limit: UInt64, shadow: UnsafeMutableRawPointer) throws -> NodeView {
        if !holdsDecrypted(offset) {
            try decrypt(at: offset, limit: limit, kind: .node) { body, length in NodeView.validate(body, length: length) }
        } else if (shadow + Int(offset)).load(fromByteOffset: 12, as: UInt8.self) != RecordKind.node.rawValue {
            // The view keeps each record's length and kind in front of its plaintext.
            throw StorageError.fileCorrupt(offset: offset, reason: "expected a node record, found kind \(recordKind(at: offset))")
        }
        return NodeView(body: UnsafeRawPointer(shadow) + Int(offset) + LogRecord.headerSize)
    }

    /// Whether the view holds the record at `offset` decrypted (see `DecryptedView.holds`).
    @inline(__always)
    private func holdsDecrypted(_ offset: UInt64) -> Bool { DecryptedView.holds(offset, in: shadowBits!) }

    /// Decrypts the record at `offset` into the view. Its header must be plausible and of the
    /// kind expected; its checksum is not computed: the GCM tag authenticates the same bytes.
    @inline(never)
    private func decrypt(at offset: UInt64, limit: UInt64, kind expected: RecordKind, valueLength: Int = 0,
                         check: (UnsafeRawPointer, Int) -> String? = { _, _ in nil }) throws {
        guard let (length, kind) = LogRecord.header(base, offset: offset, available: min(limit, UInt64(regionLength))) else {
            throw StorageError.fileCorrupt(offset: offset, reason: "\(expected) record has no valid header")
        }
        guard kind == expected else {
            throw StorageError.fileCorrupt(offset: offset, reason: "expected a \(expected) record, found kind \(kind)")
        }
        if expected == .value, length != recordLength(body: valueLength) {
            throw StorageError.fileCorrupt(offset: offset, reason: "value record does not match the \(valueLength)-byte value that refers to it")
        }
        try view!.takeUnretainedValue().decrypt(base + Int(offset), recordLength: length, at: offset, check: check)
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
        if let shadow {
            let header = shadow + Int(offset)
            if !holdsDecrypted(offset) {
                try decrypt(at: offset, limit: limit, kind: .value, valueLength: length)
            } else if header.load(fromByteOffset: 12, as: UInt8.self) != RecordKind.value.rawValue
                        || Int(header.loadLE(UInt32.self, at: 8)) != recordLength(body: length) {
                throw StorageError.fileCorrupt(offset: offset, reason: "value record does not match the \(length)-byte value that refers to it")
            }
            return UnsafeRawBufferPointer(start: UnsafeRawPointer(header) + LogRecord.headerSize, count: length)
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
