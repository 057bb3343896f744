/// The indexes on properties of embedded types, as one owning entity keeps them.
///
/// An index on a property of an embedded type (`Address.zip`) is one tree, `i<index ID>`, shared
/// by every entity that embeds the type, anywhere in its records (`Contact.home.zip`,
/// `Contact.work.zip`, `Company.offices[].zip`). Each key starts with the owning entity's ID:
///
/// ```
/// u32 owner entity ID (big-endian) | the value's key part (see `IndexKey`) | u64 object id (big-endian)
/// ```
///
/// An object has one key per distinct value of the property among all its embedded objects of
/// the type. A query on one path (`Contact.home.zip == "10115"`) finds its candidates under the
/// owner's prefix and checks their records, since the index does not say on which path the
/// value was (see `QueryPlan`).
final class EmbeddedIndexes: Sendable {
    /// The owning entity's ID, big-endian: the prefix of all its keys.
    let prefix: [UInt8]
    /// The indexed properties of the embedded types the entity reaches, by index ID order.
    let indexed: [PropertySchema]
    /// Per embedded type the entity reaches: where its nested records are, and which of its
    /// properties are indexed.
    private let types: [String: TypeWalk]
    /// The entity's own properties holding embedded objects.
    private let roots: [Step]
    /// The indexes (by index ID) whose embedded type the entity reaches by exactly one path of
    /// embedded properties (`Order.lines`, but not `Contact.home` and `Contact.work`, nor a type
    /// inside itself): a value in such an index was reached through that path, so the index
    /// answers a condition on that path by itself.
    let singlePath: Set<UInt32>

    struct Step: Sendable {
        let slot: Int
        let list: Bool
        let type: String
    }

    struct TypeWalk: Sendable {
        let steps: [Step]
        let indexed: [PropertySchema]
    }

    /// The embedded indexes of `entity`; nil when the embedded types it reaches have none.
    init?(_ entity: ModelEntity, model: Model, indexOrdinals: [UInt32: Int]) {
        func steps(of type: ModelEntity) -> [Step] {
            type.properties.compactMap { property in
                guard property.type.isEmbedded, let target = property.embeddedType else { return nil }
                return Step(slot: Int(property.id.id) - 1, list: property.type == .embeddedList, type: target)
            }
        }
        var types: [String: TypeWalk] = [:]
        var pending = steps(of: entity).map(\.type)
        while let name = pending.popLast() {
            guard types[name] == nil, let type = model.entity(named: name), type.isEmbedded else { continue }
            let indexed = type.properties.compactMap { property -> PropertySchema? in
                guard let index = property.indexId, !index.isZero, let ordinal = indexOrdinals[index.id] else { return nil }
                return PropertySchema(property, entity: type.name, indexOrdinal: ordinal)
            }
            let walk = TypeWalk(steps: steps(of: type), indexed: indexed)
            types[name] = walk
            pending += walk.steps.map(\.type)
        }
        let indexed = types.values.flatMap(\.indexed).sorted { $0.index!.id < $1.index!.id }
        guard !indexed.isEmpty else { return nil }
        var prefix: [UInt8] = []
        IndexKey.appendBigEndian32(entity.id.id, to: &prefix)
        self.prefix = prefix
        self.indexed = indexed
        self.types = types
        roots = steps(of: entity)
        // Paths to each type, counted up to two (a cycle counts as two).
        var paths: [String: Int] = [:]
        func count(_ steps: [Step], seen: Set<String>) {
            for step in steps {
                guard !seen.contains(step.type) else { paths[step.type] = 2; continue }
                paths[step.type, default: 0] = min(2, paths[step.type, default: 0] + 1)
                if let walk = types[step.type] { count(walk.steps, seen: seen.union([step.type])) }
            }
        }
        count(roots, seen: [])
        singlePath = Set(types.filter { paths[$0.key] == 1 }.flatMap { $0.value.indexed.map { $0.index!.id } })
    }

    /// Whether `index` (of an embedded type's property) is one of these.
    func contains(_ index: IndexSchema) -> Bool { indexed.contains { $0.index!.id == index.id } }

    /// The keys of object `id` in each embedded index (by index ID), from its `record`: sorted,
    /// none repeated. An index without keys for the object is left out.
    func keys(of record: RecordReader, id: Id) throws -> [UInt32: [[UInt8]]] {
        var keys: [UInt32: [[UInt8]]] = [:]
        try visit(roots, in: record, id: id, into: &keys)
        for (index, list) in keys {
            keys[index] = list.sorted { $0.lexicographicallyPrecedes($1) }.uniqued()
        }
        return keys
    }

    private func visit(_ steps: [Step], in record: RecordReader, id: Id, into keys: inout [UInt32: [[UInt8]]]) throws {
        for step in steps {
            guard let walk = types[step.type], let payload = try record.bytes(slot: step.slot) else { continue }
            if step.list {
                try record.forEachNested(payload) { try collect(walk, in: $0, id: id, into: &keys) }
            } else {
                try collect(walk, in: record.nested(payload), id: id, into: &keys)
            }
        }
    }

    private func collect(_ walk: TypeWalk, in record: RecordReader, id: Id, into keys: inout [UInt32: [[UInt8]]]) throws {
        for property in walk.indexed {
            for key in try IndexKey.keys(record.value(of: property, id: id), id: id, property: property) {
                keys[property.index!.id, default: []].append(prefix + key)
            }
        }
        try visit(walk.steps, in: record, id: id, into: &keys)
    }
}

extension TransactionContext {
    /// What a put of `new` over `old` (nil: a new object) changes in the entity's embedded
    /// indexes. Worked out before anything is written: `old`'s bytes are valid until then.
    func embeddedIndexChanges(_ embedded: EmbeddedIndexes, id: Id, new: RecordReader, old: RecordReader?) throws -> [ElementIndexChange] {
        let newKeys = try embedded.keys(of: new, id: id)
        let oldKeys = try old.map { try embedded.keys(of: $0, id: id) } ?? [:]
        return embedded.indexed.compactMap { property in
            let index = property.index!
            let (removed, added) = Self.difference(oldKeys[index.id] ?? [], newKeys[index.id] ?? [])
            return removed.isEmpty && added.isEmpty ? nil : ElementIndexChange(index: index, removed: removed, added: added)
        }
    }

    /// The keys only `old` has and those only `new` has, both sorted.
    static func difference(_ oldKeys: [[UInt8]], _ newKeys: [[UInt8]]) -> (removed: [[UInt8]], added: [[UInt8]]) {
        var removed: [[UInt8]] = [], added: [[UInt8]] = []
        var i = 0, j = 0
        while i < oldKeys.count || j < newKeys.count {
            if j == newKeys.count || (i < oldKeys.count && oldKeys[i].lexicographicallyPrecedes(newKeys[j])) {
                removed.append(oldKeys[i]); i += 1
            } else if i == oldKeys.count || newKeys[j].lexicographicallyPrecedes(oldKeys[i]) {
                added.append(newKeys[j]); j += 1
            } else {
                i += 1; j += 1
            }
        }
        return (removed, added)
    }
}
