/// A range of keys for scans: bounds inclusive or exclusive, either side open.
public struct KeyRange: Sendable {
    /// The lower bound: the range starts at this key (``lowerInclusive``) or just above it; nil:
    /// no lower bound.
    public var lower: [UInt8]?
    /// Whether ``lower`` itself is in the range.
    public var lowerInclusive: Bool
    /// The upper bound: the range ends at this key (``upperInclusive``) or just below it; nil: no
    /// upper bound.
    public var upper: [UInt8]?
    /// Whether ``upper`` itself is in the range.
    public var upperInclusive: Bool

    /// A range from `lower` to `upper`; by default the lower bound is inclusive and the upper one
    /// exclusive, and a nil bound leaves that side open.
    public init(lower: [UInt8]? = nil, lowerInclusive: Bool = true, upper: [UInt8]? = nil, upperInclusive: Bool = false) {
        self.lower = lower
        self.lowerInclusive = lowerInclusive
        self.upper = upper
        self.upperInclusive = upperInclusive
    }

    /// Every key.
    public static let all = KeyRange()

    /// Every key that starts with `prefix`.
    public static func prefix(_ prefix: [UInt8]) -> KeyRange {
        // The smallest key above every key with the prefix: drop trailing 0xFF bytes, increment the last.
        var upper = prefix
        while let last = upper.last, last == 0xFF { upper.removeLast() }
        if upper.isEmpty { return KeyRange(lower: prefix) }
        upper[upper.count - 1] += 1
        return KeyRange(lower: prefix, upper: upper)
    }

    func admitsFromBelow(_ key: UnsafeRawBufferPointer) -> Bool {
        guard let lower else { return true }
        let c = compare(key, lower)
        return lowerInclusive ? c >= 0 : c > 0
    }

    func admitsFromAbove(_ key: UnsafeRawBufferPointer) -> Bool {
        guard let upper else { return true }
        let c = compare(key, upper)
        return upperInclusive ? c <= 0 : c < 0
    }

    private func compare(_ key: UnsafeRawBufferPointer, _ bound: [UInt8]) -> Int {
        bound.withUnsafeBytes { KeyCompare.compare(key, $0) }
    }
}
