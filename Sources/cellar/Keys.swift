import ArgumentParser
@_spi(Tools) import Cellar
import CellarStorage

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
/// prompt `ask`; nil when none is given (`ToolKeys`, which the data browser shares).
func toolKey(hex: String, passphrase: String, ask: String?) throws -> EncryptionKey? {
    do {
        return try ToolKeys.key(hexVariable: hex, passphraseVariable: passphrase, prompt: ask)
    } catch let error as CellarError {
        throw ToolError(error.message)
    }
}
