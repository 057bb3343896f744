import CellarStorage
import Foundation

/// How Cellar's tools (the `cellar` command, the data browser) take an encrypted store's key:
/// never from an argument (arguments show in `ps` and in shell histories), but from the
/// environment — a variable holding the 256-bit key as 64 hexadecimal digits, or one holding a
/// passphrase — or from a passphrase typed at a prompt, not echoed.
@_spi(Tools) public enum ToolKeys {
    /// The key a passphrase typed at `prompt` gives (when `prompt` is not nil), else the one in
    /// the variable `hexVariable`, else the one in `passphraseVariable` of `environment`; nil
    /// when none is given. Throws `illegalArgument` naming the variable for a malformed key or an
    /// empty passphrase.
    public static func key(hexVariable: String = "CELLAR_KEY", passphraseVariable: String = "CELLAR_PASSPHRASE",
                           prompt: String? = nil,
                           environment: [String: String] = ProcessInfo.processInfo.environment) throws -> EncryptionKey? {
        if let prompt {
            guard let typed = getpass(prompt) else { throw CellarError.illegalArgument("could not read a passphrase from the terminal") }
            let phrase = String(cString: typed)
            guard !phrase.isEmpty else { throw CellarError.illegalArgument("an empty passphrase is no key") }
            return EncryptionKey(passphrase: phrase)
        }
        if let hex = environment[hexVariable] {
            guard let key = try? EncryptionKey(hexadecimal: hex) else {
                throw CellarError.illegalArgument("\(hexVariable) must hold 64 hexadecimal digits (a 256-bit key)")
            }
            return key
        }
        if let phrase = environment[passphraseVariable] {
            guard !phrase.isEmpty else { throw CellarError.illegalArgument("\(passphraseVariable) is empty: an empty passphrase is no key") }
            return EncryptionKey(passphrase: phrase)
        }
        return nil
    }
}
