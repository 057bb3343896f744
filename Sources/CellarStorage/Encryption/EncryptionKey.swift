import Crypto

/// The key a store is encrypted with (see `docs/encryption.md`): 256 bits given as bytes, or a
/// passphrase that the store stretches into 256 bits with scrypt.
///
/// The key itself is never written anywhere. The data file's header holds only what opening needs
/// to check it: the key-derivation parameters, two random salts and a 16-byte key check.
///
/// ```swift
/// let key = try EncryptionKey(bytes: myThirtyTwoBytes)      // from the keychain, say
/// let other = EncryptionKey(passphrase: "correct horse battery staple")
/// ```
public struct EncryptionKey: Sendable, CustomStringConvertible {
    /// How the 256-bit master key is had.
    enum Material: Sendable {
        /// The master key itself.
        case bytes([UInt8])
        /// A passphrase, stretched with scrypt and the store's key-derivation salt.
        case passphrase(String)
        /// A master key already derived for the store (what a compaction hands its copy).
        case master(MasterKey)
    }

    let material: Material

    /// A key of exactly 32 random bytes (AES-256). Throws `illegalArgument` for any other length.
    public init(bytes: [UInt8]) throws {
        guard bytes.count == 32 else {
            throw StorageError.illegalArgument("an encryption key is 32 bytes (256 bits), not \(bytes.count)")
        }
        material = .bytes(bytes)
    }

    /// A key made from a passphrase: scrypt (N = 2^15, r = 8, p = 1: 32 MiB and about a tenth of a
    /// second, once per open) with a random salt kept in the store's header. An empty passphrase
    /// is refused when the store is opened.
    public init(passphrase: String) {
        material = .passphrase(passphrase)
    }

    /// A new random 256-bit key, from the system's secure random generator.
    public static func random() -> EncryptionKey {
        EncryptionKey(material: .bytes(randomBytes(32)))
    }

    init(material: Material) {
        self.material = material
    }

    /// Never the key: logs and error messages show only which kind it is.
    public var description: String {
        switch material {
        case .bytes: return "EncryptionKey(256-bit key)"
        case .passphrase: return "EncryptionKey(passphrase)"
        case .master: return "EncryptionKey(derived key)"
        }
    }

    /// Whether the key is a passphrase (stretched with the store's scrypt parameters).
    var isPassphrase: Bool {
        switch material {
        case .bytes: return false
        case .passphrase: return true
        case .master(let master): return master.fromPassphrase
        }
    }
}
