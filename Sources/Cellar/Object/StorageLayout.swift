import CellarStorage

/// Where the object layer keeps things in the engine's named trees (see `docs/object-layer.md`):
///
/// - `e<entity ID>`: the entity's objects; key = object id (8 bytes, big-endian, so a scan runs in
///   id order), value = the record.
/// - `i<index ID>`: a property's index; key = the value and the object id (see `IndexKey`), empty value.
/// - `r<relation ID>`: a standalone to-many relation; key = source id ‖ target id (8 bytes each,
///   big-endian), empty value; `b<relation ID>`: the same pairs as target id ‖ source id, for backlinks.
/// - `m`: the object layer's own data: `model` → the synced meta model as model JSON;
///   `seq:<entity ID>` → the highest object id ever handed out that may no longer be in the
///   entity's tree (8 bytes, little-endian); see `IdSequence`; `index:<index ID>` → the index's
///   kind and property ID, written when the index was built (see `IndexBuild`); `history` → the
///   change history's state (see `HistoryState`), present once the store records history.
/// - `h`: the change history (``StoreOptions/changeHistory``); key = sequence number (8 bytes,
///   big-endian), value = the entry (see `HistoryEncoding`).
@usableFromInline
enum StorageLayout {
    static let metaTree = "m"
    static let modelKey: [UInt8] = Array("model".utf8)
    static let historyTree = "h"
    static let historyKey: [UInt8] = Array("history".utf8)

    static func entityTree(_ entityId: UInt32) -> String { "e\(entityId)" }
    static func indexTree(_ indexId: UInt32) -> String { "i\(indexId)" }
    static func relationTree(_ relationId: UInt32) -> String { "r\(relationId)" }
    static func backlinkTree(_ relationId: UInt32) -> String { "b\(relationId)" }
    static let indexMarkerPrefix = "index:"
    static func indexMarkerKey(_ indexId: UInt32) -> [UInt8] { Array("\(indexMarkerPrefix)\(indexId)".utf8) }

    /// The model stored in the database; nil when it has none (a new store, or engine trees only).
    /// A stored model that does not read is a corrupt file.
    static func storedModel(in txn: ReadTransaction) throws -> Model? {
        guard let meta = try txn.tree(metaTree),
              let bytes = try modelKey.withUnsafeBytes({ try txn.get(meta, key: $0) }) else { return nil }
        do {
            return try Model(json: Array(bytes), file: "the database's model")
        } catch let error as CellarError {
            throw CellarError.fileCorrupt("the model stored in the database does not read: \(error)")
        }
    }
    static func sequenceKey(_ entityId: UInt32) -> [UInt8] { Array("seq:\(entityId)".utf8) }

    /// Runs `body` with the key of object `id`.
    @inlinable
    static func withObjectKey<T>(_ id: Id, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try withUnsafeBytes(of: id.bigEndian, body)
    }

    /// The object id in a key of an entity tree.
    @inlinable @inline(__always)
    static func objectId(_ key: UnsafeRawBufferPointer) throws -> Id {
        guard key.count == 8 else { throw badObjectKey(key.count) }
        return Id(bigEndian: key.loadUnaligned(as: UInt64.self))
    }

    /// The error for an entity tree key that is not 8 bytes (built out of line: `objectId` is
    /// inlined into every scan).
    @usableFromInline
    static func badObjectKey(_ count: Int) -> CellarError {
        CellarError.fileCorrupt("an object key has \(count) bytes, expected 8")
    }
}

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
    /// The primary key (`// cellar: primaryKey`), when the entity has one.
    @usableFromInline let primaryKey: PropertySchema?
    /// An embedded type (`// cellar: embedded`): its objects live in their owners' records; it
    /// has no tree and no box.
    let isEmbedded: Bool

    /// The indexes on properties of the embedded types in the entity's records, when it has any.
    let embeddedIndexes: EmbeddedIndexes?
    /// The IDs of the properties but the id, ascending: what the change history compares, and
    /// lists for a new object.
    let historyProperties: [UInt32]
    /// `historyProperties` as a bit per record slot (slot = property ID − 1), when every such
    /// slot is below 64: what the change history's fast comparison of two records reads.
    let historySlots: UInt64?

    init(_ entity: ModelEntity, index: Int, indexOrdinals: [UInt32: Int], incomingRelations: [ModelRelation],
         embeddedIndexes: EmbeddedIndexes? = nil) {
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
        indexed = properties.values.filter { $0.index != nil }.sorted { $0.id < $1.id }
        indexedFields = indexed.map(IndexedField.init)
        vectorProperties = indexed.filter { $0.index?.kind == .hnsw }
        self.embeddedIndexes = embeddedIndexes
        fixedIndexKeys = embeddedIndexes == nil && indexedFields.allSatisfy(\.hasFixedKey)
        hasIndexes = !indexed.isEmpty || embeddedIndexes != nil
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

    /// The property with this ID, or a schema error naming it.
    func property(_ id: UInt32, named name: String) throws -> PropertySchema {
        guard let property = properties[id] else {
            throw CellarError.schema("property \(self.name).\(name) (ID \(id)) is not in the store's model; the property constants and the model come from different generator runs — run the generator again")
        }
        return property
    }
}
