import CellarStorage

/// Standalone to-many relations in the engine's trees (see `StorageLayout`): each link is the key
/// source ‖ target in `r<relation ID>` and target ‖ source in `b<relation ID>`.
extension TransactionContext {
    /// The ids `owner` links to through `link` (targets of a relation, sources of a backlink), in
    /// id order.
    func linkedIds(_ owner: Id, link: RelationLink, targetSchema: EntitySchema) throws -> [Id] {
        switch link {
        case .relation(let relation):
            return try pairedIds(owner, in: StorageLayout.relationTree(relation))
        case .backlinkOfRelation(let relation):
            return try pairedIds(owner, in: StorageLayout.backlinkTree(relation))
        case .backlinkOfToOne(let propertyId):
            let property = try targetSchema.property(propertyId, named: "#\(propertyId)")
            return try ids(of: targetSchema, where: property, equals: owner)
        case .backlinkOfEmbeddedToOne(let path):
            return try ids(of: targetSchema, whereEmbedded: path, pointsAt: owner)
        }
    }

    /// The objects of `schema` some of whose embedded objects on `path` (property IDs through
    /// embedded properties, the last one a `ToOne`'s) point at `target`: the candidates from the
    /// embedded index of the `ToOne` (its keys do not say on which path a value was), each
    /// checked along the path in its record.
    func ids(of schema: EntitySchema, whereEmbedded path: [UInt32], pointsAt target: Id) throws -> [Id] {
        guard !path.isEmpty else { return [] }
        let refs = path.map { PropertyRef(id: $0, name: "#\($0)") }
        let embeddedPath = try EmbeddedPath(Array(refs.dropLast()), refs.last!, schema: schema, store: store,
                                            what: "a backlink through \(schema.name)", throughLists: true)
        let link = embeddedPath.property
        guard target != 0, let embedded = schema.embeddedIndexes, let index = link.index, embedded.contains(index),
              let cursor = try cursor(indexTree: index) else { return [] }
        var prefix = embedded.prefix
        IndexKey.appendValue(.integer(target), property: link, index: index, to: &prefix)
        var candidates: [UInt64] = []
        try cursor.appendKeySuffixes(.prefix(prefix), to: &candidates)
        // One key per owner and value: the ids come once each, in id order.
        return try candidates.filter { id in
            try withRecord(schema, id) { bytes in
                guard let bytes else { return false }
                return try embeddedPath.contains(in: RecordReader(bytes)) { try $0.value(of: link, id: id) == .integer(target) }
            }
        }
    }

    /// The second ids of the pairs in tree `name` whose first id is `first`.
    func pairedIds(_ first: Id, in name: String) throws -> [Id] {
        guard let cursor = try cursor(treeNamed: name) else { return [] }
        var ids: [Id] = []
        var prefix: [UInt8] = []
        IndexKey.appendBigEndian(first, to: &prefix)
        try cursor.scan(.prefix(prefix)) { key, _ in
            guard key.count == 16 else {
                throw CellarError.fileCorrupt("a relation key in \(name) has \(key.count) bytes, expected 16")
            }
            ids.append(Id(bigEndian: key.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
            return true
        }
        return ids
    }

    /// The objects of `schema` whose integer `property` (a to-one relation) holds `value`: from
    /// its index when it has one, else by reading every record.
    func ids(of schema: EntitySchema, where property: PropertySchema, equals value: Id) throws -> [Id] {
        if let index = property.index, !(index.skipZero && value == 0), let cursor = try cursor(indexTree: index) {
            var prefix: [UInt8] = []
            IndexKey.appendValue(.integer(value), property: property, index: index, to: &prefix)
            var ids: [Id] = []
            try cursor.appendKeySuffixes(.prefix(prefix), to: &ids)
            return ids
        }
        guard let cursor = try cursor(schema) else { return [] }
        var ids: [Id] = []
        try cursor.scan { key, record in
            let id = try StorageLayout.objectId(key)
            if try RecordReader(record).value(of: property, id: id) == .integer(value) { ids.append(id) }
            return true
        }
        return ids
    }

    /// Adds (or removes) the link between `owner` and `other` through `link`.
    func setLink(_ owner: Id, _ other: Id, link: RelationLink, linked: Bool, targetSchema: EntitySchema) throws {
        switch link {
        case .relation(let relation):
            try setPair(source: owner, target: other, relation: relation, linked: linked)
        case .backlinkOfRelation(let relation):
            try setPair(source: other, target: owner, relation: relation, linked: linked)
        case .backlinkOfToOne(let propertyId):
            let property = try targetSchema.property(propertyId, named: "#\(propertyId)")
            try setToOne(of: other, in: targetSchema, property: property, to: owner, linked: linked)
        case .backlinkOfEmbeddedToOne:
            throw CellarError.illegalArgument("a backlink through a ToOne inside embedded objects is read-only: set the ToOne of the embedded object in the \(targetSchema.name) object \(other) instead")
        }
    }

    private func setPair(source sourceId: Id, target: Id, relation: UInt32, linked: Bool) throws {
        let write = write!
        var forward: [UInt8] = []
        IndexKey.appendBigEndian(sourceId, to: &forward)
        IndexKey.appendBigEndian(target, to: &forward)
        let backward = Array(forward[8...] + forward[..<8])
        let trees = (try write.tree(StorageLayout.relationTree(relation), create: true)!,
                     try write.tree(StorageLayout.backlinkTree(relation), create: true)!)
        if let history, let source = store.relationSources[relation] {
            history.noteRelation(relation, entity: source.id.id, source: sourceId)
        }
        if linked {
            try write.put(trees.0, key: forward, value: [])
            try write.put(trees.1, key: backward, value: [])
        } else {
            try write.delete(trees.0, key: forward)
            try write.delete(trees.1, key: backward)
        }
    }

    /// Points object `id`'s to-one `property` at `owner` (or, when unlinking, at nothing if it
    /// points at `owner`), rewriting its record and index entry.
    func setToOne(of id: Id, in schema: EntitySchema, property: PropertySchema, to owner: Id, linked: Bool) throws {
        // The record with the property changed, built while the old one is at hand.
        let rewritten = try withRecord(schema, id) { bytes -> RecordBuilder? in
            guard let bytes else { return nil }
            let reader = try RecordReader(bytes)
            let current = try reader.value(of: property, id: id)
            if !linked && current != .integer(owner) { return nil }
            let value: Id = linked ? owner : 0
            if current == .integer(value) { return nil }
            let builder = RecordBuilder(capacity: bytes.count + 16)
            try builder.copy(reader, schema: schema, replacing: property.slot, with: value)
            return builder
        }
        guard let builder = rewritten else { return }
        let tree = try writeTree(schema)
        if schema.hasIndexes {
            try putIndexed(schema, id: id, record: builder.bytes, tree: tree, isNew: false)
        } else {
            if let history { try history.notePut(schema, id: id, isNew: false, record: builder.bytes, context: self) }
            try StorageLayout.withObjectKey(id) { try write!.put(tree, key: $0, value: builder.bytes) }
        }
    }

    /// Removes every link of object `id` of `schema`, as a source and as a target (with
    /// `outgoingOnly`, as a source only).
    func removeRelations(of schema: EntitySchema, id: Id, outgoingOnly: Bool = false) throws {
        for relation in schema.relations {
            for target in try pairedIds(id, in: StorageLayout.relationTree(relation.id.id)) {
                try setPair(source: id, target: target, relation: relation.id.id, linked: false)
            }
        }
        if outgoingOnly { return }
        for relation in schema.incomingRelations {
            for source in try pairedIds(id, in: StorageLayout.backlinkTree(relation.id.id)) {
                try setPair(source: source, target: id, relation: relation.id.id, linked: false)
            }
        }
    }
}

extension RecordBuilder {
    /// Begins a record that copies `record`'s fields of `schema`'s properties, with `slot` set to
    /// the 8-byte `value` (slots of retired properties are left out).
    func copy(_ record: RecordReader, schema: EntitySchema, replacing slot: Int, with value: UInt64) throws {
        let slots = max(record.slots, slot + 1)
        begin(slotCount: slots)
        for property in schema.properties.values.sorted(by: { $0.id < $1.id }) where !property.isId && property.slot < slots {
            let at = property.slot
            if at == slot { add(value, slot: at); continue }
            try copyField(at, of: property.type, from: record)
        }
    }
}
