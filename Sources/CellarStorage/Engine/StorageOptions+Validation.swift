extension StorageOptions {
    /// These options as an engine uses them (an in-memory store: no durability, an anonymous
    /// file), or `illegalArgument` naming the first option out of range.
    func validated() throws -> StorageOptions {
        var options = self
        // Nothing to share: a read-only open never writes, an in-memory store is private.
        if options.readOnly || options.inMemory { options.sharedWriting = false }
        if options.inMemory {
            guard !options.readOnly else {
                throw StorageError.illegalArgument("an in-memory store cannot be opened read-only: it starts empty")
            }
            options.durability = .none
            if options.openFile == nil {
                options.openFile = { path, _, _ in try PosixFile(anonymous: path) }
            }
        }
        guard options.nodeSize >= 256, options.nodeSize <= 1 << 20 else {
            throw StorageError.illegalArgument("nodeSize must be between 256 and 1 MiB, got \(options.nodeSize)")
        }
        guard options.initialMapSize > 0, options.superblockInterval > 0 else {
            throw StorageError.illegalArgument("initialMapSize and superblockInterval must be positive")
        }
        guard options.lockWaitTimeout >= .zero else {
            throw StorageError.illegalArgument("lockWaitTimeout must not be negative, got \(options.lockWaitTimeout)")
        }
        guard options.transactionMemoryBudget >= 64 << 10 else {
            throw StorageError.illegalArgument("transactionMemoryBudget must be at least 64 KiB, got \(options.transactionMemoryBudget)")
        }
        guard options.decryptedCacheSize >= 1 << 20 else {
            throw StorageError.illegalArgument("decryptedCacheSize must be at least 1 MiB, got \(options.decryptedCacheSize)")
        }
        guard options.compressionThreshold >= 16 else {
            throw StorageError.illegalArgument("compressionThreshold must be at least 16 bytes, got \(options.compressionThreshold)")
        }
        switch options.pastRetention {
        case .commits(let n) where n < 1:
            throw StorageError.illegalArgument("pastRetention must keep at least 1 commit, got \(n)")
        case .duration(let d) where d <= .zero:
            throw StorageError.illegalArgument("pastRetention must keep a duration longer than zero, got \(d)")
        default: break
        }
        if let level = options.compression.level, level < -(1 << 17) || level > 22 {
            throw StorageError.illegalArgument("zstd level must be between -131072 and 22, got \(level)")
        }
        if !options.compression.isAvailable {
            throw Zstd.unavailable("compression \(options.compression) was asked for")
        }
        return options
    }
}
