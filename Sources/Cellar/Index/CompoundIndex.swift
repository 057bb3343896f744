import CellarStorage

/// An index over several properties of one entity (`ModelIndex`): a tree `i<index ID>` whose keys
/// hold each property's value in the index's order, then the object id:
///
/// ```
/// for each property: 0x00 (absent) | 0x01 and the value's key part (see `IndexKey`, as a value index keys it)
/// u64 object id (big-endian)
/// ```
///
/// Every part is self-delimiting (numbers, UUIDs and decimals have a fixed width, strings and byte
/// vectors end with the escaped terminator), so byte order of the keys is the order of the first
/// property's values, then the second's, and the keys starting with the parts of the first k
/// properties are exactly the objects holding those k values: the planner serves equality on all
/// of the properties, or on a prefix of them, with one range. An absent value sorts first and is
/// in the index, so that a condition on a prefix finds objects whose later properties are absent;
/// a record without a field that has a default (`ModelProperty.defaultValue`) is keyed with the
/// default, the value queries read for it.
///
/// A unique index refuses a put whose parts all hold values that another object's key has (an
/// object with an absent value is not checked, as SQL's `UNIQUE` treats `NULL`).
struct CompoundIndex: Sendable {
    let index: IndexSchema
    /// The indexed properties, in key order.
    let properties: [PropertySchema]
    /// Where their values are in a record, to tell an update that leaves them all unchanged.
    let fields: [IndexedField]
    /// `Person(lastName, firstName)`, for messages.
    let name: String

    init(_ model: ModelIndex, of entity: ModelEntity, schema properties: [UInt32: PropertySchema], ordinal: Int) {
        let index = IndexSchema(compound: model, ordinal: ordinal)
        let indexed = model.properties.map { properties[$0.id]! }
        self.index = index
        self.properties = indexed
        fields = indexed.map { IndexedField($0, index: index) }
        name = entity.describe(model)
    }

    /// The value parts of `record`'s key (everything before the object id), and whether every
    /// property held a value (only then is a unique index checked).
    func valueParts(of record: RecordReader, id: Id) throws -> (parts: [UInt8], complete: Bool) {
        var key: [UInt8] = []
        var complete = true
        for property in properties {
            // A record written before the property was added reads its default, in queries too.
            guard let value = try record.value(of: property, id: id) ?? property.defaultValue?.field else {
                key.append(0)
                complete = false
                continue
            }
            appendPart(value, of: property, to: &key)
        }
        guard key.count + 8 <= StorageLimits.maxKeySize else {
            throw CellarError.illegalArgument("the values of \(name) take \(key.count + 8) bytes in its index, above the \(StorageLimits.maxKeySize) an index key may have; shorten the strings or leave a long property out of the index")
        }
        return (key, complete)
    }

    /// Appends the part of a present `value` of `property`: 0x01, then the value as a value index
    /// keys it. What keys are made of, and what the planner looks up.
    func appendPart(_ value: FieldValue, of property: PropertySchema, to key: inout [UInt8]) {
        key.append(1)
        IndexKey.appendValue(value, property: property, index: index, to: &key)
    }

    /// The full key of object `id` whose record is `record`.
    func key(of record: RecordReader, id: Id) throws -> [UInt8] {
        var key = try valueParts(of: record, id: id).parts
        IndexKey.appendBigEndian(id, to: &key)
        return key
    }

    /// The values of `record` as a unique violation names them: `lastName = "Smith", firstName = "Ann"`.
    func describeValues(of record: RecordReader, id: Id) throws -> String {
        try properties.map { property in
            let value = try record.value(of: property, id: id) ?? property.defaultValue?.field
            return "\(property.name) = \(value.map { TransactionContext.describe($0, of: property) } ?? "nil")"
        }.joined(separator: ", ")
    }
}

extension IndexSchema {
    /// The schema of an index over several properties: a value index whose keys `CompoundIndex` makes.
    init(compound model: ModelIndex, ordinal: Int) {
        id = model.id.id
        kind = .value
        self.ordinal = ordinal
        unique = model.unique
        replaceOnConflict = false
        skipZero = false
        hnsw = nil
    }
}

extension TransactionContext {
    /// What a put of `new` over `old` (nil: a new object) changes in the entity's indexes over
    /// several properties, each unique one checked first: worked out before anything is written
    /// (the old record's bytes are valid until then, and a violation must leave the store as it was).
    func compoundIndexChanges(_ schema: EntitySchema, id: Id, new: RecordReader, old: RecordReader?) throws -> [ElementIndexChange] {
        var changes: [ElementIndexChange] = []
        for compound in schema.compoundIndexes {
            if let old, try new.sameValues(compound.fields, as: old) { continue }
            let (parts, complete) = try compound.valueParts(of: new, id: id)
            if compound.index.unique && complete, let holder = try holder(of: parts, in: compound.index, except: id) {
                let values = try compound.describeValues(of: new, id: id)
                throw CellarError(.uniqueViolation, message: "\(compound.name) must be unique, and \(values) are stored already in object \(holder)",
                                  property: compound.name, value: values)
            }
            var added = parts
            IndexKey.appendBigEndian(id, to: &added)
            let removed = try old.map { try compound.key(of: $0, id: id) }
            changes.append(ElementIndexChange(index: compound.index, removed: removed.map { [$0] } ?? [], added: [added]))
        }
        return changes
    }

    /// An object other than `except` whose key in `index` starts with the value parts `parts`.
    private func holder(of parts: [UInt8], in index: IndexSchema, except: Id) throws -> Id? {
        guard let cursor = try cursor(indexTree: index) else { return nil }
        var found: Id?
        try cursor.scan(.prefix(parts)) { key, _ in
            let other = try IndexKey.objectId(key)
            if other != except { found = other; return false }
            return true
        }
        return found
    }
}
