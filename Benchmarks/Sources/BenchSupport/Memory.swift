// The process's resident memory, for the benchmarks that report it (crud, bulk-bench).
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A field of /proc/self/status given in kB (`VmRSS`, `VmHWM`), in bytes; nil where there is none
/// (not Linux).
public func processStatusBytes(_ field: String) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "").map { $0 * 1024 }
    }
    return nil
}

/// Resets the process's RSS high-water mark to its current RSS (Linux: `5` to
/// /proc/self/clear_refs), so that the next `peakRSS()` measures what follows.
public func resetPeakRSS() {
    let fd = open("/proc/self/clear_refs", O_WRONLY)
    guard fd >= 0 else { return }
    _ = "5".withCString { write(fd, $0, 1) }
    close(fd)
}

/// The RSS high-water mark in bytes (VmHWM of /proc/self/status; else getrusage's ru_maxrss).
public func peakRSS() -> Int {
    if let bytes = processStatusBytes("VmHWM") { return bytes }
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Int(usage.ru_maxrss) * 1024
}
