// The process's resident memory, for the benchmarks that report it (crud, bulk-bench).
import Foundation
import Synchronization
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

/// The highest anonymous memory (RssAnon: heap and private mappings, not the pages of mapped
/// files, which the kernel can drop) the process had while `body` ran, sampled every 25 ms on a
/// thread of its own, less what it had before: what a reader of a store through mmap, whose file
/// pages count in its RSS, itself allocated.
public func peakAnonymousAdded(_ body: () throws -> Void) rethrows -> Int {
    let baseline = processStatusBytes("RssAnon") ?? 0
    let peak = Mutex(baseline)
    let done = Mutex(false)
    let sampler = Thread {
        while !done.withLock({ $0 }) {
            let now = processStatusBytes("RssAnon") ?? 0
            peak.withLock { $0 = max($0, now) }
            usleep(25_000)
        }
    }
    sampler.start()
    defer {
        done.withLock { $0 = true }
        while !sampler.isFinished { usleep(1_000) }
    }
    try body()
    let now = processStatusBytes("RssAnon") ?? 0
    return peak.withLock { max($0, now) } - baseline
}
