#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A read-only shared mapping of the data file. Unmapped when the last reference goes away, so a
/// reader holding a snapshot keeps its mapping alive while the writer has moved to a larger one.
package final class MappedRegion: @unchecked Sendable {
    // Immutable after init; the bytes it points at are only appended to, never changed in place.
    package let base: UnsafeRawPointer
    package let length: Int

    package init(fd: Int32, length: Int, path: String) throws {
        let pointer = mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0)
        guard let pointer, pointer != MAP_FAILED else {
            throw StorageError.io(operation: "mmap", errno: Syscall.errno(), path: path)
        }
        self.base = UnsafeRawPointer(pointer)
        self.length = length
    }

    deinit {
        munmap(UnsafeMutableRawPointer(mutating: base), length)
    }

    /// Tells the system that the pages of `range` (file offsets) will not be needed soon: they
    /// leave this process's resident set (on Linux at once; the page cache keeps the data, and a
    /// later read maps them again). For a range only its owner reads: a write transaction's
    /// spilled records, which it reads back a few of, and whose pages would otherwise add up in
    /// its resident size. Nothing happens when the system declines.
    package func dropResidentPages(_ range: Range<UInt64>) {
        let page = UInt64(sysconf(Int32(_SC_PAGESIZE)))
        let start = range.lowerBound / page * page
        let end = min(range.upperBound, UInt64(length))
        guard page > 0, start < end else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: base + Int(start)), Int(end - start), MADV_DONTNEED)
    }
}
