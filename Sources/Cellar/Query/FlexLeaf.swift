import Foundation

/// A compiled condition on a `FlexValue` property: the value at a path of keys and indexes
/// (`FlexEncoding.find`, in place, nothing decoded) compared with the operands.
///
/// Comparison rules, as for mixed values: integers and doubles compare as numbers with each other
/// (exactly, also beyond 2^53), a Bool as the number 0 or 1; strings by UTF-8 bytes (or ignoring
/// case), bytes by bytes, dates by time, UUIDs by their 16 bytes. Values of kinds that do not
/// compare (a string and a number, a list, a null) are unequal: `==`, ordering, `isIn` and string
/// conditions are false for them, `!=` and `isNotIn` true. A missing path or a null is nil:
/// only `isNil()` is true for it.
struct FlexLeaf {
    let property: PropertySchema
    let path: [FlexPathComponent]
    let operation: PropertyCondition.Operation
    let operands: [Comparand]
    let caseSensitive: Bool
    /// For `hasType`.
    let type: FlexType?

    /// A value compared: from an operand or from the stored value.
    enum Comparand {
        case integer(Int64)
        case double(Double)
        case text([UInt8])
        case bytes([UInt8])
        case date(Int64)
        case uuid([UInt8])
        /// Null, a list or a map: compares with nothing.
        case none
    }

    init(_ condition: PropertyCondition, property: PropertySchema) throws {
        let what = condition.description
        func refuse(_ reason: String) -> CellarError { .illegalArgument("query condition \(property.qualifiedName): \(what): \(reason)") }
        self.property = property
        operation = condition.operation
        caseSensitive = condition.caseSensitive
        guard condition.diacriticSensitive else { throw refuse("a Flex value's strings compare with diacritics") }
        var steps: [QueryPathStep] = []
        switch condition.subject {
        case .value: break
        case .path(let given): steps = given
        case .count: throw refuse("count is for list, set and map properties; read the FlexValue to count its elements")
        }
        var path = steps.map { step -> FlexPathComponent in
            switch step {
            case .key(let key): .key(key)
            case .index(let index): .index(index)
            }
        }
        let expected: Int? = switch operation {
        case .isNil, .isNotNil: 0
        case .between: 2
        case .isIn, .isNotIn: nil
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .startsWith, .endsWith, .contains, .hasType, .containsKey: 1
        case .containsAny, .containsAll, .isEmpty, .matches, .isWithin, .nearestNeighbors, .like:
            throw refuse("\(operation.rawValue) is for \(operation == .matches ? "String" : operation == .isWithin ? "GeoPoint" : "list and set") properties; a FlexValue is queried by path (payload[\"key\"]), with comparisons, isIn, startsWith, endsWith, contains, containsKey, hasType, isNil and isNotNil")
        }
        if let expected, condition.values.count != expected {
            throw refuse("takes \(expected) value\(expected == 1 ? "" : "s"), got \(condition.values.count)")
        }
        var type: FlexType?
        if operation == .hasType {
            guard case .string(let name) = condition.values[0], let named = FlexType(rawValue: name) else { throw refuse("names no FlexType") }
            type = named
        }
        if operation == .containsKey {
            guard case .string(let key) = condition.values[0] else { throw refuse("takes a String key") }
            path.append(.key(key))
        }
        self.type = type
        self.path = path
        if [.startsWith, .endsWith, .contains].contains(operation), case .string = condition.values[0] {} else if [.startsWith, .endsWith, .contains].contains(operation) {
            throw refuse("\(operation.rawValue) takes a String")
        }
        let fold = !condition.caseSensitive
        operands = try (operation == .hasType || operation == .containsKey ? [] : condition.values).map { value in
            switch value {
            case .integer(let v): return .integer(v)
            case .unsigned(let v): return v <= UInt64(Int64.max) ? .integer(Int64(v)) : .double(Double(v))
            case .floating(let v): return .double(v)
            case .string(let s): return .text(fold ? StringFolding.fold(Array(s.utf8)) : Array(s.utf8))
            case .bytes(let b): return .bytes(b)
            case .date(let d):
                do { return .date(try DateStorage.milliseconds(d)) } catch { throw refuse("\(d) is outside the dates a FlexValue holds") }
            case .uuid(let u): return .uuid(UUIDEncoding.bytes(u))
            case .decimal(let d): throw refuse("a FlexValue holds no decimals; \(d) cannot be compared with one")
            }
        }
    }

    /// Whether the property's stored encoding (nil: absent) meets the condition.
    func evaluate(_ value: FieldValue?) throws -> Bool {
        guard case .bytes(let bytes)? = value else { return operation == .isNil }
        let found = try FlexEncoding.find(path, in: bytes)
        let isNull: Bool = if case .null? = found { true } else { found == nil }
        switch operation {
        case .isNil: return isNull
        case .isNotNil: return !isNull
        case .containsKey: return found != nil
        case .hasType: return found.map(Self.type(of:)) == type
        default: break
        }
        guard let found, !isNull else { return false }
        let stored = comparand(found)
        switch operation {
        case .equal: return Self.order(stored, operands[0]) == 0
        case .notEqual: return Self.order(stored, operands[0]) != 0
        case .less: return Self.order(stored, operands[0]).map { $0 < 0 } ?? false
        case .lessOrEqual: return Self.order(stored, operands[0]).map { $0 <= 0 } ?? false
        case .greater: return Self.order(stored, operands[0]).map { $0 > 0 } ?? false
        case .greaterOrEqual: return Self.order(stored, operands[0]).map { $0 >= 0 } ?? false
        case .between:
            guard let low = Self.order(stored, operands[0]), let high = Self.order(stored, operands[1]) else { return false }
            return low >= 0 && high <= 0
        case .isIn: return operands.contains { Self.order(stored, $0) == 0 }
        case .isNotIn: return !operands.contains { Self.order(stored, $0) == 0 }
        case .startsWith, .endsWith, .contains:
            guard case .text(let text) = stored, case .text(let part) = operands[0] else { return false }
            switch operation {
            case .startsWith: return text.starts(with: part)
            case .endsWith: return text.count >= part.count && text[(text.count - part.count)...].elementsEqual(part)
            default: return part.isEmpty || CompiledLeaf.find(part, in: text)
            }
        default:
            return false
        }
    }

    private func comparand(_ scalar: FlexScalar) -> Comparand {
        switch scalar {
        case .bool(let b): .integer(b ? 1 : 0)
        case .integer(let v): .integer(v)
        case .double(let v): .double(v)
        case .string(let s): .text(caseSensitive ? Array(s) : StringFolding.fold(Array(s)))
        case .bytes(let b): .bytes(Array(b))
        case .date(let ms): .date(ms)
        case .uuid(let u): .uuid(Array(u))
        case .null, .list, .map: .none
        }
    }

    static func type(of scalar: FlexScalar) -> FlexType {
        switch scalar {
        case .null: .null
        case .bool: .bool
        case .integer: .integer
        case .double: .double
        case .string: .string
        case .bytes: .bytes
        case .date: .date
        case .uuid: .uuid
        case .list: .list
        case .map: .map
        }
    }

    /// -1, 0 or 1, or nil when the two do not compare (other kinds, a NaN).
    static func order(_ a: Comparand, _ b: Comparand) -> Int? {
        func sign<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : (x == y ? 0 : 1) }
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return sign(x, y)
        case (.double(let x), .double(let y)): return x.isNaN || y.isNaN ? nil : sign(x, y)
        case (.integer(let x), .double(let y)): return compare(x, y)
        case (.double(let x), .integer(let y)): return compare(y, x).map { -$0 }
        case (.text(let x), .text(let y)), (.bytes(let x), .bytes(let y)), (.uuid(let x), .uuid(let y)):
            return CompiledLeaf.lexicographic(x, y)
        case (.date(let x), .date(let y)): return sign(x, y)
        default: return nil
        }
    }

    /// An integer against a double, exactly (no rounding of the integer to 53 bits).
    static func compare(_ x: Int64, _ y: Double) -> Int? {
        if y.isNaN { return nil }
        if y >= 9_223_372_036_854_775_808.0 { return -1 }
        if y < -9_223_372_036_854_775_808.0 { return 1 }
        let whole = y.rounded(.down)
        let integer = Int64(whole)
        if x != integer { return x < integer ? -1 : 1 }
        return whole == y ? 0 : -1   // y has a fraction above its floor
    }
}
