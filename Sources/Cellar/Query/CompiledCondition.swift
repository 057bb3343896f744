import Foundation

/// A condition checked against the store's model, with its values converted to the property's
/// stored form, ready to be evaluated on records without building objects.
indirect enum CompiledCondition {
    case leaf(CompiledLeaf)
    /// A condition on a list, set or map property.
    case collection(CollectionLeaf)
    /// A condition on a `FlexValue` property.
    case flex(FlexLeaf)
    /// A condition on the embedded objects of a property.
    case embedded(EmbeddedLeaf)
    /// A full-text condition on a String property (`matches`).
    case fullText(FullTextLeaf)
    /// A GeoPoint within a shape (`isWithin`).
    case geo(GeoLeaf)
    /// The nearest neighbours of a vector (`nearestNeighbors`): decided by the search that
    /// `CompiledQuery` runs first, so true for every object the search hands on.
    case vector(VectorLeaf)
    case all([CompiledCondition])
    case any([CompiledCondition])
    /// The object's to-one `property` points into the link's set of target ids.
    case toOneLink(property: PropertySchema, link: Int)
    /// One of the object's targets in standalone relation `relation` is in the link's set.
    case toManyLink(relation: UInt32, link: Int)

    func evaluate(_ record: RecordReader, id: Id, links: [Set<Id>], context: TransactionContext) throws -> Bool {
        switch self {
        case .leaf(let leaf):
            return try leaf.evaluate(record.queryValue(of: leaf.property, id: id))
        case .collection(let leaf):
            return try leaf.evaluate(record.value(of: leaf.property, id: id))
        case .flex(let leaf):
            return try leaf.evaluate(record.value(of: leaf.property, id: id))
        case .embedded(let leaf):
            return try leaf.evaluate(record, id: id, links: links, context: context)
        case .fullText(let leaf):
            return try leaf.evaluate(record.value(of: leaf.property, id: id))
        case .geo(let leaf):
            return try leaf.evaluate(record.value(of: leaf.property, id: id))
        case .vector:
            return true
        case .all(let conditions):
            for condition in conditions where try !condition.evaluate(record, id: id, links: links, context: context) { return false }
            return true
        case .any(let conditions):
            for condition in conditions where try condition.evaluate(record, id: id, links: links, context: context) { return true }
            return false
        case .toOneLink(let property, let link):
            guard case .integer(let target)? = try record.value(of: property, id: id) else { return false }
            return links[link].contains(target)
        case .toManyLink(let relation, let link):
            return try context.pairedIds(id, in: StorageLayout.relationTree(relation)).contains { links[link].contains($0) }
        }
    }
}

/// One compiled property condition.
struct CompiledLeaf {
    enum Operands {
        case none
        case integers([UInt64])
        case doubles([Double])
        case bytes([[UInt8]])
        case integerSet(Set<UInt64>)
        case bytesSet(Set<[UInt8]>)
    }

    let property: PropertySchema
    let operation: PropertyCondition.Operation
    let operands: Operands
    /// How string operands and values are folded before they are compared (empty: compared as
    /// stored, which an index can serve).
    let folding: StringFolding.Options
    /// Whether strings are compared as stored (no folding).
    var caseSensitive: Bool { folding.isEmpty }

    var isSigned: Bool {
        if case .integer(_, let signed) = property.kind { return signed }
        return false
    }

    init(_ condition: PropertyCondition, property: PropertySchema) throws {
        self.property = property
        operation = condition.operation
        // No case or diacritics in a UUID's bytes.
        let folding: StringFolding.Options = property.kind.isUUID ? [] : StringFolding.Options(caseSensitive: condition.caseSensitive,
                                                                                               diacriticSensitive: condition.diacriticSensitive)
        self.folding = folding
        let what = "\(property.qualifiedName) \(condition.operation.rawValue)"
        func refuse(_ reason: String) -> CellarError { .illegalArgument("query condition \(what): \(reason)") }

        let expected: Int? = switch operation {
        case .isNil, .isNotNil: 0
        case .between: 2
        case .isIn, .isNotIn: nil
        default: 1
        }
        if let expected, condition.values.count != expected {
            throw refuse("takes \(expected) value\(expected == 1 ? "" : "s"), got \(condition.values.count)")
        }
        if [.hasType, .containsAny, .containsAll, .isEmpty, .containsKey].contains(operation) {
            throw refuse("\(operation.rawValue) is not for a \(property.type) (hasType: FlexValue properties; the others: lists, sets and maps)")
        }
        if !property.kind.isString, !condition.diacriticSensitive {
            throw refuse("only strings compare ignoring diacritics; \(property.name) is a \(property.type)")
        }
        if property.isBytes == false, [.startsWith, .endsWith, .contains, .like].contains(operation) {
            throw refuse("only strings have \(operation.rawValue); \(property.name) is a \(property.type)")
        }
        switch property.kind {
        case .integer(_, let signed):
            let values = try condition.values.map { try Self.integer($0, property: property, signed: signed, refuse: refuse) }
            operands = [.isIn, .isNotIn].contains(operation) ? .integerSet(Set(values)) : .integers(values)
        case .floating:
            let values = try condition.values.map { value -> Double in
                switch value {
                case .integer(let v): return Double(v)
                case .unsigned(let v): return Double(v)
                case .floating(let v): return v
                default: throw refuse("\(property.name) is a \(property.type); \(value) is not a number")
                }
            }
            operands = .doubles(values)
        case .string, .bytes:
            if property.kind.isString, [.between].contains(operation) {
                throw refuse("strings have no isBetween; use >= and <=")
            }
            let values = try condition.values.map { value -> [UInt8] in
                switch (value, property.kind.isString) {
                case (.string(let s), true): return StringFolding.fold(Array(s.utf8), folding)
                case (.bytes(let b), false): return b
                default: throw refuse("\(property.name) is a \(property.type); \(value) is not one")
                }
            }
            if !property.kind.isString, ![.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .isNil, .isNotNil].contains(operation) {
                // (`like` and the other text operations were refused above for byte vectors.)
                throw refuse("byte vectors are compared with ==, !=, <, <=, >, >=, isNil and isNotNil only")
            }
            operands = [.isIn, .isNotIn].contains(operation) ? .bytesSet(Set(values)) : .bytes(values)
        case .collection where [.isNil, .isNotNil].contains(operation), .flex where [.isNil, .isNotNil].contains(operation),
             .embedded where [.isNil, .isNotNil].contains(operation), .geoPoint where [.isNil, .isNotNil].contains(operation):
            operands = .none
        case .embedded(let list):
            throw refuse("\(property.name) holds \(list ? "a list of " : "")embedded \(property.embeddedType ?? "") objects: compare their properties (`\(property.name).someProperty == …`), or use any { … }, isNil\(list ? ", isEmpty or count" : "")")
        case .geoPoint:
            throw refuse("\(property.name) is a GeoPoint: use isWithin(_:) with a GeoBox, GeoCircle or GeoPolygon, isNil or isNotNil, and order by distance with ordered(byDistanceFrom:in:)")
        case .collection, .flex:
            throw refuse("\(property.name) is a \(property.type): use contains, containsAny, containsAll, isEmpty or count (a map: a key's value or containsKey)")
        case .uuid:
            let values = try condition.values.map { value -> [UInt8] in
                guard case .uuid(let uuid) = value else { throw refuse("\(property.name) is a UUID; \(value) is not one") }
                return UUIDEncoding.bytes(uuid)
            }
            if [.between, .startsWith, .endsWith, .contains, .like].contains(operation) {
                throw refuse("UUIDs are compared with ==, !=, <, <=, >, >= (byte order), isIn, isNotIn, isNil and isNotNil only")
            }
            operands = [.isIn, .isNotIn].contains(operation) ? .bytesSet(Set(values)) : .bytes(values)
        case .decimal:
            // Compared as their stored bytes, whose order is the numbers' (`DecimalEncoding`).
            let values = try condition.values.map { value -> [UInt8] in
                switch value {
                case .decimal(let decimal): return DecimalEncoding.bytes(decimal)
                case .integer(let v): return DecimalEncoding.bytes(Decimal(v))
                case .unsigned(let v): return DecimalEncoding.bytes(Decimal(v))
                default: throw refuse("\(property.name) is a Decimal; \(value) is not a decimal or an integer (a Double is refused: it is not exact)")
                }
            }
            if [.startsWith, .endsWith, .contains, .like].contains(operation) {
                throw refuse("decimals are compared with ==, !=, <, <=, >, >=, isBetween, isIn, isNotIn, isNil and isNotNil only")
            }
            operands = [.isIn, .isNotIn].contains(operation) ? .bytesSet(Set(values)) : .bytes(values)
        }
    }

    /// A value for an integer property: its 64-bit pattern, as stored.
    static func integer(_ value: QueryValue, property: PropertySchema, signed: Bool,
                        refuse: (String) -> CellarError) throws -> UInt64 {
        switch value {
        case .integer(let v):
            guard signed || v >= 0 else { throw refuse("\(property.name) is unsigned; \(v) is negative") }
            return UInt64(bitPattern: v)
        case .unsigned(let v):
            guard !signed || v <= UInt64(Int64.max) else { throw refuse("\(v) is above the largest \(property.type), \(Int64.max)") }
            return v
        case .date(let date):
            if property.type == .dateNano { return UInt64(bitPattern: try DateStorage.nanoseconds(date)) }
            guard property.type == .date else { throw refuse("\(property.name) is a \(property.type), not a date") }
            return UInt64(bitPattern: try DateStorage.milliseconds(date))
        case .floating(let v):
            guard let exact = Int64(exactly: v) else { throw refuse("\(property.name) is a \(property.type); \(v) is not an integer") }
            return UInt64(bitPattern: exact)
        default:
            throw refuse("\(property.name) is a \(property.type); \(value) is not a number")
        }
    }

    /// Whether a stored value (nil: absent) meets the condition.
    func evaluate(_ value: FieldValue?) throws -> Bool {
        guard let value else { return operation == .isNil }
        switch operation {
        case .isNil: return false
        case .isNotNil: return true
        default: break
        }
        switch (value, operands) {
        case (.integer(let bits), .integers(let values)):
            return isSigned ? compare(Int64(bitPattern: bits), values.map { Int64(bitPattern: $0) })
                            : compare(bits, values)
        case (.integer(let bits), .integerSet(let set)):
            return set.contains(bits) == (operation == .isIn)
        case (.floating(let double), .doubles(let values)):
            if double.isNaN { return operation == .notEqual }
            switch operation {
            case .isIn: return values.contains(double)
            case .isNotIn: return !values.contains(double)
            default: return compare(double, values)
            }
        case (.bytes(let raw), .bytes(let values)) where operation == .between:
            return Self.lexicographic(raw, values[0]) >= 0 && Self.lexicographic(raw, values[1]) <= 0
        case (.bytes(let raw), .bytes(let values)):
            // Compared in place; only a case-insensitive comparison makes a (folded) copy.
            if folding.isEmpty { return Self.matches(raw, values[0], operation) }
            return StringFolding.fold(Array(raw), folding).withUnsafeBytes { Self.matches($0, values[0], operation) }
        case (.bytes(let raw), .bytesSet(let set)):
            if folding.isEmpty && set.count <= 8 {
                // A few values: each compared in place, no array made for hashing.
                return set.contains { Self.lexicographic(raw, $0) == 0 } == (operation == .isIn)
            }
            return set.contains(StringFolding.fold(Array(raw), folding)) == (operation == .isIn)
        default:
            throw CellarError.fileCorrupt("\(property.qualifiedName) holds a value of another type than its model says")
        }
    }

    private func compare<T: Comparable>(_ value: T, _ operands: [T]) -> Bool {
        switch operation {
        case .equal: value == operands[0]
        case .notEqual: value != operands[0]
        case .less: value < operands[0]
        case .lessOrEqual: value <= operands[0]
        case .greater: value > operands[0]
        case .greaterOrEqual: value >= operands[0]
        case .between: operands[0] <= value && value <= operands[1]
        case .isIn: operands.contains(value)
        case .isNotIn: !operands.contains(value)
        default: false
        }
    }

    /// Whether `bytes` meet a byte or string `operation` with `operand`.
    static func matches(_ bytes: UnsafeRawBufferPointer, _ operand: [UInt8], _ operation: PropertyCondition.Operation) -> Bool {
        switch operation {
        case .startsWith:
            return bytes.count >= operand.count && lexicographic(UnsafeRawBufferPointer(rebasing: bytes[..<operand.count]), operand) == 0
        case .endsWith:
            return bytes.count >= operand.count
                && lexicographic(UnsafeRawBufferPointer(rebasing: bytes[(bytes.count - operand.count)...]), operand) == 0
        case .contains:
            return operand.isEmpty || find(operand, in: bytes)
        case .like:
            return LikePattern.matches(bytes, operand)
        default:
            let order = lexicographic(bytes, operand)
            switch operation {
            case .equal: return order == 0
            case .notEqual: return order != 0
            case .less: return order < 0
            case .lessOrEqual: return order <= 0
            case .greater: return order > 0
            case .greaterOrEqual: return order >= 0
            default: return false
            }
        }
    }

    /// `lexicographic` of stored bytes against an operand, without copying either.
    static func lexicographic(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Int {
        let common = Swift.min(a.count, b.count)
        let result = common == 0 ? 0 : b.withUnsafeBytes { memcmp(a.baseAddress!, $0.baseAddress!, common) }
        if result != 0 { return result < 0 ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// Whether `needle` (not empty) occurs in `haystack`.
    static func find(_ needle: [UInt8], in haystack: UnsafeRawBufferPointer) -> Bool {
        guard !needle.isEmpty else { return true }
        guard needle.count <= haystack.count, let base = haystack.baseAddress else { return false }
        return needle.withUnsafeBytes { pattern in
            let first = needle[0]
            for i in 0...(haystack.count - needle.count) where haystack[i] == first {
                if memcmp(base + i, pattern.baseAddress!, needle.count) == 0 { return true }
            }
            return false
        }
    }

    /// -1, 0 or 1: byte order, a prefix before what extends it.
    static func lexicographic(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBytes { lexicographic($0, b) }
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Bool {
        haystack.withUnsafeBytes { find(needle, in: $0) }
    }
}

/// Case- and diacritic-insensitive string comparison: both sides folded the same way, then
/// compared by their UTF-8 bytes. Ignoring case lowercases (ASCII directly, other text with
/// `String.lowercased()`); ignoring diacritics folds each character as the full-text tokenizer
/// does (decomposed, diacritic marks dropped, composed: `é` → `e`, `Å` → `A`, or `a` with case).
enum StringFolding {
    struct Options: OptionSet, Sendable {
        let rawValue: UInt8
        static let caseInsensitive = Options(rawValue: 1)
        static let diacriticInsensitive = Options(rawValue: 2)

        init(rawValue: UInt8) { self.rawValue = rawValue }

        init(caseSensitive: Bool, diacriticSensitive: Bool) {
            self = []
            if !caseSensitive { insert(.caseInsensitive) }
            if !diacriticSensitive { insert(.diacriticInsensitive) }
        }
    }

    static func fold(_ bytes: [UInt8]) -> [UInt8] {
        if bytes.allSatisfy({ $0 < 0x80 }) {
            return bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        }
        return Array(String(decoding: bytes, as: UTF8.self).lowercased().utf8)
    }

    /// `bytes` folded as `options` say (unchanged when empty).
    static func fold(_ bytes: [UInt8], _ options: Options) -> [UInt8] {
        guard options.contains(.diacriticInsensitive) else { return options.isEmpty ? bytes : fold(bytes) }
        let lowercase = options.contains(.caseInsensitive)
        // ASCII has no diacritics.
        if bytes.allSatisfy({ $0 < 0x80 }) { return lowercase ? fold(bytes) : bytes }
        var folded = String.UnicodeScalarView()
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
            if scalar.isASCII {
                folded.append(lowercase && scalar.value >= 0x41 && scalar.value <= 0x5A ? Unicode.Scalar(scalar.value | 0x20)! : scalar)
            } else {
                folded.append(contentsOf: FoldTable.fold(scalar, lowercase: lowercase))
            }
        }
        return Array(String(folded).utf8)
    }

    /// `string` folded the same way: its UTF-8 bytes are `fold(Array(string.utf8))`. A string
    /// without uppercase ASCII letters or other than ASCII text is returned as it is (nothing
    /// allocated).
    static func fold(_ string: String) -> String {
        var copy = string
        let unchanged = copy.withUTF8 { bytes in !bytes.contains { $0 >= 0x80 || ($0 >= 0x41 && $0 <= 0x5A) } }
        return unchanged ? string : string.lowercased()
    }
}

/// `like` patterns: `*` matches any run of characters (none too), `?` exactly one (one Unicode
/// scalar), everything else itself; the whole value must match.
enum LikePattern {
    static func matches(_ value: UnsafeRawBufferPointer, _ pattern: [UInt8]) -> Bool {
        let star = UInt8(ascii: "*"), question = UInt8(ascii: "?")
        var v = 0, p = 0
        var starAt = -1, resume = 0
        /// The end of the scalar that starts at `i` in `value`.
        func next(_ i: Int) -> Int {
            var j = i + 1
            while j < value.count && value[j] & 0xC0 == 0x80 { j += 1 }
            return j
        }
        while v < value.count {
            if p < pattern.count && pattern[p] == question {
                v = next(v)
                p += 1
            } else if p < pattern.count && pattern[p] == star {
                starAt = p
                resume = v
                p += 1
            } else if p < pattern.count && pattern[p] == value[v] {
                v += 1
                p += 1
            } else if starAt >= 0 {
                // Let the last star take one more scalar, and try again after it.
                p = starAt + 1
                resume = next(resume)
                v = resume
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == star { p += 1 }
        return p == pattern.count
    }

    /// The bytes before the first wildcard: every matching value starts with them.
    static func literalPrefix(_ pattern: [UInt8]) -> [UInt8] {
        Array(pattern.prefix { $0 != UInt8(ascii: "*") && $0 != UInt8(ascii: "?") })
    }
}
