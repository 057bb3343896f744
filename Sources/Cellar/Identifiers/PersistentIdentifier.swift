import Foundation

/// Names one stored object for as long as it exists: the store's UUID, the entity (its name, and
/// its UID when known) and the object id. Pass it between threads and actors, keep it for a cold
/// start (`Codable`, `uriRepresentation`), put it in a search index; resolve it with `Box.get(_:)`.
///
/// ```swift
/// let pid = try notes.identifier(for: note)     // cellar://<store-uuid>/Note/p42
/// let data = try JSONEncoder().encode(pid)
/// let again = try notes.get(try JSONDecoder().decode(PersistentIdentifier.self, from: data))
/// ```
///
/// - An identifier of an object that was never put is *temporary* (`isTemporary`): it never
///   resolves, in any store, and each is distinct (`t<random UUID>` in its URI).
/// - It stays valid across reopen and compaction (object ids never change) and stops resolving
///   when the object is removed (`Box.get` returns nil; ids are not reused).
/// - Equality, hashing and order compare the store, the entity *name*, the object id (and a
///   temporary's token): what the URI holds. The UID is for resolving: after an entity is renamed
///   (with its UID kept), identifiers made before the rename that carry the UID (the `Codable`
///   form does) still resolve, though they compare unequal to new ones, which carry the new name.
///   A URI carries no UID: it resolves by name.
public struct PersistentIdentifier: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The UUID of the store the object is in (``Store/uuid``), made when the store was created.
    public let storeIdentifier: UUID
    /// The entity's name when the identifier was made.
    public let entityName: String
    /// The entity's UID in the meta model; nil when the identifier was made from a URI.
    public let entityUid: UInt64?
    /// The object id; 0 for a temporary identifier.
    public let id: Id
    /// What tells temporary identifiers apart; nil for a stored object's.
    private let temporaryToken: UUID?

    /// An identifier of stored object `id` (not 0) of an entity.
    init(store: UUID, entityName: String, entityUid: UInt64?, id: Id) {
        precondition(id != 0, "a stored object's id is not 0")
        self.storeIdentifier = store
        self.entityName = entityName
        self.entityUid = entityUid
        self.id = id
        self.temporaryToken = nil
    }

    /// A new temporary identifier, for an object that was never put.
    init(temporaryIn store: UUID, entityName: String, entityUid: UInt64?, token: UUID = UUID()) {
        self.storeIdentifier = store
        self.entityName = entityName
        self.entityUid = entityUid
        self.id = 0
        self.temporaryToken = token
    }

    /// Whether the identifier names an object that was never put. It never resolves.
    public var isTemporary: Bool { temporaryToken != nil }

    // MARK: URI

    /// The URI form: `cellar://<store-uuid>/<Entity>/p<id>`, or `.../t<uuid>` when temporary.
    /// Characters of the entity name other than ASCII letters, digits and `_` are percent-encoded.
    public var uriRepresentation: URL {
        URL(string: uriString)!
    }

    private var uriString: String {
        let object = temporaryToken.map { "t\($0.uuidString.lowercased())" } ?? "p\(id)"
        return "\(Self.scheme)://\(storeIdentifier.uuidString.lowercased())/\(Self.escape(entityName))/\(object)"
    }

    /// Reads an identifier from its URI form (`uriRepresentation`).
    /// - Throws: ``CellarError/Code/illegalArgument``, saying what is wrong with the URI.
    public init(uriRepresentation url: URL) throws {
        try self.init(url.absoluteString)
    }

    /// Reads an identifier from the string of its URI form, or from its `Codable` form (the URI
    /// and `#<entity UID>`).
    /// - Throws: ``CellarError/Code/illegalArgument``, saying what is wrong with the string.
    public init(_ string: String) throws {
        func malformed(_ reason: String) -> CellarError {
            CellarError.illegalArgument("\"\(string)\" is not a Cellar persistent identifier: \(reason)")
        }
        let prefix = Self.scheme + "://"
        guard string.lowercased().hasPrefix(prefix) else {
            throw malformed("it does not start with \(prefix)")
        }
        var rest = Substring(string.dropFirst(prefix.count))
        var uid: UInt64?
        if let hash = rest.firstIndex(of: "#") {
            let digits = rest[rest.index(after: hash)...]
            guard Self.isDecimal(digits), let value = UInt64(digits), value != 0 else {
                throw malformed("after # comes the entity UID, a positive integer, not \"\(digits)\"")
            }
            uid = value
            rest = rest[..<hash]
        }
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw malformed("expected cellar://<store-uuid>/<Entity>/p<id>, found \(parts.count) part\(parts.count == 1 ? "" : "s") after cellar://")
        }
        guard let store = UUID(uuidString: String(parts[0])) else {
            throw malformed("\"\(parts[0])\" is not a store UUID")
        }
        guard let name = Self.unescape(parts[1]), !name.isEmpty else {
            throw malformed(parts[1].isEmpty ? "the entity name is empty" : "the entity name \"\(parts[1])\" is not percent-encoded UTF-8")
        }
        let object = parts[2]
        switch object.first {
        case "p":
            guard Self.isDecimal(object.dropFirst()), let id = Id(object.dropFirst()), id != 0 else {
                throw malformed("the object id \"\(object.dropFirst())\" is not a positive integer")
            }
            self.init(store: store, entityName: name, entityUid: uid, id: id)
        case "t":
            guard let token = UUID(uuidString: String(object.dropFirst())) else {
                throw malformed("a temporary identifier's token \"\(object.dropFirst())\" is not a UUID")
            }
            self.init(temporaryIn: store, entityName: name, entityUid: uid, token: token)
        default:
            throw malformed("the last part is p<id> (or t<uuid> when temporary), not \"\(object)\"")
        }
    }

    static let scheme = "cellar"

    private static func isDecimal(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    private static func escape(_ name: String) -> String {
        var out = ""
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 15, radix: 16, uppercase: true)
            }
        }
        return out
    }

    private static func unescape(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let high = utf8.index(after: index)
                guard high != utf8.endIndex else { return nil }
                let low = utf8.index(after: high)
                guard low != utf8.endIndex,
                      let value = UInt8(String(decoding: [utf8[high], utf8[low]], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
                index = utf8.index(after: low)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        // Invalid UTF-8 is refused. (Decoding repairs it, so a repaired string's bytes differ;
        // `String(validating:as:)` would say it directly, but needs macOS 15 / iOS 18.)
        let string = String(decoding: bytes, as: UTF8.self)
        return string.utf8.elementsEqual(bytes) ? string : nil
    }

    // MARK: Codable: one string, the URI and the entity's UID

    /// Decodes the string `encode(to:)` writes (a URI alone is accepted too).
    public init(from decoder: any Decoder) throws {
        let string = try decoder.singleValueContainer().decode(String.self)
        do {
            try self.init(string)
        } catch let error as CellarError {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description, underlyingError: error))
        }
    }

    /// Encodes one string: `cellar://<store-uuid>/<Entity>/p<id>#<entity UID>` (about 60
    /// bytes), so that the identifier still resolves after the entity is renamed.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(entityUid.map { "\(uriString)#\($0)" } ?? uriString)
    }

    // MARK: Identity

    /// Whether both identify the same object: the same store, entity name, id and temporary token.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.storeIdentifier == rhs.storeIdentifier && lhs.id == rhs.id && lhs.temporaryToken == rhs.temporaryToken
            && lhs.entityName == rhs.entityName
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storeIdentifier)
        hasher.combine(entityName)
        hasher.combine(id)
        hasher.combine(temporaryToken)
    }

    /// By store, then entity name, then object id (in id order: the order objects were put);
    /// temporary identifiers after stored ones, by token.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        if lhs.storeIdentifier != rhs.storeIdentifier { return lhs.storeIdentifier.uuidString < rhs.storeIdentifier.uuidString }
        if lhs.entityName != rhs.entityName { return lhs.entityName < rhs.entityName }
        switch (lhs.temporaryToken, rhs.temporaryToken) {
        case (nil, nil): return lhs.id < rhs.id
        case (nil, _?): return true
        case (_?, nil): return false
        case (let a?, let b?): return a.uuidString < b.uuidString
        }
    }

    /// The identifier as a URI string.
    public var description: String { uriString }
}
