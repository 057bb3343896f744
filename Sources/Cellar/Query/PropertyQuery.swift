import Foundation

/// A Swift type the values of a property can be read as in a `PropertyQuery`: integers, `Bool`,
/// `Float`, `Double`, `String`, `Date`, `Data`, `[UInt8]` and `UUID`.
public protocol PropertyQueryValue {
    /// The value from its stored form (a date property's as `.date`); nil when it does not fit
    /// this type.
    static func fromStored(_ value: QueryValue) -> Self?
}

extension Int64: PropertyQueryValue {
    public static func fromStored(_ value: QueryValue) -> Int64? {
        switch value {
        case .integer(let v): v
        case .unsigned(let v): Int64(exactly: v)
        default: nil
        }
    }
}

extension UInt64: PropertyQueryValue {
    public static func fromStored(_ value: QueryValue) -> UInt64? {
        switch value {
        case .integer(let v): UInt64(exactly: v)
        case .unsigned(let v): v
        default: nil
        }
    }
}

extension Int: PropertyQueryValue {
    public static func fromStored(_ value: QueryValue) -> Int? { Int64.fromStored(value).flatMap { Int(exactly: $0) } }
}
extension Int32: PropertyQueryValue {
    public static func fromStored(_ value: QueryValue) -> Int32? { Int64.fromStored(value).flatMap { Int32(exactly: $0) } }
}
extension Int16: PropertyQueryValue {
    public static func fromStored(_ value: QueryValue) -> Int16? { Int64.fromStored(value).flatMap { Int16(exactly: $0) } }
}
extension Int8: PropertyQueryValue {
    public static func fromStored(_ value: QueryValue) -> Int8? { Int64.fromStored(value).flatMap { Int8(exactly: $0) } }
}
extension UInt: PropertyQueryValue {
    public static func fromStored(_ value: QueryValue) -> UInt? { UInt64.fromStored(value).flatMap { UInt(exactly: $0) } }
}
extension UInt32: PropertyQueryValue {
    public static func fromStored(_ value: QueryValue) -> UInt32? { UInt64.fromStored(value).flatMap { UInt32(exactly: $0) } }
}
extension UInt16: PropertyQueryValue {
    public static func fromStored(_ value: QueryValue) -> UInt16? { UInt64.fromStored(value).flatMap { UInt16(exactly: $0) } }
}
extension UInt8: PropertyQueryValue {
    public static func fromStored(_ value: QueryValue) -> UInt8? { UInt64.fromStored(value).flatMap { UInt8(exactly: $0) } }
}
extension Bool: PropertyQueryValue {
    public static func fromStored(_ value: QueryValue) -> Bool? { Int64.fromStored(value).flatMap { $0 == 0 ? false : $0 == 1 ? true : nil } }
}
extension Double: PropertyQueryValue {
    public static func fromStored(_ value: QueryValue) -> Double? {
        switch value {
        case .floating(let v): v
        case .integer(let v): Double(v)
        case .unsigned(let v): Double(v)
        default: nil
        }
    }
}
extension Float: PropertyQueryValue {
    public static func fromStored(_ value: QueryValue) -> Float? { Double.fromStored(value).map { Float($0) } }
}
extension String: PropertyQueryValue {
    public static func fromStored(_ value: QueryValue) -> String? {
        if case .string(let v) = value { return v }
        return nil
    }
}
extension Date: PropertyQueryValue {
    public static func fromStored(_ value: QueryValue) -> Date? {
        if case .date(let v) = value { return v }
        return nil
    }
}
extension Data: PropertyQueryValue {
    public static func fromStored(_ value: QueryValue) -> Data? {
        if case .bytes(let v) = value { return Data(v) }
        return nil
    }
}
extension UUID: PropertyQueryValue {
    public static func fromStored(_ value: QueryValue) -> UUID? {
        if case .uuid(let v) = value { return v }
        return nil
    }
}
extension Decimal: PropertyQueryValue {
    public static func fromStored(_ value: QueryValue) -> Decimal? {
        if case .decimal(let v) = value { return v }
        return nil
    }
}
extension Array: PropertyQueryValue where Element == UInt8 {
    public static func fromStored(_ value: QueryValue) -> [UInt8]? {
        if case .bytes(let v) = value { return v }
        return nil
    }
}

/// The values of one property of a query's matching objects: counted, summed, their extremes or
/// the values themselves. Objects without a value (nil) are left out, unless `find` is given a
/// value for them.
///
/// ```swift
/// let latest: Date? = try query.property(Note.creationDate).max()
/// let titles: [String] = try query.property(Note.title).distinct().find()
/// ```
public struct PropertyQuery<E: EntityInspectable> {
    let query: Query<E>
    let property: Property<E>
    var isDistinct = false
    var distinctCaseSensitive = true

    init(query: Query<E>, property: Property<E>) {
        self.query = query
        self.property = property
    }

    /// Only distinct values count: the first of the values that are equal is kept. Values are
    /// equal as `==` conditions compare them: strings by their UTF-8 bytes (no Unicode
    /// normalization), ignoring case when `caseSensitive` is false the way case-insensitive
    /// conditions do (see ``QueryValue``).
    public func distinct(_ distinct: Bool = true, caseSensitive: Bool = true) -> PropertyQuery<E> {
        var copy = self
        copy.isDistinct = distinct
        copy.distinctCaseSensitive = caseSensitive
        return copy
    }

    /// The number of matching objects with a value (distinct values when `distinct()`).
    public func count() throws -> Int { try values().count }

    /// The values as `T`, in the query's order; `valueIfNil` stands in for objects without one
    /// (else they are left out).
    public func find<T: PropertyQueryValue>(_ type: T.Type = T.self, valueIfNil: T? = nil) throws -> [T] {
        var result: [T] = []
        for value in try values(keepingNils: valueIfNil != nil) {
            guard let value else { result.append(valueIfNil!); continue }
            result.append(try convert(value, to: T.self))
        }
        return result
    }

    /// The smallest value; nil when no object has one.
    public func min<T: PropertyQueryValue>(_ type: T.Type = T.self) throws -> T? {
        try extreme(T.self, smallest: true)
    }

    /// The largest value; nil when no object has one.
    public func max<T: PropertyQueryValue>(_ type: T.Type = T.self) throws -> T? {
        try extreme(T.self, smallest: false)
    }

    /// The smallest value as stored (a ``QueryValue``), when no type is asked for; nil when no
    /// object has one.
    @_disfavoredOverload
    public func min() throws -> QueryValue? { try extremeValue(smallest: true) }

    /// The largest value as stored (a ``QueryValue``), when no type is asked for.
    @_disfavoredOverload
    public func max() throws -> QueryValue? { try extremeValue(smallest: false) }

    /// The values as stored (``QueryValue``s), when no type is asked for; objects without one are
    /// left out.
    @_disfavoredOverload
    public func find() throws -> [QueryValue] { try values().compactMap { $0 } }

    /// The sum of a number property's values (0 when none), as a Double.
    public func sum() throws -> Double {
        try numbers().reduce(0, +)
    }

    /// The sum of an integer property's values.
    /// - Throws: `illegalArgument` when the sum does not fit in an Int64, or the property is not an integer.
    public func sumInteger() throws -> Int64 {
        var total: Int64 = 0
        for value in try values() {
            guard case .integer(let v)? = value else {
                if case .unsigned(let v)? = value, let signed = Int64(exactly: v) {
                    let (next, overflow) = total.addingReportingOverflow(signed)
                    guard !overflow else { throw overflowError() }
                    total = next
                    continue
                }
                throw CellarError.illegalArgument("sumInteger: \(property) is not an integer property in range")
            }
            let (next, overflow) = total.addingReportingOverflow(v)
            guard !overflow else { throw overflowError() }
            total = next
        }
        return total
    }

    /// The exact sum of a Decimal property's values (0 when none), as `Decimal` arithmetic gives it
    /// (38 significant digits; NaN when a value is NaN).
    /// - Throws: `illegalArgument` when the property is not a Decimal.
    public func sumDecimal() throws -> Decimal {
        var total = Decimal(0)
        for value in try values() {
            guard case .decimal(let v)? = value else {
                throw CellarError.illegalArgument("sumDecimal: \(property) is not a Decimal property; use sum() or sumInteger()")
            }
            total += v
        }
        return total
    }

    /// The average of a number property's values; nil when no object has one.
    public func average() throws -> Double? {
        let numbers = try numbers()
        return numbers.isEmpty ? nil : numbers.reduce(0, +) / Double(numbers.count)
    }

    private func overflowError() -> CellarError {
        .illegalArgument("sumInteger: the sum of \(property) does not fit in an Int64; use sum() for a Double")
    }

    private func numbers() throws -> [Double] {
        try values().map { value in
            switch value {
            case .integer(let v)?: return Double(v)
            case .unsigned(let v)?: return Double(v)
            case .floating(let v)?: return v
            case .decimal?: throw CellarError.illegalArgument("\(property) is a Decimal property: use sumDecimal()")
            default: throw CellarError.illegalArgument("\(property) is not a number property; it has no sum or average")
            }
        }
    }

    private func extreme<T: PropertyQueryValue>(_ type: T.Type, smallest: Bool) throws -> T? {
        try extremeValue(smallest: smallest).map { try convert($0, to: T.self) }
    }

    private func extremeValue(smallest: Bool) throws -> QueryValue? {
        var best: (QueryValue, CompiledOrder.Key)?
        for case let value? in try values() {
            let key = Self.sortKey(value)
            if let current = best?.1, smallest ? !(key < current) : !(current < key) { continue }
            best = (value, key)
        }
        return best?.0
    }

    private func convert<T: PropertyQueryValue>(_ value: QueryValue, to type: T.Type) throws -> T {
        guard let converted = T.fromStored(value) else {
            throw CellarError.illegalArgument("\(property) holds \(value), which is not a \(T.self)")
        }
        return converted
    }

    static func sortKey(_ value: QueryValue) -> CompiledOrder.Key {
        switch value {
        case .integer(let v): .signed(v)
        case .unsigned(let v): .unsigned(v)
        case .floating(let v): .floating(v)
        case .string(let v): .bytes(Array(v.utf8))
        case .bytes(let v): .bytes(v)
        case .date(let v): .floating(v.timeIntervalSince1970)
        case .uuid(let v): .bytes(UUIDEncoding.bytes(v))
        case .decimal(let v): .bytes(DecimalEncoding.bytes(v))
        }
    }

    /// The property's values of the matching objects, in the query's order (nil: no value, left
    /// out unless `keepingNils`), made distinct when asked.
    private func values(keepingNils: Bool = false) throws -> [QueryValue?] {
        let path = try EmbeddedPath(self.property.via, self.property.ref, schema: query.compiled.schema, store: query.box.store,
                                    what: "property query on \(self.property)")
        let property = path.property
        guard property.collection == nil, property.type != .flex, !property.kind.isEmbedded else {
            throw CellarError.illegalArgument("property query on \(property.qualifiedName): a \(property.type) has no single value; read the objects instead")
        }
        var values: [QueryValue?] = []
        var seen = Set<QueryValue?>()
        try query.visitRecords(offset: 0, limit: nil) { id, record in
            let value = try path.record(in: RecordReader(record))?.queryValue(of: property, id: id).map { Self.stored($0, property) }
            if value == nil && !keepingNils { return true }
            if isDistinct {
                // `QueryValue` compares and hashes strings by their bytes: the value is its own key.
                var key = value
                if !distinctCaseSensitive, case .string(let s)? = value { key = .string(StringFolding.fold(s)) }
                guard seen.insert(key).inserted else { return true }
            }
            values.append(value)
            return true
        }
        return values
    }

    static func stored(_ value: FieldValue, _ property: PropertySchema) -> QueryValue {
        switch value {
        case .integer(let bits):
            if property.type == .date { return .date(DateStorage.date(milliseconds: Int64(bitPattern: bits))) }
            if property.type == .dateNano { return .date(DateStorage.date(nanoseconds: Int64(bitPattern: bits))) }
            if case .integer(_, true) = property.kind { return .integer(Int64(bitPattern: bits)) }
            return .unsigned(bits)
        case .floating(let double):
            return .floating(double)
        case .bytes(let bytes) where property.kind.isUUID:
            return .uuid(UUIDEncoding.uuid(bytes))
        case .bytes(let bytes) where property.kind.isDecimal:
            // Verified when the field was read (`PropertySchema.value(stored:)`).
            return .decimal((try? DecimalEncoding.decimal(bytes)) ?? .nan)
        case .bytes(let bytes):
            return property.kind.isString ? .string(String(decoding: bytes, as: UTF8.self)) : .bytes(Array(bytes))
        }
    }
}
