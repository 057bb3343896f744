#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Zeros to write from: what the log writer keeps ahead of the log and what recovery writes over
/// a torn tail.
enum ZeroBytes {
    /// 1 MiB of zeros that cost nothing: an anonymous mapping that is never written, so every page
    /// of it is the kernel's shared zero page. (Read-only after its thread-safe lazy initialization.)
    nonisolated(unsafe) static let megabyte: UnsafeRawPointer? = {
        let pointer = mmap(nil, 1 << 20, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let pointer, pointer != MAP_FAILED else { return nil }
        return UnsafeRawPointer(pointer)
    }()

    /// The megabyte above, or 4 KiB where it could not be mapped.
    static var buffer: UnsafeRawBufferPointer {
        if let zeros = megabyte { return UnsafeRawBufferPointer(start: zeros, count: 1 << 20) }
        return UnsafeRawBufferPointer(start: fallback, count: FileHeader.size)
    }

    nonisolated(unsafe) private static let fallback: UnsafeRawPointer = {
        let zeros = UnsafeMutableRawPointer.allocate(byteCount: FileHeader.size, alignment: 8)
        zeros.initializeMemory(as: UInt8.self, repeating: 0, count: FileHeader.size)
        return UnsafeRawPointer(zeros)
    }()
}
