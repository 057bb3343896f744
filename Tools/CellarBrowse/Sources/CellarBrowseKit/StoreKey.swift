@_spi(Tools) import Cellar
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
    do {
        return try ToolKeys.key(prompt: askPrompt, environment: environment)
    } catch let error as CellarError {
        throw BrowseError(error.message)
    }
}
