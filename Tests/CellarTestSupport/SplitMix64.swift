/// SplitMix64: a small, fast, seedable generator for reproducible randomized tests.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A seed for a test run: `CELLAR_SEED` from the environment when set, else a random one.
    public static func testSeed() -> UInt64 {
        if let text = getenv("CELLAR_SEED").map({ String(cString: $0) }), let seed = UInt64(text) { return seed }
        return UInt64.random(in: 0...UInt64(UInt32.max))
    }
}

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
