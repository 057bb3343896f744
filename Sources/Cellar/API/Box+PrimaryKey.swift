import CellarStorage

/// Primary keys (`// cellar: primaryKey` on one String, UUID or integer property): the object's
/// identity for look-ups and upserts, beside its `Id`. The key is unique through its index.
///
/// ```swift
/// let ada = try accounts.get(primaryKey: "ada@example.com")
/// try accounts.put(Account(email: "ada@example.com", name: "Ada L."), mode: .upsert)   // keeps Ada's id
/// ```
extension Box {
    /// The object whose primary key is `key`; nil when none holds it. Throws `illegalArgument`
    /// when the entity has no primary key or `key` is not of its type.
    public func get<K: QueryValueConvertible>(primaryKey key: K) throws -> E? {
        let schema = try self.schema.get()
        guard let primaryKey = schema.primaryKey else {
            throw CellarError.illegalArgument("get(primaryKey:): \(schema.name) has no primary key; mark one String, UUID or integer property `// cellar: primaryKey`")
        }
        // The key in its stored form, checked as a query condition checks its value.
        let value = key.queryValue
        func refuse(_ reason: String) -> CellarError { .illegalArgument("get(primaryKey:) on \(primaryKey.qualifiedName): \(reason)") }
        var bytes: [UInt8] = []
        var integer: UInt64 = 0
        switch (primaryKey.kind, value) {
        case (.string, .string(let string)): bytes = Array(string.utf8)
        case (.uuid, .uuid(let uuid)): bytes = UUIDEncoding.bytes(uuid)
        case (.integer(_, let signed), _): integer = try CompiledLeaf.integer(value, property: primaryKey, signed: signed, refuse: refuse)
        default: throw refuse("\(value) is not a \(primaryKey.type)")
        }
        return try bytes.withUnsafeBytes { raw in
            let stored: FieldValue = if case .integer = primaryKey.kind { .integer(integer) } else { .bytes(raw) }
            return try store.inReadContext { context in
                guard let id = try context.object(holding: stored, of: primaryKey, in: schema) else { return nil }
                return try get(id, schema: schema, context: context)
            }
        }
    }

    /// Puts an object of an entity with a primary key: finds the object holding the key the
    /// record just built has, then applies `mode` (see `PutMode`). Returns the id and whether it
    /// must be set into `entity` (a new id, or the id of the object an upsert or update replaced).
    @usableFromInline
    func writeKeyed(_ entity: E, mode: PutMode, primaryKey: PropertySchema, into target: PutTarget) throws -> (id: Id, isNew: Bool) {
        let (schema, context, record) = (target.schema, target.context, target.record)
        record.begin(slotCount: binding.slotCount)
        try binding.write(entity, to: record)
        let key = try RecordReader(record.bytes).value(of: primaryKey, id: 0)
        let holder = try key.flatMap { try context.object(holding: $0, of: primaryKey, in: schema) }
        let given = binding.id(of: entity)
        func describe() -> String { key.map { TransactionContext.describe($0, of: primaryKey) } ?? "nil" }
        func taken(_ holder: Id) -> CellarError {
            .uniqueViolation(property: primaryKey.qualifiedName, value: "\(describe()) (held by object \(holder))")
        }

        let id: Id
        var assign = false
        var isNew = false
        if given != 0 {
            if let holder, holder != given { throw taken(holder) }
            let stored = try context.contains(schema, given)
            switch mode {
            case .insert where stored: throw CellarError.idAlreadyExists(entity: schema.name, id: given)
            case .update where !stored: throw CellarError.notFound(entity: schema.name, id: given)
            default: break
            }
            if stored && holder == nil {
                // The stored object holds another key (or none, and this one has one, or the other way round).
                let old = try context.withRecord(schema, given) { bytes in
                    try bytes.flatMap { try RecordReader($0).value(of: primaryKey, id: given).map { TransactionContext.describe($0, of: primaryKey) } }
                }
                if old != nil || key != nil {
                    throw CellarError.illegalArgument("put: \(schema.name) \(given) holds the primary key \(primaryKey.name) \(old ?? "nil"); it cannot change to \(describe()) — remove the object and put a new one")
                }
            }
            try context.noteGivenId(given, of: schema)
            id = given
        } else if let holder {
            switch mode {
            case .insert, .put: throw taken(holder)
            case .update, .upsert:
                id = holder
                assign = true
            }
        } else {
            guard mode != .update else {
                throw CellarError.notFound(entity: "\(schema.name) with \(primaryKey.name) \(describe())", id: 0)
            }
            id = try context.withSequence(schema) { try $0.take() }
            assign = true
            isNew = true
        }
        // The key's holder is known: the unique check of its index is done. When the object already
        // holds the key and the key's is the entity's only index, no index entry changes: the old
        // record need not even be read.
        try store(entity, id: id, isNew: isNew, into: target, uniqueChecked: primaryKey.index!.id,
                  indexesUnchanged: holder == id && schema.primaryKeyIsOnlyIndex)
        return (id, assign)
    }
}
