/// A property of entity (or embedded type) `E` whose Swift type `Value` is stored converted: an
/// enum by its raw value (`// cellar: convert = { "default": ".unknown" }`), or a type with a
/// converter (`convert = { "dbType": "String", "converter": "ColorConverter" }`). The generator
/// declares such properties with this type, so that conditions name the Swift values:
///
/// ```swift
/// box.query { Task.status == .done }                  // the case, converted as a put stores it
/// box.query { Task.status.isIn([.todo, .doing]) }
/// box.query { Task.status == Status.done.rawValue }   // the stored value works as before
/// box.query { Task.status.isNil() }                    // and every other condition on the stored value
/// ```
///
/// Everything else that takes a property (ordering, `setParameter`, property queries, embedded
/// paths) takes it too, or its ``property``: the stored values are what is compared and sorted.
public struct ConvertedProperty<E, Value>: Sendable, CustomStringConvertible {
    /// The stored property.
    public let property: Property<E>
    /// What a put stores for a value (the raw value, or the converter's result), as a query value.
    let stored: @Sendable (Value) -> QueryValue

    /// A property converted by `stored`, as the generated constants declare it for a converter.
    @_spi(CellarGenerated) public init(_ property: Property<E>, stored: @escaping @Sendable (Value) -> QueryValue) {
        self.property = property
        self.stored = stored
    }

    /// The property's name in the model.
    public var name: String { property.name }
    /// The property's ID in its entity.
    public var id: UInt32 { property.id }
    /// The stored type.
    public var type: PropertyType { property.type }
    /// `Entity.property`.
    public var description: String { property.description }

    /// Equal to `value`, as stored: `Task.status == .done`.
    public static func == (lhs: Self, rhs: Value) -> QueryCondition<E> { lhs.property.condition(.equal, [lhs.stored(rhs)]) }
    /// Not equal to `value` (an object without a value meets no condition but `isNil()`).
    public static func != (lhs: Self, rhs: Value) -> QueryCondition<E> { lhs.property.condition(.notEqual, [lhs.stored(rhs)]) }
    /// Equal to one of `values`: `Task.status.isIn([.todo, .doing])`.
    public func isIn(_ values: [Value]) -> QueryCondition<E> { property.condition(.isIn, values.map(stored)) }
    /// Equal to none of `values`.
    public func isNotIn(_ values: [Value]) -> QueryCondition<E> { property.condition(.isNotIn, values.map(stored)) }
}

extension ConvertedProperty where Value: RawRepresentable & SendableMetatype, Value.RawValue: QueryValueConvertible {
    /// An enum stored by its raw value, as the generated constants declare it.
    @_spi(CellarGenerated) public init(_ property: Property<E>) {
        self.init(property) { $0.rawValue.queryValue }
    }
}

extension ConvertedProperty: ConditionSubject {
    /// The entity the property belongs to.
    public typealias Entity = E

    public var conditionTarget: ConditionTarget { property.conditionTarget }
}

extension EmbeddedProperty {
    /// A converted `property` of the embedded objects, as a property of `E`.
    public subscript<V>(property: ConvertedProperty<T, V>) -> ConvertedProperty<E, V> {
        ConvertedProperty<E, V>(self[property.property], stored: property.stored)
    }
}

extension QueryBuilder {
    /// Sorts by the stored values of `property` (an enum's raw values, a converter's results).
    public func ordered<V>(by property: ConvertedProperty<E, V>, flags: OrderFlags = []) -> QueryBuilder<E> {
        ordered(by: property.property, flags: flags)
    }
}

extension Query {
    /// Sets the value of the condition on `property` to `value`, as stored: `setParameter(Task.status, to: .done)`.
    public func setParameter<V>(_ property: ConvertedProperty<E, V>, to value: V) {
        setParameter(property.property, to: property.stored(value))
    }

    /// Sets the value of the condition on `property` to a stored value.
    public func setParameter<R: QueryValueConvertible, V>(_ property: ConvertedProperty<E, V>, to value: R) {
        setParameter(property.property, to: value)
    }

    /// Sets the values of an `isIn` or `isNotIn` condition on `property`, as stored.
    public func setParameter<V>(_ property: ConvertedProperty<E, V>, to values: [V]) {
        setParameter(property.property, to: values.map(property.stored))
    }

    /// A query of the stored values of `property` (its raw values, or the converter's results).
    public func property<V>(_ property: ConvertedProperty<E, V>) -> PropertyQuery<E> {
        self.property(property.property)
    }
}
