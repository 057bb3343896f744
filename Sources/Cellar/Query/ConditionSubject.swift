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
    func condition(_ operation: PropertyCondition.Operation, _ values: [QueryValue], caseSensitive: Bool = true,
                   diacriticSensitive: Bool = true) -> QueryCondition<Entity> {
        var condition = PropertyCondition(conditionTarget.property, operation, values, caseSensitive: caseSensitive)
        condition.diacriticSensitive = diacriticSensitive
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

    /// Equal to `value`; strings compare ignoring case when `caseSensitive` is false, and
    /// diacritics when `diacriticSensitive` is false.
    public func isEqual<V: QueryValueConvertible>(to value: V, caseSensitive: Bool = true, diacriticSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.equal, [value.queryValue], caseSensitive: caseSensitive, diacriticSensitive: diacriticSensitive)
    }

    /// Not equal to `value`; strings compare ignoring case when `caseSensitive` is false.
    public func isNotEqual<V: QueryValueConvertible>(to value: V, caseSensitive: Bool = true, diacriticSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.notEqual, [value.queryValue], caseSensitive: caseSensitive, diacriticSensitive: diacriticSensitive)
    }

    /// Less than `value`; strings compare ignoring case when `caseSensitive` is false.
    public func isLessThan<V: QueryValueConvertible>(_ value: V, caseSensitive: Bool = true, diacriticSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.less, [value.queryValue], caseSensitive: caseSensitive, diacriticSensitive: diacriticSensitive)
    }

    /// Less than or equal to `value`; strings compare ignoring case when `caseSensitive` is false.
    public func isLessThanOrEqual<V: QueryValueConvertible>(_ value: V, caseSensitive: Bool = true, diacriticSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.lessOrEqual, [value.queryValue], caseSensitive: caseSensitive, diacriticSensitive: diacriticSensitive)
    }

    /// Greater than `value`; strings compare ignoring case when `caseSensitive` is false.
    public func isGreaterThan<V: QueryValueConvertible>(_ value: V, caseSensitive: Bool = true, diacriticSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.greater, [value.queryValue], caseSensitive: caseSensitive, diacriticSensitive: diacriticSensitive)
    }

    /// Greater than or equal to `value`; strings compare ignoring case when `caseSensitive` is false.
    public func isGreaterThanOrEqual<V: QueryValueConvertible>(_ value: V, caseSensitive: Bool = true, diacriticSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.greaterOrEqual, [value.queryValue], caseSensitive: caseSensitive, diacriticSensitive: diacriticSensitive)
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
    public func isIn<V: QueryValueConvertible>(_ values: [V], caseSensitive: Bool = true, diacriticSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.isIn, values.map(\.queryValue), caseSensitive: caseSensitive, diacriticSensitive: diacriticSensitive)
    }

    /// Not nil and equal to none of `values`.
    public func isNotIn<V: QueryValueConvertible>(_ values: [V], caseSensitive: Bool = true, diacriticSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.isNotIn, values.map(\.queryValue), caseSensitive: caseSensitive, diacriticSensitive: diacriticSensitive)
    }

    // MARK: Strings
    //
    // Every string condition takes `caseSensitive` and `diacriticSensitive`: false folds both the
    // value and the operand (case: lowercased; diacritics: `é` as `e`, as the full-text tokenizer
    // folds them), Realm's `[c]` and `[d]`. Folded conditions read every candidate's value: an
    // index serves only conditions compared as stored.

    /// A string that matches `pattern` as a whole: `*` stands for any run of characters (none
    /// too), `?` for exactly one, everything else for itself (Realm's and NSPredicate's `LIKE`):
    /// `Note.title.like("Inv*20??")`. An index serves the part before the first wildcard when
    /// compared as stored.
    public func like(_ pattern: String, caseSensitive: Bool = true, diacriticSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.like, [.string(pattern)], caseSensitive: caseSensitive, diacriticSensitive: diacriticSensitive)
    }

    /// A string that starts with `prefix`; ignoring case when `caseSensitive` is false.
    public func startsWith(_ prefix: String, caseSensitive: Bool = true, diacriticSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.startsWith, [.string(prefix)], caseSensitive: caseSensitive, diacriticSensitive: diacriticSensitive)
    }

    /// A string that ends with `suffix`; ignoring case when `caseSensitive` is false.
    public func endsWith(_ suffix: String, caseSensitive: Bool = true, diacriticSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.endsWith, [.string(suffix)], caseSensitive: caseSensitive, diacriticSensitive: diacriticSensitive)
    }

    /// A string containing `part`. On a list or set of strings: an element equal to `part`.
    public func contains(_ part: String, caseSensitive: Bool = true, diacriticSensitive: Bool = true) -> QueryCondition<Entity> {
        condition(.contains, [.string(part)], caseSensitive: caseSensitive, diacriticSensitive: diacriticSensitive)
    }

    // MARK: Nil

    /// No value: a nil optional, a property added after the object was put, a map without the
    /// key, a Flex path that does not exist or holds null.
    public func isNil() -> QueryCondition<Entity> { condition(.isNil, []) }

    /// A value (the opposite of `isNil()`).
    public func isNotNil() -> QueryCondition<Entity> { condition(.isNotNil, []) }
}
