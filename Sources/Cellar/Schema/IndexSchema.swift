import CellarStorage

/// One index of a property: a tree `i<index ID>` whose keys are the property's value followed by
/// the object id (see `IndexKey`), with empty values.
struct IndexSchema: Sendable {
    enum Kind: UInt8, Sendable {
        /// Keys hold the value itself: serves equality, ranges and prefixes, in value order.
        case value = 1
        /// Keys hold a 32-bit hash of a string or byte vector: serves equality only.
        case hash32 = 2
        /// Keys hold a 64-bit hash: fewer collisions for many distinct values.
        case hash64 = 3
        /// Keys hold the words of a text, each with an object that has it (see `FullTextIndex`):
        /// serves `matches` and ranking by relevance.
        case fullText = 4
        /// Keys hold the cell of a GeoPoint on a space-filling curve (`GeoCells`): serves
        /// `isWithin`, as candidates checked exactly.
        case geo = 5
        /// An HNSW graph over `[Float]` vectors (`VectorIndex`): serves `nearestNeighbors`.
        case hnsw = 6
    }

    let id: UInt32
    let kind: Kind
    /// The index's place among the store's indexes (0, 1, 2, …): where per-index state is kept.
    let ordinal: Int
    let unique: Bool
    /// `unique = { "onConflict": "replace" }`: a put replaces the object that held the value.
    let replaceOnConflict: Bool
    /// A zero value is not indexed (to-one relations: no target).
    let skipZero: Bool
    /// For an HNSW index: its parameters (checked when the model was validated).
    let hnsw: HNSWParameters?

    init(property: ModelProperty, kind: PropertySchema.Kind, ordinal: Int) {
        id = property.indexId!.id
        self.ordinal = ordinal
        let flags = property.flags
        // Numbers and UUIDs have a value index only: their keys are short and fixed in size.
        switch kind {
        case _ where property.hnswParams != nil:
            self.kind = .hnsw
        case .string where flags.contains(.fullTextIndex):
            self.kind = .fullText
        case .geoPoint:
            self.kind = .geo
        case .string, .bytes:
            self.kind = flags.contains(.indexHash64) ? .hash64 : flags.contains(.indexHash) ? .hash32 : .value
        default:
            self.kind = .value
        }
        hnsw = property.hnswParams.flatMap { try? HNSWParameters(json: $0) }
        unique = flags.contains(.unique)
        replaceOnConflict = flags.contains(.uniqueOnConflictReplace)
        skipZero = flags.contains(.indexPartialSkipZero) || property.type == .relation
    }

    /// The name of the index's tree (made when asked: the schema stays free of references).
    var treeName: String { StorageLayout.indexTree(id) }
}
