import CellarStorage

/// Reading single objects and key ranges the way `ObjectDump` decodes them: what
/// `StoreInspector` pages with. Everything here runs inside a read transaction the caller holds.
extension ObjectDump {
    /// One entity of a stored model with the trees its objects and standalone relations live in,
    /// looked up once per transaction.
    struct EntityTrees {
        let schema: ModelEntity
        /// The entity's tree; nil while the entity has no object (the tree is made by its first put).
        let objects: Tree?
        /// Each standalone relation's name with its tree (nil while it links nothing).
        let relations: [(name: String, tree: Tree?)]

        init(_ schema: ModelEntity, in txn: ReadTransaction) throws {
            self.schema = schema
            objects = try txn.tree(StorageLayout.entityTree(schema.id.id))
            relations = try schema.relations.map { ($0.name, try txn.tree(StorageLayout.relationTree($0.id.id))) }
        }
    }

    /// The object with `id` of `trees`' entity as `forEachObject` gives it; nil when there is none.
    static func object(id: Id, of trees: EntityTrees, model: Model, in txn: ReadTransaction) throws -> JSONValue? {
        guard let tree = trees.objects else { return nil }
        return try StorageLayout.withObjectKey(id) { key in
            guard let record = try txn.get(tree, key: key) else { return nil }
            return try decode(key: key, record: record, of: trees, model: model, in: txn)
        }
    }

    /// Decodes the record `record` stored under `key`: `id` first, the properties in the model's
    /// order, then each standalone relation as the array of its target ids.
    static func decode(key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer, of trees: EntityTrees, model: Model,
                       in txn: ReadTransaction) throws -> JSONValue {
        let id = try StorageLayout.objectId(key)
        var members = [JSONMember("id", .number(String(id)))]
        do {
            members += try properties(of: RecordReader(record), entity: trees.schema, model: model)
        } catch let error as CellarError where error.code == .fileCorrupt {
            throw CellarError.fileCorrupt("\(trees.schema.name) object \(id): \(error.message)")
        }
        for (name, tree) in trees.relations {
            members.append(JSONMember(name, .array(try linkedIds(of: key, in: tree, txn).map { .number(String($0)) })))
        }
        return .object(members)
    }

    /// The ids a standalone relation's tree links the object with `key` to (its keys are the
    /// source's 8 bytes, then the target's).
    static func linkedIds(of key: UnsafeRawBufferPointer, in tree: Tree?, _ txn: ReadTransaction) throws -> [Id] {
        guard let tree else { return [] }
        var ids: [Id] = []
        try txn.cursor(tree).scan(.prefix(Array(key))) { link, _ in
            guard link.count == 16 else { throw CellarError.fileCorrupt("a relation key has \(link.count) bytes, expected 16") }
            ids.append(Id(bigEndian: link.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
            return true
        }
        return ids
    }

    /// The key range of the objects after `id` (before it, when `descending`), or all of them.
    static func range(after id: Id?, descending: Bool) -> KeyRange {
        guard let id else { return .all }
        let key = withUnsafeBytes(of: id.bigEndian) { Array($0) }
        return descending ? KeyRange(upper: key, upperInclusive: false) : KeyRange(lower: key, lowerInclusive: false)
    }
}
