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
}
