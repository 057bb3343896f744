import ArgumentParser
import CellarStorage
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the tool gets an encrypted store's key: never from an argument (arguments show in `ps`
/// and in shell histories), but from the environment or the terminal.
///
/// - `CELLAR_KEY`: the 256-bit key as 64 hexadecimal digits;
/// - `CELLAR_PASSPHRASE`: a passphrase;
/// - `--ask-passphrase`: a passphrase typed at a prompt, not echoed.
struct KeyOptions: ParsableArguments {
    @Flag(help: ArgumentHelp(
        "Ask for an encrypted store's passphrase on the terminal (not echoed).",
        discussion: "Without it, the key comes from CELLAR_KEY (64 hex digits) or CELLAR_PASSPHRASE when set."))
    var askPassphrase = false

    /// The key the options and the environment give; nil when none.
    func key() throws -> EncryptionKey? {
        try toolKey(hex: "CELLAR_KEY", passphrase: "CELLAR_PASSPHRASE", ask: askPassphrase ? "Passphrase: " : nil)
    }

    /// `StorageOptions` with the key, read-only or not.
    func storageOptions(readOnly: Bool) throws -> StorageOptions {
        StorageOptions(readOnly: readOnly, encryptionKey: try key())
    }
}

/// The key from the environment variable `hex` (64 hex digits) or `passphrase`, or typed at the
/// prompt `ask`; nil when none is given.
func toolKey(hex: String, passphrase: String, ask: String?) throws -> EncryptionKey? {
    if let ask {
        guard let typed = getpass(ask) else { throw ToolError("could not read a passphrase from the terminal") }
        let phrase = String(cString: typed)
        guard !phrase.isEmpty else { throw ToolError("an empty passphrase is no key") }
        return EncryptionKey(passphrase: phrase)
    }
    if let value = environment(hex) {
        guard let bytes = hexBytes(value), bytes.count == 32 else {
            throw ToolError("\(hex) must hold 64 hexadecimal digits (a 256-bit key)")
        }
        return try EncryptionKey(bytes: bytes)
    }
    if let value = environment(passphrase) {
        guard !value.isEmpty else { throw ToolError("\(passphrase) is empty: an empty passphrase is no key") }
        return EncryptionKey(passphrase: value)
    }
    return nil
}

private func environment(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}

/// The bytes of a string of hexadecimal digits; nil when it is not one.
func hexBytes(_ text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
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
