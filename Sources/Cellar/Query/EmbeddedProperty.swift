/// A property of entity (or embedded type) `E` that holds embedded objects of type `T` — one, or
/// a list of them — as the generator declares it for queries: `Contact.address`, `Order.lines`.
///
/// Its generated members reach the embedded type's properties, so conditions read as paths:
///
/// ```swift
/// box.query { Contact.address.city == "Berlin" }                      // through one object
/// box.query { Order.lines.sku == "A-1" }                              // some line has it
/// box.query { Order.lines.any { OrderLine.sku == "A-1" && OrderLine.quantity > 2 } }  // one line both
/// box.query { Contact.address.isNil() || Order.lines.count > 3 }
/// ```
///
/// The subscripts do the same without generated members: `Contact.address[Address.city]`.
/// On a list, a condition on an element's property holds when some element meets it; `any`
/// asks one element to meet the whole block.
public struct EmbeddedProperty<E, T>: Sendable, Hashable, CustomStringConvertible {
    /// The property's name in the model.
    public let name: String
    /// The property's ID in its type.
    public let id: UInt32
    /// `PropertyType.embedded` or `.embeddedList`.
    public let type: PropertyType
    /// The embedded properties from `E` to the object holding this one (see `Property.via`).
    let via: [PropertyRef]

    /// A property of `E` holding embedded objects, as the generated constants declare it.
    @_spi(CellarGenerated) public init(name: String, id: UInt32, type: PropertyType) {
        self.init(name: name, id: id, type: type, via: [])
    }

    init(name: String, id: UInt32, type: PropertyType, via: [PropertyRef]) {
        self.name = name
        self.id = id
        self.type = type
        self.via = via
    }

    /// The embedded properties from `E` to the objects this property holds.
    var path: [PropertyRef] { via + [PropertyRef(id: id, name: name, isList: type == .embeddedList)] }

    /// The property's path, as `Contact.home`.
    public var description: String { "\(E.self).\(path.map(\.name).joined(separator: "."))" }

    /// `property` of the embedded objects, as a property of `E` (for conditions and ordering).
    public subscript(property: Property<T>) -> Property<E> {
        Property(name: property.name, id: property.id, type: property.type, via: path + property.via)
    }

    /// An embedded property of the embedded objects, as one of `E`.
    public subscript<U>(embedded: EmbeddedProperty<T, U>) -> EmbeddedProperty<E, U> {
        EmbeddedProperty<E, U>(name: embedded.name, id: embedded.id, type: embedded.type, via: path + embedded.via)
    }

    /// The embedded object meets `condition` (on a list: some element meets all of it).
    public func any(_ condition: () -> QueryCondition<T>) -> QueryCondition<E> {
        QueryCondition(.embedded(path, condition().node.rebased()))
    }

    private func condition(_ operation: PropertyCondition.Operation, _ values: [QueryValue] = [], subject: PropertyCondition.Subject = .value) -> QueryCondition<E> {
        var condition = PropertyCondition(PropertyRef(id: id, name: name), operation, values)
        condition.via = via
        condition.subject = subject
        return QueryCondition(.property(condition))
    }

    /// No embedded object (a nil optional, or an object put before the property was added).
    public func isNil() -> QueryCondition<E> { condition(.isNil) }

    /// An embedded object (or a list, maybe empty).
    public func isNotNil() -> QueryCondition<E> { condition(.isNotNil) }

    /// A list without elements (or no list).
    public func isEmpty() -> QueryCondition<E> { condition(.isEmpty) }

    /// The number of elements of a list, to compare with a number: `Order.lines.count > 3`.
    public var count: ElementCount<E> { ElementCount(property: PropertyRef(id: id, name: name), via: via) }
}
