/// Conditions on list, set and map properties:
///
/// ```swift
/// box.query { Note.tags.contains("swift") }                       // an element equal to "swift"
/// box.query { Note.tags.containsAny(["swift", "db"]) && Note.scores.count >= 3 }
/// box.query { Note.attributes["color"] == "red" }                  // a map's value at a key
/// ```
///
/// A collection that is absent from an object (a nil optional, or a property added after the
/// object was put) counts as empty: `isEmpty()` and `count == 0` are true for it, every other
/// collection condition false. `isNil()` tells a nil optional collection from an empty one.
extension Property {
    /// Some element equals `element` (strings ignoring case when `caseSensitive` is false); for a
    /// String property, `contains(_:caseSensitive:)` is a substring test instead.
    public func contains<V: QueryValueConvertible>(_ element: V) -> QueryCondition<E> {
        condition(.contains, [element.queryValue])
    }

    /// Some element equals one of `elements`.
    public func containsAny<V: QueryValueConvertible>(_ elements: [V], caseSensitive: Bool = true) -> QueryCondition<E> {
        condition(.containsAny, elements.map(\.queryValue), caseSensitive: caseSensitive)
    }

    /// Every one of `elements` equals some element (true for an empty `elements`).
    public func containsAll<V: QueryValueConvertible>(_ elements: [V], caseSensitive: Bool = true) -> QueryCondition<E> {
        condition(.containsAll, elements.map(\.queryValue), caseSensitive: caseSensitive)
    }

    /// The collection has no elements (or is absent).
    public func isEmpty() -> QueryCondition<E> { condition(.isEmpty, []) }

    /// The map has an entry under `key` (compared by UTF-8 bytes).
    public func containsKey(_ key: String) -> QueryCondition<E> { condition(.containsKey, [.string(key)]) }

    /// The number of elements of a list or set, or of entries of a map, to compare with a number:
    /// `Note.tags.count > 3`.
    public var count: ElementCount<E> { ElementCount(property: ref, via: via) }

    /// The value a map holds under `key`, to compare: `Doc.attributes["color"] == "red"`. A
    /// condition on a key the map does not have is false, except `isNil()`. On a `FlexValue`
    /// property, keys and indexes chain into nested maps and lists: `Doc.payload["user"]["age"] > 30`.
    public subscript(key: String) -> PropertyPath<E> { PropertyPath(property: ref, steps: [.key(key)], via: via) }

    /// The element at `index` of a `FlexValue` property holding a list.
    public subscript(index: Int) -> PropertyPath<E> { PropertyPath(property: ref, steps: [.index(index)], via: via) }

    /// A `FlexValue` property holds a value of `type` (`.null` is an explicit null, not an absent
    /// value).
    public func hasType(_ type: FlexType) -> QueryCondition<E> { PropertyPath(property: ref, steps: [], via: via).hasType(type) }
}

/// The kinds of value a `FlexValue` holds, for `hasType` conditions.
public enum FlexType: String, Sendable, CaseIterable {
    /// Null, a `Bool`, an integer, a `Double`, a `String`, bytes, a `Date`, a `UUID`, a list, or a
    /// map.
    case null, bool, integer, double, string, bytes, date, uuid, list, map
}

/// A step into a map (or a flexible value): a key, or an index into a list.
enum QueryPathStep: Sendable, Equatable, CustomStringConvertible {
    case key(String)
    case index(Int)

    var description: String {
        switch self {
        case .key(let key): "[\"\(key)\"]"
        case .index(let index): "[\(index)]"
        }
    }
}

/// The number of elements of a collection property, in a query condition: compared with
/// numbers (`Note.tags.count >= 3`, `isBetween`, `isIn`).
public struct ElementCount<E>: ConditionSubject {
    /// The entity the collection property belongs to.
    public typealias Entity = E
    let property: PropertyRef
    var via: [PropertyRef] = []

    public var conditionTarget: ConditionTarget { ConditionTarget(property: property, subject: .count, via: via) }
}

/// A value inside a map property (or a flexible value) reached by keys, in a query condition:
/// `Doc.attributes["color"] == "red"`. Compared like a property of the value's type.
public struct PropertyPath<E>: ConditionSubject {
    /// The entity the map or Flex property belongs to.
    public typealias Entity = E
    let property: PropertyRef
    let steps: [QueryPathStep]
    var via: [PropertyRef] = []

    public var conditionTarget: ConditionTarget { ConditionTarget(property: property, subject: .path(steps), via: via) }

    /// The value under `key` of the map at this path (`FlexValue` properties).
    public subscript(key: String) -> PropertyPath<E> { PropertyPath(property: property, steps: steps + [.key(key)], via: via) }

    /// The element at `index` of the list at this path (`FlexValue` properties).
    public subscript(index: Int) -> PropertyPath<E> { PropertyPath(property: property, steps: steps + [.index(index)], via: via) }

    /// The value at the path is of `type` (`FlexValue` properties).
    public func hasType(_ type: FlexType) -> QueryCondition<E> { condition(.hasType, [.string(type.rawValue)]) }

    /// The value at the path is a map with an entry under `key` (`FlexValue` properties).
    public func containsKey(_ key: String) -> QueryCondition<E> { condition(.containsKey, [.string(key)]) }
}
