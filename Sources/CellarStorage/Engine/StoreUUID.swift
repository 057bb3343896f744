/// The identity of a store: 16 random bytes created once with the file and kept forever (through
/// reopen and compaction). Printed in the usual 8-4-4-4-12 hex form.
public struct StoreUUID: Hashable, Sendable, CustomStringConvertible {
    /// The first 8 bytes, most significant first.
    public let high: UInt64
    /// The last 8 bytes, most significant first.
    public let low: UInt64

    /// A UUID from its two halves, as ``high`` and ``low`` hold them.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A fresh random (version 4) UUID.
    static func random() -> StoreUUID {
        var rng = SystemRandomNumberGenerator()
        let high = (rng.next() & ~0xF000) | 0x4000  // version 4
        let low = (rng.next() & ~(UInt64(0xC) << 60)) | (UInt64(0x8) << 60)  // RFC 4122 variant
        return StoreUUID(high: high, low: low)
    }

    /// The 16 bytes, most significant first.
    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }

    /// The UUID in the usual lowercase 8-4-4-4-12 hex form.
    public var description: String {
        let hex = bytes.map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
        }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]]
            .map { $0.joined() }.joined(separator: "-")
    }

    /// Parses the 8-4-4-4-12 hex form (either case); nil when malformed.
    public init?(string: String) {
        let digits = string.filter { $0 != "-" }
        guard string.count == 36, digits.count == 32,
              [8, 13, 18, 23].allSatisfy({ string[string.index(string.startIndex, offsetBy: $0)] == "-" }),
              let high = UInt64(digits.prefix(16), radix: 16),
              let low = UInt64(digits.suffix(16), radix: 16)
        else { return nil }
        self.init(high: high, low: low)
    }
}
