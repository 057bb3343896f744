#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A store's directory opened, before its engine exists: the write lock taken, the data file
/// opened (or created), its header read, the newest commit found by `Recovery`, and a torn tail
/// overwritten with zeros. `StorageEngine.init` builds the engine and its `LogWriter` from it.
struct OpenedStore {
    /// The lock file's descriptor, holding the store's write lock; -1 when read-only or in memory.
    let lockDescriptor: Int32
    let file: any StorageFile
    let header: FileHeader
    /// How the file's records are sealed (its cipher and write epoch when encrypted).
    let sealing: RecordSealing
    /// The master key the options' encryption key gives for this store; nil when plain.
    let master: MasterKey?
    let recovered: RecoveredState
    /// The file's physical size (the log and any zeros ahead of it).
    let size: UInt64
    /// The mapping readers of the newest commit start on.
    let generation: MapGeneration

    /// Opens the store in `directory` with `options` (validated). `compactionCopy`: the file is a
    /// compaction's copy being written, whose commits so far are partial. `lockHeld`: a writable
    /// open by an engine that holds the store's write lock already (one of several writing
    /// processes, following the file another one compacted); no lock is taken.
    static func open(directory: String, options: StorageOptions, compactionCopy: Bool, lockHeld: Bool = false) throws -> OpenedStore {
        let dataPath = directory + "/" + StorageEngine.dataFileName
        let lockDescriptor: Int32
        if options.readOnly || options.inMemory {
            lockDescriptor = -1
        } else {
            try Syscall.makeDirectory(directory)
            lockDescriptor = lockHeld ? -1 : try lock(directory + "/" + StorageEngine.lockFileName, options: options)
            // What a compaction that did not finish left behind (see `compact`): only a writer
            // holding this lock builds it, and that is now us. Left in place when it cannot be
            // removed (a file of someone else's in it): it is never read, and `compact` says why
            // it cannot start.
            try? StorageEngine.removeCompactionLeftovers(directory)
        }
        var opened: (any StorageFile)?
        do {
            let file = try options.openDataFile(dataPath, create: !options.readOnly, readOnly: options.readOnly)
            opened = file
            var size = try file.size()
            let header: FileHeader
            // The file's start, read once: all of a file too short to hold a commit, else the header.
            let start = try readStart(of: file, count: size <= UInt64(FileHeader.size) ? Int(size) : FileHeader.encodedSize)
            let existing = Result { try start.withUnsafeBytes { try FileHeader.decode($0) } }
            if case .failure = existing, !isUnfinishedHeader(size <= UInt64(FileHeader.size) ? start[...] : start.prefix(8)) {
                // Any other file is someone else's, and is left alone.
                throw StorageError.notAStore(path: dataPath, reason: size <= UInt64(FileHeader.size)
                    ? "its \(size) bytes do not start with Cellar's header" : "it does not start with Cellar's magic")
            }
            if size <= UInt64(FileHeader.size), case .failure = existing {
                // No valid header and no room for a commit: a store whose creation was cut short
                // (empty, zeros, or the start of Cellar's header) holds nothing committed and is
                // created anew.
                guard !options.readOnly else {
                    throw StorageError.fileCorrupt(offset: 0, reason: "the store was never completely created (no valid header)")
                }
                header = try createHeader(file, directory: options.inMemory ? nil : directory, key: options.encryptionKey)
                size = UInt64(FileHeader.size)
            } else {
                header = try existing.get()
                if size < UInt64(FileHeader.size) && !options.readOnly {
                    // A valid header whose superblock area was never written: complete it.
                    try file.truncate(to: UInt64(FileHeader.size))
                    try file.sync()
                    size = UInt64(FileHeader.size)
                }
            }
            var (sealing, master) = try sealing(for: header, key: options.encryptionKey, path: dataPath)
            var region = try file.map(length: MapGeneration.mappingLength(for: size, minimum: options.initialMapSize))
            var recovered: RecoveredState
            var attempt = 0
            while true {
                do {
                    recovered = try Recovery.recover(base: region.base, fileSize: size, header: header, sealing: sealing,
                                                     acceptsPartial: compactionCopy)
                    break
                } catch StorageError.fileCorrupt(let offset, let reason) {
                    // A read-only open races with the process that writes: what looked like a bad
                    // record followed by later commits may be a frame that was being appended.
                    // When the record verifies on a second look, look at the whole log again.
                    guard options.readOnly, attempt < 20, verifiesNow(file, at: offset, sealing: sealing) else {
                        throw StorageError.fileCorrupt(offset: offset, reason: reason)
                    }
                    attempt += 1
                    usleep(1_000)
                    size = try file.size()
                    region = try file.map(length: MapGeneration.mappingLength(for: size, minimum: options.initialMapSize))
                }
            }
            // A read-only engine's mapping knows its file, to follow the writer (`LogFollower`); so
            // does one of several writing processes', to follow the others.
            let generation = MapGeneration(region: region, salt: header.salt, cipher: sealing.cipher,
                                           fileIdentity: options.readOnly || options.sharedWriting ? try file.identity() : nil)
            if recovered.hasTail && !options.readOnly {
                // Overwritten with zeros (the space ahead of the log), never cut off: the file
                // must not shrink under a process that has it mapped (a read-only open of the
                // same store elsewhere), whose reads past the new end would be SIGBUS.
                try file.zero(at: recovered.end, length: size - recovered.end, from: ZeroBytes.buffer)
                try file.sync()
            }
            if sealing.cipher != nil && !options.readOnly {
                // A new write epoch for what this open writes (see `EpochSlots`): the last one may
                // have written records past the newest commit.
                let epoch = try EpochSlots.read(file, salt: header.salt)
                guard epoch < RecordCipher.maxEpoch else {
                    throw StorageError.commitsRefused(reason: "the data file has used all of its \(RecordCipher.maxEpoch) write epochs")
                }
                try EpochSlots.write(epoch + 1, to: file, salt: header.salt)
                sealing.epoch = epoch + 1
            }
            return OpenedStore(lockDescriptor: lockDescriptor, file: file, header: header, sealing: sealing, master: master,
                               recovered: recovered, size: size, generation: generation)
        } catch {
            opened?.close()
            if lockDescriptor >= 0 { Syscall.close(lockDescriptor) }
            throw error
        }
    }

    /// Takes the store's write lock. A lock that is busy is tried again every 10 ms for `waiting`
    /// (`StorageOptions.lockWaitTimeout`), and for at least 200 ms, before `storeLocked` is thrown:
    /// when any thread of this process forks (to run a command, say), the child shares our
    /// descriptors until it execs, and may briefly hold a lock we just released. Never blocks in
    /// `flock` itself, so the wait ends at its deadline. With several writing processes
    /// (`StorageOptions.sharedWriting`) another process holds it for one transaction at a time:
    /// the open waits as a write transaction does (`StorageOptions.sharedLockWait`).
    private static func lock(_ path: String, options: StorageOptions) throws -> Int32 {
        let fd = try Syscall.open(path, flags: O_RDWR | O_CREAT, mode: 0o644)
        do {
            try SharedWriteLock.takeFlock(fd, path: path, waiting: options.sharedWriting
                ? options.sharedLockWait : max(options.lockWaitTimeout, .milliseconds(200)))
        } catch {
            Syscall.close(fd)
            throw error
        }
        return fd
    }

    /// Whether the record at `offset` verifies when read again from the file (a read-only open
    /// checking whether a bad record was only being written); in an encrypted file it must also
    /// authenticate, else a record whose checksum holds but whose tag does not (tampered) would
    /// be waited for in vain.
    private static func verifiesNow(_ file: any StorageFile, at offset: UInt64, sealing: RecordSealing) -> Bool {
        var header = [UInt8](repeating: 0, count: LogRecord.headerSize)
        guard (try? header.withUnsafeMutableBytes({ try file.read(into: $0, at: offset) })) == LogRecord.headerSize else { return false }
        let length = Int(header.withUnsafeBytes { $0.loadLE(UInt32.self, at: 8) })
        // A record cannot be longer than what the file holds after it: a corrupt length must not
        // make this allocate up to 2 GiB (found by FuzzOpenStore).
        guard length >= LogRecord.headerSize, length <= LogRecord.maxLength,
              let size = try? file.size(), offset <= size, UInt64(length) <= size - offset else { return false }
        var record = [UInt8](repeating: 0, count: length)
        guard (try? record.withUnsafeMutableBytes({ try file.read(into: $0, at: offset) })) == length else { return false }
        return record.withUnsafeBytes { bytes in
            guard LogRecord.verify(record: bytes.baseAddress!, available: UInt64(length), offset: offset, salt: sealing.salt) != nil else {
                return false
            }
            guard let cipher = sealing.cipher else { return true }
            return withUnsafeTemporaryAllocation(byteCount: length, alignment: 8) { plain in
                cipher.open(bytes.baseAddress!, length: length, fileOffset: offset, into: plain.baseAddress!)
            }
        }
    }

    /// Whether `bytes`, the start of a data file without a valid header, are what a creation that
    /// was cut short leaves: nothing, zeros, or bytes that begin with Cellar's magic (as much of it
    /// as there is).
    private static func isUnfinishedHeader(_ bytes: ArraySlice<UInt8>) -> Bool {
        if bytes.allSatisfy({ $0 == 0 }) { return true }
        let magic = FileHeader.magic
        return bytes.prefix(magic.count).elementsEqual(magic.prefix(min(bytes.count, magic.count)))
    }

    /// The first `count` bytes of `file` (fewer when it is shorter).
    private static func readStart(of file: any StorageFile, count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let n = try bytes.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        return Array(bytes[0..<n])
    }

    static func readHeader(_ file: any StorageFile) throws -> FileHeader {
        try readStart(of: file, count: FileHeader.encodedSize).withUnsafeBytes { try FileHeader.decode($0) }
    }

    /// How the records of the file whose header is `header` are sealed when opened with `key`, and
    /// the master key it gives. Throws when the key does not fit: `encryptionKeyRequired` (an
    /// encrypted file, no key), `notEncrypted` (a plain file, a key), `wrongEncryptionKey`.
    static func sealing(for header: FileHeader, key: EncryptionKey?, path: String) throws -> (RecordSealing, MasterKey?) {
        switch (header.encryption, key) {
        case (nil, nil):
            return (RecordSealing(salt: header.salt), nil)
        case (nil, .some):
            throw StorageError.notEncrypted(path: path)
        case (.some, nil):
            throw StorageError.encryptionKeyRequired(path: path)
        case (.some(let encryption), .some(let key)):
            let master = try encryption.master(from: key, uuid: header.uuid)
            let cipher = RecordCipher(key: encryption.recordKey(master: master.bytes, uuid: header.uuid))
            return (RecordSealing(salt: header.salt, cipher: cipher), master)
        }
    }

    private static func createHeader(_ file: any StorageFile, directory: String?, key: EncryptionKey?) throws -> FileHeader {
        var rng = SystemRandomNumberGenerator()
        var header = FileHeader(uuid: .random(), salt: rng.next(), createdMs: WallClock.milliseconds())
        if let key {
            header.encryption = EncryptionHeader.make(master: try MasterKey(newFor: key), uuid: header.uuid)
        }
        // The file holds at most the 4096 bytes the header overwrites: no truncation (which could
        // cut a mapping another process has of it).
        try writeHeader(header, to: file)
        if let directory { try Syscall.syncDirectory(directory) }
        return header
    }

    /// Writes `header` as the first 4096 bytes of `file` (the superblock slots zero) and syncs it.
    static func writeHeader(_ header: FileHeader, to file: any StorageFile) throws {
        var bytes = [UInt8](repeating: 0, count: FileHeader.size)
        bytes.withUnsafeMutableBytes { header.encode(into: $0) }
        try bytes.withUnsafeBytes { try file.write($0, at: 0) }
        try file.sync()
    }
}
