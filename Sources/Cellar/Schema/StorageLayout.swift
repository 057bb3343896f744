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
///   change history's state (see `HistoryState`), present once the store records history;
///   `schemaVersion` → the app's schema version (8 bytes, little-endian; see `Migration`),
///   present once an app stated one.
/// - `h`: the change history (``StoreOptions/changeHistory``); key = sequence number (8 bytes,
///   big-endian), value = the entry (see `HistoryEncoding`).
@usableFromInline
enum StorageLayout {
    static let metaTree = "m"
    static let modelKey: [UInt8] = Array("model".utf8)
    static let historyTree = "h"
    static let historyKey: [UInt8] = Array("history".utf8)
    static let schemaVersionKey: [UInt8] = Array("schemaVersion".utf8)

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

