/// A condition on objects of entity `E`, built from property constants and combined with `&&`
/// and `||` (parentheses group):
///
/// ```swift
/// box.query { Note.title.startsWith("Shop") && (Note.author == 3 || Note.text.isNil()) }
/// ```
///
/// Any condition on a property that is nil (absent) in an object is false for that object,
/// except `isNil()`.
public struct QueryCondition<E>: Sendable {
    indirect enum Node: Sendable {
        case property(PropertyCondition)
        case all([Node])
        case any([Node])
        /// A condition on the embedded objects the property at the end of `path` holds (through
        /// embedded properties): the one object meets it, or some object of a list does.
        case embedded([PropertyRef], Node)

        /// The same node as a condition on another type (a condition on an embedded type,
        /// inside one on its owner).
        func rebased<F>() -> QueryCondition<F>.Node {
            switch self {
            case .property(let condition): .property(condition)
            case .all(let nodes): .all(nodes.map { $0.rebased() })
            case .any(let nodes): .any(nodes.map { $0.rebased() })
            case .embedded(let path, let node): .embedded(path, node.rebased())
            }
        }
    }

    let node: Node

    init(_ node: Node) { self.node = node }

    /// Both conditions.
    public static func && (lhs: QueryCondition<E>, rhs: QueryCondition<E>) -> QueryCondition<E> {
        switch (lhs.node, rhs.node) {
        case (.all(let a), .all(let b)): QueryCondition(.all(a + b))
        case (.all(let a), let b): QueryCondition(.all(a + [b]))
        case (let a, .all(let b)): QueryCondition(.all([a] + b))
        case (let a, let b): QueryCondition(.all([a, b]))
        }
    }

    /// Either condition.
    public static func || (lhs: QueryCondition<E>, rhs: QueryCondition<E>) -> QueryCondition<E> {
        switch (lhs.node, rhs.node) {
        case (.any(let a), .any(let b)): QueryCondition(.any(a + b))
        case (.any(let a), let b): QueryCondition(.any(a + [b]))
        case (let a, .any(let b)): QueryCondition(.any([a] + b))
        case (let a, let b): QueryCondition(.any([a, b]))
        }
    }

    /// Names this condition, so that `Query.setParameter(_:to:)` can change its value by name
    /// (needed when the query has several conditions on the same property).
    public func alias(_ name: String) -> QueryCondition<E> {
        guard case .property(var condition) = node else {
            return QueryCondition(.property(PropertyCondition(invalid: "alias \"\(name)\" is on a group of conditions; put it on one condition")))
        }
        condition.alias = name
        return QueryCondition(.property(condition))
    }
}

/// One condition on one property, as written; checked against the store's model when the query
/// is built.
struct PropertyCondition: Sendable {
    enum Operation: String, Sendable {
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case between = "isBetween"
        case isIn = "isIn"
        case isNotIn = "isNotIn"
        case startsWith = "startsWith"
        case endsWith = "endsWith"
        case contains = "contains"
        case like = "like"
        case isNil = "isNil"
        case isNotNil = "isNotNil"
        case containsAny = "containsAny"
        case containsAll = "containsAll"
        case isEmpty = "isEmpty"
        case containsKey = "containsKey"
        case hasType = "hasType"
        case matches = "matches"
        case isWithin = "isWithin"
        case nearestNeighbors = "nearestNeighbors"
    }

    /// What of the property the condition is on.
    enum Subject: Sendable, Equatable {
        /// The value itself (for a collection: `contains`, `containsAny`, `containsAll`,
        /// `isEmpty`, `containsKey` on its elements or keys).
        case value
        /// A collection's number of elements (or map entries).
        case count
        /// The value a map holds under a key (or a flexible value at a path).
        case path([QueryPathStep])
    }

    var propertyId: UInt32
    var propertyName: String
    /// The embedded properties leading to the property (`Contact.address.city`: `address`),
    /// empty for a property of the entity itself.
    var via: [PropertyRef] = []
    var operation: Operation
    var values: [QueryValue]
    var caseSensitive: Bool
    /// False: strings compare with diacritics folded away (`é` as `e`), as the full-text
    /// tokenizer folds them.
    var diacriticSensitive = true
    var alias: String?
    var subject: Subject = .value
    /// The shape of an `isWithin` condition.
    var shape: (any GeoShape)?
    /// The query vector of a `nearestNeighbors` condition.
    var vector: [Float]?
    /// Why the condition cannot be built (reported by `build()`).
    var invalid: String?

    init(_ property: PropertyRef, _ operation: Operation, _ values: [QueryValue], caseSensitive: Bool = true) {
        propertyId = property.id
        propertyName = property.name
        self.operation = operation
        self.values = values
        self.caseSensitive = caseSensitive
    }

    init(invalid: String) {
        self.init(PropertyRef(id: 0, name: ""), .isNil, [])
        self.invalid = invalid
    }

    var description: String {
        let subjectName = switch subject {
        case .value: propertyName
        case .count: "\(propertyName).count"
        case .path(let steps): propertyName + steps.map(\.description).joined()
        }
        let what = "\((via.map(\.name) + [subjectName]).joined(separator: ".")) \(operation.rawValue)"
        return values.isEmpty ? what : "\(what) \(values.map(\.description).joined(separator: ", "))"
    }
}

/// A property's ID and name, as conditions keep them.
struct PropertyRef: Sendable, Hashable {
    let id: UInt32
    let name: String
    /// On a path through embedded properties: the step holds a list of embedded objects.
    var isList = false
}

extension Property: ConditionSubject {
    /// The entity the property belongs to.
    public typealias Entity = E

    var ref: PropertyRef { PropertyRef(id: id, name: name) }

    public var conditionTarget: ConditionTarget { ConditionTarget(property: ref, subject: .value, via: via) }

    /// A `Float` or `Double` within `tolerance` of `value` (both ends included).
    public func isEqual(to value: Double, tolerance: Double) -> QueryCondition<E> {
        condition(.between, [.floating(value - abs(tolerance)), .floating(value + abs(tolerance))])
    }
}
