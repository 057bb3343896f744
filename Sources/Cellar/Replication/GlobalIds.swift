import CellarStorage
import Foundation

/// Each synced object's global id, a UUID kept beside its local `Id`: what relations and
/// changes travel by between stores. Two trees, written only by sync:
///
/// - `sg`: the global id's 16 bytes → the entity ID (u32) and the local id (u64), little-endian;
/// - `sl`: the entity ID and the local id, big-endian (so an entity's ids sort) → the global id.
///
/// A global id stays mapped after its object is removed (ids are never handed out again), so a
/// late change for it is recognised.
enum GlobalIds {
    static let globalTree = "sg"
    static let localTree = "sl"

    static func localKey(_ entityId: UInt32, _ id: Id) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(12)
        withUnsafeBytes(of: entityId.bigEndian) { key.append(contentsOf: $0) }
        withUnsafeBytes(of: id.bigEndian) { key.append(contentsOf: $0) }
        return key
    }

    static func bytes(_ uuid: UUID) -> [UInt8] { withUnsafeBytes(of: uuid.uuid) { Array($0) } }

    /// A new global id: a time-ordered UUID (version 7: the milliseconds since 1970 in its first
    /// 48 bits, then 74 random bits). Ids handed out together sort together, so that a sync's
    /// thousands of new ids go into the store's `sg` tree and the server's primary-key index
    /// near each other instead of at random places all over them.
    static func newGlobalId() -> UUID {
        var random = SystemRandomNumberGenerator()
        let milliseconds = UInt64(Date().timeIntervalSince1970 * 1_000) & 0xFFFF_FFFF_FFFF
        let high = milliseconds << 16 | 0x7000 | (random.next() & 0x0FFF)        // version 7
        let low = (random.next() as UInt64) & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000  // variant 10
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { out in
            out.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
            out.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        return UUID(uuid: bytes)
    }

    static func uuid(_ bytes: UnsafeRawBufferPointer) throws -> UUID {
        guard bytes.count == 16 else { throw CellarError.fileCorrupt("a global id has \(bytes.count) bytes, expected 16") }
        return UUID(uuid: bytes.loadUnaligned(as: uuid_t.self))
    }
}

extension TransactionContext {
    /// The global id of object `id` of `schema`; a new random one is stored for it when it has
    /// none yet and `assign` is true (else nil).
    func globalId(of schema: EntitySchema, _ id: Id, assign: Bool) throws -> UUID? {
        let write = write!
        let local = try localIdTree(create: assign)
        let key = GlobalIds.localKey(schema.id.id, id)
        if let local, let uuid = try write.withValue(local, key: key, { try $0.map(GlobalIds.uuid) }) { return uuid }
        guard assign, let local else { return nil }
        let uuid = GlobalIds.newGlobalId()
        try map(uuid, to: schema, id, localTree: local, localKey: key)
        return uuid
    }

    /// The local id of the object of `schema` with global id `uuid`; when it has none and
    /// `reserve` is true, a new id is handed out for it and kept from later puts (its id floor
    /// raised), so that the object can arrive later under it. Throws `illegalArgument` when the
    /// global id belongs to an object of another entity.
    func localId(of uuid: UUID, in schema: EntitySchema, reserve: Bool) throws -> Id? {
        let write = write!
        if let global = try globalIdTree(create: false) {
            let found = try withUnsafeBytes(of: uuid.uuid) { key in
                try write.withValue(global, key: key) { value -> (entity: UInt32, id: Id)? in
                    guard let value else { return nil }
                    guard value.count == 12 else { throw CellarError.fileCorrupt("a global id maps to \(value.count) bytes, expected 12") }
                    return (value.loadLE(UInt32.self, at: 0), value.loadLE(Id.self, at: 4))
                }
            }
            if let found {
                guard found.entity == schema.id.id else {
                    throw CellarError.illegalArgument("the global id \(uuid) belongs to an object of entity ID \(found.entity), not of \(schema.name)")
                }
                return found.id
            }
        }
        guard reserve else { return nil }
        let id = try withSequence(schema) { sequence -> Id in
            let id = try sequence.take()
            sequence.noteRemoved(id)  // no object yet: the floor keeps the id from later puts
            return id
        }
        let key = GlobalIds.localKey(schema.id.id, id)
        try map(uuid, to: schema, id, localTree: try localIdTree(create: true)!, localKey: key)
        return id
    }

    /// The tree of local ids by global id, looked up once a transaction (created when missing
    /// and `create` is true, else nil).
    private func globalIdTree(create: Bool) throws -> Tree? {
        if let tree = globalIdTrees.global { return tree }
        globalIdTrees.global = try write!.tree(GlobalIds.globalTree, create: create)
        return globalIdTrees.global
    }

    /// The tree of global ids by local id, as `globalIdTree`.
    private func localIdTree(create: Bool) throws -> Tree? {
        if let tree = globalIdTrees.local { return tree }
        globalIdTrees.local = try write!.tree(GlobalIds.localTree, create: create)
        return globalIdTrees.local
    }

    private func map(_ uuid: UUID, to schema: EntitySchema, _ id: Id, localTree: Tree, localKey: [UInt8]) throws {
        let write = write!
        var value: [UInt8] = []
        withUnsafeBytes(of: schema.id.id.littleEndian) { value.append(contentsOf: $0) }
        withUnsafeBytes(of: id.littleEndian) { value.append(contentsOf: $0) }
        try write.put(try globalIdTree(create: true)!, key: GlobalIds.bytes(uuid), value: value)
        try write.put(localTree, key: localKey, value: GlobalIds.bytes(uuid))
    }
}
