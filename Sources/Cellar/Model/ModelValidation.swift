extension Model {
    /// Checks the model's own consistency: IDs and UIDs present, unique and not above the last
    /// IDs, names unique, UIDs not retired, one id property per entity, types Cellar can store
    /// (when `requireSupportedTypes`). Throws `CellarError.schema` naming the first problem found
    /// and what to do about it. `source` names where the model came from in messages.
    public func validate(source: String = "the model", requireSupportedTypes: Bool = true) throws {
        var uids: [UInt64: String] = [:]
        func claim(_ uid: UInt64, _ what: String) throws {
            guard uid != 0 else { throw CellarError.schema("\(source): \(what) has no UID (0); run the generator to assign one") }
            if let other = uids[uid] {
                throw CellarError.schema("\(source): \(what) and \(other) have the same UID \(uid); UIDs must be unique across entities, properties, indexes and relations — give one of them a new UID")
            }
            uids[uid] = what
        }
        let retired = retiredUids
        func notRetired(_ uid: UInt64, _ what: String) throws {
            if retired.contains(uid) {
                throw CellarError.schema("\(source): \(what) uses UID \(uid), which was retired; a retired UID is never used again — give it a new UID")
            }
        }

        var entityIds: [UInt32: String] = [:]
        var entityNames: Set<String> = []
        for entity in entities {
            let what = "entity \(entity.name)"
            guard !entity.name.isEmpty else { throw CellarError.schema("\(source): an entity with ID \(entity.id) has an empty name") }
            guard entityNames.insert(entity.name).inserted else {
                throw CellarError.schema("\(source): two entities are named \(entity.name); rename one")
            }
            guard entity.id.id != 0 else { throw CellarError.schema("\(source): \(what) has ID 0; run the generator to assign one") }
            if let other = entityIds[entity.id.id] {
                throw CellarError.schema("\(source): \(what) and entity \(other) both have ID \(entity.id.id); give one the ID \(lastEntityId.id + 1) (keep its UID) and set lastEntityId to it")
            }
            entityIds[entity.id.id] = entity.name
            guard entity.id.id <= lastEntityId.id else {
                throw CellarError.schema("\(source): \(what) has ID \(entity.id.id), above lastEntityId \(lastEntityId); set lastEntityId to \(entity.id)")
            }
            try claim(entity.id.uid, what)
            try notRetired(entity.id.uid, what)
            try entity.validate(source: source, claim: claim, notRetired: notRetired,
                                lastIndexId: lastIndexId.id, lastRelationId: lastRelationId.id,
                                requireSupportedTypes: requireSupportedTypes)
        }
        // Index and relation IDs are unique across the whole model.
        var indexIds: [UInt32: String] = [:]
        var relationIds: [UInt32: String] = [:]
        for entity in entities {
            for property in entity.properties {
                guard let index = property.indexId, !index.isZero else { continue }
                let what = "\(entity.name).\(property.name)"
                if let other = indexIds.updateValue(what, forKey: index.id) {
                    throw CellarError.schema("\(source): the indexes of \(other) and \(what) both have ID \(index.id); give one the ID \(lastIndexId.id + 1) (keep its UID) and set lastIndexId to it")
                }
            }
            for relation in entity.relations {
                let what = "\(entity.name).\(relation.name)"
                if let other = relationIds.updateValue(what, forKey: relation.id.id) {
                    throw CellarError.schema("\(source): the relations \(other) and \(what) both have ID \(relation.id.id); give one the ID \(lastRelationId.id + 1) (keep its UID) and set lastRelationId to it")
                }
            }
        }
    }
}

extension ModelEntity {
    fileprivate func validate(source: String, claim: (UInt64, String) throws -> Void, notRetired: (UInt64, String) throws -> Void,
                              lastIndexId: UInt32, lastRelationId: UInt32, requireSupportedTypes: Bool) throws {
        var ids: [UInt32: String] = [:]
        var names: Set<String> = []
        var idProperties = 0
        for property in properties {
            let what = "property \(name).\(property.name)"
            guard !property.name.isEmpty else { throw CellarError.schema("\(source): a property of entity \(name) with ID \(property.id) has an empty name") }
            guard names.insert(property.name).inserted else {
                throw CellarError.schema("\(source): entity \(name) has two properties named \(property.name); rename one")
            }
            guard property.id.id != 0 else { throw CellarError.schema("\(source): \(what) has ID 0; run the generator to assign one") }
            guard property.id.id <= UInt32(RecordLayout.maxSlots) else {
                throw CellarError.schema("\(source): \(what) has ID \(property.id.id); property IDs go up to \(RecordLayout.maxSlots)")
            }
            if let other = ids[property.id.id] {
                throw CellarError.schema("\(source): properties \(name).\(property.name) and \(name).\(other) both have ID \(property.id.id); give one the ID \(lastPropertyId.id + 1) (keep its UID) and set the entity's lastPropertyId to it")
            }
            ids[property.id.id] = property.name
            guard property.id.id <= lastPropertyId.id else {
                throw CellarError.schema("\(source): \(what) has ID \(property.id.id), above the entity's lastPropertyId \(lastPropertyId); set lastPropertyId to \(property.id)")
            }
            try claim(property.id.uid, what)
            try notRetired(property.id.uid, what)
            if requireSupportedTypes && !property.type.isSupported {
                throw CellarError.schema("\(source): \(what) has type code \(property.type.rawValue), which Cellar cannot store")
            }
            if property.flags.contains(.id) {
                idProperties += 1
                guard property.type == .long else {
                    throw CellarError.schema("\(source): the id property \(name).\(property.name) has type \(property.type); an id is a Long (type 6)")
                }
            }
            if property.type == .relation && (property.relationTarget ?? "").isEmpty {
                throw CellarError.schema("\(source): the relation \(what) names no relationTarget")
            }
            if property.flags.contains(.unique) && !property.flags.contains(.id) && (property.indexId?.isZero ?? true) {
                throw CellarError.schema("\(source): \(what) is unique but has no index (indexId); uniqueness is checked through an index — run the generator, which gives it one")
            }
            if let index = property.indexId, !index.isZero {
                guard index.id != 0, index.id <= lastIndexId else {
                    throw CellarError.schema("\(source): the index of \(what) has ID \(index.id), not within 1…lastIndexId (\(lastIndexId))")
                }
                try claim(index.uid, "the index of \(what)")
                try notRetired(index.uid, "the index of \(what)")
            }
        }
        guard idProperties == 1 else {
            throw CellarError.schema("\(source): entity \(name) has \(idProperties) id properties; it needs exactly one (an `Id` or `EntityId<\(name)>` property, flag 1)")
        }
        for relation in relations {
            let what = "relation \(name).\(relation.name)"
            guard relation.id.id != 0, relation.id.id <= lastRelationId else {
                throw CellarError.schema("\(source): \(what) has ID \(relation.id.id), not within 1…lastRelationId (\(lastRelationId))")
            }
            try claim(relation.id.uid, what)
            try notRetired(relation.id.uid, what)
        }
    }
}

extension Model {
    /// Every UID the model retired: entities, properties, indexes, relations.
    public var retiredUids: Set<UInt64> {
        Set(retiredEntityUids + retiredPropertyUids + retiredIndexUids + retiredRelationUids)
    }

    /// Every UID the model uses or retired: entities, properties, indexes, relations.
    public var allUids: Set<UInt64> {
        var uids = retiredUids
        for entity in entities {
            uids.insert(entity.id.uid)
            for property in entity.properties {
                uids.insert(property.id.uid)
                if let index = property.indexId, !index.isZero { uids.insert(index.uid) }
            }
            for relation in entity.relations { uids.insert(relation.id.uid) }
        }
        return uids
    }

    /// A new UID: a random positive 64-bit value (1…Int64.max, as ObjectBox's) that the model
    /// neither uses nor retired, and that is not in `taken` (UIDs handed out but not added yet).
    public func newUid<G: RandomNumberGenerator>(using generator: inout G, excluding taken: Set<UInt64> = []) -> UInt64 {
        Self.newUid(using: &generator, avoiding: allUids, excluding: taken)
    }

    /// A new UID not in `used` (a model's `allUids`, computed once by a caller that hands out many)
    /// nor in `taken`.
    public static func newUid<G: RandomNumberGenerator>(using generator: inout G, avoiding used: Set<UInt64>,
                                                        excluding taken: Set<UInt64>) -> UInt64 {
        while true {
            let uid = UInt64.random(in: 1...UInt64(Int64.max), using: &generator)
            if !used.contains(uid) && !taken.contains(uid) { return uid }
        }
    }

    /// A new UID from the system's random source.
    public func newUid(excluding taken: Set<UInt64> = []) -> UInt64 {
        var generator = SystemRandomNumberGenerator()
        return newUid(using: &generator, excluding: taken)
    }
}
