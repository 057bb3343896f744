import Foundation

/// A hybrid logical clock timestamp (HLC): 64 bits, the high 48 the wall-clock milliseconds
/// since 1970, the low 16 a counter that orders timestamps given within one millisecond (or
/// while the wall clock stands behind the last timestamp given). Timestamps compare as their
/// raw values; a store's history never gives the same one twice, nor a smaller one later.
public struct HybridTimestamp: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The 64 bits: milliseconds << 16 | counter.
    public let rawValue: UInt64

    /// The timestamp with these 64 bits.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The timestamp of `milliseconds` (the low 48 bits are kept) and `counter`.
    public init(milliseconds: UInt64, counter: UInt16) {
        rawValue = (milliseconds & HybridClock.millisecondMask) << 16 | UInt64(counter)
    }

    /// Milliseconds since 1970-01-01 (UTC), as the wall clock said, or as the clock ran ahead of it.
    public var milliseconds: UInt64 { rawValue >> 16 }
    /// The counter that orders timestamps of the same millisecond.
    public var counter: UInt16 { UInt16(truncatingIfNeeded: rawValue) }
    /// The timestamp's milliseconds as a date.
    public var date: Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    /// Whether `a` comes before `b`.
    public static func < (a: HybridTimestamp, b: HybridTimestamp) -> Bool { a.rawValue < b.rawValue }

    /// The milliseconds and the counter, `1732630000000.3`.
    public var description: String { "\(milliseconds).\(counter)" }
}

/// How the history's timestamps advance (see ``HybridTimestamp``): each one is the wall clock's
/// millisecond when that is past the last timestamp's, else the last one plus one (its counter
/// up by one, or, when the counter is full, the next millisecond with counter 0). So timestamps
/// only grow, whatever the wall clock does; after the clock went back they run on from the last
/// one until it catches up.
enum HybridClock {
    /// The milliseconds a timestamp can hold: 48 bits (until the year 10889).
    static let millisecondMask: UInt64 = (1 << 48) - 1

    /// The timestamp after `last` at wall-clock time `wallMilliseconds`. Never smaller than or
    /// equal to `last`, unless `last` is the largest timestamp there is (then it is returned).
    static func next(after last: HybridTimestamp, wallMilliseconds: UInt64) -> HybridTimestamp {
        let wall = HybridTimestamp(milliseconds: min(wallMilliseconds, millisecondMask), counter: 0)
        if wall > last { return wall }
        // The wall clock stands at or behind the last timestamp: count on from it (a full
        // counter carries into the milliseconds: the clock runs a millisecond ahead).
        return last.rawValue == .max ? last : HybridTimestamp(rawValue: last.rawValue + 1)
    }

    /// The wall clock's milliseconds since 1970.
    static func wallMilliseconds() -> UInt64 {
        let seconds = Date().timeIntervalSince1970
        return seconds > 0 ? UInt64(seconds * 1000) : 0
    }
}
