// What engine-bench and box-bench share: the command line, the clock, the CRUD workload's random order,
// the temporary folders on disk and the output (table and tsv lines).
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public struct BenchError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Runs a benchmark's `main`: a thrown error is printed as `<tool>: FAILED: <error>` and exits 1.
public func runMain(_ tool: String, _ body: () throws -> Void) {
    do {
        try body()
    } catch {
        log("\(tool): FAILED: \(error)")
        exit(1)
    }
}

/// A line on standard error (progress and failures; standard output holds only the results).
public func log(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

/// Seconds on the monotonic clock.
@inlinable @inline(__always)
public func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// The median; of an even count, the mean of the middle two.
public func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// The value at fraction `p` (0...1) of `xs` sorted (nearest rank); NaN for none.
public func percentile(_ xs: [Double], _ p: Double) -> Double {
    guard !xs.isEmpty else { return .nan }
    let s = xs.sorted()
    return s[min(s.count - 1, max(0, Int((p * Double(s.count)).rounded(.up)) - 1))]
}

// MARK: - the CRUD workload's random order

/// docs/crud-workload.md: `perm[k] = k + 1`, then Fisher–Yates from the end with SplitMix64 seeded with 42.
public func randomOrder(_ n: Int) -> [UInt64] {
    var perm = (0..<n).map { UInt64($0 + 1) }
    var rng = SplitMix64(state: 42)
    var k = n - 1
    while k >= 1 {
        let j = Int(rng.next() % UInt64(k + 1))
        perm.swapAt(k, j)
        k -= 1
    }
    return perm
}

public struct SplitMix64 {
    public var state: UInt64

    public init(state: UInt64) { self.state = state }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
