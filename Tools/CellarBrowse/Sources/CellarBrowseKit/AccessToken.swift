/// The secret a browser must present: in the URL (`?token=…`) on its first visit, then in the
/// cookie the server sets. Anyone else on the machine (another user, a web page's script probing
/// localhost) gets 403 without it.
public struct AccessToken: Sendable, Equatable, CustomStringConvertible {
    /// The token's 32 lowercase hexadecimal digits (128 bits).
    public let value: String

    /// A new token of 128 random bits from the system's CSPRNG (`SystemRandomNumberGenerator`:
    /// `getrandom` on Linux, `arc4random` on Apple platforms).
    public static func random() -> AccessToken {
        var generator = SystemRandomNumberGenerator()
        let digits = (0..<16).map { _ -> String in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return String(byte >> 4, radix: 16) + String(byte & 15, radix: 16)
        }
        return AccessToken(value: digits.joined())
    }

    /// A token with the given text (tests use fixed ones).
    public init(value: String) { self.value = value }

    /// The token, for printing the URL.
    public var description: String { value }

    /// Whether `candidate` is the token, in time that does not depend on where they differ.
    public func matches(_ candidate: Substring?) -> Bool {
        guard let candidate else { return false }
        let a = Array(value.utf8), b = Array(candidate.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}
