/// A standalone to-many relation of entity `E`, as the generator declares it for link
/// conditions: `Note.tags`.
public struct RelationProperty<E>: Sendable, Hashable, CustomStringConvertible {
    /// The relation's name in the model.
    public let name: String
    /// The relation's ID in the model.
    public let relationId: UInt32
    /// The ID of the entity it points at.
    public let targetEntityId: UInt32

    /// A relation as the generated constants declare it.
    @_spi(CellarGenerated) public init(name: String, relationId: UInt32, targetEntityId: UInt32) {
        self.name = name
        self.relationId = relationId
        self.targetEntityId = targetEntityId
    }

    /// The relation's name, as `Note.author`.
    public var description: String { "\(E.self).\(name)" }
}

/// Builds a `Query`: a condition, link conditions on related objects and the order of results.
/// Get one from `Box.query(_:)`; `build()` checks it against the store's model.
///
/// ```swift
/// let query = try notes.query { Note.creationDate > cutoff }
///     .link(Note.author) { Author.name == "Ada" }
///     .ordered(by: Note.creationDate, flags: .descending)
///     .build()
/// ```
public struct QueryBuilder<E: EntityInspectable> {
    let box: Box<E>
    let condition: QueryCondition<E>?
    var orders: [(Property<E>, OrderFlags, special: SpecialOrder?)] = []

    /// Where an order by relevance takes its words from.
    enum RelevanceTerms {
        /// The query's own `matches` conditions on the property.
        case conditions
        /// A query string of its own.
        case text(String)
    }

    /// An order by something other than the property's value.
    enum SpecialOrder {
        /// By relevance of a text to words (BM25).
        case relevance(RelevanceTerms)
        /// By distance of a GeoPoint from a point.
        case distance(from: GeoPoint)
        /// By a property of the target of the to-one relation the order's property is.
        case link(target: PropertyRef, targetUid: UInt64, targetName: String)
    }
    var links: [LinkSpec] = []

    /// A link condition, compiled against the target entity when the query is built.
    struct LinkSpec {
        enum Via: Sendable {
            case toOne(PropertyRef, pathNumber: UInt32)
            case relation(RelationProperty<E>)
        }
        let via: Via
        let targetUid: UInt64
        let targetName: String
        let compile: (Store) throws -> CompiledQuery
    }

    init(box: Box<E>, condition: QueryCondition<E>?) {
        self.box = box
        self.condition = condition
    }

    /// Sorts the results by `property` (after the orders given before this one). Without an order,
    /// results come in id order.
    public func ordered(by property: Property<E>, flags: OrderFlags = []) -> QueryBuilder<E> {
        var copy = self
        copy.orders.append((property, flags, nil))
        return copy
    }

    /// Sorts the results by relevance to the query's `matches` conditions on `property` (after
    /// the orders given before this one): most relevant first, by the BM25 score SQLite's FTS5
    /// also uses (`docs/full-text.md`), ties in id order. `property` needs a full-text index
    /// (`// cellar: index = "fulltext"`), whose statistics the score uses. Ask for the best few
    /// with a limit: then only the matches that can be among them are scored in full, from the
    /// index, and only their records are read; without one, every match is scored and sorted.
    ///
    /// ```swift
    /// let best = try notes.query { Note.text.matches("swift database") }
    ///     .ordered(byRelevanceTo: Note.text)
    ///     .build().find(offset: 0, limit: 10)
    /// ```
    public func ordered(byRelevanceTo property: Property<E>) -> QueryBuilder<E> {
        var copy = self
        copy.orders.append((property, [], .relevance(.conditions)))
        return copy
    }

    /// Sorts the results by relevance of `property`'s text to the words of `query` (a query
    /// string as ``Property/matches(_:)`` takes it; its exclusions do not count), most relevant
    /// first. For ranking by other words than the condition's, or a query without `matches`.
    public func ordered(byRelevanceTo query: String, in property: Property<E>) -> QueryBuilder<E> {
        var copy = self
        copy.orders.append((property, [], .relevance(.text(query))))
        return copy
    }

    /// Sorts the results by the distance of their GeoPoint `property` from `point` (after the
    /// orders given before this one): nearest first, great-circle distance; objects without a
    /// point come last, ties in id order. Combine it with `isWithin` to find the nearest places in
    /// an area, and `find(offset:limit:)` for the nearest few.
    ///
    /// ```swift
    /// let nearest = try places.query { Place.location.isWithin(GeoCircle(center: here, radiusInKilometers: 5)) }
    ///     .ordered(byDistanceFrom: here, in: Place.location)
    ///     .build().find(offset: 0, limit: 10)
    /// ```
    public func ordered(byDistanceFrom point: GeoPoint, in property: Property<E>) -> QueryBuilder<E> {
        var copy = self
        copy.orders.append((property, [.nullsLast], .distance(from: point)))
        return copy
    }

    /// Sorts the results by `property` of the object each one's to-one relation `link` points at
    /// (after the orders given before this one): `ordered(by: Note.author, Author.name)`, Realm's
    /// `sorted(byKeyPath: "author.name")`. Objects without a target (or whose target was
    /// removed) sort as objects without a value (`flags`' `nullsLast`, `nullsAsZero`).
    public func ordered<T: EntityInspectable>(by link: Property<E>, _ property: Property<T>, flags: OrderFlags = []) -> QueryBuilder<E> {
        var copy = self
        let binding = T.entityBinding
        copy.orders.append((link, flags, .link(target: property.ref, targetUid: binding.entityId.uid, targetName: binding.entityName)))
        return copy
    }

    /// Keeps the objects whose to-one relation `property` points at a `T` meeting `condition`.
    public func link<T: EntityInspectable>(_ property: Property<E>, _ condition: () -> QueryCondition<T>) -> QueryBuilder<E> {
        link(.toOne(property.ref, pathNumber: property.pathNumber), T.self, condition())
    }

    /// Keeps the objects with at least one target in the to-many `relation` meeting `condition`.
    public func link<T: EntityInspectable>(_ relation: RelationProperty<E>, _ condition: () -> QueryCondition<T>) -> QueryBuilder<E> {
        link(.relation(relation), T.self, condition())
    }

    private func link<T: EntityInspectable>(_ via: LinkSpec.Via, _ type: T.Type, _ condition: QueryCondition<T>) -> QueryBuilder<E> {
        var copy = self
        let binding = T.entityBinding
        copy.links.append(LinkSpec(via: via, targetUid: binding.entityId.uid, targetName: binding.entityName) { store in
            let box = store.box(for: T.self)
            return try QueryBuilder<T>(box: box, condition: condition).compile()
        })
        return copy
    }

    /// The query, checked against the store's model.
    /// - Throws: ``CellarError/Code/illegalArgument`` for a condition that does not fit its property's
    ///   type (naming the condition), ``CellarError/Code/schema`` for a property the model lacks.
    public func build() throws -> Query<E> {
        Query(builder: self, compiled: try compile())
    }

    func compile(replacing condition: QueryCondition<E>.Node? = nil) throws -> CompiledQuery {
        let schema = try box.schema.get()
        let node = condition ?? self.condition?.node
        var compiledLinks: [CompiledQuery] = []
        var linkConditions: [CompiledCondition] = []
        for spec in links {
            let target = try spec.compile(box.store)
            let position = compiledLinks.count
            compiledLinks.append(target)
            switch spec.via {
            case .toOne(let ref, let pathNumber):
                let via = EmbeddedPaths.path(pathNumber)
                let what = "link(\(schema.name).\((via.map(\.name) + [ref.name]).joined(separator: ".")))"
                func toOneLink(in owner: EntitySchema) throws -> CompiledCondition {
                    let property = try owner.property(ref.id, named: ref.name)
                    guard property.type == .relation else {
                        throw CellarError.illegalArgument("\(what): the property is a \(property.type), not a to-one relation")
                    }
                    return .toOneLink(property: property, link: position)
                }
                // A ToOne inside embedded objects: the link is checked on the nested records (on
                // a list, some element's ToOne points into the link's set).
                linkConditions.append(via.isEmpty ? try toOneLink(in: schema)
                    : try Self.compileEmbedded(via, schema: schema, store: box.store, what: what, inner: toOneLink))
            case .relation(let relation):
                guard schema.relations.contains(where: { $0.id.id == relation.relationId && $0.targetId.id == target.schema.id.id }) else {
                    throw CellarError.illegalArgument("link(\(relation)): \(schema.name) has no relation with ID \(relation.relationId) to \(spec.targetName) in the store's model")
                }
                linkConditions.append(.toManyLink(relation: relation.relationId, link: position))
            }
        }
        var compiled = try node.map { try Self.compile($0, schema: schema, store: box.store) }
        if !linkConditions.isEmpty {
            compiled = .all((compiled.map { [$0] } ?? []) + linkConditions)
        }
        let orders = try self.orders.map { ordered, flags, special in
            switch special {
            case .relevance(let terms)?:
                return try CompiledOrder(relevanceOf: ordered, terms: terms, condition: compiled, schema: schema)
            case .distance(let point)?:
                return try CompiledOrder(distanceOf: ordered, from: point, schema: schema)
            case .link(let targetProperty, let targetUid, let targetName)?:
                let what = "order(by: \(ordered), \(targetName).\(targetProperty.name))"
                guard ordered.via.isEmpty, let link = schema.properties[ordered.ref.id], link.type == .relation else {
                    throw CellarError.illegalArgument("\(what): \(ordered) is not a to-one relation of \(schema.name)")
                }
                guard let target = box.store.schemas[targetUid], !target.isEmbedded,
                      box.store.model.entity(named: schema.name)?.properties.first(where: { $0.id.id == link.id })?.relationTarget == target.name else {
                    throw CellarError.illegalArgument("\(what): \(ordered) does not point at \(targetName)")
                }
                let property = try target.property(targetProperty.id, named: targetProperty.name)
                guard property.collection == nil, property.type != .flex, !property.kind.isEmbedded, property.type != .geoPoint else {
                    throw CellarError.illegalArgument("\(what): a \(property.type) has no order; order by a property of another type")
                }
                var order = CompiledOrder(property: property, flags: flags)
                order.link = (link, target)
                return order
            case nil:
                break
            }
            let path = try EmbeddedPath(ordered.via, ordered.ref, schema: schema, store: box.store, what: "order(by: \(ordered))")
            let property = path.property
            guard property.collection == nil, property.type != .flex, !property.kind.isEmbedded else {
                throw CellarError.illegalArgument("order(by: \(ordered)): a \(property.type) has no order; order by a property of another type")
            }
            guard property.type != .geoPoint else {
                throw CellarError.illegalArgument("order(by: \(ordered)): a GeoPoint has no order of its own; order by its distance from a point with ordered(byDistanceFrom:in:)")
            }
            return CompiledOrder(property: property, flags: flags, path: path.steps.isEmpty ? nil : path)
        }
        // A nearest-neighbour search runs first; the rest of the condition filters what it visits.
        let (vector, rest) = try VectorLeaf.split(compiled)
        var query = CompiledQuery(schema: schema, condition: rest, plan: QueryPlan.plan(rest, linked: !links.isEmpty, owner: schema),
                                  links: compiledLinks, orders: orders)
        query.vector = vector
        return query
    }

    static func compile(_ node: QueryCondition<E>.Node, schema: EntitySchema, store: Store) throws -> CompiledCondition {
        switch node {
        case .property(var condition):
            if let invalid = condition.invalid { throw CellarError.illegalArgument(invalid) }
            if !condition.via.isEmpty {
                let path = condition.via
                condition.via = []
                return try compileEmbedded(path, schema: schema, store: store, what: condition.description) { embedded in
                    try compile(.property(condition), schema: embedded, store: store)
                }
            }
            let property = try schema.property(condition.propertyId, named: condition.propertyName)
            if property.kind.isEmbedded { return try compileOnEmbedded(condition, property: property, schema: schema, store: store) }
            if condition.operation == .matches { return .fullText(try FullTextLeaf(condition, property: property)) }
            if condition.operation == .isWithin { return .geo(try GeoLeaf(condition, property: property)) }
            if condition.operation == .nearestNeighbors { return .vector(try VectorLeaf(condition, property: property)) }
            if case .flex = property.kind { return .flex(try FlexLeaf(condition, property: property)) }
            let onCollection = property.collection != nil && ![.isNil, .isNotNil].contains(condition.operation)
            if onCollection || condition.subject != .value || [.containsAny, .containsAll, .isEmpty, .containsKey, .hasType].contains(condition.operation) {
                return .collection(try CollectionLeaf(condition, property: property))
            }
            return .leaf(try CompiledLeaf(condition, property: property))
        case .all(let nodes):
            return .all(try nodes.map { try compile($0, schema: schema, store: store) })
        case .any(let nodes):
            return .any(try nodes.map { try compile($0, schema: schema, store: store) })
        case .embedded(let path, let inner):
            let what = path.map(\.name).joined(separator: ".") + ".any { … }"
            return try compileEmbedded(path, schema: schema, store: store, what: what) { embedded in
                try compile(inner, schema: embedded, store: store)
            }
        }
    }
}

extension Box {
    /// A query on this box's objects meeting `condition`; finish it with `build()`.
    public func query(_ condition: () -> QueryCondition<E>) -> QueryBuilder<E> {
        QueryBuilder(box: self, condition: condition())
    }

    /// A query on all of this box's objects (to order them, link them or use property queries).
    public func query() -> QueryBuilder<E> {
        QueryBuilder(box: self, condition: nil)
    }
}
