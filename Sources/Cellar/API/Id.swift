/// An object's id: 0 means the object was never stored; `Box.put` assigns the next free id.
public typealias Id = UInt64

/// Anything that carries an object id: `Id` itself and the typed `EntityId<E>`.
public protocol IdBase: Sendable {
    /// The object id.
    var value: Id { get }
}

extension UInt64: IdBase {
    /// The id itself.
    public var value: Id { self }
}

/// An object id typed by its entity, so an id of a `Note` cannot be passed where an `Author`'s is
/// expected. Written like an integer: `var id: EntityId<Note> = 0`.
public struct EntityId<E>: IdBase, Hashable, Comparable, Codable, Sendable, ExpressibleByIntegerLiteral,
                           CustomStringConvertible {
    /// The object id.
    public var value: Id

    public init(_ value: Id) { self.value = value }
    public init(integerLiteral value: Id) { self.value = value }

    public init(from decoder: any Decoder) throws {
        value = try decoder.singleValueContainer().decode(Id.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.value < rhs.value }
    public var description: String { String(value) }
}
