/// One change that syncing the code's model with the database's made.
public enum ModelChange: Hashable, Sendable {
    /// An entity new to the database.
    case addEntity(String)
    /// An entity renamed in the code; its objects are kept.
    case renameEntity(from: String, to: String)
    /// The entity is gone from the code: its objects become unreachable (reclaimed by compaction).
    case retireEntity(ModelEntity)
    /// A property new to the database; stored objects read its default.
    case addProperty(entity: String, property: String)
    /// A property renamed in the code; its values are kept.
    case renameProperty(entity: String, from: String, to: String)
    /// The property is gone from the code: its bytes in stored records are ignored from now on.
    case retireProperty(entity: String, property: String)
    /// An index new to the database, built from the stored objects when the store opens.
    case addIndex(entity: String, property: String)
    /// An index gone from the code; its tree is freed.
    case retireIndex(entity: String, property: String)
    /// A standalone to-many relation new to the database.
    case addRelation(entity: String, relation: String)
    /// A standalone to-many relation gone from the code; its links are dropped when the store opens.
    case retireRelation(entity: String, relation: String)
    /// A property whose type changed (same UID), its values converted by a migration
    /// (``StoreOptions/migration``).
    case changePropertyType(entity: String, property: String)
    /// An index over several properties new to the database (or made unique or not unique),
    /// built from the stored objects when the store opens.
    case addCompoundIndex(entity: String, properties: [String])
    /// An index over several properties gone from the code; its tree is freed.
    case retireCompoundIndex(entity: String, properties: [String])
}

extension ModelChange: CustomStringConvertible {
    /// The change in words, such as `added property Note.title`.
    public var description: String {
        switch self {
        case .addEntity(let name): "added entity \(name)"
        case .renameEntity(let from, let to): "renamed entity \(from) to \(to)"
        case .retireEntity(let entity): "retired entity \(entity.name) (its objects are dropped)"
        case .addProperty(let entity, let property): "added property \(entity).\(property)"
        case .renameProperty(let entity, let from, let to): "renamed property \(entity).\(from) to \(to)"
        case .retireProperty(let entity, let property): "retired property \(entity).\(property)"
        case .addIndex(let entity, let property): "added the index of \(entity).\(property)"
        case .retireIndex(let entity, let property): "retired the index of \(entity).\(property)"
        case .addRelation(let entity, let relation): "added relation \(entity).\(relation)"
        case .retireRelation(let entity, let relation): "retired relation \(entity).\(relation)"
        case .changePropertyType(let entity, let property): "changed the type of \(entity).\(property)"
        case .addCompoundIndex(let entity, let properties): "added the index of \(entity)(\(properties.joined(separator: ", ")))"
        case .retireCompoundIndex(let entity, let properties): "retired the index of \(entity)(\(properties.joined(separator: ", ")))"
        }
    }
}

/// Syncs the model the code was generated with against the one stored in the database, by UID
/// (the rules of ObjectBox's meta model; see `docs/model.md`):
///
/// - a UID the database does not know adds the entity, property, index or relation;
/// - a known UID with another name renames it, keeping its data;
/// - a UID the code no longer has retires it: its UID is never used again, its data is dropped;
/// - refused with `CellarError.schema`: a changed type, an ID that does not match its UID, an ID
///   the database used before for something else, a retired UID, a model whose last IDs are
///   below the database's (an older model file than the one that wrote the database), and a
///   model that shares no UID with the database's (a recreated model file). How the sync tells
///   apart the ways a database and the code's model come from different versions of the model
///   file, and what it says for each, is in `checkSameModelFile`, `checkNoIdMoved` and `reusedId`.
enum ModelSync {
    struct Result {
        /// What the database stores from now on: the code's model with the database's history
        /// (highest last IDs, all retired UIDs).
        var model: Model
        var changes: [ModelChange]
    }

    /// `migrating`: a migration runs (the schema version was raised and there is migration code),
    /// so a property of an entity may change its type: the migration converts its values.
    static func sync(code: Model, stored: Model?, migrating: Bool = false) throws -> Result {
        try code.validate(source: "the code's model")
        guard let stored else {
            return Result(model: code, changes: code.entities.map { .addEntity($0.name) })
        }
        try stored.validate(source: "the database's model", requireSupportedTypes: false)
        try checkSameModelFile(code: code, stored: stored)
        try checkNotOlder("lastEntityId", code.lastEntityId, stored.lastEntityId)
        try checkNotOlder("lastIndexId", code.lastIndexId, stored.lastIndexId)
        try checkNotOlder("lastRelationId", code.lastRelationId, stored.lastRelationId)
        try checkNotOlder("lastSequenceId", code.lastSequenceId, stored.lastSequenceId)
        // From here on every UID the database knows has the same ID in the code's model.
        try checkNoIdMoved(code: code, stored: stored)

        let retired = stored.retiredUids
        var merged = code
        var changes: [ModelChange] = []
        var retiredEntities: [UInt64] = []
        var retiredProperties: [UInt64] = []
        var retiredIndexes: [UInt64] = []
        var retiredRelations: [UInt64] = []

        let storedByUid = Dictionary(stored.entities.map { ($0.id.uid, $0) }, uniquingKeysWith: { a, _ in a })
        let storedById = Dictionary(stored.entities.map { ($0.id.id, $0) }, uniquingKeysWith: { a, _ in a })
        let codeUids = Set(code.entities.map(\.id.uid))

        for entity in code.entities {
            try checkNotRetired(entity.id.uid, "entity \(entity.name)", retired)
            guard let old = storedByUid[entity.id.uid] else {
                let next = max(code.lastEntityId.id, stored.lastEntityId.id) + 1
                if let other = storedById[entity.id.id] {
                    throw CellarError.schema(reusedId("entity \(entity.name)", entity.name, id: entity.id,
                                                      used: "for entity \(other.name) (\(other.id)), which the model does not have",
                                                      next: next, last: "\"lastEntityId\""))
                }
                if entity.id.id <= stored.lastEntityId.id {
                    throw CellarError.schema(reusedId("entity \(entity.name)", entity.name, id: entity.id,
                                                      used: "already: it gave out entity IDs up to its lastEntityId \(stored.lastEntityId)",
                                                      next: next, last: "\"lastEntityId\""))
                }
                changes.append(.addEntity(entity.name))
                for property in entity.properties where property.indexId.map({ !$0.isZero }) ?? false {
                    try checkNotRetired(property.indexId!.uid, "the index of \(entity.name).\(property.name)", retired)
                }
                for index in entity.indexes { try checkNotRetired(index.id.uid, "the index \(entity.describe(index))", retired) }
                continue
            }
            if old.name != entity.name { changes.append(.renameEntity(from: old.name, to: entity.name)) }
            try checkEmbedding(entity, old: old, code: code, stored: stored)
            try checkNotOlder("lastPropertyId of entity \(entity.name)", entity.lastPropertyId, old.lastPropertyId)
            let result = try syncProperties(entity: entity, old: old, retired: retired,
                                            typeChangeAllowed: migrating && !entity.isEmbedded)
            changes += result.changes
            retiredProperties += result.retiredProperties
            retiredIndexes += result.retiredIndexes
            let relations = try syncRelations(entity: entity, old: old, retired: retired)
            changes += relations.changes
            retiredRelations += relations.retired
            let indexes = try syncIndexes(entity: entity, old: old, retired: retired)
            changes += indexes.changes
            retiredIndexes += indexes.retired
            if let index = merged.entities.firstIndex(where: { $0.id.uid == entity.id.uid }),
               old.lastPropertyId.id > entity.lastPropertyId.id {
                merged.entities[index].lastPropertyId = old.lastPropertyId
            }
        }
        for old in stored.entities where !codeUids.contains(old.id.uid) {
            changes.append(.retireEntity(old))
            retiredEntities.append(old.id.uid)
            retiredProperties += old.properties.map(\.id.uid)
            retiredIndexes += old.properties.compactMap { $0.indexId.flatMap { $0.isZero ? nil : $0.uid } }
            retiredIndexes += old.indexes.map(\.id.uid)
            retiredRelations += old.relations.map(\.id.uid)
        }

        merged.lastEntityId = maxId(code.lastEntityId, stored.lastEntityId)
        merged.lastIndexId = maxId(code.lastIndexId, stored.lastIndexId)
        merged.lastRelationId = maxId(code.lastRelationId, stored.lastRelationId)
        merged.lastSequenceId = maxId(code.lastSequenceId, stored.lastSequenceId)
        merged.retiredEntityUids = union(stored.retiredEntityUids, code.retiredEntityUids, retiredEntities)
        merged.retiredPropertyUids = union(stored.retiredPropertyUids, code.retiredPropertyUids, retiredProperties)
        merged.retiredIndexUids = union(stored.retiredIndexUids, code.retiredIndexUids, retiredIndexes)
        merged.retiredRelationUids = union(stored.retiredRelationUids, code.retiredRelationUids, retiredRelations)
        return Result(model: merged, changes: changes)
    }

    private static func syncProperties(entity: ModelEntity, old: ModelEntity, retired: Set<UInt64>, typeChangeAllowed: Bool) throws
        -> (changes: [ModelChange], retiredProperties: [UInt64], retiredIndexes: [UInt64]) {
        var changes: [ModelChange] = []
        var retiredProperties: [UInt64] = []
        var retiredIndexes: [UInt64] = []
        let oldByUid = Dictionary(old.properties.map { ($0.id.uid, $0) }, uniquingKeysWith: { a, _ in a })
        let oldById = Dictionary(old.properties.map { ($0.id.id, $0) }, uniquingKeysWith: { a, _ in a })
        let uids = Set(entity.properties.map(\.id.uid))
        for property in entity.properties {
            let what = "\(entity.name).\(property.name)"
            try checkNotRetired(property.id.uid, "property \(what)", retired)
            let oldIndex = oldByUid[property.id.uid]?.indexId.flatMap { $0.isZero ? nil : $0 }
            let newIndex = property.indexId.flatMap { $0.isZero ? nil : $0 }
            guard let before = oldByUid[property.id.uid] else {
                let next = max(entity.lastPropertyId.id, old.lastPropertyId.id) + 1
                let last = "the \"lastPropertyId\" of entity \(entity.name)"
                if let other = oldById[property.id.id] {
                    throw CellarError.schema(reusedId("property \(what)", what, id: property.id,
                                                      used: "for property \(entity.name).\(other.name) (\(other.id)), which the model does not have",
                                                      next: next, last: last))
                }
                if property.id.id <= old.lastPropertyId.id {
                    throw CellarError.schema(reusedId("property \(what)", what, id: property.id,
                                                      used: "already: it gave out IDs of \(entity.name)'s properties up to its lastPropertyId \(old.lastPropertyId)",
                                                      next: next, last: last))
                }
                changes.append(.addProperty(entity: entity.name, property: property.name))
                if let newIndex {
                    try checkNotRetired(newIndex.uid, "the index of \(what)", retired)
                    changes.append(.addIndex(entity: entity.name, property: property.name))
                }
                continue
            }
            if property.changesType(from: before) {
                guard typeChangeAllowed, !property.flags.contains(.id), !before.flags.contains(.id) else {
                    throw CellarError.schema("property \(what) changed its type from \(typeName(before)) to \(typeName(property)); stored values cannot be read as the new type. Convert them in a migration (raise StoreOptions.schemaVersion and set StoreOptions.migration; not for an embedded type's property or the id), or start the property afresh (its old values dropped) with a new UID: annotate it `// cellar: uid` and run the generator, which prints a fresh UID to use; or keep the old type")
                }
                changes.append(.changePropertyType(entity: entity.name, property: property.name))
            }
            if before.name != property.name {
                changes.append(.renameProperty(entity: entity.name, from: before.name, to: property.name))
            }
            if oldIndex?.uid != newIndex?.uid {
                if let oldIndex {
                    retiredIndexes.append(oldIndex.uid)
                    changes.append(.retireIndex(entity: entity.name, property: property.name))
                }
                if let newIndex {
                    try checkNotRetired(newIndex.uid, "the index of \(what)", retired)
                    changes.append(.addIndex(entity: entity.name, property: property.name))
                }
            }
        }
        for property in old.properties where !uids.contains(property.id.uid) {
            changes.append(.retireProperty(entity: entity.name, property: property.name))
            retiredProperties.append(property.id.uid)
            if let index = property.indexId, !index.isZero { retiredIndexes.append(index.uid) }
        }
        return (changes, retiredProperties, retiredIndexes)
    }

    /// The indexes over several properties: matched by UID; one the code lost is retired.
    private static func syncIndexes(entity: ModelEntity, old: ModelEntity, retired: Set<UInt64>) throws
        -> (changes: [ModelChange], retired: [UInt64]) {
        var changes: [ModelChange] = []
        var gone: [UInt64] = []
        let oldByUid = Dictionary(old.indexes.map { ($0.id.uid, $0) }, uniquingKeysWith: { a, _ in a })
        for index in entity.indexes {
            try checkNotRetired(index.id.uid, "the index \(entity.describe(index))", retired)
            guard let before = oldByUid[index.id.uid] else {
                changes.append(.addCompoundIndex(entity: entity.name, properties: entity.propertyNames(of: index)))
                continue
            }
            guard before.properties.map(\.uid) == index.properties.map(\.uid) else {
                throw CellarError.schema("the index \(entity.describe(index)) (UID \(index.id.uid)) held other properties in the database (\(old.describe(before))); an index keeps its properties — run the generator, which gives a changed index a new UID")
            }
            if before.unique != index.unique {
                changes.append(.addCompoundIndex(entity: entity.name, properties: entity.propertyNames(of: index)))
            }
        }
        let uids = Set(entity.indexes.map(\.id.uid))
        for index in old.indexes where !uids.contains(index.id.uid) {
            changes.append(.retireCompoundIndex(entity: entity.name, properties: old.propertyNames(of: index)))
            gone.append(index.id.uid)
        }
        return (changes, gone)
    }

    private static func syncRelations(entity: ModelEntity, old: ModelEntity, retired: Set<UInt64>) throws
        -> (changes: [ModelChange], retired: [UInt64]) {
        var changes: [ModelChange] = []
        var gone: [UInt64] = []
        let oldByUid = Dictionary(old.relations.map { ($0.id.uid, $0) }, uniquingKeysWith: { a, _ in a })
        let uids = Set(entity.relations.map(\.id.uid))
        for relation in entity.relations {
            try checkNotRetired(relation.id.uid, "relation \(entity.name).\(relation.name)", retired)
            if oldByUid[relation.id.uid] == nil {
                changes.append(.addRelation(entity: entity.name, relation: relation.name))
            }
        }
        for relation in old.relations where !uids.contains(relation.id.uid) {
            changes.append(.retireRelation(entity: entity.name, relation: relation.name))
            gone.append(relation.id.uid)
        }
        return (changes, gone)
    }

    /// Refuses an entity that became an embedded type or the reverse, and a property whose
    /// embedded objects changed type: the stored bytes cannot be read as the new shape.
    private static func checkEmbedding(_ entity: ModelEntity, old: ModelEntity, code: Model, stored: Model) throws {
        let fresh = "To start afresh (the old data dropped), give it a new UID: annotate it `// cellar: uid` and run the generator, which prints a fresh UID to use"
        if entity.isEmbedded != old.isEmbedded {
            throw CellarError.schema("\(entity.name) was \(old.isEmbedded ? "an embedded type" : "an entity") and is now \(entity.isEmbedded ? "an embedded type" : "an entity"); what is stored cannot move between an entity's tree and its owners' records. \(fresh)")
        }
        let oldByUid = Dictionary(old.properties.map { ($0.id.uid, $0) }, uniquingKeysWith: { a, _ in a })
        for property in entity.properties {
            guard let before = oldByUid[property.id.uid], let target = property.embeddedType, let oldTarget = before.embeddedType,
                  let uid = code.entity(named: target)?.id.uid, let oldUid = stored.entity(named: oldTarget)?.id.uid, uid != oldUid else { continue }
            throw CellarError.schema("property \(entity.name).\(property.name) held embedded \(oldTarget) objects and now holds \(target) objects, another type; the stored ones cannot be read as \(target). \(fresh)")
        }
    }

    private static func checkNotOlder(_ what: String, _ code: IdUid, _ stored: IdUid) throws {
        guard code.id >= stored.id else {
            throw CellarError.schema("the code's model has \(what) \(code), below the database's \(stored): the database was written by a newer model. Use the newest model JSON (pull it from version control) and run the generator again")
        }
    }

    private static func checkNotRetired(_ uid: UInt64, _ what: String, _ retired: Set<UInt64>) throws {
        if retired.contains(uid) {
            throw CellarError.schema("\(what) uses UID \(uid), which the database retired; a retired UID is never used again — give it a new UID (run the generator)")
        }
    }

    private static func typeName(_ property: ModelProperty) -> String {
        property.flags.contains(.unsigned) ? "unsigned \(property.type)" : "\(property.type)"
    }

    private static func maxId(_ a: IdUid, _ b: IdUid) -> IdUid { a.id >= b.id ? a : b }

    /// `first`, then what the others add, in order, without repeats.
    private static func union(_ first: [UInt64], _ others: [UInt64]...) -> [UInt64] {
        var seen = Set(first)
        var out = first
        for list in others { for uid in list where seen.insert(uid).inserted { out.append(uid) } }
        return out
    }
}
