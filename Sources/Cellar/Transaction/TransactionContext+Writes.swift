import CellarStorage

/// Writing and removing one object's record together with everything that depends on it: its
/// index entries (kept in the same transaction), its unique constraints (checked before anything
/// is written) and its standalone relations (removed with it).
extension TransactionContext {
    /// Stores `record` as object `id` of `schema`, updating the entity's indexes. When `isNew` is
    /// true the id was just handed out, so there is no old record to look up. Records the put in
    /// the change history when there is one (with the old record it looks up anyway).
    ///
    /// A unique property whose value another object holds throws `uniqueViolation` before anything
    /// is written, or, with `onConflict: replace`, removes that other object first.
    /// `uniqueChecked` names a unique index whose value the caller has already looked up (a
    /// primary key): it is not looked up again.
    @usableFromInline
    func putIndexed(_ schema: EntitySchema, id: Id, record: UnsafeRawBufferPointer, tree: Tree, isNew: Bool,
                    uniqueChecked: UInt32? = nil) throws {
        let write = write!
        let newReader = try RecordReader(record)
        if !schema.vectorProperties.isEmpty { try checkVectors(schema, record: newReader) }
        let found = isNew ? .absent : try StorageLayout.withObjectKey(id) { try write.lookup(tree, key: $0) }
        switch found {
        case .absent:
            historyUnretained?._withUnsafeGuaranteedRef { $0.notePut(schema, id: id) }
            if schema.fixedIndexKeys {
                try addFixedIndexKeys(schema, id: id, record: newReader, in: write)
            } else {
                try updateIndexes(schema, id: id, new: newReader, old: nil, in: write, uniqueChecked: uniqueChecked)
            }
        case .plain(let old):
            let oldReader = try RecordReader(old)
            try historyUnretained?._withUnsafeGuaranteedRef { try $0.noteReplace(schema, id: id, old: oldReader, new: newReader) }
            if try schema.embeddedIndexes != nil || !newReader.sameValues(schema.keyedFields, as: oldReader) {
                try updateIndexes(schema, id: id, new: newReader, old: oldReader, in: write, uniqueChecked: uniqueChecked)
            }
        case .compressed:
            // Decoded into memory that lives for this call (not kept for the transaction).
            try StorageLayout.withObjectKey(id) { key in
                try write.withValue(tree, key: key) { old in
                    if let history {
                        if let old { try history.noteReplace(schema, id: id, old: RecordReader(old), new: newReader) } else { history.notePut(schema, id: id) }
                    }
                    try updateIndexes(schema, id: id, new: newReader, old: old.map { try RecordReader($0) }, in: write,
                                      uniqueChecked: uniqueChecked)
                }
            }
        }
        try StorageLayout.withObjectKey(id) { try write.put(tree, key: $0, value: record) }
    }

    /// Adds the index keys of a new object whose indexes are all on numbers and not unique
    /// (`EntitySchema.fixedIndexKeys`): each key made from the record's bytes on the stack, with
    /// nothing to check first and no value read (what `updateIndexes` does for them, shorter).
    @inline(__always)
    private func addFixedIndexKeys(_ schema: EntitySchema, id: Id, record: RecordReader, in write: WriteTransaction) throws {
        for field in schema.indexedFields {
            guard let raw = try record.rawValue(field), let bits = field.keyBits(raw) else { continue }
            var key = (bits.bigEndian, id.bigEndian)
            let tree = try indexTree(field.index)
            try withUnsafeBytes(of: &key) { try write.putDeferred(tree, key: $0, value: UnsafeRawBufferPointer(start: nil, count: 0)) }
        }
    }

    /// Brings the entity's index entries from `oldReader`'s values (nil: a new object) to
    /// `newReader`'s, checking unique constraints first.
    @inline(__always)
    private func updateIndexes(_ schema: EntitySchema, id: Id, new newReader: RecordReader, old oldReader: RecordReader?,
                               in write: WriteTransaction, uniqueChecked: UInt32?) throws {
        // Worked out while the old record's bytes are valid, applied last.
        // (A unique index over several properties is checked here, before anything is written.)
        var appliedLast = try schema.embeddedIndexes.map { try embeddedIndexChanges($0, id: id, new: newReader, old: oldReader) } ?? []
        if !schema.compoundIndexes.isEmpty {
            appliedLast += try compoundIndexChanges(schema, id: id, new: newReader, old: oldReader)
        }
        if !schema.hasUniqueIndex && (oldReader == nil || schema.indexed.count == 1) {
            // Nothing to check first, and no old record whose bytes a write could move before the
            // next property reads them: each index is brought up to date in turn, keys built on
            // the stack (the common put: no allocation).
            for property in schema.indexed {
                if property.hasKeyPerElement {
                    try elementIndexChange(property, of: schema, id: id, new: newReader, old: oldReader)?.apply(context: self)
                } else if let change = try indexChange(property, id: id, new: newReader, old: oldReader) {
                    try apply(change, id: id, in: write)
                }
            }
        } else {
            // Every change is worked out before anything is written: the old record's bytes are
            // valid only until then, and a unique violation must leave the store unchanged.
            var changes: [IndexChange] = []
            var elementChanges: [ElementIndexChange] = []
            for property in schema.indexed {
                if property.hasKeyPerElement {
                    if let change = try elementIndexChange(property, of: schema, id: id, new: newReader, old: oldReader) { elementChanges.append(change) }
                } else if let change = try indexChange(property, id: id, new: newReader, old: oldReader) {
                    changes.append(change)
                }
            }
            for change in changes {
                let index = change.property.index!
                guard index.unique, index.id != uniqueChecked, let part = change.new, let value = change.value else { continue }
                var prefix: [UInt8] = []
                part.append(to: &prefix)
                let holders = try objects(holding: value, of: change.property, in: schema, prefix: prefix[...], except: id)
                guard !holders.isEmpty else { continue }
                guard index.replaceOnConflict else {
                    throw CellarError.uniqueViolation(property: change.property.qualifiedName, value: Self.describe(value, of: change.property))
                }
                for holder in holders { _ = try removeObject(schema, id: holder) }
            }
            for change in changes { try apply(change, id: id, in: write) }
            for change in elementChanges { try change.apply(context: self) }
        }
        for change in appliedLast { try change.apply(context: self) }
    }

    /// What a put changes in the element index of a list or set: the keys of elements it no
    /// longer holds, and of elements it newly holds (each distinct element has one key).
    struct ElementIndexChange {
        let index: IndexSchema
        let removed: [[UInt8]]
        let added: [[UInt8]]
        /// For a full-text index: the object and its words before and after (its postings are
        /// changed when the transaction writes the index, `FullTextPending`).
        var fullText: (id: Id, old: FullTextWords, new: FullTextWords)?
        /// For an HNSW index: the object's new vector (nil: none), applied to the graph when the
        /// transaction writes the index (`VectorPending`).
        var vector: (schema: EntitySchema, property: PropertySchema, id: Id, vector: [Float]?)?

        func apply(context: TransactionContext) throws {
            if let vector {
                context.noteVectorChange(vector.property, of: vector.schema, id: vector.id, vector: vector.vector)
                return
            }
            if let fullText {
                context.noteFullTextChange(index, id: fullText.id, old: fullText.old, new: fullText.new)
                try context.flushFullTextIfLarge(index)
                return
            }
            let write = context.write!
            let tree = try context.indexTree(index)
            for key in removed { _ = try key.withUnsafeBytes { try write.delete(tree, key: $0) } }
            for key in added {
                try key.withUnsafeBytes { try write.putDeferred(tree, key: $0, value: UnsafeRawBufferPointer(start: nil, count: 0)) }
            }
        }
    }

    /// The change a put makes to `property`'s index when it is worked out as a whole (elements,
    /// words, a vector: `IndexUpkeep.changesAsAWhole`); nil when none.
    func elementIndexChange(_ property: PropertySchema, of schema: EntitySchema, id: Id, new: RecordReader, old: RecordReader?) throws -> ElementIndexChange? {
        try property.index!.upkeep.change(property, of: schema, id: id, new: new, old: old, in: self)
    }

    /// An indexed value that a put changes: the key parts to remove and to add.
    struct IndexChange {
        let property: PropertySchema
        let old: IndexKey.Part?
        let new: IndexKey.Part?
        /// The new value (its bytes are the new record's).
        let value: FieldValue?
    }

    /// What putting `new` over `old` (nil: no old record) changes in `property`'s index; nil when
    /// nothing (the common update: a comparison, no key built).
    func indexChange(_ property: PropertySchema, id: Id, new: RecordReader, old: RecordReader?) throws -> IndexChange? {
        let index = property.index!
        let newValue = try new.value(of: property, id: id)
        let oldValue = try old?.value(of: property, id: id)
        if old != nil && oldValue == newValue { return nil }
        let oldPart = try oldValue.flatMap { try IndexKey.part($0, index: index, property: property) }
        let newPart = try newValue.flatMap { try IndexKey.part($0, index: index, property: property) }
        if oldPart == newPart { return nil }
        return IndexChange(property: property, old: oldPart, new: newPart, value: newValue)
    }

    /// Removes the old key of `change` and adds the new one.
    func apply(_ change: IndexChange, id: Id, in write: WriteTransaction) throws {
        let tree = try indexTree(change.property.index!)
        if let old = change.old { _ = try old.withKey(id: id) { try write.delete(tree, key: $0) } }
        // Held back and applied in key order (before anything reads the index, and at commit):
        // a bulk put's index keys arrive in object order, which is not the index's.
        if let new = change.new { try new.withKey(id: id) { try write.putDeferred(tree, key: $0, value: UnsafeRawBufferPointer(start: nil, count: 0)) } }
    }

    /// The index keys of `property`'s value in `record`: none when the value is not indexed, one
    /// per distinct element of a list or set.
    func indexKeys(_ property: PropertySchema, of record: RecordReader, id: Id) throws -> [[UInt8]] {
        try IndexKey.keys(record.value(of: property, id: id), id: id, property: property)
    }

    /// The objects other than `except` whose `property` holds `value`, found through the index
    /// entries starting with `prefix` (a hash index's entries are checked against the records).
    func objects(holding value: FieldValue, of property: PropertySchema, in schema: EntitySchema,
                 prefix: ArraySlice<UInt8>, except: Id) throws -> [Id] {
        guard let cursor = try cursor(indexTree: property.index!) else { return [] }
        var candidates: [Id] = []
        try cursor.scan(.prefix(Array(prefix))) { key, _ in
            if key.count == prefix.count + 8 {
                let other = try IndexKey.objectId(key)
                if other != except { candidates.append(other) }
            }
            return true
        }
        guard !property.index!.isOrdered else { return candidates }
        return try candidates.filter { other in
            try withRecord(schema, other) { bytes in
                guard let bytes else { return false }
                return try RecordReader(bytes).value(of: property, id: other) == value
            }
        }
    }

    /// Removes object `id` with its index entries and relations; false when it was not stored.
    ///
    /// `leaving`: the object leaves this store but not the data set (sync: it no longer matches
    /// what the store subscribed to). Delete rules do not run, and other objects' to-many
    /// relations keep it as a target not held here (as one that has not arrived yet).
    @usableFromInline
    func removeObject(_ schema: EntitySchema, id: Id, leaving: Bool = false) throws -> Bool {
        guard id != 0, let tree = try tree(schema) else { return false }
        let write = write!
        // Delete rules: what they reach is read (and a `deny` checked) before anything goes.
        var reached: [(DeleteAction, [Id])] = []
        if !schema.deleteActions.isEmpty, !leaving {
            guard try contains(schema, id) else { return false }
            reached = try deleteReach(schema, id: id)
        }
        changeLog?.note(schema.id.id, id)
        if schema.hasIndexes {
            let keys = try withRecord(schema, id) { old -> [(IndexSchema, [UInt8])]? in
                guard let old else { return nil }
                let reader = try RecordReader(old)
                var keys: [(IndexSchema, [UInt8])] = []
                for property in schema.indexed {
                    try property.index!.upkeep.remove(property, of: schema, id: id, record: reader, in: self, keys: &keys)
                }
                for compound in schema.compoundIndexes { keys.append((compound.index, try compound.key(of: reader, id: id))) }
                if let embedded = schema.embeddedIndexes {
                    for (indexId, indexKeys) in try embedded.keys(of: reader, id: id) {
                        let index = embedded.indexed.first { $0.index!.id == indexId }!.index!
                        for key in indexKeys { keys.append((index, key)) }
                    }
                }
                return keys
            }
            guard let keys else { return false }
            for (index, key) in keys { try write.delete(try indexTree(index), key: key) }
        }
        let removed = try StorageLayout.withObjectKey(id) { try write.delete(tree, key: $0) }
        guard removed else { return false }
        history?.noteRemove(schema, id: id)
        if schema.hasRelations { try removeRelations(of: schema, id: id, outgoingOnly: leaving) }
        try withSequence(schema) { $0.noteRemoved(id) }
        if !reached.isEmpty { try applyDeleteRules(reached, removed: id) }
        return true
    }

    /// How a value reads in a message.
    static func describe(_ value: FieldValue, of property: PropertySchema) -> String {
        switch value {
        case .integer(let bits):
            if case .integer(_, true) = property.kind { return String(Int64(bitPattern: bits)) }
            return property.type == .bool ? (bits == 0 ? "false" : "true") : String(bits)
        case .floating(let double):
            return String(double)
        case .bytes(let bytes) where property.type == .uuid:
            return UUIDEncoding.uuid(bytes).uuidString
        case .bytes(let bytes) where property.kind.isDecimal:
            return (try? DecimalEncoding.decimal(bytes)).map(DecimalText.text) ?? "\(bytes.count) bytes"
        case .bytes(let bytes):
            guard property.type == .string else { return "\(bytes.count) bytes" }
            let string = String(decoding: bytes, as: UTF8.self)
            return string.count > 100 ? "\"\(string.prefix(100))…\"" : "\"\(string)\""
        }
    }

    // MARK: Index trees

    /// Drops the tree of `index` and forgets what this transaction kept of it (the tree, a
    /// look-up cursor), so that the next use makes a new tree.
    func dropIndexTree(_ index: IndexSchema) throws {
        try write!.dropTree(index.treeName)
        index.upkeep.dropped(index, in: self)
        indexSlots[index.ordinal] = nil
        keyCursors[index.ordinal] = nil
    }

    /// The tree of `index`, created when missing.
    func indexTree(_ index: IndexSchema) throws -> Tree {
        let slot = indexSlots + index.ordinal
        if let tree = slot.pointee { return tree }
        let tree = try write!.tree(index.treeName, create: true)!
        slot.pointee = tree
        return tree
    }

    /// A cursor over the tree of `index`; nil when the index has no tree (not built yet, in a
    /// read-only store).
    func cursor(indexTree index: IndexSchema) throws -> Cursor? {
        try index.upkeep.beforeReading(index, in: self)
        let slot = indexSlots + index.ordinal
        if slot.pointee == nil {
            if let write {
                slot.pointee = try write.tree(index.treeName, create: false)
            } else {
                slot.pointee = try read!.tree(index.treeName)
            }
        }
        guard let tree = slot.pointee else { return nil }
        if let write { return try write.cursor(tree) }
        return try read!.cursor(tree)
    }

    /// A cursor over the tree named `name`; nil when there is none.
    func cursor(treeNamed name: String) throws -> Cursor? {
        if let write {
            guard let tree = try write.tree(name, create: false) else { return nil }
            return try write.cursor(tree)
        }
        guard let tree = try read!.tree(name) else { return nil }
        return try read!.cursor(tree)
    }
}

extension TransactionContext {
    /// The object holding `value` in the unique index of `property`; nil when none does.
    func object(holding value: FieldValue, of property: PropertySchema, in schema: EntitySchema) throws -> Id? {
        let index = property.index!
        guard let part = try IndexKey.part(value, index: index, property: property) else { return nil }
        var prefix: [UInt8] = []
        part.append(to: &prefix)
        guard index.isOrdered else {
            // A hash index: candidates are checked against their records.
            return try objects(holding: value, of: property, in: schema, prefix: prefix[...], except: 0).first
        }
        // A value index: the first key at or after the value is the holder's when it is the value
        // and an id (a longer value sharing this one's bytes has other bytes where the id is).
        let cursor: Cursor
        if let kept = keyCursors[index.ordinal] {
            cursor = kept
        } else {
            guard let made = try self.cursor(indexTree: index) else { return nil }
            keyCursors[index.ordinal] = made
            cursor = made
        }
        guard try prefix.withUnsafeBytes({ try cursor.seek($0) }) else { return nil }
        let key = cursor.key
        guard key.count == prefix.count + 8, key.starts(with: prefix) else { return nil }
        return try IndexKey.objectId(key)
    }
}
