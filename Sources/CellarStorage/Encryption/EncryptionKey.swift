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

    /// A key of 32 bytes written as 64 hexadecimal digits (either case), as keys are kept in
    /// configuration or environment variables. Throws `illegalArgument` for anything else.
    public init(hexadecimal text: String) throws {
        let digits = Array(text.utf8)
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        if digits.count == 64 {
            for i in stride(from: 0, to: 64, by: 2) {
                guard let high = value(digits[i]), let low = value(digits[i + 1]) else { break }
                bytes.append(high << 4 | low)
            }
        }
        guard bytes.count == 32 else {
            throw StorageError.illegalArgument("an encryption key in hexadecimal is 64 hexadecimal digits (256 bits)")
        }
        try self.init(bytes: bytes)
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
