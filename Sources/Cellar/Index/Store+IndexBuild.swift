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
        let work = try translatingErrors {
            try engine.read { txn in
                try indexWork(markers: Store.indexMarkers(txn.tree(StorageLayout.metaTree).map { try txn.cursor($0) }),
                              trees: txn.treeNames(), rebuilding: [])
            }
        }
        guard !readOnly, !work.isEmpty else { return }
        try inWriteContext { try apply(work, in: $0) }
    }

    /// `reconcileIndexes` in `context`'s write transaction (a migration's), building again every
    /// index that holds keys of an entity in `rebuilt` (their records were rewritten).
    func reconcileIndexes(in context: TransactionContext, rebuilding rebuilt: Set<UInt32>) throws {
        let write = context.write!
        let markers = try Store.indexMarkers(write.tree(StorageLayout.metaTree, create: false).map { try write.cursor($0) })
        try apply(try indexWork(markers: markers, trees: write.treeNames(), rebuilding: rebuilt), in: context)
    }

    /// What reconciling the indexes has to do.
    struct IndexWork {
        var staleRelationTrees: [String] = []
        /// Index IDs whose tree and marker go.
        var stale: [UInt32] = []
        /// Indexes to build (after the stale ones are dropped).
        var build: [(EntitySchema, PropertySchema)] = []
        /// Indexes over several properties to build.
        var buildCompound: [(EntitySchema, CompoundIndex)] = []
        var isEmpty: Bool { staleRelationTrees.isEmpty && stale.isEmpty && build.isEmpty && buildCompound.isEmpty }
    }

    private func indexWork(markers stored: [UInt32: [UInt8]], trees: [String], rebuilding rebuilt: Set<UInt32>) -> IndexWork {
        var expected: [UInt32: (EntitySchema, PropertySchema)] = [:]
        var compounds: [UInt32: (EntitySchema, CompoundIndex)] = [:]
        for schema in schemasById.values {
            for property in schema.indexed { expected[property.index!.id] = (schema, property) }
            for compound in schema.compoundIndexes { compounds[compound.index.id] = (schema, compound) }
        }
        let relations = Set(model.entities.flatMap(\.relations).map(\.id.id))
        var work = IndexWork()
        work.staleRelationTrees = Store.relationTrees(trees).filter { !relations.contains($0.id) }.map(\.name)
        let forced = Set(expected.filter { _, entry in
            let (schema, property) = entry
            return rebuilt.contains(schema.id.id) || owners(of: property.index!).contains { rebuilt.contains($0.id.id) }
        }.keys)
        let forcedCompounds = Set(compounds.filter { rebuilt.contains($0.value.0.id.id) }.keys)
        work.stale = stored.keys.filter { id in
            if let (schema, compound) = compounds[id] {
                return forcedCompounds.contains(id) || self.marker(schema, compound) != stored[id]
            }
            return forced.contains(id) || expected[id].map { self.marker($0.0, $0.1) != stored[id] } ?? true
        }.sorted()
        work.build = expected.filter { id, _ in stored[id] == nil || work.stale.contains(id) }
            .sorted { $0.key < $1.key }.map(\.value)
        work.buildCompound = compounds.filter { id, _ in stored[id] == nil || work.stale.contains(id) }
            .sorted { $0.key < $1.key }.map(\.value)
        return work
    }

    private func apply(_ work: IndexWork, in context: TransactionContext) throws {
        guard !work.isEmpty else { return }
        let write = context.write!
        // Trees of relations the model no longer has (retired with their entity or on their own).
        for tree in work.staleRelationTrees { try write.dropTree(tree) }
        let meta = try write.tree(StorageLayout.metaTree, create: true)!
        for id in work.stale {
            try write.dropTree(StorageLayout.indexTree(id))
            try write.delete(meta, key: StorageLayout.indexMarkerKey(id))
        }
        for (schema, property) in work.build {
            try build(property, of: schema, in: context)
            try write.put(meta, key: StorageLayout.indexMarkerKey(property.index!.id), value: marker(schema, property))
        }
        for (schema, compound) in work.buildCompound {
            try build(compound, of: schema, in: context)
            try write.put(meta, key: StorageLayout.indexMarkerKey(compound.index.id), value: marker(schema, compound))
        }
    }

    /// The marker of an index over several properties: kind, unique flag, entity ID, then the
    /// property IDs in key order (another order or another property builds it again).
    func marker(_ schema: EntitySchema, _ compound: CompoundIndex) -> [UInt8] {
        var bytes: [UInt8] = [compound.index.kind.rawValue | (compound.index.unique ? 0x80 : 0), 0xC0]
        withUnsafeBytes(of: schema.id.id.littleEndian) { bytes += $0 }
        for property in compound.properties { withUnsafeBytes(of: property.id.littleEndian) { bytes += $0 } }
        return bytes
    }

    /// Builds an index over several properties from every stored object of `schema`, in batches
    /// as `buildKeyedIndex` does; a unique one is then checked over neighbouring keys.
    private func build(_ compound: CompoundIndex, of schema: EntitySchema, in context: TransactionContext) throws {
        let write = context.write!
        try context.dropIndexTree(compound.index)
        let tree = try context.indexTree(compound.index)
        guard let cursor = try context.cursor(schema) else { return }
        try writeKeysInBatches(from: cursor, into: tree, in: write) { id, record in [try compound.key(of: record, id: id)] }
        guard compound.index.unique, let keys = try context.cursor(indexTree: compound.index) else { return }
        var previous: (parts: [UInt8], id: Id)?
        try keys.scan { key, _ in
            let parts = Array(key.dropLast(8))
            let id = try IndexKey.objectId(key)
            // Keys with an absent value are never compared (see `CompoundIndex`): equal parts are
            // rare, so only then is the record read to tell.
            if let previous, previous.parts == parts, let values = try context.withRecord(schema, id, { bytes -> String? in
                let record = try RecordReader(bytes!)
                return try compound.valueParts(of: record, id: id).complete ? try compound.describeValues(of: record, id: id) : nil
            }) {
                throw CellarError.schema("\(compound.name) is now unique, but objects \(previous.id) and \(id) both hold \(values); change or remove one of them with the model whose index is not unique (the same index without `unique`, so that it keeps its UID), or in a migration, then open the store again")
            }
            previous = (parts, id)
            return true
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

    /// The index markers in tree `m`, read with `cursor` (nil: no tree `m`).
    static func indexMarkers(_ cursor: Cursor?) throws -> [UInt32: [UInt8]] {
        guard let cursor else { return [:] }
        var markers: [UInt32: [UInt8]] = [:]
        try cursor.scan(.prefix(Array(StorageLayout.indexMarkerPrefix.utf8))) { key, value in
            let name = String(decoding: key, as: UTF8.self).dropFirst(StorageLayout.indexMarkerPrefix.count)
            guard let id = UInt32(name) else {
                throw CellarError.fileCorrupt("the index marker \"\(String(decoding: key, as: UTF8.self))\" names no index ID")
            }
            markers[id] = Array(value)
            return true
        }
        return markers
    }

    /// The relation trees (`r<ID>`, `b<ID>`) among a store's tree `names`.
    static func relationTrees(_ names: [String]) -> [(name: String, id: UInt32)] {
        names.compactMap { name in
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
    /// `cursor` reads, in batches of `buildBatch` objects (each batch's keys written before the
    /// next is read, so that building an index over millions of objects takes the memory of one
    /// batch and the transaction's budget); a unique index is then checked over what it holds.
    func buildKeyedIndex(_ property: PropertySchema, of schema: EntitySchema, from cursor: Cursor, in context: TransactionContext) throws {
        let index = property.index!
        let write = context.write!
        let tree = try context.indexTree(index)
        // A unique list or set holds each value once across objects through its element keys; the
        // whole values are compared instead (below), as a put compares them.
        let wholeValues = index.unique && property.collection != nil
        var values: [(Id, [UInt8])] = []
        try writeKeysInBatches(from: cursor, into: tree, in: write) { id, reader in
            let propertyKeys = try context.indexKeys(property, of: reader, id: id)
            if wholeValues, !propertyKeys.isEmpty, case .bytes(let bytes)? = try reader.value(of: property, id: id) {
                values.append((id, Array(bytes)))
            }
            return propertyKeys
        }
        if wholeValues {
            try checkUnique(values, property: property)
        } else if index.unique {
            try checkUnique(property, of: schema, in: context)
        }
    }

    /// Objects an index build reads before it writes their keys.
    static let buildBatch = 16_384

    /// Writes the keys `keys` gives for each object `cursor` reads (its id and record) into
    /// `tree`, in batches of `buildBatch` objects: each batch's keys are written before the next
    /// is read, so that a build over millions of objects takes the memory of one batch. A batch
    /// is collected first and written after: the scan runs without the write transaction's
    /// changes making its cursor find its place again.
    private func writeKeysInBatches(from cursor: Cursor, into tree: Tree, in write: WriteTransaction,
                                    _ keys: (Id, RecordReader) throws -> [[UInt8]]) throws {
        var start = KeyRange.all
        while true {
            var batch: [[UInt8]] = []
            var last: Id?
            var count = 0
            try cursor.scan(start) { key, record in
                let id = try StorageLayout.objectId(key)
                batch += try keys(id, RecordReader(record))
                last = id
                count += 1
                return count < Self.buildBatch
            }
            for key in batch { try write.put(tree, key: key, value: []) }
            guard count == Self.buildBatch, let last, last < .max else { break }
            start = KeyRange(lower: withUnsafeBytes(of: last.bigEndian) { Array($0) }, lowerInclusive: false)
        }
    }

    /// Refuses a unique index just built whose keys share a value: neighbours in key order with
    /// the same value part (for a hash index, the same hash, and then the same value in their
    /// records).
    private func checkUnique(_ property: PropertySchema, of schema: EntitySchema, in context: TransactionContext) throws {
        guard let cursor = try context.cursor(indexTree: property.index!) else { return }
        var run: [Id] = []
        var runPart: [UInt8] = []
        func checkRun() throws {
            guard run.count > 1 else { return }
            var seen: [[UInt8]: Id] = [:]
            for id in run {
                let value = try context.withRecord(schema, id) { bytes -> [UInt8]? in
                    guard let bytes, let value = try RecordReader(bytes).value(of: property, id: id) else { return nil }
                    var key: [UInt8] = []
                    if case .bytes(let raw) = value { key = Array(raw) } else {
                        IndexKey.appendValue(value, property: property, index: property.index!, to: &key)
                    }
                    return key
                }
                guard let value else { continue }
                if let other = seen[value] {
                    let described = try context.withRecord(schema, id) { bytes in
                        try TransactionContext.describe(RecordReader(bytes!).value(of: property, id: id)!, of: property)
                    }
                    throw uniqueFailure(property, other, id, described)
                }
                seen[value] = id
            }
        }
        try cursor.scan { key, _ in
            guard key.count > 8 else { return true }
            let part = key[..<(key.count - 8)]
            if !run.isEmpty, part.elementsEqual(runPart) {
                run.append(try IndexKey.objectId(key))
                return true
            }
            try checkRun()
            runPart = Array(part)
            run = [try IndexKey.objectId(key)]
            return true
        }
        try checkRun()
    }

    /// Refuses a unique list or set index over objects whose whole values are equal.
    private func checkUnique(_ values: [(Id, [UInt8])], property: PropertySchema) throws {
        var seen: [[UInt8]: Id] = [:]
        for (id, value) in values {
            if let other = seen[value] {
                let described = value.withUnsafeBytes { TransactionContext.describe(.bytes($0), of: property) }
                throw uniqueFailure(property, other, id, described)
            }
            seen[value] = id
        }
    }

    private func uniqueFailure(_ property: PropertySchema, _ first: Id, _ second: Id, _ value: String) -> CellarError {
        CellarError.schema("\(property.qualifiedName) is now unique, but objects \(first) and \(second) both hold \(value); change or remove one of them with the model that has no unique flag (or in a migration), then open the store again")
    }
}
