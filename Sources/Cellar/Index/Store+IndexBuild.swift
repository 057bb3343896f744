import CellarStorage

/// Keeps the index trees in line with the model at open: an index the model gained (or whose kind
/// changed) is built from the objects already stored; an index the model lost is dropped, and so
/// are the trees of relations it lost.
///
/// Each built index has a marker in tree `m` (`index:<index ID>` → kind, property ID and entity
/// ID); an index whose marker is missing or different is (re)built, a marker without an index in
/// the model is dropped with its tree. A store opened read-only is not changed: its queries read
/// the objects instead of an index that was never built.
extension Store {
    func reconcileIndexes(readOnly: Bool) throws {
        var expected: [UInt32: (EntitySchema, PropertySchema)] = [:]
        for schema in schemasById.values {
            for property in schema.indexed { expected[property.index!.id] = (schema, property) }
        }
        let relations = Set(model.entities.flatMap(\.relations).map(\.id.id))
        let (stored, staleRelationTrees) = try translatingErrors {
            try engine.read { txn in (try Store.indexMarkers(in: txn), try Store.relationTrees(in: txn).filter { !relations.contains($0.id) }) }
        }
        let stale = stored.filter { id, marker in expected[id].map { self.marker($0.0, $0.1) != marker } ?? true }
        let missing = expected.filter { id, _ in stored[id] == nil }
        guard !readOnly, !stale.isEmpty || !missing.isEmpty || !staleRelationTrees.isEmpty else { return }
        try inWriteContext { context in
            let write = context.write!
            // Trees of relations the model no longer has (retired with their entity or on their own).
            for tree in staleRelationTrees { try write.dropTree(tree.name) }
            let meta = try write.tree(StorageLayout.metaTree, create: true)!
            for id in stale.keys {
                try write.dropTree(StorageLayout.indexTree(id))
                try write.delete(meta, key: StorageLayout.indexMarkerKey(id))
            }
            for (id, (schema, property)) in expected where stored[id] == nil || stale[id] != nil {
                try build(property, of: schema, in: context)
                try write.put(meta, key: StorageLayout.indexMarkerKey(id), value: marker(schema, property))
            }
        }
    }

    /// The marker of an index: what its keys were built from, and whether its values were
    /// checked to be unique (so that adding `unique` to an index checks the objects again).
    func marker(_ schema: EntitySchema, _ property: PropertySchema) -> [UInt8] {
        let index = property.index!
        var bytes: [UInt8] = [index.kind.rawValue | (index.unique ? 0x80 : 0)]
        withUnsafeBytes(of: property.id.littleEndian) { bytes += $0 }
        withUnsafeBytes(of: schema.id.id.littleEndian) { bytes += $0 }
        // An embedded type's index holds keys of the entities embedding it: one that starts
        // or stops doing so changes the marker, and the index is built again.
        for owner in owners(of: index) { withUnsafeBytes(of: owner.id.id.littleEndian) { bytes += $0 } }
        // The kind's layout or parameters (a full-text index's posting blocks, an HNSW index's
        // parameters): an index written otherwise is built again.
        bytes += index.upkeep.markerDetail(index)
        return bytes
    }

    /// The entities whose records hold values for `index` of an embedded type, in ID order.
    func owners(of index: IndexSchema) -> [EntitySchema] {
        schemasById.values.filter { $0.embeddedIndexes?.contains(index) ?? false }
            .sorted { $0.id.id < $1.id.id }
    }

    static func indexMarkers(in txn: ReadTransaction) throws -> [UInt32: [UInt8]] {
        guard let meta = try txn.tree(StorageLayout.metaTree) else { return [:] }
        var markers: [UInt32: [UInt8]] = [:]
        try txn.cursor(meta).scan(.prefix(Array(StorageLayout.indexMarkerPrefix.utf8))) { key, value in
            let name = String(decoding: key, as: UTF8.self).dropFirst(StorageLayout.indexMarkerPrefix.count)
            guard let id = UInt32(name) else {
                throw CellarError.fileCorrupt("the index marker \"\(String(decoding: key, as: UTF8.self))\" names no index ID")
            }
            markers[id] = Array(value)
            return true
        }
        return markers
    }

    /// The relation trees (`r<ID>`, `b<ID>`) in the store.
    static func relationTrees(in txn: ReadTransaction) throws -> [(name: String, id: UInt32)] {
        try txn.treeNames().compactMap { name in
            guard let first = name.first, first == "r" || first == "b", let id = UInt32(name.dropFirst()) else { return nil }
            return (name, id)
        }
    }

    /// Builds the index of `property` from every stored object of `schema` (into an empty tree).
    private func build(_ property: PropertySchema, of schema: EntitySchema, in context: TransactionContext) throws {
        let index = property.index!
        let write = context.write!
        try context.dropIndexTree(index)
        let tree = try context.indexTree(index)
        if schema.isEmbedded {
            // Keys come from the records of the entities embedding the type.
            for owner in owners(of: index) {
                guard let embedded = owner.embeddedIndexes, let cursor = try context.cursor(owner) else { continue }
                var keys: [[UInt8]] = []
                try cursor.scan { key, record in
                    keys += try embedded.keys(of: RecordReader(record), id: StorageLayout.objectId(key))[index.id] ?? []
                    return true
                }
                for key in keys { try write.put(tree, key: key, value: []) }
            }
            return
        }
        guard let cursor = try context.cursor(schema) else { return }
        try index.upkeep.build(property, of: schema, from: cursor, in: context)
    }

    /// Builds a value, hash, geo or element index (`KeyedIndexUpkeep`): the keys of every object
    /// `cursor` reads, checked for uniqueness first when the index is unique.
    func buildKeyedIndex(_ property: PropertySchema, of schema: EntitySchema, from cursor: Cursor, in context: TransactionContext) throws {
        let index = property.index!
        let write = context.write!
        let tree = try context.indexTree(index)
        // Collect first, write after: a unique index is checked over all values before anything
        // is written (the values point into the map, valid while nothing changes), and the scan
        // runs without the write transaction's changes making its cursor find its place again.
        var keys: [[UInt8]] = []
        var values: [(Id, FieldValue)] = []
        try cursor.scan { key, record in
            let id = try StorageLayout.objectId(key)
            let reader = try RecordReader(record)
            let propertyKeys = try context.indexKeys(property, of: reader, id: id)
            keys += propertyKeys
            if index.unique, !propertyKeys.isEmpty, let value = try reader.value(of: property, id: id) { values.append((id, value)) }
            return true
        }
        if index.unique { try checkUnique(values, property: property, schema: schema, context: context) }
        for key in keys { try write.put(tree, key: key, value: []) }
    }

    /// Refuses to add a unique index over objects that already share a value.
    private func checkUnique(_ values: [(Id, FieldValue)], property: PropertySchema, schema: EntitySchema,
                             context: TransactionContext) throws {
        var seen: [[UInt8]: Id] = [:]
        for (id, value) in values {
            var key: [UInt8] = []
            if case .bytes(let bytes) = value { key = Array(bytes) } else {
                IndexKey.appendValue(value, property: property, index: property.index!, to: &key)
            }
            if let other = seen[key] {
                throw CellarError.schema("\(property.qualifiedName) is now unique, but objects \(other) and \(id) both hold \(TransactionContext.describe(value, of: property)); change or remove one of them with the model that has no unique flag, then open the store again")
            }
            seen[key] = id
        }
    }
}
