import CellarStorage

/// What `cellar info` and `cellar model` show of a store, read through the model stored in it (no
/// generated code needed): the model, each entity with its object count and indexes, the trees,
/// and the compression dictionaries, all of one commit. Opens nothing itself: the caller hands it an engine (read-only, as
/// the tool opens stores).
package struct StoreSummary: Sendable {
    /// One entity of the stored model.
    package struct Entity: Sendable {
        package var name: String
        /// "id:uid", as the model file writes it.
        package var id: String
        /// Objects stored (0 for an embedded type, which has none of its own).
        package var objects: Int
        /// Bytes of the objects' keys and records (decompressed), as a scan of them reads them.
        package var bytes: Int = 0
        package var properties: Int
        /// Standalone (many-to-many) relations.
        package var relations: Int
        package var embedded: Bool
        package var indexes: [Index]
    }

    /// One index of a property.
    package struct Index: Sendable {
        package var property: String
        /// value, hash32, hash64, fullText, geo or hnsw.
        package var kind: String
        package var unique: Bool
        /// False while the index was declared but not built yet (the store was only opened
        /// read-only since it was added).
        package var built: Bool
    }

    /// The model stored in the store; nil when it holds none (a store of the engine alone).
    package var model: Model?
    package var entities: [Entity] = []
    /// The ids of the zstd dictionaries the store holds.
    package var dictionaries: [UInt32] = []
    /// Every tree of the store (the engine's own too) with its number of entries.
    package var trees: [(name: String, entries: Int)] = []

    /// Reads the summary in one read transaction of `engine`.
    package static func read(_ engine: StorageEngine) throws -> StoreSummary {
        try translatingErrors {
            try engine.read { txn in
                var summary = StoreSummary()
                summary.dictionaries = try txn.dictionaryIds()
                summary.trees = try txn.treeNames().map { ($0, try txn.count(txn.tree($0)!)) }
                guard let model = try StorageLayout.storedModel(in: txn) else { return summary }
                summary.model = model
                let markers = try Store.indexMarkers(txn.tree(StorageLayout.metaTree).map { try txn.cursor($0) })
                let schemas = Dictionary(uniqueKeysWithValues: Store.schemas(of: model).map { ($0.id.id, $0) })
                for entity in model.entities {
                    var objects = 0
                    var bytes = 0
                    if !entity.isEmbedded, let tree = try txn.tree(StorageLayout.entityTree(entity.id.id)) {
                        objects = try txn.count(tree)
                        try txn.cursor(tree).scan { key, value in
                            bytes += key.count + value.count
                            return true
                        }
                    }
                    let indexes = (schemas[entity.id.id]?.indexed ?? []).compactMap { property -> Index? in
                        guard let index = property.index else { return nil }
                        return Index(property: property.name, kind: "\(index.kind)", unique: index.unique, built: markers[index.id] != nil)
                    } + (schemas[entity.id.id]?.compoundIndexes ?? []).map { compound in
                        // Named by its properties: `(lastName, firstName)`.
                        Index(property: "(\(compound.properties.map(\.name).joined(separator: ", ")))", kind: "\(compound.index.kind)",
                              unique: compound.index.unique, built: markers[compound.index.id] != nil)
                    }
                    summary.entities.append(Entity(name: entity.name, id: "\(entity.id.id):\(entity.id.uid)", objects: objects, bytes: bytes,
                                                   properties: entity.properties.count, relations: entity.relations.count,
                                                   embedded: entity.isEmbedded, indexes: indexes))
                }
                return summary
            }
        }
    }
}
