import CellarStorage

/// What a list, set or map property holds.
struct CollectionSchema: Sendable {
    let shape: CollectionShape
    /// One element (of a map: one value) as if it were a property of its own: its kind, type and
    /// flags, for reading, comparing and indexing it. It has the property's name, ID and index
    /// (an index on a list or set has a key per distinct element; see `IndexKey`).
    let element: PropertySchema
    /// Bytes of one element when fixed; nil for strings and `Data`.
    let width: Int?

    init(_ shape: CollectionShape, property: ModelProperty, entity: String, indexOrdinal: Int?) {
        self.shape = shape
        width = shape.elementWidth
        // The property's index as it is, HNSW parameters included: the element's index is of the
        // same kind (a vector's graph is no index of its elements).
        let scalar = ModelProperty(name: property.name, id: property.id, type: shape.element,
                                   flags: property.flags, indexId: property.indexId, hnswParams: property.hnswParams)
        element = PropertySchema(scalar, entity: entity, indexOrdinal: indexOrdinal)
    }

    /// The keys of object `id` in the element index `element.index` for a list or set payload
    /// (nil: absent): one per distinct element, in ascending order.
    func indexKeys(_ payload: FieldValue?, id: Id) throws -> [[UInt8]] {
        guard case .bytes(let bytes)? = payload, let index = element.index else { return [] }
        var keys: [[UInt8]] = []
        try forEachElement(bytes) { value in
            if let part = try IndexKey.part(value, index: index, property: element) {
                var key: [UInt8] = []
                part.append(to: &key)
                IndexKey.appendBigEndian(id, to: &key)
                keys.append(key)
            }
            return true
        }
        keys.sort { $0.lexicographicallyPrecedes($1) }
        return keys.uniqued()
    }

    /// The elements of a list or set payload, or the values of a map payload, as values (see
    /// `RecordReader.value(of:id:)`), in stored order, until `body` returns false.
    func forEachElement(_ payload: UnsafeRawBufferPointer, _ body: (FieldValue) throws -> Bool) throws {
        if shape.kind == .map {
            var entries = MapEntries(payload, width: width)
            while let (_, value) = try entries.next() {
                guard try body(element.value(stored: value)) else { return }
            }
            return
        }
        var elements = CollectionElements(payload, width: width)
        while let bytes = try elements.next() {
            guard try body(element.value(stored: bytes)) else { return }
        }
    }

    /// The number of elements (or entries) of a payload.
    func count(_ payload: UnsafeRawBufferPointer) throws -> Int {
        if shape.kind == .map {
            var entries = MapEntries(payload, width: width)
            return try entries.count()
        }
        var elements = CollectionElements(payload, width: width)
        return try elements.count()
    }

    /// The value stored under `key` in a map payload; nil when the map has no such key.
    func value(forKey key: [UInt8], in payload: UnsafeRawBufferPointer) throws -> FieldValue? {
        var entries = MapEntries(payload, width: width)
        while let (stored, value) = try entries.next() {
            if stored.elementsEqual(key) { return try element.value(stored: value) }
            if key.lexicographicallyPrecedes(stored) { return nil }   // keys are in ascending order
        }
        return nil
    }
}
