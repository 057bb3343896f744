import CellarStorage

/// One delete rule that applies when an object of an entity is removed: which objects a relation
/// reaches from it, and what happens to them (`DeleteRule`; `docs/queries.md`, "Delete rules").
struct DeleteAction: Sendable {
    enum Reach: Sendable {
        /// The entity's own to-one relation (property ID): its target.
        case toOne(property: UInt32)
        /// The entity's own standalone to-many relation: its targets.
        case relation(UInt32)
        /// Another entity's to-one relation pointing here (that entity's ID, the property's ID):
        /// the objects pointing at the removed one.
        case toOneBacklink(entity: UInt32, property: UInt32)
        /// Another entity's standalone to-many relation pointing here: its sources.
        case relationBacklink(UInt32)
    }

    let reach: Reach
    let rule: DeleteRule
    /// The entity of the objects reached.
    let other: UInt32
    /// "Entity.relation", for messages.
    let name: String

    /// The actions of each entity of `model`, by entity ID: its own relations' `deleteRule`s and
    /// the `backlinkDeleteRule`s of relations pointing at it. Rules left nil do nothing beyond
    /// what a remove always does (unlinking standalone relations): they are not listed.
    static func actions(of model: Model) -> [UInt32: [DeleteAction]] {
        let ids = Dictionary(model.entities.map { ($0.name, $0.id.id) }, uniquingKeysWith: { a, _ in a })
        var actions: [UInt32: [DeleteAction]] = [:]
        for entity in model.entities where !entity.isEmbedded {
            for property in entity.properties where property.type == .relation {
                guard let target = property.relationTarget.flatMap({ ids[$0] }) else { continue }
                let name = "\(entity.name).\(property.name)"
                if let rule = property.deleteRule {
                    actions[entity.id.id, default: []].append(DeleteAction(reach: .toOne(property: property.id.id), rule: rule,
                                                                           other: target, name: name))
                }
                if let rule = property.backlinkDeleteRule {
                    actions[target, default: []].append(DeleteAction(reach: .toOneBacklink(entity: entity.id.id, property: property.id.id),
                                                                     rule: rule, other: entity.id.id, name: "the backlink of \(name)"))
                }
            }
            for relation in entity.relations {
                let name = "\(entity.name).\(relation.name)"
                if let rule = relation.deleteRule {
                    actions[entity.id.id, default: []].append(DeleteAction(reach: .relation(relation.id.id), rule: rule,
                                                                           other: relation.targetId.id, name: name))
                }
                if let rule = relation.backlinkDeleteRule {
                    actions[relation.targetId.id, default: []].append(DeleteAction(reach: .relationBacklink(relation.id.id), rule: rule,
                                                                                   other: entity.id.id, name: "the backlink of \(name)"))
                }
            }
        }
        return actions
    }
}

extension TransactionContext {
    /// The objects each of `schema`'s delete actions reaches from object `id` (read before the
    /// object and its links go); throws `deleteDenied` for a `deny` action that reaches any.
    func deleteReach(_ schema: EntitySchema, id: Id) throws -> [(DeleteAction, [Id])] {
        var reached: [(DeleteAction, [Id])] = []
        for action in schema.deleteActions {
            guard let other = store.schemasById[action.other] else { continue }
            let ids: [Id]
            switch action.reach {
            case .toOne(let propertyId):
                let property = try schema.property(propertyId, named: action.name)
                let target = try withRecord(schema, id) { bytes -> Id? in
                    guard let bytes, case .integer(let value)? = try RecordReader(bytes).value(of: property, id: id) else { return nil }
                    return value
                }
                if let target, target != 0, try contains(other, target) { ids = [target] } else { ids = [] }
            case .relation(let relation):
                ids = try pairedIds(id, in: StorageLayout.relationTree(relation))
            case .toOneBacklink(_, let propertyId):
                ids = try self.ids(of: other, where: other.property(propertyId, named: action.name), equals: id)
            case .relationBacklink(let relation):
                ids = try pairedIds(id, in: StorageLayout.backlinkTree(relation))
            }
            if action.rule == .deny, !ids.isEmpty, ids != [id] || action.other != schema.id.id {
                throw CellarError.deleteDenied(entity: schema.name, id: id, relation: action.name, count: ids.count)
            }
            if !ids.isEmpty { reached.append((action, ids)) }
        }
        return reached
    }

    /// After object `id` of `schema` was removed: cascades to what `reached` lists, and sets to
    /// no target the to-one relations pointing at it whose backlink says `nullify`.
    func applyDeleteRules(_ reached: [(DeleteAction, [Id])], removed id: Id) throws {
        for (action, ids) in reached {
            guard let other = store.schemasById[action.other] else { continue }
            switch action.rule {
            case .cascade:
                // An object removed already (a cycle, or reached twice) is skipped by removeObject.
                for target in ids { _ = try removeObject(other, id: target) }
            case .nullify:
                if case .toOneBacklink(_, let propertyId) = action.reach {
                    let property = try other.property(propertyId, named: action.name)
                    for source in ids { try setToOne(of: source, in: other, property: property, to: id, linked: false) }
                }
            case .deny:
                break
            }
        }
    }
}
