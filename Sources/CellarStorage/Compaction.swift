#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `StorageEngine.compact(directory:)` did.
public struct CompactionReport: Sendable, CustomStringConvertible {
    /// The log's length before and after (the data file without the zeros written ahead of it).
    public let bytesBefore: UInt64
    public let bytesAfter: UInt64
    /// The newest transaction copied; the compacted store's next commit follows it.
    public let transactionId: UInt64
    /// Wall-clock milliseconds, from opening the store to the swap.
    public let milliseconds: UInt64

    public var description: String {
        "compacted \(bytesBefore) → \(bytesAfter) bytes (transaction \(transactionId)) in \(milliseconds) ms"
    }
}

extension StorageEngine {
    /// Where a compaction builds the new data file, inside the store's directory (an engine of its
    /// own with its own lock file). A writable open removes what a crash left of it.
    public static let compactionDirectoryName = "compacting"

    /// Compacts the closed store in `directory` *offline*: opens it for writing (so no other
    /// process may have it open: `storeLocked` otherwise), copies the live entries of its newest
    /// commit into a new data file, and replaces the old file with it (`rename`, then a directory
    /// sync). Keeps the store UUID and every tree, key and value; transaction ids go on from the
    /// newest one. The garbage of replaced and deleted records is left behind.
    ///
    /// A crash at any point leaves the old file or the new one, each with every commit; the
    /// half-built new file is removed by the next writable open. The online compaction that runs
    /// while the store is in use is issue 7 and not built yet (`docs/compaction.md`).
    public static func compact(directory: String, options: StorageOptions = StorageOptions()) throws -> CompactionReport {
        guard !options.inMemory, !options.readOnly else {
            throw StorageError.illegalArgument("compaction needs a store on disk, opened for writing")
        }
        let started = nowMs()
        let source = try StorageEngine(directory: directory, options: options)
        defer { source.close() }
        let snapshot = source.current.load(ordering: .acquiring)
        let header = try readHeader(source.file)

        // The new file: the same UUID and creation time, a new salt.
        let work = directory + "/" + compactionDirectoryName
        try removeCompactionLeftovers(directory)
        try Syscall.makeDirectory(work)
        let dataPath = work + "/" + dataFileName
        var rng = SystemRandomNumberGenerator()
        let newHeader = FileHeader(uuid: header.uuid, salt: rng.next(), createdMs: header.createdMs)
        var copyOptions = StorageOptions(durability: .none, nodeSize: options.nodeSize)
        copyOptions.fileMode = options.fileMode
        copyOptions.openFile = options.openFile  // the fault-injection seam reaches the copy too
        let copy: StorageEngine
        do {
            let open = options.openFile ?? { path, create, readOnly in
                try PosixFile(path: path, create: create, readOnly: readOnly, mode: mode_t(options.fileMode))
            }
            let headerFile = try open(dataPath, true, false)
            defer { headerFile.close() }
            try writeHeader(newHeader, to: headerFile)
            copy = try StorageEngine(directory: work, options: copyOptions)
        } catch {
            try? removeCompactionLeftovers(directory)
            throw error
        }
        let after: UInt64
        do {
            copy.continueTransactionIds(after: snapshot.txnId)
            try copyTrees(of: ReadTransaction(snapshot: snapshot), into: copy)
            // Written in `.none` durability: synced here, where a failure stops the compaction
            // (close syncs again, with the superblock, but cannot report a failure).
            try copy.syncNow()
            copy.close()
            // Check the copy before it replaces anything: it must open, hold the same trees and
            // counts, and carry the same UUID.
            let check = try StorageEngine(directory: work, options: StorageOptions(readOnly: true))
            defer { check.close() }
            try verifyCopy(of: ReadTransaction(snapshot: snapshot), against: check, uuid: header.uuid)
            after = check.fileSize
        } catch {
            copy.close()
            try? removeCompactionLeftovers(directory)
            throw error
        }

        // The swap: still under the store's lock (held by `source`).
        try Syscall.rename(dataPath, to: directory + "/" + dataFileName)
        try Syscall.syncDirectory(directory)
        try removeCompactionLeftovers(directory)
        return CompactionReport(bytesBefore: snapshot.committedLength, bytesAfter: after,
                                transactionId: snapshot.txnId, milliseconds: nowMs() - started)
    }

    /// Copies every tree of `source` into `engine`, in key order, committing every 16 MiB of
    /// keys and values so that the copy's dirty nodes stay small.
    private static func copyTrees(of source: ReadTransaction, into engine: StorageEngine) throws {
        let batchBytes = 16 << 20
        for name in try source.treeNames() {
            guard let tree = try source.tree(name) else { continue }
            let cursor = try source.cursor(tree)
            var more = try cursor.first()
            repeat {  // once at least: an empty tree is created too
                try engine.write { txn in
                    let target = try txn.tree(name, create: true)!
                    var written = 0
                    while more && written < batchBytes {
                        let key = cursor.key
                        let value = try cursor.value()
                        try txn.put(target, key: key, value: value)
                        written += key.count + value.count
                        more = try cursor.next()
                    }
                }
            } while more
        }
    }

    /// Throws unless `engine` holds the trees of `source` with the same counts, and `uuid`.
    private static func verifyCopy(of source: ReadTransaction, against engine: StorageEngine, uuid: StoreUUID) throws {
        guard engine.uuid == uuid else {
            throw StorageError.fileCorrupt(offset: 16, reason: "the compacted file has another store UUID")
        }
        try engine.read { copy in
            let names = try source.treeNames()
            guard try copy.treeNames() == names else {
                throw StorageError.fileCorrupt(offset: 0, reason: "the compacted file does not list the same trees")
            }
            for name in names {
                let a = try source.count(try source.tree(name)!)
                let b = try copy.tree(name).map { try copy.count($0) } ?? -1
                guard a == b else {
                    throw StorageError.fileCorrupt(offset: 0, reason: "the compacted tree \(name) holds \(b) entries, not \(a)")
                }
            }
        }
    }

    /// Removes the compaction directory of `directory` and what is in it (a data file and a lock).
    static func removeCompactionLeftovers(_ directory: String) throws {
        let work = directory + "/" + compactionDirectoryName
        for name in [dataFileName, lockFileName] { unlink(work + "/" + name) }
        if rmdir(work) != 0 {
            let code = errno
            if code != ENOENT { throw StorageError.io(operation: "rmdir", errno: code, path: work) }
        }
    }
}
