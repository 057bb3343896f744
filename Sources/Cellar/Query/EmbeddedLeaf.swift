/// A compiled condition on the embedded objects of one property: evaluated on the nested
/// record (or each nested record of a list) in place, without building the objects.
///
/// `Contact.address.city == "Berlin"` is a condition `city == "Berlin"` compiled against the
/// embedded type, inside one on `Contact.address`; `Order.lines.any { … }` is the same with the
/// whole block inside. On a list, the condition holds when some element meets all of it.
struct EmbeddedLeaf {
    enum Mode {
        /// The nested record (one, or some element of a list) meets the condition.
        case matches(CompiledCondition)
        /// The number of elements meets the leaf (a list; an absent list has none).
        case count(CompiledLeaf)
    }

    /// The property holding the embedded objects.
    let property: PropertySchema
    /// The embedded type's schema, which the inner condition was compiled against.
    let schema: EntitySchema
    let mode: Mode

    var isList: Bool {
        if case .embedded(true) = property.kind { return true }
        return false
    }

    func evaluate(_ record: RecordReader, id: Id, links: [Set<Id>], context: TransactionContext) throws -> Bool {
        guard let payload = try record.bytes(slot: property.slot) else {
            switch mode {
            case .count(let leaf): return try leaf.evaluate(.integer(0))
            // No object: every property of it is absent (`Contact.address.city.isNil()` holds).
            case .matches(let condition): return isList ? false : try condition.evaluateAbsent()
            }
        }
        switch mode {
        case .count(let leaf):
            var elements = CollectionElements(payload, width: nil)
            return try leaf.evaluate(.integer(UInt64(try elements.count())))
        case .matches(let condition):
            guard isList else { return try condition.evaluate(record.nested(payload), id: id, links: links, context: context) }
            var elements = CollectionElements(payload, width: nil)
            _ = try elements.count()
            while let bytes = try elements.next() {
                if try condition.evaluate(record.nested(bytes), id: id, links: links, context: context) { return true }
            }
            return false
        }
    }
}

extension Store {
    /// The schema of the embedded type `property` holds; a schema error when the store's model
    /// lacks it (the model guarantees it otherwise).
    func embeddedSchema(of property: PropertySchema) throws -> EntitySchema {
        guard let name = property.embeddedType, let schema = embeddedSchemas[name] else {
            throw CellarError.schema("\(property.qualifiedName) holds embedded \(property.embeddedType ?? "?") objects, a type the store's model does not have; run the generator again")
        }
        return schema
    }
}

extension QueryBuilder {
    /// Compiles a condition reached through the embedded properties `path` (from `schema`):
    /// `inner` compiles the rest against the innermost embedded type's schema.
    static func compileEmbedded(_ path: [PropertyRef], schema: EntitySchema, store: Store, what: String,
                                inner: (EntitySchema) throws -> CompiledCondition) throws -> CompiledCondition {
        guard let first = path.first else { return try inner(schema) }
        let property = try schema.property(first.id, named: first.name)
        guard property.kind.isEmbedded else {
            throw CellarError.illegalArgument("query condition \(what): \(property.qualifiedName) is a \(property.type), not an embedded object")
        }
        let embedded = try store.embeddedSchema(of: property)
        let condition = try compileEmbedded(Array(path.dropFirst()), schema: embedded, store: store, what: what, inner: inner)
        return .embedded(EmbeddedLeaf(property: property, schema: embedded, mode: .matches(condition)))
    }

    /// A condition on the property holding embedded objects itself: `isNil`, `isNotNil`, and on
    /// a list `isEmpty` and `count`.
    static func compileOnEmbedded(_ condition: PropertyCondition, property: PropertySchema, schema: EntitySchema,
                                  store: Store) throws -> CompiledCondition {
        let isList = if case .embedded(true) = property.kind { true } else { false }
        func count(_ count: PropertyCondition) throws -> CompiledCondition {
            .embedded(EmbeddedLeaf(property: property, schema: try store.embeddedSchema(of: property),
                                   mode: .count(try CompiledLeaf(count, property: property.counter))))
        }
        switch (condition.subject, condition.operation) {
        case (.value, .isNil), (.value, .isNotNil):
            return .leaf(try CompiledLeaf(condition, property: property))
        case (.value, .isEmpty) where isList:
            return try count(PropertyCondition(PropertyRef(id: property.id, name: "\(property.name).count"), .equal, [.integer(0)]))
        case (.count, _) where isList:
            var counted = condition
            counted.subject = .value
            return try count(counted)
        default:
            throw CellarError.illegalArgument("query condition \(condition.description): \(property.qualifiedName) holds \(isList ? "a list of " : "")embedded \(property.embeddedType ?? "") objects: compare their properties (`\(property.name).someProperty == …`), or use any { … }, isNil, isNotNil\(isList ? ", isEmpty or count" : "")")
        }
    }
}

/// A property reached through single embedded objects (`Contact.address.city`), as ordering and
/// property queries read it: one value per object, or none.
struct EmbeddedPath {
    /// The embedded properties to descend through, outermost first.
    let steps: [PropertySchema]
    /// The property read from the innermost nested record.
    let property: PropertySchema

    /// Resolves `via` and `ref` from `schema`; `what` names the use in messages. A list of
    /// embedded objects on the way is refused (it holds more than one value) unless
    /// `throughLists`: then `contains(in:where:)` visits each element.
    init(_ via: [PropertyRef], _ ref: PropertyRef, schema: EntitySchema, store: Store, what: String, throughLists: Bool = false) throws {
        var schema = schema
        var steps: [PropertySchema] = []
        for step in via {
            let property = try schema.property(step.id, named: step.name)
            guard case .embedded(let list) = property.kind else {
                throw CellarError.illegalArgument("\(what): \(property.qualifiedName) is a \(property.type), not an embedded object")
            }
            guard !list || throughLists else {
                throw CellarError.illegalArgument("\(what): \(property.qualifiedName) is a list of embedded objects, which has one value per element, not one per object; read the objects instead")
            }
            steps.append(property)
            schema = try store.embeddedSchema(of: property)
        }
        self.steps = steps
        property = try schema.property(ref.id, named: ref.name)
    }

    /// The nested record holding `property` in `record`; nil when an embedded object on the way
    /// is absent.
    func record(in record: RecordReader) throws -> RecordReader? {
        var reader = record
        for step in steps {
            guard let nested = try reader.nested(slot: step.slot) else { return nil }
            reader = nested
        }
        return reader
    }

    /// Whether some nested record holding `property` in `record` meets `test` (through a list on
    /// the way, each element's); false when an embedded object on the way is absent.
    func contains(in record: RecordReader, where test: (RecordReader) throws -> Bool) throws -> Bool {
        func visit(_ record: RecordReader, _ steps: ArraySlice<PropertySchema>) throws -> Bool {
            guard let step = steps.first else { return try test(record) }
            guard let payload = try record.bytes(slot: step.slot) else { return false }
            guard case .embedded(list: true) = step.kind else { return try visit(record.nested(payload), steps.dropFirst()) }
            var found = false
            try record.forEachNested(payload) { element in
                if !found, try visit(element, steps.dropFirst()) { found = true }
            }
            return found
        }
        return try visit(record, steps[...])
    }
}

extension CompiledCondition {
    /// The condition's value on an embedded object that is not there: every property absent,
    /// without the defaults a stored record's absent fields read as (there is no record).
    func evaluateAbsent() throws -> Bool {
        switch self {
        case .leaf(let leaf): return try leaf.evaluate(nil)
        case .collection(let leaf): return try leaf.evaluate(nil)
        case .flex(let leaf): return try leaf.evaluate(nil)
        case .fullText(let leaf): return try leaf.evaluate(nil)
        case .geo(let leaf): return try leaf.evaluate(nil)
        case .vector: return false
        case .embedded(let leaf):
            switch leaf.mode {
            case .count(let count): return try count.evaluate(.integer(0))
            case .matches(let condition): return leaf.isList ? false : try condition.evaluateAbsent()
            }
        case .all(let conditions):
            for condition in conditions where try !condition.evaluateAbsent() { return false }
            return true
        case .any(let conditions):
            for condition in conditions where try condition.evaluateAbsent() { return true }
            return false
        case .toOneLink, .toManyLink: return false
        }
    }
}
