/// How a store's model looks to a replica outside it (a sync server): each entity that holds
/// objects (embedded types are part of their owners' values), each of its properties with the
/// column type that keeps its values exactly, and each standalone to-many relation with its
/// target. Everything is named and keyed by UID, so renames are recognised as renames.
///
/// For sync packages built on Cellar (`@_spi(Sync)`); apps do not use it.
@_spi(Sync)
public struct ReplicaSchema: Sendable {
    /// A column type of the server's table, chosen so that every stored value comes back exactly.
    public enum ColumnType: String, Sendable, Equatable {
        /// `Bool`.
        case boolean
        /// Integers of every width (unsigned ones up to 32 bits), and dates as their stored
        /// milliseconds or nanoseconds since 1970.
        case bigint
        /// Unsigned 64-bit integers.
        case numeric = "numeric(20,0)"
        /// Decimals, exactly (PostgreSQL's `numeric` holds every value a `Decimal` does, and NaN).
        case decimal = "numeric"
        case real
        case doublePrecision = "double precision"
        case text
        case bytea
        /// UUIDs, and to-one relations as their target's global id.
        case uuid
        /// Lists, sets, maps, vectors, flex values, geo points and embedded objects: their JSON
        /// (flex values typed: `{"$date": …}`, as `cellar export` writes them).
        case jsonb
        /// A standalone to-many relation: its targets' global ids.
        case uuidArray = "uuid[]"
    }

    /// A property, as a replica stores it.
    public struct Property: Sendable, Equatable {
        public let name: String
        public let uid: UInt64
        public let column: ColumnType
        /// For a to-one relation: the UID of its target entity.
        public let targetUid: UInt64?
    }

    /// A standalone to-many relation.
    public struct Relation: Sendable, Equatable {
        public let name: String
        public let uid: UInt64
        public let targetUid: UInt64
    }

    /// An entity with objects of its own (not an embedded type).
    public struct Entity: Sendable, Equatable {
        public let name: String
        public let uid: UInt64
        /// Every property but the id.
        public let properties: [Property]
        public let relations: [Relation]
        /// Marked `// cellar: asymmetric` in the model: its objects are only pushed, then
        /// dropped locally.
        public let asymmetric: Bool
    }

    /// The entities, in the model's order.
    public let entities: [Entity]

    /// The replica schema of `model`. Throws `schema` for an embedded type with a to-one
    /// relation (its target id would travel as a local id, meaningless elsewhere).
    public init(model: Model) throws {
        let uidsByName = Dictionary(model.entities.map { ($0.name, $0.id.uid) }, uniquingKeysWith: { a, _ in a })
        let uidsById = Dictionary(model.entities.map { ($0.id.id, $0.id.uid) }, uniquingKeysWith: { a, _ in a })
        for embedded in model.entities where embedded.isEmbedded {
            if let relation = embedded.properties.first(where: { $0.type == .relation }) {
                throw CellarError.schema("the embedded type \(embedded.name) has a to-one relation (\(relation.name)): sync cannot carry it")
            }
        }
        entities = try model.entities.filter { !$0.isEmbedded }.map { entity in
            let properties = try entity.properties.filter { !$0.flags.contains(.id) }.map { property -> Property in
                var target: UInt64?
                if property.type == .relation {
                    guard let name = property.relationTarget, let uid = uidsByName[name] else {
                        throw CellarError.schema("the target of \(entity.name).\(property.name) is not in the model")
                    }
                    target = uid
                }
                return Property(name: property.name, uid: property.id.uid, column: Self.column(of: property), targetUid: target)
            }
            let relations = try entity.relations.map { relation -> Relation in
                guard let target = uidsById[relation.targetId.id] else {
                    throw CellarError.schema("the target of \(entity.name).\(relation.name) is not in the model")
                }
                return Relation(name: relation.name, uid: relation.id.uid, targetUid: target)
            }
            return Entity(name: entity.name, uid: entity.id.uid, properties: properties, relations: relations,
                          asymmetric: entity.isAsymmetric)
        }
    }

    /// The column type that keeps `property`'s values.
    static func column(of property: ModelProperty) -> ColumnType {
        switch property.type.known {
        case .bool: return .boolean
        case .byte, .short, .char, .int, .date, .dateNano: return .bigint
        case .long: return property.flags.contains(.unsigned) ? .numeric : .bigint
        case .float: return .real
        case .double: return .doublePrecision
        case .decimal: return .decimal
        case .string: return .text
        case .byteVector: return .bytea
        case .uuid, .relation: return .uuid
        case .collection, .flex, .geoPoint, .embedded, .embeddedList, nil: return .jsonb
        }
    }
}
