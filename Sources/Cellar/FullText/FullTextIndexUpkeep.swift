import CellarStorage

/// How a full-text index is kept (see `IndexUpkeep`): a put's or a removal's words are noted in
/// the transaction (`FullTextPending`) and written as postings before the index is read and at
/// commit.
struct FullTextIndexUpkeep: IndexUpkeep {
    /// A `matches` condition: its postings give the candidates, in id order, and decide it.
    /// Nothing else: the index holds words, not values (`==` on the property scans).
    func plan(_ condition: CompiledCondition, with index: IndexSchema) -> QueryPlan.Served? {
        guard case .fullText(let leaf) = condition else { return nil }
        return (.fullText(index, leaf.query), true, true, 2)
    }

    func changesAsAWhole(isCollection: Bool) -> Bool { true }

    func change(_ property: PropertySchema, of schema: EntitySchema, id: Id, new: RecordReader, old: RecordReader?,
                in context: TransactionContext) throws -> TransactionContext.ElementIndexChange? {
        try context.fullTextIndexChange(property, id: id, new: new, old: old)
    }

    func remove(_ property: PropertySchema, of schema: EntitySchema, id: Id, record: RecordReader,
                in context: TransactionContext, keys: inout [(IndexSchema, [UInt8])]) throws {
        context.noteFullTextChange(property.index!, id: id, old: FullTextIndex.words(try record.value(of: property, id: id)), new: .none)
    }

    func dropped(_ index: IndexSchema, in context: TransactionContext) {
        context.fullTextPending[index.id] = nil   // what it held went with the tree
    }

    func beforeReading(_ index: IndexSchema, in context: TransactionContext) throws {
        if context.write != nil { try context.flushFullText(index) }
    }

    /// The layout: posting blocks (an index written as one key per posting is built again).
    func markerDetail(_ index: IndexSchema) -> [UInt8] { Array("fulltext blocks".utf8) }

    func build(_ property: PropertySchema, of schema: EntitySchema, from cursor: Cursor, in context: TransactionContext) throws {
        // Every object's words, collected as a bulk put collects them, then written word by word
        // (the scan first: writing moves the cursor's tree under it).
        let index = property.index!
        try cursor.scan { key, record in
            let id = try StorageLayout.objectId(key)
            let words = FullTextIndex.words(try RecordReader(record).value(of: property, id: id))
            context.noteFullTextChange(index, id: id, old: .none, new: words)
            return true
        }
        try context.flushFullText(index)
    }

    func verify(_ property: PropertySchema, of owners: [EntitySchema], embedded: Bool, in txn: ReadTransaction) throws -> Int {
        try RecordCheck.verifyFullTextIndex(property, of: owners[0], in: txn)
    }
}
