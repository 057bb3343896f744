import CellarStorage
import Foundation

/// A query's condition in the terms a replica understands: properties by UID, values in the
/// form of their column (``ReplicaValue``), combined with and/or. A sync package translates it
/// into the replica's own language (SQL) to hold only the objects a device subscribed to. For
/// sync packages built on Cellar (`@_spi(Sync)`).
///
/// Only conditions on a property's own value that the replica can evaluate exactly as the
/// store does are translated; ``Query/replicaFilter()`` refuses the others with a message
/// naming them.
@_spi(Sync)
public indirect enum ReplicaFilter: Sendable, Hashable {
    /// Every condition holds (an empty list: every object).
    case all([ReplicaFilter])
    /// Some condition holds (an empty list: no object).
    case any([ReplicaFilter])
    /// A property's value (by UID) compared with `values`. Any comparison with an absent value
    /// (NULL) is false, except ``Operation/isNil``.
    case compare(property: UInt64, Operation, [ReplicaValue])

    public enum Operation: String, Sendable, Hashable {
        /// One value each.
        case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual
        /// Two values, both ends included.
        case between
        /// Any number of values.
        case isIn, isNotIn
        /// No value.
        case isNil, isNotNil
        /// One string, compared by its UTF-8 bytes (case and diacritics as written).
        case startsWith, endsWith, contains
    }
}

@_spi(Sync)
extension Query {
    /// The UID of the query's entity and its condition as a ``ReplicaFilter`` (nil: the query
    /// has no condition, every object matches).
    ///
    /// - Throws: ``CellarError/Code/illegalArgument`` naming the first condition a replica cannot
    ///   evaluate as the store does: link conditions, nearest-neighbour, full-text, geo,
    ///   collection, flexible-value and embedded-object conditions, conditions on the object id
    ///   or a to-one relation (local ids differ between devices), strings compared ignoring case
    ///   or diacritics, `like`, and decimals.
    public func replicaFilter() throws -> (entityUid: UInt64, filter: ReplicaFilter?) {
        let query = try compiled
        let schema = query.schema
        func refuse(_ what: String) -> CellarError {
            .illegalArgument("a sync subscription on \(schema.name) cannot use \(what): a replica evaluates conditions on a property's own value only (==, !=, <, <=, >, >=, isBetween, isIn, isNotIn, isNil, isNotNil, and case-sensitive startsWith, endsWith and contains on strings)")
        }
        guard query.links.isEmpty else { throw refuse("a link condition") }
        guard query.vector == nil else { throw refuse("a nearest-neighbour condition") }
        guard let condition = query.condition else { return (schema.id.uid, nil) }
        let entity = box.store.model.entities[schema.index]
        func translate(_ condition: CompiledCondition) throws -> ReplicaFilter {
            switch condition {
            case .all(let conditions): return .all(try conditions.map(translate))
            case .any(let conditions): return .any(try conditions.map(translate))
            case .leaf(let leaf): return try Self.filter(leaf, entity: entity, refuse: refuse)
            case .collection: throw refuse("a condition on a collection's elements")
            case .flex: throw refuse("a condition on a flexible value")
            case .embedded: throw refuse("a condition on embedded objects")
            case .fullText: throw refuse("a full-text condition (matches)")
            case .geo: throw refuse("a geo condition (isWithin)")
            case .vector: throw refuse("a nearest-neighbour condition")
            case .toOneLink, .toManyLink: throw refuse("a link condition")
            }
        }
        return (schema.id.uid, try translate(condition))
    }

    private static func filter(_ leaf: CompiledLeaf, entity: ModelEntity, refuse: (String) -> CellarError) throws -> ReplicaFilter {
        let property = leaf.property
        let what = "\(property.name) \(leaf.operation.rawValue)"
        guard !property.isId else { throw refuse("the object id (\(what)): local ids differ between devices") }
        guard property.type != .relation else { throw refuse("a to-one relation (\(what)): local ids differ between devices") }
        guard let uid = entity.properties.first(where: { $0.id.id == property.id })?.id.uid else {
            throw refuse("\(property.name), which the model lacks")
        }
        guard leaf.caseSensitive else { throw refuse("a string compared ignoring case or diacritics (\(what))") }
        let operation: ReplicaFilter.Operation
        switch leaf.operation {
        case .equal: operation = .equal
        case .notEqual: operation = .notEqual
        case .less: operation = .less
        case .lessOrEqual: operation = .lessOrEqual
        case .greater: operation = .greater
        case .greaterOrEqual: operation = .greaterOrEqual
        case .between: operation = .between
        case .isIn: operation = .isIn
        case .isNotIn: operation = .isNotIn
        case .isNil: operation = .isNil
        case .isNotNil: operation = .isNotNil
        case .startsWith: operation = .startsWith
        case .endsWith: operation = .endsWith
        case .contains: operation = .contains
        default: throw refuse(what)
        }
        var values: [ReplicaValue]
        switch (leaf.operands, property.kind) {
        case (.none, _):
            values = []
        case (.integers(let bits), _):
            values = try bits.map { try integer($0, property, refuse: { refuse("\(what): \($0)") }) }
        case (.integerSet(let bits), _):
            values = try bits.sorted().map { try integer($0, property, refuse: { refuse("\(what): \($0)") }) }
        case (.doubles(let numbers), _):
            values = numbers.map(ReplicaValue.double)
        case (.bytes(let operands), _):
            values = try operands.map { try bytes($0, property, refuse: { refuse("\(what): \($0)") }) }
        case (.bytesSet(let operands), _):
            values = try operands.sorted { $0.lexicographicallyPrecedes($1) }.map { try bytes($0, property, refuse: { refuse("\(what): \($0)") }) }
        }
        if property.kind.isString, [.isIn, .isNotIn].contains(operation) {
            values.sort { a, b in
                guard case .string(let x) = a, case .string(let y) = b else { return false }
                return x.utf8.lexicographicallyPrecedes(y.utf8)
            }
        }
        return .compare(property: uid, operation, values)
    }

    /// An integer operand (its stored 64-bit pattern) as its column holds it.
    private static func integer(_ bits: UInt64, _ property: PropertySchema, refuse: (String) -> CellarError) throws -> ReplicaValue {
        if property.type == .bool { return .bool(bits != 0) }
        if property.type == .long, property.flags.contains(.unsigned) { return .unsigned(bits) }
        if case .integer(_, false) = property.kind, property.type != .long, bits > UInt64(Int64.max) { throw refuse("out of range") }
        return .integer(Int64(bitPattern: bits))
    }

    /// A byte operand (a string's UTF-8, bytes or a UUID's) as its column holds it.
    private static func bytes(_ bytes: [UInt8], _ property: PropertySchema, refuse: (String) -> CellarError) throws -> ReplicaValue {
        switch property.kind {
        case .string: return .string(String(decoding: bytes, as: UTF8.self))
        case .bytes: return .bytes(bytes)
        case .uuid: return .uuid(bytes.withUnsafeBytes { UUIDEncoding.uuid($0) })
        default: throw refuse("a \(property.type) (decimals are not translated)")
        }
    }
}
