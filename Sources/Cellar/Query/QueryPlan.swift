import CellarStorage

/// Where a query finds the objects it then checks: every object of the entity, a range of ids,
/// or the entries of one index. Chosen when the query is built (and again after `setParameter`).
///
/// The planner looks at the query's condition, or at the conditions joined by `&&` at its top:
/// the first one an index serves (`==`, `isIn`, ranges on numbers, `==`, `isIn` and `startsWith`
/// on strings with a value index, `==` and `isIn` with a hash index, `==` and `isIn` on UUIDs)
/// gives the candidates; a
/// condition on the id gives a range of keys. When that one condition is the whole query and the
/// index answers it exactly (a value index on a number or a UUID, or on a string compared
/// case-sensitively for `==`, `isIn` or `startsWith`), `count` and `findIds` read the index alone.
struct QueryPlan {
    enum Source {
        case scan
        /// Ranges of keys in the entity's tree (conditions on the id).
        case ids([KeyRange])
        /// Ranges of keys in an index tree (for a hash index, candidates whose records must be
        /// checked: `exact` is false).
        case index(IndexSchema, [KeyRange])
        /// The objects a full-text index says meet a `matches` condition (`FullTextIndex`).
        case fullText(IndexSchema, FullTextQuery)
    }

    let source: Source
    /// The candidates need no further check: the source alone decides the whole condition.
    let exact: Bool
    /// The source gives its ids in id order (an id range, or one value of a value index).
    var inIdOrder = true
    /// The source may give an id more than once (an index on an embedded type's property has a
    /// key per distinct value among an object's embedded objects, and a range may span several).
    var mayRepeat = false

    /// What one index (or the id) offers for one condition: the candidates, whether they alone
    /// decide the condition, whether they come in id order, and a rank (lower is narrower: 0 ids,
    /// 1 one value, 2 a full-text or geo search, 3 a range).
    typealias Served = (source: Source, exact: Bool, inIdOrder: Bool, rank: Int)

    static let maxId: [UInt8] = Array(repeating: 0xFF, count: 8)

    static func plan(_ condition: CompiledCondition?, linked: Bool, owner: EntitySchema) -> QueryPlan {
        guard let condition else { return QueryPlan(source: .scan, exact: !linked) }
        // A condition on a list's or set's elements that some element must meet (`contains`,
        // `containsAny`) is served by its element index like the same condition on a property
        // of the element's type; an object whose several elements match is in several of the
        // ranges, so only a single range is exact.
        func candidate(_ condition: CompiledCondition) -> (CompiledLeaf, elements: Bool)? {
            switch condition {
            case .leaf(let leaf): return (leaf, false)
            case .collection(let collection):
                if case .any(let leaf) = collection.mode { return (leaf, true) }
                return nil
            default: return nil
            }
        }
        // A condition on an embedded object's property is served by that property's index,
        // under the owning entity's prefix: the candidates are then checked (the index does not
        // say through which embedded property the value was reached).
        /// The leaf an embedded index may serve, and whether it is all the condition asks of the
        /// embedded objects (no other condition beside it on the way down).
        func embeddedCandidate(_ condition: CompiledCondition) -> (CompiledLeaf, sole: Bool)? {
            guard case .embedded(let embedded) = condition, case .matches(let inner) = embedded.mode else { return nil }
            switch inner {
            case .embedded: return embeddedCandidate(inner)
            case .all(let conditions): return conditions.lazy.compactMap { candidate($0) }.first.map { ($0.0, false) }
            case .leaf(let leaf): return (leaf, true)
            default: return candidate(inner).map { ($0.0, false) }
            }
        }
        let candidates: [(CompiledLeaf, elements: Bool)]
        switch condition {
        case .all(let conditions): candidates = conditions.compactMap(candidate)
        default: candidates = candidate(condition).map { [$0] } ?? []
        }
        let whole: Bool = switch condition {
        case .leaf, .collection: !linked
        default: false
        }
        var best: (QueryPlan, rank: Int)?
        if let prefix = owner.embeddedIndexes?.prefix {
            let embedded: [(CompiledLeaf, sole: Bool)] = switch condition {
            case .all(let conditions): conditions.compactMap(embeddedCandidate)
            default: embeddedCandidate(condition).map { [$0] } ?? []
            }
            // Exact when the condition is the whole query, the index answers the leaf exactly,
            // and one path of embedded properties reaches the type: then a key under the prefix
            // is a value on that path (through an absent object nothing is, and no key is there).
            let whole: Bool = if case .embedded = condition { !linked } else { false }
            for (leaf, sole) in embedded {
                guard let (source, exactForLeaf, _, rank) = sourceFor(leaf), case .index(let index, let ranges) = source else { continue }
                if best == nil || rank < best!.rank {
                    let exact = whole && sole && exactForLeaf && owner.embeddedIndexes!.singlePath.contains(index.id)
                    best = (QueryPlan(source: .index(index, ranges.map { $0.prefixed(by: prefix) }), exact: exact,
                                      inIdOrder: false, mayRepeat: true), rank)
                }
            }
        }
        if !owner.compoundIndexes.isEmpty, let (plan, rank) = compoundPlan(condition, linked: linked, owner: owner),
           best == nil || rank < best!.rank {
            best = (plan, rank)
        }
        for (leaf, elements) in candidates {
            guard let (source, exactForLeaf, inIdOrder, rank) = sourceFor(leaf) else { continue }
            var exactLeaf = exactForLeaf
            if elements, case .index(_, let ranges) = source, ranges.count > 1 { exactLeaf = false }
            if best == nil || rank < best!.rank {
                best = (QueryPlan(source: source, exact: whole && exactLeaf, inIdOrder: inIdOrder), rank)
            }
        }
        // The other conditions an index kind answers, each through its `IndexUpkeep.plan`: a
        // full-text condition (its postings give the candidates, in id order), a point within a
        // shape (the cells covering the shape give candidates, each checked exactly).
        let conditions: [CompiledCondition] = if case .all(let all) = condition { all } else { [condition] }
        let single: Bool = if case .all = condition { false } else { !linked }
        for part in conditions {
            let property: PropertySchema? = switch part {
            case .fullText(let leaf): leaf.property
            case .geo(let leaf): leaf.property
            default: nil
            }
            guard let index = property?.index, let served = index.upkeep.plan(part, with: index),
                  best == nil || served.rank < best!.rank else { continue }
            best = (QueryPlan(source: served.source, exact: single && served.exact, inIdOrder: served.inIdOrder), served.rank)
        }
        return best?.0 ?? QueryPlan(source: .scan, exact: false)
    }

    /// The index over several properties (`CompoundIndex`) that serves the most of the equality
    /// conditions joined by `&&` at the top of `condition`: one range of keys, those starting with
    /// the values of a prefix of its properties. Rank 1 (one value) when it covers two properties
    /// or all of them, else 3 (so that an index on that one property, narrower, is chosen).
    /// Exact when the conditions are all equalities it covers (none on a floating-point number).
    private static func compoundPlan(_ condition: CompiledCondition, linked: Bool, owner: EntitySchema) -> (QueryPlan, rank: Int)? {
        let conditions: [CompiledCondition] = if case .all(let all) = condition { all } else { [condition] }
        // A few conditions at most: a list searched in turn costs less than a dictionary.
        var leaves: [(leaf: CompiledLeaf, exact: Bool)] = []
        for case .leaf(let leaf) in conditions where leaf.operation == .equal && !leaf.property.isId {
            guard !leaves.contains(where: { $0.leaf.property.id == leaf.property.id }), let exact = compoundServes(leaf) else { continue }
            leaves.append((leaf, exact))
        }
        guard !leaves.isEmpty else { return nil }
        var best: (QueryPlan, rank: Int, covered: Int)?
        for compound in owner.compoundIndexes {
            var prefix: [UInt8] = []
            var covered = 0
            var exact = true
            for property in compound.properties {
                guard let found = leaves.first(where: { $0.leaf.property.id == property.id }) else { break }
                switch found.leaf.operands {
                case .integers(let values): compound.appendPart(.integer(values[0]), of: property, to: &prefix)
                case .doubles(let values): compound.appendPart(.floating(values[0]), of: property, to: &prefix)
                case .bytes(let values): values[0].withUnsafeBytes { compound.appendPart(.bytes($0), of: property, to: &prefix) }
                default: preconditionFailure("compoundServes takes integers, doubles and bytes only")
                }
                covered += 1
                exact = exact && found.exact
            }
            guard covered > 0, best == nil || covered > best!.covered else { continue }
            let whole = !linked && covered == conditions.count && exact
            let plan = QueryPlan(source: .index(compound.index, [KeyRange.prefix(prefix)]), exact: whole,
                                 inIdOrder: covered == compound.properties.count)
            best = (plan, covered >= 2 || covered == compound.properties.count ? 1 : 3, covered)
        }
        return best.map { ($0.0, $0.rank) }
    }

    /// Whether an index over several properties serves the equality `leaf` (its operand is then
    /// keyed by `CompoundIndex.appendPart`, as the objects' values are), and whether the key part
    /// decides the condition alone; nil when it cannot serve it (a comparison ignoring case or
    /// diacritics). A default value needs no care here: records without the field are keyed with it.
    private static func compoundServes(_ leaf: CompiledLeaf) -> Bool? {
        switch (leaf.property.kind, leaf.operands) {
        case (.integer, .integers): true
        case (.floating, .doubles): false
        case (.string, .bytes), (.bytes, .bytes): leaf.caseSensitive ? true : nil
        case (.uuid, .bytes), (.decimal, .bytes): true
        default: nil
        }
    }

    /// What serves `leaf`: a range of object keys for a condition on the id, else what its
    /// property's index offers (`IndexUpkeep.plan`).
    private static func sourceFor(_ leaf: CompiledLeaf) -> Served? {
        let property = leaf.property
        if property.isId {
            guard case .integers(let values) = leaf.operands, let ranges = integerRanges(leaf, values, encode: { $0 }) else {
                if case .integerSet(let set) = leaf.operands, leaf.operation == .isIn {
                    return (.ids(set.sorted().map { KeyRange(lower: bigEndian($0), upper: bigEndian($0), upperInclusive: true) }), true, true, 0)
                }
                return nil
            }
            return (.ids(ranges), true, true, leaf.operation == .equal ? 0 : 2)
        }
        guard let index = property.index else { return nil }
        return index.upkeep.plan(.leaf(leaf), with: index)
    }

    /// What a value, hash or element index (`KeyedIndexUpkeep`) offers for `leaf` on its
    /// property: ranges of keys for the comparisons its keys keep the order of, prefixes of keys
    /// for equal values; in id order for one value of a value index.
    static func keyedSource(_ leaf: CompiledLeaf, index: IndexSchema) -> Served? {
        guard let (source, exact, rank) = keyRanges(leaf, index: index) else { return nil }
        return (source, exact, leaf.operation == .equal && index.isOrdered, rank)
    }

    private static func keyRanges(_ leaf: CompiledLeaf, index: IndexSchema) -> (Source, exact: Bool, rank: Int)? {
        let property = leaf.property
        // A zero is not in an index that skips zeros: such an index cannot serve a condition zero meets.
        if index.skipZero, (try? leaf.evaluate(.integer(0))) ?? true { return nil }
        // Nor is a default value (the index holds stored values only): a condition the default
        // meets is answered by a scan, which reads the default for records without the field.
        if let fallback = property.defaultValue, (try? leaf.evaluate(fallback.field)) ?? true { return nil }
        switch (property.kind, leaf.operands) {
        case (.integer(_, let signed), .integers(let values)):
            guard let ranges = integerRanges(leaf, values, encode: { IndexKey.integerKey($0, signed: signed) }) else { return nil }
            return (.index(index, ranges), true, leaf.operation == .equal ? 1 : 3)
        case (.integer(_, let signed), .integerSet(let set)) where leaf.operation == .isIn:
            let keys = set.map { IndexKey.integerKey($0, signed: signed) }.sorted()
            return (.index(index, keys.map { KeyRange.prefix(bigEndian($0)) }), true, 1)
        case (.floating, .doubles(let values)):
            let ranges: [KeyRange]
            switch leaf.operation {
            case .equal: ranges = [KeyRange.prefix(bigEndian(IndexKey.orderedBits(values[0])))]
            case .between: ranges = [KeyRange(lower: bigEndian(IndexKey.orderedBits(values[0])),
                                              upper: bigEndian(IndexKey.orderedBits(values[1])) + maxId, upperInclusive: true)]
            default: return nil
            }
            return (.index(index, ranges), false, 3)
        case (.string, .bytes(let values)) where leaf.caseSensitive && leaf.operation == .like && index.isOrdered:
            // The pattern's part before its first wildcard: candidates, each checked.
            let prefix = LikePattern.literalPrefix(values[0])
            guard !prefix.isEmpty else { return nil }
            return (.index(index, [stringPrefix(prefix, index: index, whole: prefix == values[0])]), prefix == values[0], 3)
        case (.string, .bytes(let values)) where leaf.caseSensitive:
            guard leaf.operation == .equal || (leaf.operation == .startsWith && index.isOrdered) else { return nil }
            return (.index(index, [stringPrefix(values[0], index: index, whole: leaf.operation == .equal)]),
                    index.isOrdered, leaf.operation == .equal ? 1 : 3)
        case (.uuid, .bytes(let values)) where leaf.operation == .equal:
            return (.index(index, [KeyRange.prefix(values[0])]), true, 1)
        case (.decimal, .bytes(let values)):
            // Every key's value part has the same width: the value's order is the keys'.
            guard let ranges = orderedRanges(leaf, values) else { return nil }
            return (.index(index, ranges), true, leaf.operation == .equal ? 1 : 3)
        case (.uuid, .bytesSet(let set)) where leaf.operation == .isIn, (.decimal, .bytesSet(let set)) where leaf.operation == .isIn:
            return (.index(index, set.sorted { CompiledLeaf.lexicographic($0, $1) < 0 }.map { KeyRange.prefix($0) }), true, 1)
        case (.string, .bytesSet(let set)) where leaf.caseSensitive && leaf.operation == .isIn:
            return (.index(index, set.sorted { CompiledLeaf.lexicographic($0, $1) < 0 }.map { stringPrefix($0, index: index, whole: true) }),
                    index.isOrdered, 1)
        default:
            return nil
        }
    }

    private static func stringPrefix(_ bytes: [UInt8], index: IndexSchema, whole: Bool) -> KeyRange {
        bytes.withUnsafeBytes { .prefix(IndexKey.bytesPrefix($0, index: index, whole: whole)) }
    }

    /// Key ranges for a comparison on integer keys (`encode` turns a value into its ordered key).
    private static func integerRanges(_ leaf: CompiledLeaf, _ values: [UInt64], encode: (UInt64) -> UInt64) -> [KeyRange]? {
        orderedRanges(leaf, values.map { bigEndian(encode($0)) })
    }

    /// Key ranges for a comparison on keys whose value parts all have one width, so that byte
    /// order is value order (`values` are the operands' value parts).
    private static func orderedRanges(_ leaf: CompiledLeaf, _ values: [[UInt8]]) -> [KeyRange]? {
        guard let v = values.first else { return nil }
        switch leaf.operation {
        case .equal: return [KeyRange.prefix(v)]
        case .less: return [KeyRange(upper: v)]
        case .lessOrEqual: return [KeyRange(upper: v + maxId, upperInclusive: true)]
        case .greater: return [KeyRange(lower: v + maxId, lowerInclusive: false)]
        case .greaterOrEqual: return [KeyRange(lower: v)]
        case .between:
            guard CompiledLeaf.lexicographic(v, values[1]) <= 0 else { return [] }
            return [KeyRange(lower: v, upper: values[1] + maxId, upperInclusive: true)]
        default: return nil
        }
    }

    static func bigEndian(_ value: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        IndexKey.appendBigEndian(value, to: &bytes)
        return bytes
    }
}

extension KeyRange {
    /// The same range of keys, each after `prefix`.
    func prefixed(by prefix: [UInt8]) -> KeyRange {
        KeyRange(lower: prefix + (lower ?? []), lowerInclusive: lower == nil || lowerInclusive,
                 upper: upper.map { prefix + $0 } ?? KeyRange.prefix(prefix).upper,
                 upperInclusive: upper != nil && upperInclusive)
    }
}
