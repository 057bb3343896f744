#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers over the system calls the engine uses; a failure becomes `StorageError.io` naming
/// the call and the path. The `…Once` calls make exactly one system call: the loops over short
/// transfers and `EINTR` live in `StorageFile`'s extension, above the seam, so tests reach them.
///
/// The calls only Linux has (`memfd_create`, `sync_file_range`, `fallocate`, `fdatasync`) each
/// have the plain POSIX path Apple platforms take instead. `CELLAR_PORTABLE_POSIX` (set by
/// scripts/test-portable.sh) makes a Linux build take those paths too, so that they run under
/// the tests here; what only Darwin compiles is `F_FULLFSYNC` in the two syncs (docs/platforms.md).
#if os(Linux) && !CELLAR_PORTABLE_POSIX
/// glibc's `memfd_create` (2.27+), looked up at run time: Swift's Glibc module does not declare it
/// (it sits behind `_GNU_SOURCE`).
private let linuxMemfdCreate: (@convention(c) (UnsafePointer<CChar>, UInt32) -> Int32)? = {
    guard let symbol = dlsym(nil, "memfd_create") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (UnsafePointer<CChar>, UInt32) -> Int32).self)
}()

/// glibc's `sync_file_range`, looked up at run time for the same reason.
private let linuxSyncFileRange: (@convention(c) (Int32, off_t, off_t, UInt32) -> Int32)? = {
    guard let symbol = dlsym(nil, "sync_file_range") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (Int32, off_t, off_t, UInt32) -> Int32).self)
}()

/// glibc's `fallocate`, looked up at run time for the same reason.
private let linuxFallocate: (@convention(c) (Int32, Int32, off_t, off_t) -> Int32)? = {
    guard let symbol = dlsym(nil, "fallocate") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32, off_t, off_t) -> Int32).self)
}()
#endif

package enum Syscall {
    static func errno() -> Int32 {
        #if canImport(Glibc)
        return Glibc.errno
        #else
        return Darwin.errno
        #endif
    }

    /// Calls `call` (a system call that returns -1 and sets `errno` when it fails) and returns its
    /// result, or the `errno` it failed with; called again while it fails with `EINTR`, unless
    /// `retryOnInterrupt` is false. The one retry loop of the engine's system calls (swift-system's
    /// `valueOrErrno(retryOnInterrupt:)` is the model); the loops over a `StorageFile`'s calls are
    /// `retryingOnInterrupt`, above the seam.
    @inline(__always)
    static func valueOrErrno<I: FixedWidthInteger>(retryOnInterrupt: Bool = true, _ call: () -> I) -> Result<I, Errno> {
        while true {
            let value = call()
            if value != -1 { return .success(value) }
            let code = errno()
            if code == EINTR && retryOnInterrupt { continue }
            return .failure(Errno(code: code))
        }
    }

    /// `valueOrErrno`, a failure thrown as `StorageError.io` naming `operation` and `path`.
    @inline(__always)
    static func check<I: FixedWidthInteger>(_ operation: String, path: String, retryOnInterrupt: Bool = true,
                                            _ call: () -> I) throws -> I {
        switch valueOrErrno(retryOnInterrupt: retryOnInterrupt, call) {
        case .success(let value): return value
        case .failure(let error): throw StorageError.io(operation: operation, errno: error.code, path: path)
        }
    }

    static func open(_ path: String, flags: Int32, mode: mode_t = 0o644) throws -> Int32 {
        try check("open", path: path) {
            path.withCString { cPath in
                #if canImport(Glibc)
                Glibc.open(cPath, flags | O_CLOEXEC, mode)
                #else
                Darwin.open(cPath, flags | O_CLOEXEC, mode)
                #endif
            }
        }
    }

    /// One `pwrite`: may write fewer bytes than asked; throws `.io` with the errno (EINTR too).
    static func pwriteOnce(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, at offset: UInt64, path: String) throws -> Int {
        try check("pwrite", path: path, retryOnInterrupt: false) { pwrite(fd, buffer.baseAddress, buffer.count, off_t(offset)) }
    }


    /// One `pread`: may read fewer bytes than asked (0 at end of file); throws `.io` with the errno.
    static func preadOnce(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, at offset: UInt64, path: String) throws -> Int {
        try check("pread", path: path, retryOnInterrupt: false) { pread(fd, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    /// One data sync: `fdatasync` on Linux, `F_FULLFSYNC` on Apple platforms (plain `fsync` there
    /// does not flush the drive's cache), falling back to `fsync` where the file system refuses
    /// it; the portable path (`CELLAR_PORTABLE_POSIX`) is that `fsync`. Throws `.io` with the
    /// errno (EINTR too).
    static func dataSyncOnce(_ fd: Int32, path: String) throws {
        #if canImport(Darwin)
        var (operation, result) = ("fcntl(F_FULLFSYNC)", fcntl(fd, F_FULLFSYNC))
        if result != 0 { (operation, result) = ("fsync", fsync(fd)) }  // some file systems do not support F_FULLFSYNC
        #elseif CELLAR_PORTABLE_POSIX
        let (operation, result) = ("fsync", fsync(fd))
        #else
        let (operation, result) = ("fdatasync", fdatasync(fd))
        #endif
        _ = try check(operation, path: path, retryOnInterrupt: false) { result }
    }

    /// A full `fsync` (data and metadata), looping on EINTR; used for directories.
    static func fullSync(_ fd: Int32, path: String) throws {
        _ = try check("fsync", path: path) { () -> Int32 in
            #if canImport(Darwin)
            if fcntl(fd, F_FULLFSYNC) == 0 { return 0 }
            return fsync(fd)
            #else
            return fsync(fd)
            #endif
        }
    }

    static func truncate(_ fd: Int32, to length: UInt64, path: String) throws {
        _ = try check("ftruncate", path: path) { ftruncate(fd, off_t(length)) }
    }

    /// One `fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)` on Linux: the range reads as
    /// zeros from now on and the file keeps its size. False where the system or the file system
    /// has no such call (the caller writes zeros instead); throws `.io` on any other failure.
    static func punchHoleOnce(_ fd: Int32, at offset: UInt64, length: UInt64, path: String) throws -> Bool {
        #if os(Linux) && !CELLAR_PORTABLE_POSIX
        guard let fallocate = linuxFallocate else { return false }
        let keepSizePunchHole: Int32 = 0x01 | 0x02  // <linux/falloc.h>
        if fallocate(fd, keepSizePunchHole, off_t(offset), off_t(length)) == 0 { return true }
        let code = errno()
        if code == EOPNOTSUPP || code == ENOSYS { return false }
        throw StorageError.io(operation: "fallocate(PUNCH_HOLE)", errno: code, path: path)
        #else
        return false
        #endif
    }

    /// Starts writing `offset ..< offset + length` of `fd` to the disk without waiting for it
    /// (`sync_file_range(SYNC_FILE_RANGE_WRITE)` on Linux; nothing elsewhere). A hint, not a
    /// sync: nothing is durable because of it, and a failure is ignored.
    static func startWriteback(_ fd: Int32, at offset: UInt64, length: UInt64) {
        #if os(Linux) && !CELLAR_PORTABLE_POSIX
        guard let syncFileRange = linuxSyncFileRange else { return }
        _ = syncFileRange(fd, off_t(offset), off_t(length), 2)  // SYNC_FILE_RANGE_WRITE
        #endif
    }

    /// Throws unless `fd` is a regular file: a directory is `EISDIR` (as a writable `open` says),
    /// anything else (a device, a pipe, a socket) `notAStore`.
    static func requireRegularFile(_ fd: Int32, path: String) throws {
        let type = try status(fd, path: path).st_mode & S_IFMT
        if type == S_IFREG { return }
        if type == S_IFDIR { throw StorageError.io(operation: "open", errno: EISDIR, path: path) }
        throw StorageError.notAStore(path: path, reason: "it is not a regular file")
    }

    /// The file's size, from `lseek(SEEK_END)` rather than `fstat`: an `fstat` asks for the
    /// file's timestamps too, and on Linux (multigrain timestamps, 6.13 on) the next write to a
    /// file whose timestamps were looked at dirties its inode, which the writer's next
    /// `fdatasync` must then write (see `SharedWriteLock.fileGeneration`). Every read and write
    /// is positional (`pread`, `pwrite`), so the descriptor's offset means nothing.
    static func size(_ fd: Int32, path: String) throws -> UInt64 {
        UInt64(try check("lseek", path: path) { lseek(fd, 0, SEEK_END) })
    }

    /// Which file `fd` is (its device and inode): a reader compares it with `identity(ofPath:)` to
    /// learn that a compaction renamed a new file over the data file.
    static func identity(_ fd: Int32, path: String) throws -> FileIdentity {
        FileIdentity(try status(fd, path: path))
    }

    /// Which file `path` leads to now, and its size (one `stat`); nil when nothing is there.
    static func identity(ofPath path: String) -> (identity: FileIdentity, size: UInt64)? {
        var info = stat()
        while true {
            if stat(path, &info) == 0 { return (FileIdentity(info), UInt64(info.st_size)) }
            if errno() != EINTR { return nil }
        }
    }

    /// `fstat`, looping on EINTR.
    private static func status(_ fd: Int32, path: String) throws -> stat {
        var info = stat()
        _ = try check("fstat", path: path) { fstat(fd, &info) }
        return info
    }

    static func close(_ fd: Int32) {
        // close is not retried on EINTR: on Linux the descriptor is released either way.
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
    }

    /// Syncs a directory so that a file created or renamed in it survives power loss.
    static func syncDirectory(_ path: String) throws {
        let fd = try open(path, flags: O_RDONLY)
        defer { close(fd) }
        try fullSync(fd, path: path)
    }

    /// A new, empty, anonymous file that lives in memory until its descriptor is closed: a
    /// `memfd` on Linux; elsewhere a temporary file unlinked at once (the page cache holds it).
    static func anonymousFile(name: String) throws -> Int32 {
        #if os(Linux) && !CELLAR_PORTABLE_POSIX
        if let memfdCreate = linuxMemfdCreate {
            let fd = name.withCString { memfdCreate($0, 1 /* MFD_CLOEXEC */) }
            if fd >= 0 { return fd }
        }
        #endif
        var template = Array(((getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp") + "/cellar-memory-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw StorageError.io(operation: "mkstemp", errno: errno(), path: name) }
        _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
        return fd
    }

    /// Renames `path` to `target`, replacing it atomically.
    package static func rename(_ path: String, to target: String) throws {
        #if canImport(Glibc)
        let result = Glibc.rename(path, target)
        #else
        let result = Darwin.rename(path, target)
        #endif
        if result != 0 { throw StorageError.io(operation: "rename", errno: errno(), path: path) }
    }

    static func makeDirectory(_ path: String) throws {
        if mkdir(path, 0o755) != 0 {
            let code = errno()
            if code != EEXIST { throw StorageError.io(operation: "mkdir", errno: code, path: path) }
        }
    }
}

/// A file's device and inode: which file a path or a descriptor leads to.
package struct FileIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64

    init(_ info: stat) {
        device = UInt64(truncatingIfNeeded: info.st_dev)
        inode = UInt64(truncatingIfNeeded: info.st_ino)
    }
}

/// An `errno` a system call failed with (see `Syscall.valueOrErrno`).
struct Errno: Error, Equatable {
    let code: Int32
}
