/// A meta model ID with its UID, written `"ID:UID"` in the model JSON file.
///
/// IDs are small, assigned one after the other per kind (entity, property within its entity,
/// index, relation) and never reused; UIDs are random positive 64-bit values, unique across all
/// kinds, and identify an entity or property through renames. `0:0` means "none yet".
public struct IdUid: Hashable, Sendable, CustomStringConvertible {
    /// The ID: small, handed out one after the other per kind, never reused.
    public var id: UInt32
    /// The UID: a random positive number, unique across all kinds, kept through renames.
    public var uid: UInt64

    /// An ID with its UID.
    @_spi(CellarGenerated) public init(id: UInt32, uid: UInt64) {
        self.id = id
        self.uid = uid
    }

    /// Parses `"ID:UID"` (both decimal); nil when the text is anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let id = Self.decimal(parts[0], as: UInt32.self),
              let uid = Self.decimal(parts[1], as: UInt64.self) else { return nil }
        self.id = id
        self.uid = uid
    }

    /// `0:0`: no ID or UID yet.
    public static let zero = IdUid(id: 0, uid: 0)

    /// Whether this is ``zero``.
    public var isZero: Bool { id == 0 && uid == 0 }

    /// The `"ID:UID"` text, as the model file writes it.
    public var description: String { "\(id):\(uid)" }

    /// Digits only: no sign, no spaces, no `0x`, not empty.
    private static func decimal<T: FixedWidthInteger>(_ text: Substring, as: T.Type) -> T? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return T(text)
    }
}
