/// How `QueryBuilder.ordered(by:flags:)` sorts (the values of ObjectBox's `OrderFlags`).
public struct OrderFlags: OptionSet, Sendable, Hashable {
    /// The flags' bits, ObjectBox's values.
    public let rawValue: UInt32
    /// The flags with these bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Largest first.
    public static let descending = OrderFlags(rawValue: 1)
    /// Strings compare with case (by default "a" and "A" are equal for sorting).
    public static let caseSensitive = OrderFlags(rawValue: 2)
    /// Integers compare as unsigned.
    public static let unsigned = OrderFlags(rawValue: 4)
    /// Objects without a value come last (by default they come first, in either direction).
    public static let nullsLast = OrderFlags(rawValue: 8)
    /// Objects without a value sort as zero (or the empty string).
    public static let nullsAsZero = OrderFlags(rawValue: 16)
}

/// One sort key of a query, checked against the model.
struct CompiledOrder {
    let property: PropertySchema
    let flags: OrderFlags
    /// For a property of an embedded object: where to find it.
    var path: EmbeddedPath? = nil
    /// For an order by relevance: the words and the index whose statistics score them.
    var relevance: FullTextRanking? = nil
    /// For an order by distance: the point distances are measured from.
    var distanceFrom: GeoPoint? = nil
    /// For an order through a to-one relation: that relation (a property of the query's entity)
    /// and its target entity, whose `property` the order reads.
    var link: (property: PropertySchema, target: EntitySchema)? = nil

    /// A value as it sorts.
    enum Key: Comparable {
        case signed(Int64)
        case unsigned(UInt64)
        case floating(Double)
        case bytes([UInt8])

        static func < (a: Key, b: Key) -> Bool {
            switch (a, b) {
            case (.signed(let x), .signed(let y)): x < y
            case (.unsigned(let x), .unsigned(let y)): x < y
            case (.floating(let x), .floating(let y)): x < y || (!x.isNaN && y.isNaN)
            case (.bytes(let x), .bytes(let y)): CompiledLeaf.lexicographic(x, y) < 0
            default: false
            }
        }
    }

    /// The sort key of an object; `scorer` is this order's relevance scorer (made once per run
    /// by `FullTextRanking.scorer`), nil for other orders.
    /// `context` and `linked` (keys of the link's targets read so far, by target id) serve an
    /// order through a to-one relation.
    func key(_ record: RecordReader, id: Id, scorer: FullTextRanking.Scorer? = nil, context: TransactionContext? = nil,
             linked: inout [Id: Key?]) throws -> Key? {
        if let scorer { return .floating(scorer.score(id)) }
        if let origin = distanceFrom {
            guard case .bytes(let bytes)? = try record.value(of: property, id: id) else { return nil }
            return .floating(origin.distance(to: try GeoPoint.decode(bytes)).radians)
        }
        if let link, let context {
            // The target's value; an object without a target (or with one removed since) sorts
            // as one without a value.
            guard case .integer(let target)? = try record.value(of: link.property, id: id), target != 0 else { return try key(of: nil, id: 0) }
            if let known = linked[target] { return known }
            let key = try context.withRecord(link.target, target) { bytes -> Key? in
                try self.key(of: bytes.map { try RecordReader($0) }, id: target)
            }
            linked[target] = key
            return key
        }
        return try key(of: try path.map { try $0.record(in: record) } ?? record, id: id)
    }

    /// The key of `property` in `holder` (the record holding it; nil: none).
    private func key(of holder: RecordReader?, id: Id) throws -> Key? {
        guard let value = try holder?.queryValue(of: property, id: id) else {
            guard flags.contains(.nullsAsZero) else { return nil }
            switch property.kind {
            case .integer(_, let signed): return signed && !flags.contains(.unsigned) ? .signed(0) : .unsigned(0)
            case .floating: return .floating(0)
            case .string, .bytes: return .bytes([])
            case .uuid: return .bytes(UUIDEncoding.bytes(UUIDEncoding.zero))
            case .decimal: return .bytes(DecimalEncoding.bytes(0))
            case .collection, .flex, .embedded, .geoPoint: return nil   // refused when the query is built
            }
        }
        switch value {
        case .integer(let bits):
            if case .integer(_, true) = property.kind, !flags.contains(.unsigned) { return .signed(Int64(bitPattern: bits)) }
            return .unsigned(bits)
        case .floating(let double):
            return .floating(double)
        case .bytes(let bytes):
            let array = Array(bytes)
            return .bytes(property.kind.isString && !flags.contains(.caseSensitive) ? StringFolding.fold(array) : array)
        }
    }

    /// Sorts `matches` (id, keys in the order of `orders`); ties keep id order.
    static func sort(_ matches: inout [(id: Id, keys: [Key?])], by orders: [CompiledOrder]) {
        matches.sort { a, b in
            for (position, order) in orders.enumerated() {
                let (x, y) = (a.keys[position], b.keys[position])
                switch (x, y) {
                case (nil, nil): continue
                case (nil, _): return !order.flags.contains(.nullsLast)
                case (_, nil): return order.flags.contains(.nullsLast)
                case (let x?, let y?):
                    if !(x < y) && !(y < x) { continue }
                    return order.flags.contains(.descending) ? y < x : x < y
                }
            }
            return a.id < b.id
        }
    }
}
