import CellarStorage

/// What an index kind does to keep its index in step with the objects, and to check it: one
/// conformance per kind, which `IndexSchema.upkeep` picks (the one place that looks at an index's
/// kind to decide what to do).
///
/// - `KeyedIndexUpkeep` (`Index/`): value, hash and geo indexes (a key per value, `IndexKey`) and
///   the element indexes of lists and sets (a key per distinct element);
/// - `FullTextIndexUpkeep` (`FullText/`): words and postings, gathered in the transaction and
///   written before the index is read and at commit (`FullTextPending`);
/// - `VectorIndexUpkeep` (`Vector/`): the HNSW graph, changed in the transaction and written at
///   commit (`VectorPending`).
///
/// A put of a value-indexed scalar does not come through here: it is the hot path, and its
/// one key per value (unique checks first) is written inline by `TransactionContext.putIndexed`.
/// Nor does a nearest-neighbour search: `CompiledQuery` runs it on the HNSW graph before any
/// other candidates are read.
protocol IndexUpkeep: Sendable {
    /// What the index offers the query planner for `condition` (one of the query's conditions
    /// joined by `&&`, on the index's property; a leaf of a list's or set's element on its
    /// collection's index): nil when the index does not serve it, and the query scans.
    func plan(_ condition: CompiledCondition, with index: IndexSchema) -> QueryPlan.Served?

    /// Whether a put's change to the index of a property (a list, set or map when
    /// `isCollection`) is worked out from the whole old and new value at once (elements, words, a
    /// vector), as an `ElementIndexChange`, instead of as one key per value.
    func changesAsAWhole(isCollection: Bool) -> Bool

    /// What putting `new` over `old` (nil: a new object) changes in `property`'s index; nil when
    /// nothing. Only asked when `changesAsAWhole`.
    func change(_ property: PropertySchema, of schema: EntitySchema, id: Id, new: RecordReader, old: RecordReader?,
                in context: TransactionContext) throws -> TransactionContext.ElementIndexChange?

    /// Removing object `id`, whose record is `record`: the index keys to delete are appended to
    /// `keys` (deleted after the record's bytes are no longer read), or the removal is noted in
    /// `context` for the kind to apply later.
    func remove(_ property: PropertySchema, of schema: EntitySchema, id: Id, record: RecordReader,
                in context: TransactionContext, keys: inout [(IndexSchema, [UInt8])]) throws

    /// The index's tree was dropped: what `context` holds for the index goes with it.
    func dropped(_ index: IndexSchema, in context: TransactionContext)

    /// The index's tree is about to be read in `context`: writes held back are made first.
    func beforeReading(_ index: IndexSchema, in context: TransactionContext) throws

    /// What the index's build marker adds to the kind and property: the layout or parameters
    /// whose change makes the index be built again.
    func markerDetail(_ index: IndexSchema) -> [UInt8]

    /// Builds `property`'s index into its empty tree from every object `cursor` reads.
    func build(_ property: PropertySchema, of schema: EntitySchema, from cursor: Cursor, in context: TransactionContext) throws

    /// Compares the stored index of `property` with what the objects of `owners` (the entity,
    /// or the entities embedding its type) say it holds; returns the number of entries. Throws
    /// `fileCorrupt` naming what differs.
    func verify(_ property: PropertySchema, of owners: [EntitySchema], embedded: Bool, in txn: ReadTransaction) throws -> Int
}

extension IndexSchema {
    /// How this index is kept: the implementation for its kind.
    var upkeep: any IndexUpkeep {
        switch kind {
        case .value, .hash32, .hash64, .geo: KeyedIndexUpkeep()
        case .fullText: FullTextIndexUpkeep()
        case .hnsw: VectorIndexUpkeep()
        }
    }

    /// Whether keys are in value order, so that the index serves ranges and prefixes (a value
    /// index), not only equality (a hash index).
    var isOrdered: Bool { kind == .value }
}

/// Value, hash and geo indexes, and element indexes: keys made by `IndexKey` from the record,
/// one per value or one per distinct element.
struct KeyedIndexUpkeep: IndexUpkeep {
    func plan(_ condition: CompiledCondition, with index: IndexSchema) -> QueryPlan.Served? {
        switch condition {
        case .leaf(let leaf): QueryPlan.keyedSource(leaf, index: index)
        // The cells covering the shape: candidates, each checked exactly (a cell straddles the
        // shape's edge); narrower than a range, wider than one value.
        case .geo(let leaf): (.index(index, leaf.keyRanges), false, false, 2)
        default: nil
        }
    }

    func changesAsAWhole(isCollection: Bool) -> Bool { isCollection }

    func change(_ property: PropertySchema, of schema: EntitySchema, id: Id, new: RecordReader, old: RecordReader?,
                in context: TransactionContext) throws -> TransactionContext.ElementIndexChange? {
        let collection = property.collection!
        let newValue = try new.value(of: property, id: id)
        guard let old else {
            // A new object: every key is added (the common put, no comparison).
            let added = try collection.indexKeys(newValue, id: id)
            return added.isEmpty ? nil : .init(index: property.index!, removed: [], added: added)
        }
        let oldValue = try old.value(of: property, id: id)
        if oldValue == newValue { return nil }
        // Both sorted: one pass tells the keys only one side has.
        let (removed, added) = TransactionContext.difference(try collection.indexKeys(oldValue, id: id), try collection.indexKeys(newValue, id: id))
        if removed.isEmpty && added.isEmpty { return nil }
        return .init(index: property.index!, removed: removed, added: added)
    }

    func remove(_ property: PropertySchema, of schema: EntitySchema, id: Id, record: RecordReader,
                in context: TransactionContext, keys: inout [(IndexSchema, [UInt8])]) throws {
        for key in try context.indexKeys(property, of: record, id: id) { keys.append((property.index!, key)) }
    }

    func dropped(_ index: IndexSchema, in context: TransactionContext) {}

    func beforeReading(_ index: IndexSchema, in context: TransactionContext) throws {}

    func markerDetail(_ index: IndexSchema) -> [UInt8] { [] }

    func build(_ property: PropertySchema, of schema: EntitySchema, from cursor: Cursor, in context: TransactionContext) throws {
        try context.store.buildKeyedIndex(property, of: schema, from: cursor, in: context)
    }

    func verify(_ property: PropertySchema, of owners: [EntitySchema], embedded: Bool, in txn: ReadTransaction) throws -> Int {
        try RecordCheck.verifyKeyedIndex(property, of: owners, embedded: embedded, in: txn)
    }
}
