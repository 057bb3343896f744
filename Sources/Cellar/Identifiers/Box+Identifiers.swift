import CellarStorage
import Foundation

extension StoreUUID {
    /// The same 16 bytes as a Foundation `UUID`.
    var foundationUUID: UUID {
        let bytes = self.bytes
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}

extension Box {
    /// The persistent identifier of `entity`: temporary when it was never put (its id is 0).
    /// Reads nothing from the store; whether the object is still stored shows when it is resolved.
    public func identifier(for entity: E) throws -> PersistentIdentifier {
        try identifier(for: EntityId(binding.id(of: entity)))
    }

    /// The persistent identifier of object `id` of this box's entity; temporary when `id` is 0.
    public func identifier(for id: EntityId<E>) throws -> PersistentIdentifier {
        let schema = try self.schema.get()
        let store = store.uuid
        if id.value == 0 { return PersistentIdentifier(temporaryIn: store, entityName: schema.name, entityUid: schema.id.uid) }
        return PersistentIdentifier(store: store, entityName: schema.name, entityUid: schema.id.uid, id: id.value)
    }

    /// The object `identifier` names; nil when it was removed, and for a temporary identifier.
    /// - Throws: `CellarError.identifierFromAnotherStore` for an identifier of another store;
    ///   `CellarError.identifierOfAnotherEntity` for one of another entity. An identifier with the
    ///   entity's UID (made by `identifier(for:)`, or decoded) matches by UID, so it resolves after
    ///   the entity was renamed; one made from a URI matches by name.
    public func get(_ identifier: PersistentIdentifier) throws -> E? {
        guard let id = try objectId(of: identifier) else { return nil }
        return try get(id)
    }

    /// The object id `identifier` names in this box, after the checks `get(_:)` makes; nil for
    /// a temporary identifier.
    func objectId(of identifier: PersistentIdentifier) throws -> Id? {
        if identifier.isTemporary { return nil }
        let schema = try self.schema.get()
        guard identifier.storeIdentifier == store.uuid else { throw CellarError.identifierFromAnotherStore }
        let sameEntity = identifier.entityUid.map { $0 == schema.id.uid } ?? (identifier.entityName == schema.name)
        guard sameEntity else {
            throw CellarError.identifierOfAnotherEntity(identifier: identifier.description, box: schema.name)
        }
        return identifier.id
    }
}

extension Query {
    /// The persistent identifiers of the matching objects, in the query's order, without building
    /// the objects.
    public func findIdentifiers() throws -> [PersistentIdentifier] {
        try findIds().map { try box.identifier(for: $0) }
    }
}
