import CellarStorage

/// Where the object layer keeps things in the engine's named trees (see `docs/object-layer.md`):
///
/// - `e<entity ID>`: the entity's objects; key = object id (8 bytes, big-endian, so a scan runs in
///   id order), value = the record.
/// - `m`: the object layer's own data: `model` → the synced meta model as model JSON;
///   `seq:<entity ID>` → the highest object id ever handed out that may no longer be in the
///   entity's tree (8 bytes, little-endian); see `IdSequence`.
@usableFromInline
enum StorageLayout {
    static let metaTree = "m"
    static let modelKey: [UInt8] = Array("model".utf8)

    static func entityTree(_ entityId: UInt32) -> String { "e\(entityId)" }

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
    @inlinable
    static func objectId(_ key: UnsafeRawBufferPointer) throws -> Id {
        guard key.count == 8 else {
            throw CellarError.fileCorrupt("an object key has \(key.count) bytes, expected 8")
        }
        return Id(bigEndian: key.loadUnaligned(as: UInt64.self))
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

    init(_ entity: ModelEntity, index: Int) {
        self.index = index
        name = entity.name
        id = entity.id
        treeName = StorageLayout.entityTree(entity.id.id)
        idAssignable = entity.idProperty?.flags.contains(.idSelfAssignable) ?? false
        slotCount = Int(entity.lastPropertyId.id)
    }
}
