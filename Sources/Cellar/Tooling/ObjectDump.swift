import CellarStorage
import Foundation

/// Objects decoded with the model stored in the store, without generated code: what `cellar dump`
/// prints. Each object becomes a JSON object: `id` first, then every property of the stored model
/// in its order, then each standalone relation as the array of the target ids it links to.
///
/// How values appear:
/// - integers and floating-point numbers as JSON numbers (a NaN or an infinity, which JSON has
///   no number for, as the strings `"NaN"`, `"Infinity"`, `"-Infinity"`);
/// - dates as ISO 8601 text in UTC (milliseconds; nanoseconds for `DateNano`);
/// - byte arrays as base64 text, UUIDs as their text, geo points as `{"latitude", "longitude"}`;
/// - a to-one relation as the target's id (0: none);
/// - lists, sets and vectors as arrays, maps as objects, flex values as the JSON they hold (bytes,
///   dates and UUIDs inside them as text);
/// - embedded objects as objects of their own properties, embedded lists as arrays of them;
/// - a property an object has no value for (an optional, or one added after it was written) as
///   `null`.
///
/// In the `exact` style (what `cellar export` writes) a flex value keeps its types: a double
/// always has a fraction or an exponent (`1.0`), and bytes, dates, UUIDs and non-finite doubles
/// become one-member objects tagged `$bytes`, `$date`, `$uuid`, `$double` (a flex map with a key
/// starting with `$` is wrapped as `{"$map": {…}}`), so that `ObjectImport` reads back the same
/// value.
package enum ObjectDump {
    /// How flex values are written: as the plain JSON they hold (`readable`), or tagged so that
    /// they read back exactly (`exact`).
    package enum Style: Sendable {
        case readable, exact
    }

    /// Calls `body` with every object of the entity named `entity` (every entity, in the model's
    /// order, when nil) that matches `filter` (see `ObjectFilter`), at most `limit` in all, in id
    /// order. Throws `illegalArgument` for an unknown entity name or a filter that does not parse
    /// (or names a property none of the entities has), and `fileCorrupt` for a record that does
    /// not decode.
    package static func forEachObject(in engine: StorageEngine, entity: String?, filter: String? = nil, limit: Int = .max,
                                      style: Style = .readable,
                                      _ body: (_ entity: String, _ object: JSONValue) throws -> Void) throws {
        try translatingErrors {
            try engine.read { txn in
                try forEachObject(in: txn, entity: entity, filter: filter, limit: limit, style: style) { name, object in
                    try body(name, object)
                }
            }
        }
    }

    /// `forEachObject` in a read transaction the caller holds (one snapshot for more than one
    /// pass, as `ObjectExport` needs).
    package static func forEachObject(in txn: ReadTransaction, entity: String?, filter: String? = nil, limit: Int = .max,
                                      style: Style = .readable,
                                      _ body: (_ entity: String, _ object: JSONValue) throws -> Void) throws {
        try translatingErrors {
            guard let model = try StorageLayout.storedModel(in: txn) else { return }
            let entities = model.entities.filter { !$0.isEmbedded && (entity == nil || $0.name == entity) }
            if let entity, entities.isEmpty {
                let names = model.entities.filter { !$0.isEmbedded }.map(\.name).joined(separator: ", ")
                throw CellarError.illegalArgument("no entity named \(entity) in the stored model (it has \(names))")
            }
            let names = Set(entities.flatMap { ["id"] + $0.properties.map(\.name) + $0.relations.map(\.name) })
            let condition = try filter.map { try ObjectFilter.parse($0, knownNames: names) }
            var left = limit
            for schema in entities where left > 0 {
                guard let tree = try txn.tree(StorageLayout.entityTree(schema.id.id)) else { continue }
                let relations = try schema.relations.map { relation in
                    (relation.name, try txn.tree(StorageLayout.relationTree(relation.id.id)))
                }
                try txn.cursor(tree).scan { key, value in
                    let id = try StorageLayout.objectId(key)
                    var members = [JSONMember("id", .number(String(id)))]
                    do {
                        members += try properties(of: RecordReader(value), entity: schema, model: model, style: style)
                    } catch let error as CellarError where error.code == .fileCorrupt {
                        let reason = error.message
                        throw CellarError.fileCorrupt("\(schema.name) object \(id): \(reason)")
                    }
                    for (name, relationTree) in relations {
                        members.append(JSONMember(name, .array(try targets(of: key, in: relationTree, txn))))
                    }
                    let object = JSONValue.object(members)
                    guard condition?.matches(object) ?? true else { return true }
                    try body(schema.name, object)
                    left -= 1
                    return left > 0
                }
            }
        }
    }

    /// The ids a standalone relation's tree links the object with `key` to (its keys are the
    /// source's 8 bytes, then the target's).
    private static func targets(of key: UnsafeRawBufferPointer, in tree: Tree?, _ txn: ReadTransaction) throws -> [JSONValue] {
        guard let tree else { return [] }
        var ids: [JSONValue] = []
        try txn.cursor(tree).scan(.prefix(Array(key))) { link, _ in
            guard link.count == 16 else { throw CellarError.fileCorrupt("a relation key has \(link.count) bytes, expected 16") }
            ids.append(.number(String(UInt64(bigEndian: link.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))))
            return true
        }
        return ids
    }

    /// The properties of the record `reader` reads, as `entity` (an entity or an embedded type)
    /// of `model` says; the id property is left out (the caller writes the key's id).
    static func properties(of reader: RecordReader, entity: ModelEntity, model: Model, style: Style = .readable) throws -> [JSONMember] {
        try entity.properties.filter { !$0.flags.contains(.id) }.map { property in
            JSONMember(property.name, try value(of: property, slot: Int(property.id.id) - 1, in: reader, model: model, style: style))
        }
    }

    static func value(of property: ModelProperty, slot: Int, in reader: RecordReader, model: Model, style: Style) throws -> JSONValue {
        let type = property.type
        let unsigned = property.flags.contains(.unsigned)
        switch type.known {
        case .embeddedList:
            guard let name = property.embeddedType, let embedded = model.entity(named: name),
                  let payload = try reader.bytes(slot: slot) else { return .null }
            var objects: [JSONValue] = []
            try reader.forEachNested(payload) { objects.append(.object(try properties(of: $0, entity: embedded, model: model, style: style))) }
            return .array(objects)
        case .embedded:
            guard let name = property.embeddedType, let embedded = model.entity(named: name),
                  let nested = try reader.nested(slot: slot) else { return .null }
            return .object(try properties(of: nested, entity: embedded, model: model, style: style))
        case .collection(let shape): return try collection(shape, slot: slot, in: reader, unsigned: unsigned)
        case .bool: return try reader.bool(slot: slot).map(JSONValue.bool) ?? .null
        case .byte: return try integer(reader, slot, unsigned ? UInt8.self : nil, Int8.self)
        case .short: return try integer(reader, slot, unsigned ? UInt16.self : nil, Int16.self)
        case .char: return try integer(reader, slot, UInt16.self, Int16.self)
        case .int: return try integer(reader, slot, unsigned ? UInt32.self : nil, Int32.self)
        case .long: return try integer(reader, slot, unsigned ? UInt64.self : nil, Int64.self)
        case .relation: return try integer(reader, slot, UInt64.self, Int64.self)
        case .float: return try reader.float(slot: slot).map(number) ?? .null
        case .double: return try reader.double(slot: slot).map(number) ?? .null
        case .string: return try reader.string(slot: slot).map(JSONValue.string) ?? .null
        // Dates from their stored integers (milliseconds, nanoseconds), exactly.
        case .date: return try reader.read(Int64.self, slot: slot).map { .string(iso8601($0, perSecond: 1_000)) } ?? .null
        case .dateNano: return try reader.read(Int64.self, slot: slot).map { .string(iso8601($0, perSecond: 1_000_000_000)) } ?? .null
        case .uuid: return try reader.uuid(slot: slot).map { .string($0.uuidString) } ?? .null
        case .decimal: return try reader.decimal(slot: slot).map(decimal) ?? .null
        case .byteVector: return try reader.data(slot: slot).map { .string($0.base64EncodedString()) } ?? .null
        case .geoPoint:
            guard let point = try reader.geoPoint(slot: slot) else { return .null }
            return .object([JSONMember("latitude", number(point.latitude)),
                            JSONMember("longitude", number(point.longitude))])
        case .flex: return try reader.flex(slot: slot).map { style == .exact ? exactJSON($0) : json($0) } ?? .null
        case nil:
            // A type this build does not know (a newer model): its bytes, so nothing is hidden.
            return try reader.data(slot: slot).map { .string($0.base64EncodedString()) } ?? .null
        }
    }

    private static func integer<U: FixedWidthInteger, S: FixedWidthInteger>(_ reader: RecordReader, _ slot: Int, _ unsigned: U.Type?,
                                                                            _ signed: S.Type) throws -> JSONValue {
        if let unsigned { return try reader.read(unsigned, slot: slot).map { .number(String($0)) } ?? .null }
        return try reader.read(signed, slot: slot).map { .number(String($0)) } ?? .null
    }

    /// A list, set, vector or map property, its elements as their type says.
    private static func collection(_ shape: CollectionShape, slot: Int, in reader: RecordReader, unsigned: Bool) throws -> JSONValue {
        func elements<T: CollectionElement>(_ type: T.Type, _ convert: (T) -> JSONValue) throws -> JSONValue {
            switch shape.kind {
            case .list: return try reader.list(type, slot: slot).map { .array($0.map(convert)) } ?? .null
            // A set's elements as stored: in their order (`CollectionElement.precedes`), not a
            // `Set`'s, which changes from one set to another.
            case .set: return try reader.list(type, slot: slot).map { .array($0.map(convert)) } ?? .null
            case .map:
                guard let map = try reader.map(type, slot: slot) else { return .null }
                return .object(map.keys.sorted().map { JSONMember($0, convert(map[$0]!)) })
            }
        }
        func integers<T: CollectionElement & FixedWidthInteger>(_ type: T.Type) throws -> JSONValue {
            try elements(type) { .number(String($0)) }
        }
        switch shape.element.known {
        case .bool: return try elements(Bool.self) { .bool($0) }
        case .byte: return unsigned ? try integers(UInt8.self) : try integers(Int8.self)
        case .short: return unsigned ? try integers(UInt16.self) : try integers(Int16.self)
        case .int: return unsigned ? try integers(UInt32.self) : try integers(Int32.self)
        case .long: return unsigned ? try integers(UInt64.self) : try integers(Int64.self)
        case .float: return try elements(Float.self) { number($0) }
        case .double: return try elements(Double.self) { number($0) }
        case .string: return try elements(String.self) { .string($0) }
        // Dates from their stored integers (milliseconds, nanoseconds), exactly.
        case .date: return try elements(Int64.self) { .string(iso8601($0, perSecond: 1_000)) }
        case .dateNano: return try elements(Int64.self) { .string(iso8601($0, perSecond: 1_000_000_000)) }
        case .byteVector: return try elements(Data.self) { .string($0.base64EncodedString()) }
        case .uuid: return try elements(UUID.self) { .string($0.uuidString) }
        case .char, .relation, .decimal, .flex, .geoPoint, .embedded, .embeddedList, .collection, nil:
            return try reader.data(slot: slot).map { .string($0.base64EncodedString()) } ?? .null
        }
    }

    /// A flex value as the JSON it holds.
    static func json(_ flex: FlexValue) -> JSONValue {
        switch flex {
        case .null: return .null
        case .bool(let value): return .bool(value)
        case .integer(let value): return .number(String(value))
        case .double(let value): return number(value)
        case .string(let value): return .string(value)
        case .bytes(let value): return .string(value.base64EncodedString())
        case .date(let value): return .string(iso8601(value, nanoseconds: false))
        case .uuid(let value): return .string(value.uuidString)
        case .list(let values): return .array(values.map(json))
        case .map(let values): return .object(values.keys.sorted().map { JSONMember($0, json(values[$0]!)) })
        }
    }

    /// A flex value in the `exact` style (see the type's documentation).
    package static func exactJSON(_ flex: FlexValue) -> JSONValue {
        switch flex {
        case .null: return .null
        case .bool(let value): return .bool(value)
        case .integer(let value): return .number(String(value))
        case .double(let value):
            // Swift's text of a Double always has a fraction or an exponent ("1.0", "1e+20").
            guard value.isFinite else { return .object([JSONMember("$double", number(value))]) }
            return .number(String(value))
        case .string(let value): return .string(value)
        case .bytes(let value): return .object([JSONMember("$bytes", .string(value.base64EncodedString()))])
        case .date(let value): return .object([JSONMember("$date", .string(iso8601(value, nanoseconds: false)))])
        case .uuid(let value): return .object([JSONMember("$uuid", .string(value.uuidString))])
        case .list(let values): return .array(values.map(exactJSON))
        case .map(let values):
            let members = values.keys.sorted().map { JSONMember($0, exactJSON(values[$0]!)) }
            return values.keys.contains { $0.hasPrefix("$") } ? .object([JSONMember("$map", .object(members))]) : .object(members)
        }
    }

    /// A decimal's exact text as a JSON number (JSON numbers have no precision limit); NaN as the
    /// string `NaN`.
    static func decimal(_ value: Decimal) -> JSONValue {
        value.isNaN ? .string("NaN") : .number(DecimalText.text(value))
    }

    /// A finite number as its shortest text; NaN and the infinities as strings (JSON has no such
    /// numbers).
    static func number<F: BinaryFloatingPoint & LosslessStringConvertible>(_ value: F) -> JSONValue {
        guard value.isFinite else { return .string(value.isNaN ? "NaN" : value < 0 ? "-Infinity" : "Infinity") }
        if value == 0 { return .number(value.sign == .minus ? "-0" : "0") }
        if value == value.rounded(), abs(value) < 1e15 { return .number(String(Int64(value))) }
        // Swift's shortest round-trip text ("0.1", "1e+20"): valid JSON once a bare exponent
        // sign is kept (it is).
        return .number(String(value))
    }

    /// `date` in ISO 8601, UTC, with milliseconds (or nanoseconds).
    static func iso8601(_ date: Date, nanoseconds: Bool) -> String {
        let perSecond: Int64 = nanoseconds ? 1_000_000_000 : 1_000
        let units = (date.timeIntervalSince1970 * Double(perSecond)).rounded()
        guard abs(units) < 9.2e18 else { return "\(date.timeIntervalSince1970)" }
        return iso8601(Int64(units), perSecond: perSecond)
    }

    /// The time `units` (milliseconds or nanoseconds since 1970, as `perSecond` says) in ISO 8601,
    /// UTC, with as many fraction digits as the unit has.
    package static func iso8601(_ units: Int64, perSecond: Int64) -> String {
        var seconds = units / perSecond
        var remainder = units % perSecond
        if remainder < 0 { seconds -= 1; remainder += perSecond }
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let digits = perSecond == 1_000 ? 3 : 9
        let paddedFraction = String(repeating: "0", count: max(0, digits - String(remainder).count)) + String(remainder)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let year = Int(parts.tm_year) + 1900
        let yearText = year >= 0 && year < 1000 ? String(repeating: "0", count: 4 - String(year).count) + String(year) : String(year)
        return "\(yearText)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(paddedFraction)Z"
    }
}
