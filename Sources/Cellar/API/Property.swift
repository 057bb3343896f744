/// A property of entity `E`, as the generator declares it for queries: `Note.title`.
///
/// Names the property in the model (name, ID: the record slot is ID − 1) and its stored type.
/// The query conditions built from it (`Note.title.startsWith("Shop")`) come with the query API.
public struct Property<E>: Sendable, Hashable, CustomStringConvertible {
    /// The property's name in the model.
    public let name: String
    /// The property's ID in its entity.
    public let id: UInt32
    /// The stored type.
    public let type: PropertyType
    /// For a property of an embedded object (`Contact.address.city`): the embedded properties
    /// from `E` to the object holding this one; empty for a property of `E` itself.
    let via: [PropertyRef]

    public init(name: String, id: UInt32, type: PropertyType) {
        self.init(name: name, id: id, type: type, via: [])
    }

    init(name: String, id: UInt32, type: PropertyType, via: [PropertyRef]) {
        self.name = name
        self.id = id
        self.type = type
        self.via = via
    }

    /// The record slot holding the property's value.
    @inlinable public var slot: Int { Int(id) - 1 }

    public var description: String { "\(E.self).\((via.map(\.name) + [name]).joined(separator: "."))" }
}
