import CellarStorage

/// Checks every object record of a store against the model stored in it: each record's header,
/// and each field's bounds (and UTF-8, and Bool bytes) for the type its property has. Opens
/// nothing itself; `cellar verify` calls it on an engine opened read-only.
public enum RecordCheck {
    /// What was checked.
    public struct Summary: Sendable {
        public var entities = 0
        public var objects = 0
    }

    /// Throws `CellarError.fileCorrupt` naming the entity and object of the first bad record.
    /// A store without a Cellar model (only engine trees) gives an empty summary.
    public static func verify(_ engine: StorageEngine) throws -> Summary {
        try translatingErrors {
            try engine.read { txn in
                var summary = Summary()
                guard let model = try StorageLayout.storedModel(in: txn) else { return summary }
                for entity in model.entities {
                    summary.entities += 1
                    var types = [PropertyType?](repeating: nil, count: Int(entity.lastPropertyId.id))
                    for property in entity.properties where Int(property.id.id) <= types.count {
                        types[Int(property.id.id) - 1] = property.type
                    }
                    guard let tree = try txn.tree(StorageLayout.entityTree(entity.id.id)) else { continue }
                    try txn.cursor(tree).scan { key, value in
                        let id = try StorageLayout.objectId(key)
                        do {
                            try RecordReader(value).verify(types: types)
                        } catch CellarError.fileCorrupt(let reason) {
                            throw CellarError.fileCorrupt("\(entity.name) object \(id): \(reason)")
                        }
                        summary.objects += 1
                        return true
                    }
                }
                return summary
            }
        }
    }
}
