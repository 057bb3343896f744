/// What comparison conditions are written on: a property (`Note.title`), or a value inside a map
/// or Flex property (`Doc.payload["user"]["age"]`). Its operators and methods make a
/// `QueryCondition`; Cellar's `Property` and `PropertyPath` are the conforming types.
public protocol ConditionSubject<Entity>: Sendable {
    /// The entity whose queries the conditions belong to.
    associatedtype Entity
    /// Where a condition on this looks.
    var conditionTarget: ConditionTarget { get }
}

/// A property, and what of it a condition is on (made by Cellar's conforming types).
public struct ConditionTarget: Sendable {
    let property: PropertyRef
    let subject: PropertyCondition.Subject
    /// The embedded properties leading to `property` (see `Property.via`).
    var via: [PropertyRef] = []
}

extension ConditionSubject {
    func condition(_ operation: PropertyCondition.Operation, _ values: [QueryValue], caseSensitive: Bool = true) -> QueryCondition<Entity> {
        var condition = PropertyCondition(conditionTarget.property, operation, values, caseSensitive: caseSensitive)
        condition.subject = conditionTarget.subject
        condition.via = conditionTarget.via
        return QueryCondition(.property(condition))
    }

    // MARK: Comparisons (numbers, dates, strings, bytes, UUIDs)

    /// Equal to `rhs`: `Note.title == "Work"`. Strings compare by their UTF-8 bytes, with case.
    public static func == <V: QueryValueConvertible>(lhs: Self, rhs: V) -> QueryCondition<Entity> { lhs.condition(.equal, [rhs.queryValue]) }
    /// Not equal to `rhs`. An object without a value (a nil optional) meets no condition but
    /// ``isNil()``, so not this one either.
    public static func != <V: QueryValueConvertible>(lhs: Self, rhs: V) -> QueryCondition<Entity> { lhs.condition(.notEqual, [rhs.queryValue]) }
    /// Less than `rhs`: numbers and dates by value; strings, bytes and UUIDs in byte order.
    public static func < <V: QueryValueConvertible>(lhs: Self, rhs: V) -> QueryCondition<Entity> { lhs.condition(.less, [rhs.queryValue]) }
    /// Less than or equal to `rhs`.
    public static func <= <V: QueryValueConvertible>(lhs: Self, rhs: V) -> QueryCondition<Entity> { lhs.condition(.lessOrEqual, [rhs.queryValue]) }
    /// Greater than `rhs`: numbers and dates by value; strings, bytes and UUIDs in byte order.
    public static func > <V: QueryValueConvertible>(lhs: Self, rhs: V) -> QueryCondition<Entity> { lhs.condition(.greater, [rhs.queryValue]) }
    /// Greater than or equal to `rhs`.
    public static func >= <V: QueryValueConvertible>(lhs: Self, rhs: V) -> QueryCondition<Entity> { lhs.condition(.greaterOrEqual, [rhs.queryValue]) }

    /// Equal to `value`; strings compare ignoring case when `caseSensitive` is false.
    public func isEqual<V: QueryValueConvertible>(to value: V, caseSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.equal, [value.queryValue], caseSensitive: caseSensitive)
    }

    /// Not equal to `value`; strings compare ignoring case when `caseSensitive` is false.
    public func isNotEqual<V: QueryValueConvertible>(to value: V, caseSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.notEqual, [value.queryValue], caseSensitive: caseSensitive)
    }

    /// Less than `value`; strings compare ignoring case when `caseSensitive` is false.
    public func isLessThan<V: QueryValueConvertible>(_ value: V, caseSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.less, [value.queryValue], caseSensitive: caseSensitive)
    }

    /// Less than or equal to `value`; strings compare ignoring case when `caseSensitive` is false.
    public func isLessThanOrEqual<V: QueryValueConvertible>(_ value: V, caseSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.lessOrEqual, [value.queryValue], caseSensitive: caseSensitive)
    }

    /// Greater than `value`; strings compare ignoring case when `caseSensitive` is false.
    public func isGreaterThan<V: QueryValueConvertible>(_ value: V, caseSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.greater, [value.queryValue], caseSensitive: caseSensitive)
    }

    /// Greater than or equal to `value`; strings compare ignoring case when `caseSensitive` is false.
    public func isGreaterThanOrEqual<V: QueryValueConvertible>(_ value: V, caseSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.greaterOrEqual, [value.queryValue], caseSensitive: caseSensitive)
    }

    /// Between `lower` and `upper`, both included (numbers and dates).
    public func isBetween<V: QueryValueConvertible>(_ lower: V, and upper: V) -> QueryCondition<Entity> {
        condition(.between, [lower.queryValue, upper.queryValue])
    }

    /// Between `lower` and `upper`, both included (numbers and dates).
    public func isBetween<V: QueryValueConvertible>(_ lower: V, _ upper: V) -> QueryCondition<Entity> {
        isBetween(lower, and: upper)
    }

    /// Equal to one of `values` (numbers, dates and strings).
    public func isIn<V: QueryValueConvertible>(_ values: [V], caseSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.isIn, values.map(\.queryValue), caseSensitive: caseSensitive)
    }

    /// Not nil and equal to none of `values`.
    public func isNotIn<V: QueryValueConvertible>(_ values: [V], caseSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.isNotIn, values.map(\.queryValue), caseSensitive: caseSensitive)
    }

    // MARK: Strings

    /// A string that starts with `prefix`; ignoring case when `caseSensitive` is false.
    public func startsWith(_ prefix: String, caseSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.startsWith, [.string(prefix)], caseSensitive: caseSensitive)
    }

    /// A string that ends with `suffix`; ignoring case when `caseSensitive` is false.
    public func endsWith(_ suffix: String, caseSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.endsWith, [.string(suffix)], caseSensitive: caseSensitive)
    }

    /// A string containing `part`. On a list or set of strings: an element equal to `part`.
    public func contains(_ part: String, caseSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.contains, [.string(part)], caseSensitive: caseSensitive)
    }

    // MARK: Nil

    /// No value: a nil optional, a property added after the object was put, a map without the
    /// key, a Flex path that does not exist or holds null.
    public func isNil() -> QueryCondition<Entity> { condition(.isNil, []) }

    /// A value (the opposite of `isNil()`).
    public func isNotNil() -> QueryCondition<Entity> { condition(.isNotNil, []) }
}
