#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A copy of a store: the newest commit's trees written into a new store in another directory,
/// compacted (live entries only), while this one stays in use (`docs/compaction.md`, "Copies").
extension StorageEngine {
    /// What a copy wrote.
    public struct CopyReport: Sendable, Equatable {
        /// The transaction id of the commit copied (the copy's newest).
        public var transactionId: UInt64
        /// Bytes of the copy's data file.
        public var bytes: UInt64
    }

    /// Writes the newest commit into a new store in `target`, which must not exist: through a
    /// read transaction (writers and readers go on), into `target` + `.partial` beside it, synced,
    /// then renamed to `target` (and the parent directory synced): `target` appears whole or not
    /// at all, and a `.partial` left by a crash is removed by the next copy to that target.
    ///
    /// The copy keeps the store's UUID (identifiers stay valid in it), its trees, keys and values
    /// (rewritten as `setCompactionRewrites` says), and its transaction ids go on from the one
    /// copied. `changingKey`: nil keeps the store's encryption; `.some(nil)` writes a plain copy;
    /// `.some(key)` encrypts it with `key`. Values are compressed as this engine's options say.
    @discardableResult
    public func writeCopy(to target: String, changingKey: EncryptionKey?? = nil,
                          progress: CompactionProgress? = nil) throws -> CopyReport {
        guard !closedFlag.load(ordering: .relaxed) else { throw StorageError.closed }
        guard !target.isEmpty else { throw StorageError.illegalArgument("the copy's directory path is empty") }
        var status = stat()
        if stat(target, &status) == 0 {
            throw StorageError.illegalArgument("\(target) exists: a copy goes into a new directory")
        }
        let partial = target + ".partial"
        try Self.removeWorkDirectory(partial)
        let master: MasterKey?
        switch changingKey {
        case .none: master = masterKey
        case .some(.none): master = nil
        case .some(.some(let key)): master = try MasterKey(newFor: key)
        }
        let read = try beginRead()
        defer { withExtendedLifetime(read) {} }
        let copy = try makeCopyEngine(in: partial, master: master)
        do {
            copy.raiseTransactionIds(to: read.transactionId + 1)
            try Self.copyTrees(of: read, into: copy, rewrites: compactionRewrites, cancelled: closedFlag, progress: progress)
            try copy.sealCopy(carrying: read.transactionId)
            try copy.syncNow()
            let bytes = copy.fileSize
            copy.close()
            try Syscall.rename(partial, to: target)
            let slash = target.lastIndex(of: "/")
            try Syscall.syncDirectory(slash.map { $0 == target.startIndex ? "/" : String(target[..<$0]) } ?? ".")
            return CopyReport(transactionId: read.transactionId, bytes: bytes)
        } catch {
            copy.close()
            try? Self.removeWorkDirectory(partial)
            throw error
        }
    }
}
