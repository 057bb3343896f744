#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The real file: `pread`/`pwrite`/`fdatasync`/`mmap` on a descriptor.
package final class PosixFile: StorageFile, @unchecked Sendable {
    // The descriptor is set once; the engine serializes writes under its writer lock.
    package let path: String
    private let fd: Int32

    /// Opens `path`, which must be a regular file (a directory is `EISDIR`, even read-only).
    package init(path: String, create: Bool, readOnly: Bool, mode: mode_t = 0o644) throws {
        self.path = path
        var flags = readOnly ? O_RDONLY : O_RDWR
        if create && !readOnly { flags |= O_CREAT }
        let fd = try Syscall.open(path, flags: flags, mode: mode)
        do {
            try Syscall.requireRegularFile(fd, path: path)
        } catch {
            Syscall.close(fd)
            throw error
        }
        self.fd = fd
    }

    /// A file that lives in memory only (see `Syscall.anonymousFile`); `path` names it in errors.
    package init(anonymous path: String) throws {
        self.path = path
        self.fd = try Syscall.anonymousFile(name: path)
    }

    package func size() throws -> UInt64 { try Syscall.size(fd, path: path) }
    package func readOnce(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        try Syscall.preadOnce(fd, buffer, at: offset, path: path)
    }
    package func writeOnce(_ buffer: UnsafeRawBufferPointer, at offset: UInt64) throws -> Int {
        try Syscall.pwriteOnce(fd, buffer, at: offset, path: path)
    }
    package func syncOnce() throws { try Syscall.dataSyncOnce(fd, path: path) }
    package func truncate(to length: UInt64) throws { try Syscall.truncate(fd, to: length, path: path) }
    package func punchHoleOnce(at offset: UInt64, length: UInt64) throws -> Bool {
        try Syscall.punchHoleOnce(fd, at: offset, length: length, path: path)
    }
    package func startWriteback(at offset: UInt64, length: UInt64) { Syscall.startWriteback(fd, at: offset, length: length) }
    package func identity() throws -> FileIdentity? { try Syscall.identity(fd, path: path) }
    package func map(length: Int) throws -> MappedRegion { try MappedRegion(fd: fd, length: length, path: path) }

    /// A private, writable mapping of the first `length` bytes (copy-on-write: writes stay in
    /// this process, the file does not change, even when opened read-only); the caller unmaps it
    /// (`munmap`). For files that are replaced by renaming, never written in place (a change
    /// under the mapping would show through the pages not yet copied).
    package func mapPrivate(length: Int) throws -> UnsafeMutableRawPointer {
        let pointer = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0)
        guard let pointer, pointer != MAP_FAILED else {
            throw StorageError.io(operation: "mmap", errno: Syscall.errno(), path: path)
        }
        return pointer
    }
    package func close() { Syscall.close(fd) }
}
