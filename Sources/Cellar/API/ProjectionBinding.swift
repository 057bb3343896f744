/// What generated code adds to a projection: a struct annotated `// cellar: projection = "Note"`
/// whose stored properties name properties of the entity `Note`. A projection is a read-only view
/// of some of an entity's fields: `query.find(as: NoteRow.self)` and `box.get(id, as: NoteRow.self)`
/// read only its slots of each record, and build no entity object. Projections store nothing
/// and are not part of the model.
public protocol Projection {
    /// The type of the generated binding.
    associatedtype ProjectionBindingType: ProjectionBinding where ProjectionBindingType.Projection == Self
    /// The binding (generated; stateless).
    static var projectionBinding: ProjectionBindingType { get }
}

/// Reads a projection from an entity's records. Written by the generator (or by hand, following
/// the same rules as an ``EntityBinding``'s `read`: the property with ID k is record slot k − 1; an
/// absent slot reads the entity property's default, or nil for an optional).
public protocol ProjectionBinding: Sendable {
    /// The projection type this binding builds.
    associatedtype Projection
    /// The entity whose records it reads: a box or query of another entity cannot use it.
    associatedtype EntityType: EntityInspectable
    /// Builds the projection from the record of the object stored under `id`.
    func read(id: Id, from record: RecordReader) throws -> Projection
    /// Lets the projection's `ToOne` fields read their targets from `store`. Generated for
    /// projections with a `ToOne` field; the default does nothing.
    func attach(_ projection: Projection, store: Store)
    /// Whether `attach` does anything (skipped on the hot path otherwise).
    var hasRelations: Bool { get }
}

extension ProjectionBinding {
    /// Does nothing: the default for projections without a `ToOne` field.
    public func attach(_ projection: Projection, store: Store) {}
    /// False: the default for projections without a `ToOne` field.
    public var hasRelations: Bool { false }
}

extension Box {
    /// Builds a `P` from the record stored under `id` (only the projection's fields are read).
    @usableFromInline
    func projection<P: Projection>(_ type: P.Type, id: Id, record bytes: UnsafeRawBufferPointer) throws -> P
    where P.ProjectionBindingType.EntityType == E {
        let binding = P.projectionBinding
        let projection = try binding.read(id: id, from: RecordReader(bytes))
        if binding.hasRelations { binding.attach(projection, store: store) }
        return projection
    }

    /// The projection `P` of the object with this id (only its fields are read; no object is
    /// built); nil when there is none. `P`'s entity must be the box's entity.
    ///
    /// ```swift
    /// let row = try box.get(id, as: NoteRow.self)
    /// ```
    public func get<P: Projection>(_ id: Id, as type: P.Type) throws -> P? where P.ProjectionBindingType.EntityType == E {
        let schema = try self.schema.get()
        return try store.inReadContext { context in
            try translatingErrors {
                try context.withRecord(schema, id) { bytes in try bytes.map { try projection(type, id: id, record: $0) } }
            }
        }
    }

    /// The projection `P` of the object with this id; nil when there is none.
    @_disfavoredOverload
    public func get<P: Projection>(_ id: EntityId<E>, as type: P.Type) throws -> P? where P.ProjectionBindingType.EntityType == E {
        try get(id.value, as: type)
    }
}

extension Query {
    /// The matching objects as projections `P`, in the query's order: only the projection's
    /// fields of each record are read, and no entity object is built. `P`'s entity must be the
    /// query's entity.
    ///
    /// ```swift
    /// let rows = try query.find(as: NoteRow.self)
    /// ```
    @inlinable
    public func find<P: Projection>(as type: P.Type) throws -> [P] where P.ProjectionBindingType.EntityType == E {
        try find(as: type, offset: 0, limit: nil)
    }

    /// The matching objects as projections `P` after skipping `offset` of them, at most `limit`.
    @inlinable
    public func find<P: Projection>(as type: P.Type, offset: Int, limit: Int?) throws -> [P]
    where P.ProjectionBindingType.EntityType == E {
        var rows: [P] = []
        try visitRecords(offset: offset, limit: limit, expecting: { rows.reserveCapacity($0) }) { id, record in
            rows.append(try box.projection(type, id: id, record: record))
            return true
        }
        return rows
    }
}
