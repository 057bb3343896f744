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
    /// For a property of an embedded object (`Contact.address.city`): the number of the path
    /// of embedded properties from `E` to the object holding it (see `EmbeddedPaths`); 0 for a
    /// property of `E` itself.
    @usableFromInline let pathNumber: UInt32

    /// A property of `E` itself, as the generated property constants declare it.
    @_spi(CellarGenerated) public init(name: String, id: UInt32, type: PropertyType) {
        self.name = name
        self.id = id
        self.type = type
        pathNumber = 0
    }

    init(name: String, id: UInt32, type: PropertyType, via: [PropertyRef]) {
        self.name = name
        self.id = id
        self.type = type
        pathNumber = EmbeddedPaths.number(via)
    }

    /// The embedded properties from `E` to the object holding this property; empty for a
    /// property of `E` itself.
    var via: [PropertyRef] { EmbeddedPaths.path(pathNumber) }

    /// The record slot holding the property's value.
    @inlinable public var slot: Int { Int(id) - 1 }

    /// The property's path, as `Note.title` or, through embedded objects, `Contact.home.city`.
    public var description: String { "\(E.self).\((via.map(\.name) + [name]).joined(separator: "."))" }
}
