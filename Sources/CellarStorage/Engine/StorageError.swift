/// Everything the storage engine can throw.
///
/// Each case names what happened in words a person can act on; `description` spells it out.
public enum StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another process (or another open engine in this one) holds the store's write lock.
    case storeLocked(path: String)
    /// Bytes on disk failed a check: a checksum, a bound, a structure. `offset` is the file offset.
    case fileCorrupt(offset: UInt64, reason: String)
    /// A system call failed. `operation` names it, `errno` is the code it returned.
    case io(operation: String, errno: Int32, path: String)
    /// An earlier sync failed, so nothing after it can be promised durable. Reopen the store.
    case commitsRefused(reason: String)
    /// The file was written by a newer format version than this build reads.
    case unsupportedFormat(version: UInt32)
    /// A key or value is larger than the engine accepts.
    case tooLarge(what: String, size: Int, limit: Int)
    /// The named tree does not exist.
    case treeNotFound(String)
    /// A write was attempted through a read-only store or transaction.
    case readOnly
    /// The transaction was already committed or aborted, or the engine was closed.
    case transactionClosed
    /// The engine was closed.
    case closed
    /// An argument is out of its allowed range.
    case illegalArgument(String)
    /// The data file at `path` is something other than a Cellar store (another program's file,
    /// not a regular file). Cellar never overwrites it.
    case notAStore(path: String, reason: String)
    /// The key given does not open the store: another key, or a passphrase where the store was
    /// made with a key's bytes (or the reverse).
    case wrongEncryptionKey
    /// The store is encrypted and no key was given.
    case encryptionKeyRequired(path: String)
    /// A key was given, but the store is not encrypted.
    case notEncrypted(path: String)
    /// This build of Cellar has no `codec`, which `needed` (a stored value compressed with it, or
    /// an option that would compress with it). Nothing was read or written in its place.
    case compressionUnavailable(codec: String, needed: String)

    /// A message that names what went wrong and, where there is one, what to do about it.
    public var description: String {
        switch self {
        case .storeLocked(let path):
            return "the store at \(path) is open for writing by another process (or another Store in this one); close it first or open read-only"
        case .fileCorrupt(let offset, let reason):
            return "the store file is corrupt at offset \(offset): \(reason)"
        case .io(let operation, let code, let path):
            return "\(operation) failed on \(path): \(String(cString: strerror(code))) (errno \(code))"
        case .commitsRefused(let reason):
            return "the store refuses further commits because \(reason); what was acknowledged before is safe — reopen the store to go on"
        case .unsupportedFormat(let version):
            return "the store file has format version \(version), which this build of Cellar does not read; upgrade Cellar"
        case .tooLarge(let what, let size, let limit):
            return "\(what) of \(size) bytes is larger than the limit of \(limit) bytes"
        case .treeNotFound(let name):
            return "no tree named \"\(name)\" in this store"
        case .readOnly:
            return "the store or transaction is read-only"
        case .transactionClosed:
            return "the transaction was already committed or aborted"
        case .closed:
            return "the store was closed"
        case .illegalArgument(let what):
            return "illegal argument: \(what)"
        case .notAStore(let path, let reason):
            return "\(path) is not a Cellar data file (\(reason)); Cellar leaves it untouched: open the store in another directory, or move the file away"
        case .wrongEncryptionKey:
            return "the encryption key does not open this store (another key, or a passphrase where it was made with a key's bytes, or the reverse)"
        case .encryptionKeyRequired(let path):
            return "the store at \(path) is encrypted: open it with its encryption key"
        case .notEncrypted(let path):
            return "the store at \(path) is not encrypted: open it without a key, or encrypt it by compacting it with a new key"
        case .compressionUnavailable(let codec, let needed):
            return "\(needed), but this build of Cellar has no \(codec): \(codec) comes from the system's library, linked on Linux with the package's `Zstd` trait (on by default; Debian: libzstd-dev) and on macOS with the `ZstdOnMacOS` trait (Homebrew's zstd); iOS, tvOS, watchOS and visionOS have none. Open the store with a build that has \(codec) and compact it with compression .none to read it anywhere"
        }
    }
}

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
