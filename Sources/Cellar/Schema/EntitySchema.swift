import CellarStorage

/// What a store knows of one entity of its model.
@usableFromInline
final class EntitySchema: Sendable {
    @usableFromInline let name: String
    let id: IdUid
    @usableFromInline let treeName: String
    /// Ids are set by the app (`// cellar: id = { "assignable": true }`).
    @usableFromInline let idAssignable: Bool
    /// The most record slots a binding may write: the entity's last property ID.
    let slotCount: Int
    /// The entity's place among the store's entities (0, 1, 2, …): where per-entity state is kept.
    @usableFromInline let index: Int
    /// The properties, by ID.
    let properties: [UInt32: PropertySchema]
    /// The properties with an index, in ID order.
    let indexed: [PropertySchema]
    /// The `[Float]` properties with an HNSW index.
    let vectorProperties: [PropertySchema]
    /// Where their values are in a record (see `RecordReader.sameValues`).
    let indexedFields: [IndexedField]
    /// Every index is on a number and none is unique: a new object's index keys are made from
    /// its record's bytes (`TransactionContext.addFixedIndexKeys`).
    let fixedIndexKeys: Bool
    /// Whether a put or remove must maintain indexes: read the old record, update the index trees.
    @usableFromInline let hasIndexes: Bool
    /// Whether one of the indexes is unique (a put then checks before it writes).
    let hasUniqueIndex: Bool
    /// The standalone to-many relations of this entity (as their source).
    let relations: [ModelRelation]
    /// The standalone to-many relations of any entity that point at this one.
    let incomingRelations: [ModelRelation]
    /// Whether a remove must clean up relation trees.
    @usableFromInline let hasRelations: Bool
    /// The delete rules a remove of one of its objects applies (`DeleteAction.actions(of:)`).
    let deleteActions: [DeleteAction]
    /// The primary key (`// cellar: primaryKey`), when the entity has one.
    @usableFromInline let primaryKey: PropertySchema?
    /// An embedded type (`// cellar: embedded`): its objects live in their owners' records; it
    /// has no tree and no box.
    let isEmbedded: Bool

    /// The indexes on properties of the embedded types in the entity's records, when it has any.
    let embeddedIndexes: EmbeddedIndexes?
    /// The indexes over several properties (`ModelEntity.indexes`).
    let compoundIndexes: [CompoundIndex]
    /// The fields of every property an index holds (`indexedFields`, then those of the indexes
    /// over several properties): a replace that leaves their bytes as they were changes no index
    /// entry but an embedded one.
    let keyedFields: [IndexedField]
    /// The IDs of the properties but the id, ascending: what the change history compares, and
    /// lists for a new object.
    let historyProperties: [UInt32]
    /// `historyProperties` as a bit per record slot (slot = property ID − 1), when every such
    /// slot is below 64: what the change history's fast comparison of two records reads.
    let historySlots: UInt64?
    /// The type of the property in each record slot (slot = property ID − 1), nil for a slot
    /// no property of this model has.
    let slotTypes: [PropertyType?]
    /// Per record slot: the width of its property's field when fixed, -1 for a string or byte
    /// vector, 0 for a slot no property has.
    let slotWidths: [Int]

    init(_ entity: ModelEntity, index: Int, indexOrdinals: [UInt32: Int], incomingRelations: [ModelRelation],
         embeddedIndexes: EmbeddedIndexes? = nil, deleteActions: [DeleteAction] = []) {
        self.deleteActions = deleteActions
        self.index = index
        name = entity.name
        id = entity.id
        treeName = StorageLayout.entityTree(entity.id.id)
        idAssignable = entity.idProperty?.flags.contains(.idSelfAssignable) ?? false
        slotCount = Int(entity.lastPropertyId.id)
        var properties: [UInt32: PropertySchema] = [:]
        for property in entity.properties {
            properties[property.id.id] = PropertySchema(property, entity: entity.name,
                                                        indexOrdinal: property.indexId.flatMap { indexOrdinals[$0.id] })
        }
        self.properties = properties
        slotTypes = entity.typesBySlot
        slotWidths = slotTypes.map { $0.map { $0.fixedWidth ?? -1 } ?? 0 }
        indexed = properties.values.filter { $0.index != nil }.sorted { $0.id < $1.id }
        indexedFields = indexed.map { IndexedField($0) }
        vectorProperties = indexed.filter { $0.index?.kind == .hnsw }
        self.embeddedIndexes = embeddedIndexes
        compoundIndexes = entity.indexes.compactMap { model in
            indexOrdinals[model.id.id].map { CompoundIndex(model, of: entity, schema: properties, ordinal: $0) }
        }
        keyedFields = indexedFields + compoundIndexes.flatMap(\.fields)
        fixedIndexKeys = embeddedIndexes == nil && compoundIndexes.isEmpty && indexedFields.allSatisfy(\.hasFixedKey)
        hasIndexes = !indexed.isEmpty || embeddedIndexes != nil || !compoundIndexes.isEmpty
        hasUniqueIndex = indexed.contains { $0.index!.unique }
        relations = entity.relations
        self.incomingRelations = incomingRelations
        hasRelations = !relations.isEmpty || !incomingRelations.isEmpty
        primaryKey = indexed.first { $0.flags.contains(.primaryKey) }
        isEmbedded = entity.isEmbedded
        historyProperties = properties.values.filter { !$0.isId }.map(\.id).sorted()
        historySlots = historyProperties.allSatisfy { $0 >= 1 && $0 <= 64 }
            ? historyProperties.reduce(UInt64(0)) { $0 | 1 << UInt64($1 - 1) } : nil
    }

    /// The primary key's index is the entity's only one (no other property index, none on an
    /// embedded type's property, none over several properties): an upsert onto the object that
    /// holds the key changes no index entry.
    var primaryKeyIsOnlyIndex: Bool {
        primaryKey != nil && indexed.count == 1 && embeddedIndexes == nil && compoundIndexes.isEmpty
    }

    /// The property with this ID, or a schema error naming it.
    func property(_ id: UInt32, named name: String) throws -> PropertySchema {
        guard let property = properties[id] else {
            throw CellarError.schema("property \(self.name).\(name) (ID \(id)) is not in the store's model; the property constants and the model come from different generator runs — run the generator again")
        }
        return property
    }
}
