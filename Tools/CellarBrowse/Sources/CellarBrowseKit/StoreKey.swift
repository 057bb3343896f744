import CellarStorage
import Foundation

/// An error to show its user as its message (a malformed key in the environment).
public struct BrowseError: Error, CustomStringConvertible {
    /// The message.
    public let description: String
    /// An error with `description` as its message.
    public init(_ description: String) { self.description = description }
}

/// The key of an encrypted store, taken as the `cellar` tool takes it: never from an argument
/// (arguments show in `ps` and shell histories), but from the environment — `CELLAR_KEY` (the
/// 256-bit key as 64 hexadecimal digits) or `CELLAR_PASSPHRASE` — or a passphrase typed at a
/// prompt. Nil when none is given.
public func storeKey(environment: [String: String] = ProcessInfo.processInfo.environment,
                     askPrompt: String? = nil) throws -> EncryptionKey? {
    if let askPrompt {
        guard let typed = getpass(askPrompt) else { throw BrowseError("could not read a passphrase from the terminal") }
        let phrase = String(cString: typed)
        guard !phrase.isEmpty else { throw BrowseError("an empty passphrase is no key") }
        return EncryptionKey(passphrase: phrase)
    }
    if let hex = environment["CELLAR_KEY"] {
        guard let bytes = hexBytes(hex), bytes.count == 32 else {
            throw BrowseError("CELLAR_KEY must hold 64 hexadecimal digits (a 256-bit key)")
        }
        return try EncryptionKey(bytes: bytes)
    }
    if let phrase = environment["CELLAR_PASSPHRASE"] {
        guard !phrase.isEmpty else { throw BrowseError("CELLAR_PASSPHRASE is empty: an empty passphrase is no key") }
        return EncryptionKey(passphrase: phrase)
    }
    return nil
}

/// The bytes of a string of hexadecimal digits; nil when it is not one.
func hexBytes(_ text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    for i in stride(from: 0, to: digits.count, by: 2) {
        guard let high = hexValue(digits[i]), let low = hexValue(digits[i + 1]) else { return nil }
        bytes.append(high << 4 | low)
    }
    return bytes
}

private func hexValue(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
    default: return nil
    }
}
