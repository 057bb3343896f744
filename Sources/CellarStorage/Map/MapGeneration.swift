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
/// before its bytes are used, without reading the whole file at open. The reading itself is
/// `MappedRecords`, a plain struct that transactions copy, so that following a reference costs no
/// reference counting.
package final class MapGeneration: @unchecked Sendable {
    // `region` is immutable; the verified bitmap is only touched through atomic operations.
    let region: MappedRegion
    /// How records are read and verified in this mapping; valid while this generation lives.
    let records: MappedRecords
    private let verifiedBytes: Int
    /// Which file is mapped, when known: a read-only engine's check for new commits compares it
    /// with what the data file's path leads to (`LogFollower`).
    let fileIdentity: FileIdentity?
    /// Opens the file's records when it is encrypted; nil when plain. Readers then read them
    /// through a `DecryptedView`, and `records`' verified bitmap is not used.
    let cipher: RecordCipher?

    init(region: MappedRegion, salt: UInt64, cipher: RecordCipher? = nil, fileIdentity: FileIdentity? = nil) {
        self.region = region
        self.fileIdentity = fileIdentity
        self.cipher = cipher
        // One bit per 8 bytes of the mapping, in lazily zeroed anonymous memory.
        let words = (region.length / 8 + 63) / 64
        let bytes = max(words * 8, 8)
        var pointer = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        if pointer == MAP_FAILED { pointer = nil }
        let verifiedWords: UnsafeMutablePointer<UnsafeAtomic<UInt64>.Storage>
        if let pointer {
            verifiedWords = pointer.bindMemory(to: UnsafeAtomic<UInt64>.Storage.self, capacity: words)
            verifiedBytes = bytes
        } else {
            // Without the bitmap every read verifies; slower, still correct.
            verifiedWords = UnsafeMutablePointer<UnsafeAtomic<UInt64>.Storage>.allocate(capacity: 1)
            verifiedWords.initialize(to: .init(UInt64.max))
            verifiedBytes = 0
        }
        records = MappedRecords(base: region.base, regionLength: region.length, verifiedWords: verifiedWords,
                                hasBitmap: verifiedBytes > 0, salt: salt)
    }

    deinit {
        if verifiedBytes > 0 {
            munmap(UnsafeMutableRawPointer(records.verifiedWords), verifiedBytes)
        } else {
            records.verifiedWords.deallocate()
        }
    }
}

extension MapGeneration {
    /// A mapping length for a file of `size` bytes: room to double, in whole megabytes.
    static func mappingLength(for size: UInt64, minimum: Int) -> Int {
        let wanted = max(UInt64(minimum), size * 2)
        return Int((wanted + (1 << 20) - 1) & ~((1 << 20) - 1))
    }
}
