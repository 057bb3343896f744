import CellarStorage

/// Checks every object record of a store against the model stored in it: each record's header,
/// and each field's bounds (and UTF-8, and Bool bytes) for the type its property has; every built
/// index against the records (the same entries, no more, no fewer); every standalone relation's
/// two trees against each other. Opens nothing itself; `cellar verify` calls it on an engine
/// opened read-only.
package enum RecordCheck {
    /// What was checked.
    public struct Summary: Sendable {
        public var entities = 0
        public var objects = 0
        /// Index entries checked.
        public var indexEntries = 0
        /// Relation links checked.
        public var relationLinks = 0
    }

    /// What `verify` is checking, for its progress reports.
    public enum Phase: Sendable {
        /// Each object's record against the model; counted in objects.
        case objects
        /// Each index and relation against the records; counted in indexes and relations.
        case indexes
    }

    /// Throws `CellarError.fileCorrupt` naming the entity and object of the first bad record.
    /// A store without a Cellar model (only engine trees) gives an empty summary. `progress` is
    /// called now and then with the phase, what is done of it and its size.
    public static func verify(_ engine: StorageEngine,
                              progress: ((_ phase: Phase, _ done: Int, _ total: Int) -> Void)? = nil) throws -> Summary {
        try translatingErrors {
            try engine.read { txn in
                var summary = Summary()
                guard let model = try StorageLayout.storedModel(in: txn) else { return summary }
                var total = 0
                for entity in model.entities where !entity.isEmbedded {
                    if let tree = try txn.tree(StorageLayout.entityTree(entity.id.id)) { total += try txn.count(tree) }
                }
                for entity in model.entities where !entity.isEmbedded {
                    summary.entities += 1
                    guard let tree = try txn.tree(StorageLayout.entityTree(entity.id.id)) else { continue }
                    try txn.cursor(tree).scan { key, value in
                        let id = try StorageLayout.objectId(key)
                        do {
                            try RecordReader(value).verify(entity, in: model)
                        } catch let error as CellarError where error.code == .fileCorrupt {
                            let reason = error.message
                            throw CellarError.fileCorrupt("\(entity.name) object \(id): \(reason)")
                        }
                        summary.objects += 1
                        if summary.objects % 4096 == 0 { progress?(.objects, summary.objects, total) }
                        return true
                    }
                }
                progress?(.objects, summary.objects, total)
                let markers = try Store.indexMarkers(txn.tree(StorageLayout.metaTree).map { try txn.cursor($0) })
                let schemas = Store.schemas(of: model)
                let checks = schemas.reduce(0) { count, schema in
                    count + schema.indexed.filter { markers[$0.index!.id] != nil }.count + schema.relations.count
                        + schema.compoundIndexes.filter { markers[$0.index.id] != nil }.count
                }
                var checked = 0
                progress?(.indexes, 0, checks)
                for schema in schemas {
                    for property in schema.indexed where markers[property.index!.id] != nil {
                        let owners = schema.isEmbedded ? schemas.filter { $0.embeddedIndexes?.contains(property.index!) ?? false } : [schema]
                        summary.indexEntries += try verifyIndex(property, of: owners, embedded: schema.isEmbedded, in: txn)
                        checked += 1
                        progress?(.indexes, checked, checks)
                    }
                    for compound in schema.compoundIndexes where markers[compound.index.id] != nil {
                        summary.indexEntries += try verifyCompoundIndex(compound, of: schema, in: txn)
                        checked += 1
                        progress?(.indexes, checked, checks)
                    }
                    for relation in schema.relations {
                        summary.relationLinks += try verifyRelation(relation, of: schema, in: txn)
                        checked += 1
                        progress?(.indexes, checked, checks)
                    }
                }
                return summary
            }
        }
    }

    /// Compares the index of `property` with the entries the records of `owners` give (the
    /// property's entity, or the entities embedding its embedded type); returns their number.
    static func verifyIndex(_ property: PropertySchema, of owners: [EntitySchema], embedded: Bool, in txn: ReadTransaction) throws -> Int {
        try property.index!.upkeep.verify(property, of: owners, embedded: embedded, in: txn)
    }

    /// Compares an index over several properties with the keys the records give; returns the
    /// number of entries.
    static func verifyCompoundIndex(_ compound: CompoundIndex, of schema: EntitySchema, in txn: ReadTransaction) throws -> Int {
        var expected: [[UInt8]] = []
        if let tree = try txn.tree(schema.treeName) {
            try txn.cursor(tree).scan { key, value in
                expected.append(try compound.key(of: RecordReader(value), id: StorageLayout.objectId(key)))
                return true
            }
        }
        return try compareIndex(compound.index, named: compound.name, expected: expected, in: txn)
    }

    /// Compares the keys of `index` with `expected` (in any order); returns their number.
    private static func compareIndex(_ index: IndexSchema, named name: String, expected unsorted: [[UInt8]], in txn: ReadTransaction) throws -> Int {
        var stored: [[UInt8]] = []
        if let tree = try txn.tree(index.treeName) {
            try txn.cursor(tree).scan { key, _ in stored.append(Array(key)); return true }
        }
        let expected = unsorted.sorted { $0.lexicographicallyPrecedes($1) }
        guard stored == expected else {
            let missing = Set(expected).subtracting(stored).count
            let extra = Set(stored).subtracting(expected).count
            throw CellarError.fileCorrupt("the index of \(name) (tree \(index.treeName)) does not match the objects: \(missing) entries missing, \(extra) entries for values no object holds")
        }
        return stored.count
    }

    /// Compares a value, hash, geo or element index with the keys the records give
    /// (`KeyedIndexUpkeep`); returns the number of entries.
    static func verifyKeyedIndex(_ property: PropertySchema, of owners: [EntitySchema], embedded: Bool, in txn: ReadTransaction) throws -> Int {
        let index = property.index!
        var expected: [[UInt8]] = []
        for schema in owners {
            guard let tree = try txn.tree(schema.treeName) else { continue }
            try txn.cursor(tree).scan { key, value in
                let id = try StorageLayout.objectId(key)
                if embedded, let embedded = schema.embeddedIndexes {
                    expected += try embedded.keys(of: RecordReader(value), id: id)[index.id] ?? []
                } else {
                    expected += try IndexKey.keys(RecordReader(value).value(of: property, id: id), id: id, property: property)
                }
                return true
            }
        }
        return try compareIndex(index, named: property.qualifiedName, expected: expected, in: txn)
    }

    /// Compares a full-text index with the words of the records' texts: the same postings (each
    /// word's blocks in order, not overlapping, each decoding), the same lengths, and statistics
    /// that count the same objects and words; returns the number of postings.
    static func verifyFullTextIndex(_ property: PropertySchema, of schema: EntitySchema, in txn: ReadTransaction) throws -> Int {
        let index = property.index!
        var expected: [[UInt8]: [FullTextPostings.Entry]] = [:]
        var expectedLengths: [(Id, UInt64)] = []
        var expectedStats = FullTextIndex.Stats()
        if let tree = try txn.tree(schema.treeName) {
            try txn.cursor(tree).scan { key, value in
                let id = try StorageLayout.objectId(key)
                let words = FullTextIndex.words(try RecordReader(value).value(of: property, id: id))
                for (word, count) in words.counts { expected[word, default: []].append(FullTextPostings.Entry(id: id, count: count)) }
                if !words.counts.isEmpty { expectedLengths.append((id, UInt64(words.total))) }
                expectedStats = expectedStats + words.stats
                return true
            }
        }
        var stored: [[UInt8]: [FullTextPostings.Entry]] = [:]
        var storedLengths: [(Id, UInt64)] = []
        var storedStats = FullTextIndex.Stats()
        var postings = 0
        func mismatch(_ what: String) -> CellarError {
            CellarError.fileCorrupt("the full-text index of \(property.qualifiedName) (tree \(index.treeName)) does not match the objects' texts: \(what)")
        }
        if let tree = try txn.tree(index.treeName) {
            try txn.cursor(tree).scan { key, value in
                if key.elementsEqual(FullTextIndex.statsKey) {
                    storedStats = try FullTextIndex.Stats(decoding: value, index: index)
                } else if key.first == FullTextIndex.lengthPrefix {
                    guard key.count == 9 else { throw mismatch("a length key of \(key.count) bytes") }
                    var reader = FullTextPostings.VarintReader(bytes: value)
                    guard let length = reader.next(), reader.isAtEnd else { throw mismatch("a length that does not decode") }
                    storedLengths.append((Id(bigEndian: key.loadUnaligned(fromByteOffset: 1, as: UInt64.self)), length))
                } else {
                    let (word, firstId) = try FullTextPostings.split(key: key, index: index)
                    let entries = try FullTextPostings.decode(value, firstId: firstId, index: index)
                    let list = Array(word)
                    if let last = stored[list]?.last, last.id >= firstId {
                        throw mismatch("blocks of one word overlap")
                    }
                    stored[list, default: []] += entries
                    postings += entries.count
                }
                return true
            }
        }
        if stored != expected {
            let missing = expected.keys.filter { stored[$0] == nil }.count
            let extra = stored.keys.filter { expected[$0] == nil }.count
            throw mismatch("\(missing) words missing, \(extra) words no object has, or postings that differ")
        }
        guard storedLengths.map(\.0) == expectedLengths.map(\.0), storedLengths.map(\.1) == expectedLengths.map(\.1) else {
            throw mismatch("\(storedLengths.count) lengths stored for \(expectedLengths.count) objects with words, or lengths that differ")
        }
        guard storedStats == expectedStats else {
            throw mismatch("the statistics count \(storedStats.documents) objects with \(storedStats.words) words; the texts have \(expectedStats.documents) with \(expectedStats.words)")
        }
        return postings
    }

    /// Loads an HNSW index's graph (every node decoding, every neighbour there, degrees within
    /// bounds, the entry point on the top level) and checks that its nodes are exactly the objects
    /// with a vector; returns the number of nodes.
    static func verifyVectorIndex(_ property: PropertySchema, of schema: EntitySchema, in txn: ReadTransaction) throws -> Int {
        let index = property.index!
        let graph = try VectorIndex.load(index, property: property, schema: schema, in: txn)
        try graph.verify()
        var withVectors = 0
        if let tree = try txn.tree(schema.treeName) {
            try txn.cursor(tree).scan { key, value in
                let id = try StorageLayout.objectId(key)
                guard try VectorIndex.vector(of: property, in: RecordReader(value)) != nil else { return true }
                withVectors += 1
                guard graph.contains(id) else {
                    throw CellarError.fileCorrupt("the HNSW index of \(property.qualifiedName) (tree \(index.treeName)) has no node for object \(id), which has a vector")
                }
                return true
            }
        }
        guard withVectors == graph.count else {
            throw CellarError.fileCorrupt("the HNSW index of \(property.qualifiedName) (tree \(index.treeName)) has \(graph.count) nodes for \(withVectors) objects with a vector")
        }
        return graph.count
    }

    /// Checks that both trees of a standalone relation hold the same links; returns their number.
    static func verifyRelation(_ relation: ModelRelation, of schema: EntitySchema, in txn: ReadTransaction) throws -> Int {
        func pairs(_ name: String, swapped: Bool) throws -> Set<[UInt8]> {
            guard let tree = try txn.tree(name) else { return [] }
            var pairs = Set<[UInt8]>()
            try txn.cursor(tree).scan { key, _ in
                guard key.count == 16 else {
                    throw CellarError.fileCorrupt("a key of relation tree \(name) has \(key.count) bytes, expected 16")
                }
                let bytes = Array(key)
                pairs.insert(swapped ? Array(bytes[8...] + bytes[..<8]) : bytes)
                return true
            }
            return pairs
        }
        let forward = try pairs(StorageLayout.relationTree(relation.id.id), swapped: false)
        let backward = try pairs(StorageLayout.backlinkTree(relation.id.id), swapped: true)
        guard forward == backward else {
            throw CellarError.fileCorrupt("relation \(schema.name).\(relation.name): its two trees differ (\(forward.subtracting(backward).count) links only forward, \(backward.subtracting(forward).count) only backward)")
        }
        return forward.count
    }
}
