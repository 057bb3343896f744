@_spi(CellarGenerated) @_spi(Testing) import Cellar

/// Brings the model JSON up to date with the entities in the sources, following the meta model's
/// rules (`docs/model.md`): things are matched by UID when the sources give one
/// (`// cellar: uid = N`), else by name; new ones get the next ID and a fresh random UID; ones no
/// longer in the sources are retired (their UIDs never used again); IDs are never reused.
///
/// Refused with a `GeneratorError`, and nothing written: a model file that is inconsistent in
/// itself (duplicate IDs or UIDs after a merge, an ID above its `last…Id`), a `uid` annotation
/// without a value (the message gives the UID for a rename and a fresh one for a reset), a UID
/// that is retired or belongs to something else, and a changed type without a new UID.
public struct ModelUpdate {
    public var modelPath: String

    public init(modelPath: String) {
        self.modelPath = modelPath
    }

    /// `flags` with the asymmetric bit set or cleared; nil when no flag is left (models without
    /// entity flags stay as they were written).
    static func flags(_ flags: UInt32?, asymmetric: Bool) -> UInt32? {
        let others = (flags ?? 0) & ~ModelEntity.asymmetricFlag
        let value = asymmetric ? others | ModelEntity.asymmetricFlag : others
        return value == 0 && (flags == nil || flags == ModelEntity.asymmetricFlag) ? nil : value
    }

    /// The updated model. `model` is the file's current content (nil when there is none yet).
    public func update<G: RandomNumberGenerator>(_ model: Model?, with entities: [EntityDescription],
                                                 using generator: inout G) throws -> Model {
        var next = model ?? Model()
        if let model {
            do {
                try model.validate(source: modelPath, requireSupportedTypes: false)
            } catch let error as CellarError where error.code == .schema {
                let message = error.message
                throw GeneratorError("\(message). Fix \(modelPath) by hand (see docs/model.md, \"Resolving merge conflicts\"); nothing was written")
            }
        }
        try checkUidAnnotations(entities, in: next, using: &generator)
        var uids = UidAllocator(model: next)

        let old = next.entities
        var matchedOld: Set<UInt64> = []
        var updated: [ModelEntity] = []
        for entity in entities {
            let previous = try match(entity, in: old, matched: matchedOld, uids: uids)
            var result: ModelEntity
            if let previous {
                matchedOld.insert(previous.id.uid)
                guard previous.isEmbedded == entity.isEmbedded else {
                    let fresh = uids.peek(using: &generator)
                    let (before, after) = entity.isEmbedded ? ("an entity", "an embedded type") : ("an embedded type", "an entity")
                    throw GeneratorError("\(entity.typeName) changed from \(before) to \(after); its stored objects cannot be read as \(after). Keep it \(before), or start it afresh (its stored objects are dropped) with `// cellar: uid = \(fresh)`", at: entity.location)
                }
                result = previous
                result.name = entity.modelName
                result.flags = Self.flags(previous.flags, asymmetric: entity.isAsymmetric)
            } else {
                let what = entity.isEmbedded ? "embedded type" : "entity"
                let uid = try uids.take(entity.uid ?? nil, for: "\(what) \(entity.typeName)", at: entity.location, using: &generator)
                next.lastEntityId = IdUid(id: next.lastEntityId.id + 1, uid: uid)
                result = ModelEntity(name: entity.modelName, id: next.lastEntityId, lastPropertyId: .zero, properties: [],
                                     flags: Self.flags(entity.isEmbedded ? ModelEntity.embeddedFlag : nil, asymmetric: entity.isAsymmetric))
            }
            result = try updateProperties(of: result, isStored: previous != nil, from: entity, all: entities, model: &next,
                                          uids: &uids, using: &generator)
            result = try updateIndexes(of: result, from: entity, model: &next, uids: &uids, using: &generator)
            updated.append(result)
        }
        // Relations once every entity has its ID: a relation's target may be new too.
        for (index, entity) in entities.enumerated() {
            updated[index] = try updateRelations(of: updated[index], from: entity, all: entities, entities: updated,
                                                 model: &next, uids: &uids, using: &generator)
        }
        for entity in old where !matchedOld.contains(entity.id.uid) {
            retire(entity, in: &next)
        }
        next.entities = updated.sorted { $0.id.id < $1.id.id }
        do {
            try next.validate(source: "the updated model")
        } catch let error as CellarError where error.code == .schema {
            let message = error.message
            throw GeneratorError("\(message) (please report: the generator made an inconsistent model)")
        }
        return next
    }

    // MARK: Entities

    private func match(_ entity: EntityDescription, in old: [ModelEntity], matched: Set<UInt64>, uids: UidAllocator) throws -> ModelEntity? {
        if case .some(.some(let uid)) = entity.uid {
            if let previous = old.first(where: { $0.id.uid == uid }) { return previous }
            return nil   // a reset (or a new entity with a UID chosen by hand): checked by `take`
        }
        return old.first { $0.name == entity.modelName && !matched.contains($0.id.uid) }
    }

    private func retire(_ entity: ModelEntity, in model: inout Model) {
        model.retiredEntityUids.append(entity.id.uid)
        model.retiredIndexUids += entity.indexes.map(\.id.uid)
        for property in entity.properties { retire(property, in: &model) }
        model.retiredRelationUids += entity.relations.map(\.id.uid)
    }

    private func retire(_ property: ModelProperty, in model: inout Model) {
        model.retiredPropertyUids.append(property.id.uid)
        if let index = property.indexId, !index.isZero { model.retiredIndexUids.append(index.uid) }
    }

    // MARK: Properties

    /// `entity` as the sources describe it now. `isStored`: the model file had it before, so
    /// stored records of it may lack a property new to it.
    private func updateProperties<G: RandomNumberGenerator>(of entity: ModelEntity, isStored: Bool, from source: EntityDescription,
                                                            all: [EntityDescription], model: inout Model, uids: inout UidAllocator,
                                                            using generator: inout G) throws -> ModelEntity {
        var result = entity
        var matched: Set<UInt64> = []
        var properties: [ModelProperty] = []
        for property in source.properties {
            let what = "property \(source.typeName).\(property.name)"
            var previous: ModelProperty?
            if case .some(.some(let uid)) = property.uid {
                previous = entity.properties.first { $0.id.uid == uid }
            } else {
                previous = entity.properties.first { $0.name == property.modelName && !matched.contains($0.id.uid) }
            }
            var embeddedType: String?
            if let type = property.embeddedType {
                guard let embedded = all.first(where: { $0.typeName == type && $0.isEmbedded }) else {
                    throw GeneratorError("\(what) holds \(type), which is not an embedded type in these sources; annotate \(type) `// cellar: embedded`", at: property.location)
                }
                embeddedType = embedded.modelName
            }
            var relationTarget: String?
            if let target = property.relationTarget {
                guard let targetEntity = all.first(where: { $0.typeName == target }) else {
                    throw GeneratorError("\(what) relates to \(target), which is not an entity in these sources; make \(target) an entity (conform it to Entity)", at: property.location)
                }
                relationTarget = targetEntity.modelName
            }
            var next: ModelProperty
            if let previous {
                matched.insert(previous.id.uid)
                guard previous.type == property.propertyType,
                      previous.flags.contains(.unsigned) == property.flags.contains(.unsigned) else {
                    let fresh = uids.peek(using: &generator)
                    throw GeneratorError("\(what) changed its type from \(typeName(previous.type, previous.flags)) to \(typeName(property.propertyType, property.flags)); stored values cannot be read as the new type. Keep the old type, or start the property afresh (its stored values are dropped) with `// cellar: uid = \(fresh)`", at: property.location)
                }
                if let before = previous.embeddedType, let after = embeddedType, before != after,
                   !sameEmbeddedType(before, after, all: all, model: model) {
                    let fresh = uids.peek(using: &generator)
                    throw GeneratorError("\(what) changed its embedded type from \(before) to \(after); its stored objects cannot be read as \(after). Keep the old type, or start the property afresh (its stored values are dropped) with `// cellar: uid = \(fresh)`", at: property.location)
                }
                next = previous
                next.name = property.modelName
            } else {
                // Records of an entity the model file already has were written without this
                // property: they read its default, which an initial value like `Date()` cannot be.
                if isStored, let problem = property.initialValueProblem { throw problem }
                let uid = try uids.take(property.uid ?? nil, for: what, at: property.location, using: &generator)
                result.lastPropertyId = IdUid(id: result.lastPropertyId.id + 1, uid: uid)
                next = ModelProperty(name: property.modelName, id: result.lastPropertyId, type: property.propertyType)
            }
            next.type = property.propertyType
            next.flags = property.flags
            next.relationTarget = relationTarget
            next.deleteRule = property.deleteRule
            next.backlinkDeleteRule = relationTarget == nil ? nil
                : try Self.backlinkRule(of: .toOne(property: property.modelName), in: source, all: all, what: what, at: property.location)
            next.embeddedType = embeddedType
            next.hnswParams = property.hnswParams
            if property.flags.contains(.indexed) || property.flags.contains(.unique) {
                if next.indexId == nil || next.indexId!.isZero {
                    let uid = try uids.take(nil, for: "the index of \(what)", at: property.location, using: &generator)
                    model.lastIndexId = IdUid(id: model.lastIndexId.id + 1, uid: uid)
                    next.indexId = model.lastIndexId
                }
            } else if let index = next.indexId, !index.isZero {
                model.retiredIndexUids.append(index.uid)
                next.indexId = nil
            }
            properties.append(next)
        }
        for property in entity.properties where !matched.contains(property.id.uid) {
            retire(property, in: &model)
        }
        result.properties = properties.sorted { $0.id.id < $1.id.id }
        return result
    }

    // MARK: Indexes over several properties

    /// `entity`'s indexes over several properties as the sources give them: one over the same
    /// properties in the same order keeps its ID and UID (its unique flag may change); a new one
    /// gets the next index ID; one the sources no longer give is retired.
    private func updateIndexes<G: RandomNumberGenerator>(of entity: ModelEntity, from source: EntityDescription, model: inout Model,
                                                         uids: inout UidAllocator, using generator: inout G) throws -> ModelEntity {
        var result = entity
        var kept: Set<UInt64> = []
        result.indexes = try source.indexes.map { described in
            let ids = described.properties.map { name in entity.properties.first { $0.name == name }!.id }
            if var previous = entity.indexes.first(where: { $0.properties.map(\.uid) == ids.map(\.uid) }) {
                kept.insert(previous.id.uid)
                previous.properties = ids
                previous.unique = described.unique
                return previous
            }
            let what = "the index of \(source.typeName)(\(described.properties.joined(separator: ", ")))"
            let uid = try uids.take(nil, for: what, at: described.location, using: &generator)
            model.lastIndexId = IdUid(id: model.lastIndexId.id + 1, uid: uid)
            return ModelIndex(id: model.lastIndexId, properties: ids, unique: described.unique)
        }
        for index in entity.indexes where !kept.contains(index.id.uid) { model.retiredIndexUids.append(index.id.uid) }
        return result
    }

    // MARK: Relations

    /// The `onDelete` rule of the backlinks declared (on other entities) as the other side of
    /// `relation` of `source`: what removing a target does to the objects pointing at it. Two
    /// backlinks of one relation with different rules are refused.
    static func backlinkRule(of relation: RelationDescription.Backlink, in source: EntityDescription, all: [EntityDescription],
                             what: String, at location: SourceLocation) throws -> DeleteRule? {
        let backlinks = all.flatMap { entity in entity.relations.filter { $0.target == source.typeName && $0.backlink == relation } }
        let rules = Set(backlinks.compactMap(\.deleteRule))
        guard rules.count <= 1 else {
            throw GeneratorError("the backlinks of \(what) give different onDelete rules (\(rules.map(\.rawValue).sorted().joined(separator: ", "))); give one rule, on one backlink", at: location)
        }
        return rules.first
    }

    /// The standalone `ToMany`s of `source` (backlinks are not in the model): matched like
    /// properties, by UID when the sources give one, else by name; new ones get the next
    /// `lastRelationId` (IDs are global, like index IDs); ones no longer in the sources are retired.
    private func updateRelations<G: RandomNumberGenerator>(of entity: ModelEntity, from source: EntityDescription, all: [EntityDescription],
                                                           entities: [ModelEntity], model: inout Model, uids: inout UidAllocator,
                                                           using generator: inout G) throws -> ModelEntity {
        var result = entity
        var matched: Set<UInt64> = []
        var relations: [ModelRelation] = []
        for relation in source.standaloneRelations {
            let what = "relation \(source.typeName).\(relation.name)"
            guard let targetSource = all.first(where: { $0.typeName == relation.target }),
                  let target = entities.first(where: { $0.name == targetSource.modelName }) else {
                throw GeneratorError("\(what) relates to \(relation.target), which is not an entity in these sources; make \(relation.target) an entity (conform it to Entity)", at: relation.location)
            }
            var previous: ModelRelation?
            if case .some(.some(let uid)) = relation.uid {
                previous = entity.relations.first { $0.id.uid == uid }
            } else {
                previous = entity.relations.first { $0.name == relation.modelName && !matched.contains($0.id.uid) }
            }
            var next: ModelRelation
            if let previous {
                matched.insert(previous.id.uid)
                guard previous.targetId.uid == target.id.uid else {
                    let before = model.entity(uid: previous.targetId.uid)?.name ?? "the entity \(previous.targetId)"
                    let fresh = uids.peek(using: &generator)
                    throw GeneratorError("\(what) changed its target from \(before) to \(target.name); its stored links point at objects of \(before). Keep the old target, or start the relation afresh (its links are dropped) with `// cellar: uid = \(fresh)`", at: relation.location)
                }
                next = previous
                next.name = relation.modelName
                next.targetId = target.id
            } else {
                let uid = try uids.take(relation.uid ?? nil, for: what, at: relation.location, using: &generator)
                model.lastRelationId = IdUid(id: model.lastRelationId.id + 1, uid: uid)
                next = ModelRelation(name: relation.modelName, id: model.lastRelationId, targetId: target.id)
            }
            next.deleteRule = relation.deleteRule
            next.backlinkDeleteRule = try Self.backlinkRule(of: .relation(relation.modelName), in: source, all: all, what: what,
                                                            at: relation.location)
            relations.append(next)
        }
        for relation in entity.relations where !matched.contains(relation.id.uid) {
            model.retiredRelationUids.append(relation.id.uid)
        }
        result.relations = relations.sorted { $0.id.id < $1.id.id }
        return result
    }

    /// Whether the embedded type named `before` in the model (whose entities are still the old
    /// ones while properties are updated) is the one the sources now name `after`: renamed, and
    /// matched by its `// cellar: uid`.
    private func sameEmbeddedType(_ before: String, _ after: String, all: [EntityDescription], model: Model) -> Bool {
        guard let old = model.entity(named: before), let source = all.first(where: { $0.isEmbedded && $0.modelName == after }),
              case .some(.some(let uid)) = source.uid else { return false }
        return uid == old.id.uid
    }

    private func typeName(_ type: PropertyType, _ flags: PropertyFlags) -> String {
        flags.contains(.unsigned) ? "unsigned \(type)" : "\(type)"
    }

    // MARK: `uid` annotations

    /// Every `// cellar: uid` without a value fails the run, with the UID to use for a rename
    /// and a fresh one for a reset (all of them reported at once).
    private func checkUidAnnotations<G: RandomNumberGenerator>(_ entities: [EntityDescription], in model: Model, using generator: inout G) throws {
        var messages: [String] = []
        var taken: Set<UInt64> = []
        func fresh() -> UInt64 {
            let uid = model.newUid(using: &generator, excluding: taken)
            taken.insert(uid)
            return uid
        }
        for entity in entities {
            if case .some(.none) = entity.uid {
                let current = model.entity(named: entity.modelName)
                messages.append(GeneratorError(uidAdvice("\(entity.isEmbedded ? "embedded type" : "entity") \(entity.typeName)", current: current?.id.uid,
                    candidates: model.entities.map { "\($0.name) = \($0.id.uid)" }, fresh: fresh()), at: entity.location).description)
            }
            let modelEntity = model.entity(named: entity.modelName)
            for property in entity.properties {
                guard case .some(.none) = property.uid else { continue }
                let current = modelEntity?.property(named: property.modelName)
                messages.append(GeneratorError(uidAdvice("property \(entity.typeName).\(property.name)", current: current?.id.uid,
                    candidates: modelEntity?.properties.map { "\($0.name) = \($0.id.uid)" } ?? [], fresh: fresh()), at: property.location).description)
            }
            for relation in entity.standaloneRelations {
                guard case .some(.none) = relation.uid else { continue }
                let current = modelEntity?.relations.first { $0.name == relation.modelName }
                messages.append(GeneratorError(uidAdvice("relation \(entity.typeName).\(relation.name)", current: current?.id.uid,
                    candidates: modelEntity?.relations.map { "\($0.name) = \($0.id.uid)" } ?? [], fresh: fresh()), at: relation.location).description)
            }
        }
        if !messages.isEmpty { throw GeneratorErrors(messages: messages) }
    }

    private func uidAdvice(_ what: String, current: UInt64?, candidates: [String], fresh: UInt64) -> String {
        let rename: String
        if let current {
            rename = "to keep its data (it is \(current) in \(modelPath)), use `// cellar: uid = \(current)`"
        } else {
            let list = candidates.isEmpty ? "" : " (\(candidates.joined(separator: ", ")))"
            rename = "to rename it, use `// cellar: uid = <its old UID>` with the UID of its old name in \(modelPath)\(list)"
        }
        return "`// cellar: uid` needs a value for \(what): \(rename); to reset it (a new one, its stored data dropped), use `// cellar: uid = \(fresh)`"
    }
}

/// Several generator errors reported at once, one per line.
public struct GeneratorErrors: Error, CustomStringConvertible {
    public var messages: [String]
    public var description: String { messages.joined(separator: "\n") }
}

/// Hands out UIDs: a given one when it is free, else a fresh random one; never one the model uses
/// or retired, never the same twice.
private struct UidAllocator {
    /// The model's UIDs, used and retired (computed once: a run may hand out many).
    let used: Set<UInt64>
    let retired: Set<UInt64>
    var handedOut: Set<UInt64> = []

    init(model: Model) {
        used = model.allUids
        retired = model.retiredUids
    }

    mutating func take<G: RandomNumberGenerator>(_ wanted: UInt64?, for what: String, at location: SourceLocation,
                                                using generator: inout G) throws -> UInt64 {
        guard let wanted else {
            let uid = Model.newUid(using: &generator, avoiding: used, excluding: handedOut)
            handedOut.insert(uid)
            return uid
        }
        if retired.contains(wanted) {
            throw GeneratorError("\(what): UID \(wanted) was retired and is never used again; use `// cellar: uid = \(peek(using: &generator))` for a new one", at: location)
        }
        if used.contains(wanted) || handedOut.contains(wanted) {
            throw GeneratorError("\(what): UID \(wanted) belongs to something else in the model; a UID names one entity, property, index or relation. Use the UID of \(what)'s old name to rename it, or `// cellar: uid = \(peek(using: &generator))` for a new one", at: location)
        }
        handedOut.insert(wanted)
        return wanted
    }

    /// A fresh UID to suggest in a message (not reserved).
    func peek<G: RandomNumberGenerator>(using generator: inout G) -> UInt64 {
        Model.newUid(using: &generator, avoiding: used, excluding: handedOut)
    }
}
