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

        var entityIds: [UInt32: ModelEntity] = [:]
        var entityNames: Set<String> = []
        let nextEntityId = max(lastEntityId.id, entities.map(\.id.id).max() ?? 0) + 1
        for entity in entities {
            let what = "entity \(entity.name)"
            guard !entity.name.isEmpty else { throw CellarError.schema("\(source): an entity with ID \(entity.id) has an empty name") }
            guard entityNames.insert(entity.name).inserted else {
                throw CellarError.schema("\(source): two entities are named \(entity.name); rename one")
            }
            guard entity.id.id != 0 else { throw CellarError.schema("\(source): \(what) has ID 0; run the generator to assign one") }
            if let other = entityIds[entity.id.id] {
                throw CellarError.schema(Self.duplicateId(source, "entities", (other.name, other.id), (entity.name, entity.id),
                                                          member: "id", next: nextEntityId, last: "\"lastEntityId\""))
            }
            entityIds[entity.id.id] = entity
            guard entity.id.id <= lastEntityId.id else {
                throw CellarError.schema("\(source): \(what) has ID \(entity.id.id), above lastEntityId \(lastEntityId); set lastEntityId to \(entity.id)")
            }
            try claim(entity.id.uid, what)
            try notRetired(entity.id.uid, what)
            try entity.validate(source: source, claim: claim, notRetired: notRetired,
                                lastIndexId: lastIndexId.id, lastRelationId: lastRelationId.id,
                                requireSupportedTypes: requireSupportedTypes)
        }
        try validateEmbedded(source: source)
        // Index and relation IDs are unique across the whole model.
        try Self.checkUniqueIds(namedIndexIds, source: source, kinds: "the indexes of", member: "indexId",
                                lastId: lastIndexId, last: "\"lastIndexId\"")
        try Self.checkUniqueIds(namedRelationIds, source: source, kinds: "relations", member: "id",
                                lastId: lastRelationId, last: "\"lastRelationId\"")
    }

    /// Throws `duplicateId`'s message for the first two of `items` with the same ID.
    private static func checkUniqueIds(_ items: [(name: String, id: IdUid)], source: String, kinds: String, member: String,
                                       lastId: IdUid, last: String) throws {
        let next = max(lastId.id, items.map(\.id.id).max() ?? 0) + 1
        var seen: [UInt32: (name: String, id: IdUid)] = [:]
        for item in items {
            if let other = seen.updateValue(item, forKey: item.id.id) {
                throw CellarError.schema(duplicateId(source, kinds, other, item, member: member, next: next, last: last))
            }
        }
    }

    /// The message for two things of one kind with the same ID, as after a merge of two branches
    /// of the model file that each added one: it names both by name and `ID:UID` and says what
    /// to write for either, since only the developer knows which of the two is not shared yet.
    /// `kinds` names the two in the plural ("entities"), `member` is the JSON member that holds
    /// the ID, `last` the last-ID member to raise with it.
    fileprivate static func duplicateId(_ source: String, _ kinds: String, _ first: (name: String, id: IdUid),
                                        _ second: (name: String, id: IdUid), member: String, next: UInt32, last: String) -> String {
        let firstMoved = IdUid(id: next, uid: first.id.uid)
        let secondMoved = IdUid(id: next, uid: second.id.uid)
        return "\(source): \(kinds) \(first.name) (\(first.id)) and \(second.name) (\(second.id)) both have ID \(first.id.id), as after a merge of two branches that each added one. Give one of them the next free ID and keep its UID: write \"\(secondMoved)\" as the \(member) of \(second.name), or \"\(firstMoved)\" as the \(member) of \(first.name), and the same value in \(last); then search the file for that UID and use the new ID wherever it appears. Move the one not shared with others yet (usually your own): a development database that already stores it must then be deleted and created anew"
    }
}

extension ModelEntity {
    fileprivate func validate(source: String, claim: (UInt64, String) throws -> Void, notRetired: (UInt64, String) throws -> Void,
                              lastIndexId: UInt32, lastRelationId: UInt32, requireSupportedTypes: Bool) throws {
        var ids: [UInt32: ModelProperty] = [:]
        var names: Set<String> = []
        var idProperties = 0
        var primaryKeys: [String] = []
        let nextPropertyId = max(lastPropertyId.id, properties.map(\.id.id).max() ?? 0) + 1
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
                throw CellarError.schema(Model.duplicateId(source, "properties", ("\(name).\(other.name)", other.id), ("\(name).\(property.name)", property.id),
                                                           member: "id", next: nextPropertyId, last: "the \"lastPropertyId\" of entity \(name)"))
            }
            ids[property.id.id] = property
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
            if property.flags.contains(.primaryKey) {
                primaryKeys.append(property.name)
                guard [.byte, .short, .int, .long, .string, .uuid].contains(property.type), !property.flags.contains(.id) else {
                    throw CellarError.schema("\(source): \(what) is a primary key of type \(property.type); a primary key is a String, a UUID or an integer other than the id")
                }
                guard property.flags.contains(.unique), !(property.indexId?.isZero ?? true) else {
                    throw CellarError.schema("\(source): \(what) is a primary key without a unique index; run the generator, which gives it one")
                }
            }
            if property.type == .geoPoint || property.flags.contains(.geoIndex), let index = property.indexId, !index.isZero {
                guard property.type == .geoPoint, property.flags.contains(.geoIndex) else {
                    throw CellarError.schema("\(source): \(what) is a \(property.type) with \(property.flags.contains(.geoIndex) ? "a geo index" : "an index that is not a geo index"); a GeoPoint has a geo index (flag geoIndex) and only a GeoPoint has one — run the generator")
                }
                guard !property.flags.contains(.unique) else {
                    throw CellarError.schema("\(source): \(what) is a GeoPoint marked unique; a geo index finds points in shapes and cannot check uniqueness")
                }
            }
            if let params = property.hnswParams {
                guard property.type == .floatVector, !(property.indexId?.isZero ?? true) else {
                    throw CellarError.schema("\(source): \(what) has HNSW parameters but is a \(property.type)\((property.indexId?.isZero ?? true) ? " without an index (indexId)" : ""); an HNSW index is on a [Float] property (FloatVector, 28) — run the generator, which gives it one")
                }
                do {
                    _ = try HNSWParameters(json: params)
                } catch let error as CellarError {
                    throw CellarError.schema("\(source): \(what): \(error.message)")
                }
                guard !isEmbedded else {
                    throw CellarError.schema("\(source): \(what) is a property of the embedded type \(name) with an HNSW index; vector indexes are on entities' own [Float] properties")
                }
            } else if property.type == .floatVector, let index = property.indexId, !index.isZero {
                throw CellarError.schema("\(source): \(what) is a [Float] with an index but no hnswParams; a vector is indexed by an HNSW index (`// cellar: hnsw = { \"dimensions\": … }`)")
            }
            if property.flags.contains(.fullTextIndex) {
                guard property.type == .string, !(property.indexId?.isZero ?? true) else {
                    throw CellarError.schema("\(source): \(what) has a full-text index but is a \(property.type)\((property.indexId?.isZero ?? true) ? " without an index (indexId)" : ""); a full-text index is on a String property — run the generator, which gives it one")
                }
                guard !property.flags.contains(.unique), !property.flags.contains(.indexHash), !property.flags.contains(.indexHash64) else {
                    throw CellarError.schema("\(source): \(what) has a full-text index and is also unique or hash-indexed; a property has one index: remove `unique` or the hash kind")
                }
                guard !isEmbedded else {
                    throw CellarError.schema("\(source): \(what) is a property of the embedded type \(name) with a full-text index; full-text indexes are on entities' own String properties (an embedded object's text is searched by a scan)")
                }
            }
            if property.type == .flex, let index = property.indexId, !index.isZero {
                throw CellarError.schema("\(source): \(what) is a Flex value with an index; a FlexValue cannot be indexed")
            }
            if let shape = property.type.collection, let index = property.indexId, !index.isZero {
                guard shape.kind != .map else {
                    throw CellarError.schema("\(source): \(what) is a map (\(property.type)) with an index; lists and sets can have one (a key per element), maps cannot")
                }
                guard !property.flags.contains(.unique) else {
                    throw CellarError.schema("\(source): \(what) is a \(property.type) marked unique; a list or set cannot be unique (its index has a key per element)")
                }
            }
            if let value = property.defaultValue {
                do {
                    _ = try StoredDefault.stored(value, for: property)
                } catch let error as CellarError where error.code == .schema {
                    let problem = error.message
                    throw CellarError.schema("\(source): entity \(name): \(problem)")
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
        if isEmbedded {
            guard indexes.isEmpty else {
                throw CellarError.schema("\(source): the embedded type \(name) has an index over several properties; such indexes are on entities")
            }
            try validateEmbeddedType(source: source, idProperties: idProperties)
            return
        }
        for index in indexes {
            try validate(index, source: source, claim: claim, notRetired: notRetired, lastIndexId: lastIndexId)
        }
        guard idProperties == 1 else {
            throw CellarError.schema("\(source): entity \(name) has \(idProperties) id properties; it needs exactly one (an `Id` or `EntityId<\(name)>` property, flag 1)")
        }
        guard primaryKeys.count <= 1 else {
            throw CellarError.schema("\(source): entity \(name) has \(primaryKeys.count) primary keys (\(primaryKeys.joined(separator: ", "))); it may have one")
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

extension ModelEntity {
    /// The property types an index over several properties holds: those whose values make a key
    /// of their own (numbers, Bools, dates, relations, strings, byte vectors, UUIDs, decimals).
    @_spi(CellarGenerated) public static let compoundIndexTypes: Set<PropertyType> = [.bool, .byte, .short, .char, .int, .long, .float, .double, .string,
                                                         .date, .dateNano, .relation, .byteVector, .uuid, .decimal]

    fileprivate func validate(_ index: ModelIndex, source: String, claim: (UInt64, String) throws -> Void,
                              notRetired: (UInt64, String) throws -> Void, lastIndexId: UInt32) throws {
        let what = "the index \(describe(index))"
        guard index.id.id != 0, index.id.id <= lastIndexId else {
            throw CellarError.schema("\(source): \(what) has ID \(index.id.id), not within 1…lastIndexId (\(lastIndexId))")
        }
        try claim(index.id.uid, what)
        try notRetired(index.id.uid, what)
        guard index.properties.count >= 2 else {
            throw CellarError.schema("\(source): \(what) has \(index.properties.count) properties; an index over several properties has at least two (one property takes `// cellar: index` on itself)")
        }
        var seen: Set<UInt64> = []
        for id in index.properties {
            guard let property = properties.first(where: { $0.id.id == id.id && $0.id.uid == id.uid }) else {
                throw CellarError.schema("\(source): \(what) names property \(id), which entity \(name) does not have; run the generator")
            }
            guard seen.insert(id.uid).inserted else {
                throw CellarError.schema("\(source): \(what) names \(name).\(property.name) twice")
            }
            guard Self.compoundIndexTypes.contains(property.type), !property.flags.contains(.id) else {
                throw CellarError.schema("\(source): \(what) holds \(name).\(property.name), a \(property.flags.contains(.id) ? "id" : "\(property.type)"); an index over several properties holds numbers, Bools, dates, relations, strings, byte vectors, UUIDs and decimals")
            }
        }
    }
}

extension Model {
    /// Every index of the model, named by its property (`Entity.property`), or by its entity and
    /// properties for an index over several (`Entity(a, b)`).
    var namedIndexIds: [(name: String, id: IdUid)] {
        entities.flatMap { entity in
            entity.properties.compactMap { property in
                property.indexId.flatMap { $0.isZero ? nil : ("\(entity.name).\(property.name)", $0) }
            } + entity.indexes.map { (entity.describe($0), $0.id) }
        }
    }

    /// Every standalone relation of the model, named `Entity.relation`.
    var namedRelationIds: [(name: String, id: IdUid)] {
        entities.flatMap { entity in entity.relations.map { ("\(entity.name).\($0.name)", $0.id) } }
    }

    /// Every UID the model retired: entities, properties, indexes, relations.
    @_spi(Testing) public var retiredUids: Set<UInt64> {
        Set(retiredEntityUids + retiredPropertyUids + retiredIndexUids + retiredRelationUids)
    }

    /// Every UID the model uses or retired: entities, properties, indexes, relations.
    @_spi(Testing) public var allUids: Set<UInt64> {
        var uids = retiredUids
        for entity in entities {
            uids.insert(entity.id.uid)
            for property in entity.properties {
                uids.insert(property.id.uid)
                if let index = property.indexId, !index.isZero { uids.insert(index.uid) }
            }
            for relation in entity.relations { uids.insert(relation.id.uid) }
            for index in entity.indexes { uids.insert(index.id.uid) }
        }
        return uids
    }

    /// A new UID: a random positive 64-bit value (1…Int64.max, as ObjectBox's) that the model
    /// neither uses nor retired, and that is not in `taken` (UIDs handed out but not added yet).
    @_spi(Testing) public func newUid<G: RandomNumberGenerator>(using generator: inout G, excluding taken: Set<UInt64> = []) -> UInt64 {
        Self.newUid(using: &generator, avoiding: allUids, excluding: taken)
    }

    /// A new UID not in `used` (a model's `allUids`, computed once by a caller that hands out many)
    /// nor in `taken`.
    @_spi(Testing) public static func newUid<G: RandomNumberGenerator>(using generator: inout G, avoiding used: Set<UInt64>,
                                                        excluding taken: Set<UInt64>) -> UInt64 {
        while true {
            let uid = UInt64.random(in: 1...UInt64(Int64.max), using: &generator)
            if !used.contains(uid) && !taken.contains(uid) { return uid }
        }
    }

    /// A new UID from the system's random source.
    @_spi(Testing) public func newUid(excluding taken: Set<UInt64> = []) -> UInt64 {
        var generator = SystemRandomNumberGenerator()
        return newUid(using: &generator, excluding: taken)
    }
}

// MARK: Embedded types

extension Model {
    /// The most levels of embedded objects one record holds (an entity's embedded object is at
    /// level 1). Deeper values are refused on write; the generator refuses types that must nest
    /// deeper.
    public static let maxEmbeddingDepth = 64

    /// Checks that every property holding embedded objects names an embedded type of the model.
    fileprivate func validateEmbedded(source: String) throws {
        let embedded = Set(entities.filter(\.isEmbedded).map(\.name))
        for entity in entities {
            for property in entity.properties {
                let what = "property \(entity.name).\(property.name)"
                if property.type.isEmbedded {
                    guard let target = property.embeddedType, !target.isEmpty else {
                        throw CellarError.schema("\(source): \(what) holds embedded objects (\(property.type)) but names no embeddedType")
                    }
                    guard embedded.contains(target) else {
                        let kind = self.entity(named: target) == nil ? "not in the model" : "an entity, not an embedded type"
                        throw CellarError.schema("\(source): \(what) holds embedded \(target) objects, but \(target) is \(kind); mark the type `// cellar: embedded` and run the generator")
                    }
                } else if property.embeddedType != nil {
                    throw CellarError.schema("\(source): \(what) is a \(property.type) with an embeddedType; only Embedded (101) and EmbeddedList (1101) properties name one")
                }
            }
        }
    }
}

extension ModelEntity {
    /// The rules of an embedded type: no id, no primary key, no relations, nothing unique.
    fileprivate func validateEmbeddedType(source: String, idProperties: Int) throws {
        guard idProperties == 0 else {
            throw CellarError.schema("\(source): embedded type \(name) has an id property; an embedded object has no id of its own (it lives in its owner's record) — remove the id, or make \(name) an entity")
        }
        guard relations.isEmpty else {
            throw CellarError.schema("\(source): embedded type \(name) has a to-many relation; relations belong to entities")
        }
        for property in properties {
            let what = "property \(name).\(property.name) of embedded type \(name)"
            if property.flags.contains(.primaryKey) {
                throw CellarError.schema("\(source): \(what) is a primary key; an embedded object has no identity of its own — put the primary key on the owning entity")
            }
            if property.flags.contains(.unique) {
                throw CellarError.schema("\(source): \(what) is unique; an embedded object's property cannot be unique (copies of it live in many owners) — index it without unique")
            }
            if property.type == .relation && (property.deleteRule != nil || property.backlinkDeleteRule != nil) {
                throw CellarError.schema("\(source): \(what) is a to-one relation with a delete rule; a relation inside an embedded object has none (its link goes with its owner, and reads as no target once the target is removed)")
            }
        }
    }
}
