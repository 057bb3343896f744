/// A compiled condition on a list, set or map property, evaluated on its stored payload without
/// building the collection: the elements are visited in place and each compared as a value of the
/// element's type (see `CollectionSchema.element`), with the same rules as a property of that
/// type (`CompiledLeaf`).
struct CollectionLeaf {
    enum Mode {
        /// Some element meets the leaf (`contains`: `==`; `containsAny`: `isIn`).
        case any(CompiledLeaf)
        /// Each leaf is met by some element (`containsAll`: one `==` per value).
        case all([CompiledLeaf])
        /// The number of elements meets the leaf (on an integer).
        case count(CompiledLeaf)
        /// The map's value under the key meets the leaf (nil value: no such key).
        case key([UInt8], CompiledLeaf)
    }

    let property: PropertySchema
    let collection: CollectionSchema
    let mode: Mode

    init(_ condition: PropertyCondition, property: PropertySchema) throws {
        let what = condition.description
        func refuse(_ reason: String) -> CellarError { .illegalArgument("query condition \(property.qualifiedName): \(what): \(reason)") }
        guard let collection = property.collection else {
            switch condition.subject {
            case .count: throw refuse("count is for list, set and map properties; \(property.name) is a \(property.type)")
            case .path: throw refuse("a key is for map properties; \(property.name) is a \(property.type)")
            case .value where condition.operation == .hasType: throw refuse("hasType is for FlexValue properties; \(property.name) is a \(property.type)")
            case .value: throw refuse("\(condition.operation.rawValue) is for list, set and map properties; \(property.name) is a \(property.type)")
            }
        }
        self.property = property
        self.collection = collection
        let isMap = collection.shape.kind == .map
        func element(_ operation: PropertyCondition.Operation, _ values: [QueryValue]) throws -> CompiledLeaf {
            var scalar = condition
            scalar.operation = operation
            scalar.values = values
            scalar.subject = .value
            do {
                return try CompiledLeaf(scalar, property: collection.element)
            } catch let error as CellarError where error.code == .illegalArgument {
                let message = error.message
                throw refuse("the elements are \(collection.shape.element): \(message)")
            }
        }
        switch condition.subject {
        case .count:
            mode = .count(try CompiledLeaf(condition, property: property.counter))
        case .path(let steps):
            guard isMap else { throw refuse("a key is for map properties; \(property.name) is a \(property.type)") }
            guard steps.count == 1, case .key(let key) = steps[0] else {
                throw refuse("a map of \(collection.shape.element) values takes one key; paths into nested values are for FlexValue properties")
            }
            mode = .key(Array(key.utf8), try element(condition.operation, condition.values))
        case .value:
            switch condition.operation {
            case .contains where !isMap:
                mode = .any(try element(.equal, condition.values))
            case .containsAny where !isMap:
                mode = .any(try element(.isIn, condition.values))
            case .containsAll where !isMap:
                mode = .all(try condition.values.map { try element(.equal, [$0]) })
            case .isEmpty:
                mode = .count(try CompiledLeaf(PropertyCondition(PropertyRef(id: property.id, name: property.name), .equal, [.integer(0)]),
                                               property: property.counter))
            case .containsKey where isMap:
                guard condition.values.count == 1, case .string(let key) = condition.values[0] else { throw refuse("takes one String key") }
                mode = .key(Array(key.utf8), try element(.isNotNil, []))
            default:
                let operations = isMap ? "containsKey, isEmpty, count and a key's value ([\"key\"])"
                                       : "contains, containsAny, containsAll, isEmpty and count"
                throw refuse("a \(collection.shape.kind) is queried with \(operations), isNil and isNotNil")
            }
        }
    }


    /// Whether the property's stored value (the collection's payload; nil: absent) meets the
    /// condition. An absent collection is empty.
    func evaluate(_ value: FieldValue?) throws -> Bool {
        guard case .bytes(let payload)? = value else {
            switch mode {
            case .count(let leaf): return try leaf.evaluate(.integer(0))
            case .key(_, let leaf): return try leaf.evaluate(nil)
            case .any, .all: return false
            }
        }
        switch mode {
        case .any(let leaf):
            var found = false
            try collection.forEachElement(payload) { element in
                found = try leaf.evaluate(element)
                return !found
            }
            return found
        case .all(let leaves):
            var missing = leaves.count
            var met = [Bool](repeating: false, count: leaves.count)
            try collection.forEachElement(payload) { element in
                for (i, leaf) in leaves.enumerated() where !met[i] {
                    if try leaf.evaluate(element) {
                        met[i] = true
                        missing -= 1
                    }
                }
                return missing > 0
            }
            return missing == 0
        case .count(let leaf):
            return try leaf.evaluate(.integer(UInt64(try collection.count(payload))))
        case .key(let key, let leaf):
            return try leaf.evaluate(collection.value(forKey: key, in: payload))
        }
    }
}
