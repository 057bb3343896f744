#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The seam between the engine and its data file. Each requirement is one system call with that
/// call's own semantics (a write may be short, any call may fail with `EINTR`), so that a test can
/// swap in `FaultInjectingFile` and reach the engine's retry loops, its error paths and its crash
/// recovery. The loops themselves are in the extension below.
package protocol StorageFile: AnyObject, Sendable {
    var path: String { get }
    func size() throws -> UInt64
    /// One `pread`: returns the bytes read, fewer than asked only at end of file or when interrupted.
    func readOnce(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int
    /// One `pwrite`: returns the bytes written, which may be fewer than asked.
    func writeOnce(_ buffer: UnsafeRawBufferPointer, at offset: UInt64) throws -> Int
    /// One data sync (`fdatasync`; `F_FULLFSYNC` on Apple platforms).
    func syncOnce() throws
    func truncate(to length: UInt64) throws
    /// One hole punched at `offset` (`fallocate` with `PUNCH_HOLE | KEEP_SIZE`): the range reads
    /// as zeros and the file keeps its size. False where the system has no such call.
    func punchHoleOnce(at offset: UInt64, length: UInt64) throws -> Bool
    /// Starts writing a range to the disk without waiting (a hint: see `Syscall.startWriteback`).
    func startWriteback(at offset: UInt64, length: UInt64)
    /// Maps `length` bytes read-only from offset 0. The mapping may be longer than the file;
    /// callers never touch bytes past the committed length.
    func map(length: Int) throws -> MappedRegion
    /// Which file this is (device and inode), or nil for a file that cannot say (a test's): a
    /// read-only engine compares it with what the data file's path leads to, to follow a compaction.
    func identity() throws -> FileIdentity?
    func close()
}

extension StorageFile {
    /// Writes all of `buffer` at `offset`, looping on short writes and `EINTR`.
    package func write(_ buffer: UnsafeRawBufferPointer, at offset: UInt64) throws {
        var done = 0
        while done < buffer.count {
            let n = try retryingOnInterrupt { try writeOnce(UnsafeRawBufferPointer(rebasing: buffer[done...]), at: offset + UInt64(done)) }
            if n <= 0 { throw StorageError.io(operation: "pwrite", errno: EIO, path: path) }
            done += n
        }
    }

    /// Reads up to `buffer.count` bytes at `offset`, looping on short reads and `EINTR`; returns
    /// fewer bytes only at end of file.
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = try retryingOnInterrupt { try readOnce(into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]), at: offset + UInt64(done)) }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// A file without an identity: a read-only engine on it does not follow compactions.
    package func identity() throws -> FileIdentity? { nil }

    /// A file that cannot start its writeback early writes it when the system likes.
    package func startWriteback(at offset: UInt64, length: UInt64) {}

    /// Where the system has no way to punch holes: the caller writes zeros.
    package func punchHoleOnce(at offset: UInt64, length: UInt64) throws -> Bool { false }

    /// Makes `offset ..< offset + length` read as zeros without changing the file's size: a hole
    /// punched where the system can, else zeros written from `zeros` (a buffer of that many
    /// zero bytes, at least 1), `zeros.count` at a time. The file never shrinks on the way, so a
    /// process that maps it never finds its mapping cut short (which would be `SIGBUS`).
    package func zero(at offset: UInt64, length: UInt64, from zeros: UnsafeRawBufferPointer) throws {
        guard length > 0 else { return }
        if try punchHoleOnce(at: offset, length: length) { return }
        var at = offset
        while at < offset + length {
            let n = Int(min(offset + length - at, UInt64(zeros.count)))
            try write(UnsafeRawBufferPointer(rebasing: zeros[0..<n]), at: at)
            at += UInt64(n)
        }
    }

    /// Makes everything written so far durable, retrying only on `EINTR`. Any other failure is
    /// final: after a failed sync nothing is known to be on disk, and a retry would prove nothing.
    package func sync() throws {
        try retryingOnInterrupt { try syncOnce() }
    }
}

/// Calls `call`, one of a `StorageFile`'s single system calls, again while it throws `EINTR`:
/// the retry loop above the seam (where a test's file interrupts calls), as
/// `Syscall.valueOrErrno` is below it.
@inline(__always)
func retryingOnInterrupt<T>(_ call: () throws -> T) throws -> T {
    while true {
        do {
            return try call()
        } catch StorageError.io(_, let code, _) where code == EINTR {
            continue
        }
    }
}
