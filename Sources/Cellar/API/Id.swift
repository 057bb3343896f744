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

    /// A typed id holding `value`.
    public init(_ value: Id) { self.value = value }
    /// A typed id written as an integer literal: `var id: EntityId<Note> = 0`.
    public init(integerLiteral value: Id) { self.value = value }

    /// Decodes the id from a single integer, as ``encode(to:)`` writes it.
    public init(from decoder: any Decoder) throws {
        value = try decoder.singleValueContainer().decode(Id.self)
    }

    /// Encodes the id as a single integer.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }

    /// Orders typed ids by their ``value``.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.value < rhs.value }
    /// The id in decimal.
    public var description: String { String(value) }
}
