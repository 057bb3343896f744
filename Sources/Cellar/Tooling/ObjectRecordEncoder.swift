import CellarStorage
import Foundation

/// How the objects of an export file's entity (or embedded type) land in the store's: each
/// property and standalone relation the file names, matched with the store's by UID, so that a
/// property renamed since the export still finds its field.
final class ImportMapping {
    let name: String
    /// The store's entity (or embedded type).
    let entity: ModelEntity
    /// The store's property for each property name of the file's model (the id property left out).
    let properties: [String: ModelProperty]
    /// The store's relation for each relation name of the file's model.
    let relations: [String: ModelRelation]
    /// Each embedded property's mapping, by the file's property name.
    private(set) var embedded: [String: ImportMapping] = [:]
    /// The number of slots a record of the entity has (its last property ID).
    let slotCount: Int

    /// Matches `fileEntity` of `fileModel` with `entity` of `storeModel`. Throws `schema` for a
    /// property or relation of the file that the store's entity does not have, or has with
    /// another type.
    init(file fileEntity: ModelEntity, in fileModel: Model, store entity: ModelEntity, in storeModel: Model) throws {
        name = fileEntity.name
        self.entity = entity
        slotCount = Int(entity.lastPropertyId.id)
        let byUid = Dictionary(entity.properties.map { ($0.id.uid, $0) }, uniquingKeysWith: { a, _ in a })
        var properties: [String: ModelProperty] = [:]
        var embedded: [String: ImportMapping] = [:]
        for property in fileEntity.properties where !property.flags.contains(.id) {
            guard let target = byUid[property.id.uid] else {
                throw CellarError.schema("the store's \(entity.name) has no property \(property.name) (UID \(property.id.uid)) of the file's model")
            }
            guard target.type == property.type else {
                throw CellarError.schema("\(entity.name).\(target.name) is \(target.type) in the store but \(property.type) in the file")
            }
            properties[property.name] = target
            if property.type.isEmbedded {
                guard let fileType = property.embeddedType.flatMap(fileModel.entity(named:)),
                      let storeType = target.embeddedType.flatMap(storeModel.entity(named:)) else {
                    throw CellarError.schema("the embedded type of \(entity.name).\(target.name) is missing from a model")
                }
                embedded[property.name] = try ImportMapping(file: fileType, in: fileModel, store: storeType, in: storeModel)
            }
        }
        let relationsByUid = Dictionary(entity.relations.map { ($0.id.uid, $0) }, uniquingKeysWith: { a, _ in a })
        var relations: [String: ModelRelation] = [:]
        for relation in fileEntity.relations {
            guard let target = relationsByUid[relation.id.uid] else {
                throw CellarError.schema("the store's \(entity.name) has no relation \(relation.name) (UID \(relation.id.uid)) of the file's model")
            }
            relations[relation.name] = target
        }
        self.properties = properties
        self.relations = relations
        self.embedded = embedded
    }
}

/// Builds an object's record from its JSON (as `ObjectDump` writes it in the `exact` style): the
/// inverse of `ObjectDump`'s decoding. Errors are `illegalArgument`, naming the property and
/// what was expected.
package enum ObjectRecordEncoder {
    /// Writes the properties among `members` into `builder` (started here) as `mapping`'s entity
    /// stores them. `id` and the names of standalone relations are skipped; any other name the
    /// entity does not have throws.
    static func write(_ members: [JSONMember], _ mapping: ImportMapping, into builder: RecordBuilder) throws {
        builder.start(slotCount: mapping.slotCount)
        for member in members {
            guard let property = mapping.properties[member.name] else {
                if member.name == "id" || mapping.relations[member.name] != nil { continue }
                throw CellarError.illegalArgument("\(mapping.name) has no property \(member.name)")
            }
            do {
                try write(member.value, of: property, slot: Int(property.id.id) - 1, mapping: mapping.embedded[member.name],
                          into: builder)
            } catch let error as CellarError where error.code == .illegalArgument {
                throw CellarError.illegalArgument("\(mapping.name).\(member.name): \(error.message)")
            }
        }
    }

    private static func write(_ value: JSONValue, of property: ModelProperty, slot: Int, mapping: ImportMapping?,
                              into builder: RecordBuilder) throws {
        if value == .null { return }  // absent, as an optional's nil or a property added later
        let type = property.type
        let unsigned = property.flags.contains(.unsigned)
        switch type.known {
        case .embeddedList:
            guard let mapping else { throw CellarError.illegalArgument("no embedded type") }
            guard case .array(let elements) = value else { throw expected("an array of objects", value) }
            try builder.addNestedList(count: elements.count, slot: slot) { index, nested in
                guard case .object(let members) = elements[index] else { throw expected("an object", elements[index]) }
                try write(members, mapping, into: nested)
            }
        case .embedded:
            guard let mapping else { throw CellarError.illegalArgument("no embedded type") }
            guard case .object(let members) = value else { throw expected("an object", value) }
            try builder.addNested(slot: slot) { try write(members, mapping, into: $0) }
        case .collection(let shape): try writeCollection(value, shape, slot: slot, unsigned: unsigned, into: builder)
        case .bool: builder.add(try bool(value), slot: slot)
        case .byte: unsigned ? builder.add(try integer(value, UInt8.self), slot: slot) : builder.add(try integer(value, Int8.self), slot: slot)
        case .short: unsigned ? builder.add(try integer(value, UInt16.self), slot: slot) : builder.add(try integer(value, Int16.self), slot: slot)
        case .char: builder.add(try integer(value, UInt16.self), slot: slot)
        case .int: unsigned ? builder.add(try integer(value, UInt32.self), slot: slot) : builder.add(try integer(value, Int32.self), slot: slot)
        case .long: unsigned ? builder.add(try integer(value, UInt64.self), slot: slot) : builder.add(try integer(value, Int64.self), slot: slot)
        case .relation: builder.add(try integer(value, UInt64.self), slot: slot)
        case .float: builder.add(try floatingPoint(value, Float.self), slot: slot)
        case .double: builder.add(try floatingPoint(value, Double.self), slot: slot)
        case .string: builder.add(try string(value), slot: slot)
        case .date: builder.add(try dateUnits(value, perSecond: 1_000), slot: slot)
        case .dateNano: builder.add(try dateUnits(value, perSecond: 1_000_000_000), slot: slot)
        case .uuid: builder.add(try uuid(value), slot: slot)
        case .decimal: builder.add(try decimal(value), slot: slot)
        case .byteVector: builder.add(try bytes(value), slot: slot)
        case .geoPoint:
            guard case .object(let members) = value, members.count == 2,
                  let latitude = members.first(where: { $0.name == "latitude" }),
                  let longitude = members.first(where: { $0.name == "longitude" }) else {
                throw expected("{\"latitude\": …, \"longitude\": …}", value)
            }
            builder.add(try GeoPoint(latitude: floatingPoint(latitude.value, Double.self),
                                     longitude: floatingPoint(longitude.value, Double.self)), slot: slot)
        case .flex: try builder.add(try flex(value), slot: slot)
        case nil: throw CellarError.illegalArgument("its type (\(type)) cannot be imported by this version of Cellar")
        }
    }

    /// A list, set, vector or map property from a JSON array (object, for a map).
    private static func writeCollection(_ value: JSONValue, _ shape: CollectionShape, slot: Int, unsigned: Bool,
                                        into builder: RecordBuilder) throws {
        func elements<T: CollectionElement>(_ convert: (JSONValue) throws -> T) throws {
            switch shape.kind {
            case .list, .set:
                guard case .array(let values) = value else { throw expected("an array", value) }
                let converted = try values.map(convert)
                if shape.kind == .list { try builder.add(converted, slot: slot) } else { try builder.add(Set(converted), slot: slot) }
            case .map:
                guard case .object(let members) = value else { throw expected("an object", value) }
                var map: [String: T] = [:]
                for member in members { map[member.name] = try convert(member.value) }
                try builder.add(map, slot: slot)
            }
        }
        switch shape.element.known {
        case .bool: try elements(bool)
        case .byte: unsigned ? try elements { try integer($0, UInt8.self) } : try elements { try integer($0, Int8.self) }
        case .short: unsigned ? try elements { try integer($0, UInt16.self) } : try elements { try integer($0, Int16.self) }
        case .int: unsigned ? try elements { try integer($0, UInt32.self) } : try elements { try integer($0, Int32.self) }
        case .long: unsigned ? try elements { try integer($0, UInt64.self) } : try elements { try integer($0, Int64.self) }
        case .float: try elements { try floatingPoint($0, Float.self) }
        case .double: try elements { try floatingPoint($0, Double.self) }
        case .string: try elements(string)
        // Dates are stored as integers (milliseconds, nanoseconds): written as such, exactly.
        case .date: try elements { try dateUnits($0, perSecond: 1_000) }
        case .dateNano: try elements { try dateUnits($0, perSecond: 1_000_000_000) }
        case .byteVector: try elements(bytes)
        case .uuid: try elements(uuid)
        case .char, .relation, .decimal, .flex, .geoPoint, .embedded, .embeddedList, .collection, nil:
            throw CellarError.illegalArgument("its type (\(shape)) cannot be imported by this version of Cellar")
        }
    }

    // MARK: Values

    private static func expected(_ what: String, _ value: JSONValue) -> CellarError {
        var found = JSONWriter.compact(value)
        if found.count > 40 { found = String(found.prefix(39)) + "…" }
        return CellarError.illegalArgument("expected \(what), found \(found)")
    }

    private static func bool(_ value: JSONValue) throws -> Bool {
        guard case .bool(let bool) = value else { throw expected("true or false", value) }
        return bool
    }

    private static func integer<T: FixedWidthInteger>(_ value: JSONValue, _ type: T.Type) throws -> T {
        guard case .number(let text) = value, let integer = T(text) else {
            throw expected("an integer from \(T.min) to \(T.max)", value)
        }
        return integer
    }

    /// A number, or one of the strings `NaN`, `Infinity`, `-Infinity` (JSON has no such numbers).
    private static func floatingPoint<F: BinaryFloatingPoint & LosslessStringConvertible>(_ value: JSONValue, _ type: F.Type) throws -> F {
        switch value {
        case .number(let text):
            if let number = F(text) { return number }
        case .string("NaN"): return .nan
        case .string("Infinity"): return .infinity
        case .string("-Infinity"): return -.infinity
        default: break
        }
        throw expected("a number (or \"NaN\", \"Infinity\", \"-Infinity\")", value)
    }

    private static func string(_ value: JSONValue) throws -> String {
        guard case .string(let string) = value else { throw expected("a string", value) }
        return string
    }

    private static func uuid(_ value: JSONValue) throws -> UUID {
        guard case .string(let text) = value, let uuid = UUID(uuidString: text) else { throw expected("a UUID", value) }
        return uuid
    }

    /// A decimal from its exact text: a JSON number, or a string holding one (or `NaN`).
    private static func decimal(_ value: JSONValue) throws -> Decimal {
        let text: String
        switch value {
        case .number(let number): text = number
        case .string(let string): text = string
        default: throw expected("a decimal number", value)
        }
        guard let decimal = DecimalText.parse(text) else { throw expected("a decimal number", value) }
        return decimal
    }

    private static func bytes(_ value: JSONValue) throws -> Data {
        guard case .string(let text) = value, let data = Data(base64Encoded: text) else { throw expected("base64 text", value) }
        return data
    }

    private static func dateUnits(_ value: JSONValue, perSecond: Int64) throws -> Int64 {
        guard case .string(let text) = value, let units = ISO8601Units.parse(text, perSecond: perSecond) else {
            throw expected(perSecond == 1_000 ? "an ISO 8601 date in UTC with at most millisecond digits (2024-05-01T12:00:00.250Z)"
                                              : "an ISO 8601 date in UTC with at most nanosecond digits", value)
        }
        return units
    }

    /// A flex value in `ObjectDump`'s `exact` style: a number with a fraction or an exponent is a
    /// double, one without an integer; `$bytes`, `$date`, `$uuid`, `$double` and `$map` objects
    /// are the values they tag.
    package static func flex(_ value: JSONValue) throws -> FlexValue {
        switch value {
        case .null: return .null
        case .bool(let bool): return .bool(bool)
        case .number(let text):
            if text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
                guard let double = Double(text) else { throw expected("a number", value) }
                return .double(double)
            }
            guard let integer = Int64(text) else { throw expected("a 64-bit integer (or a number with a fraction)", value) }
            return .integer(integer)
        case .string(let string): return .string(string)
        case .array(let values): return .list(try values.map(flex))
        case .object(let members):
            if members.count == 1, let tag = members.first, tag.name.hasPrefix("$") {
                switch tag.name {
                case "$bytes": return .bytes(try bytes(tag.value))
                case "$date": return .date(DateStorage.date(milliseconds: try dateUnits(tag.value, perSecond: 1_000)))
                case "$uuid": return .uuid(try uuid(tag.value))
                case "$double": return .double(try floatingPoint(tag.value, Double.self))
                case "$map":
                    guard case .object(let entries) = tag.value else { throw expected("an object", tag.value) }
                    return .map(try flexMap(entries))
                default: throw CellarError.illegalArgument("unknown flex tag \(tag.name) (a map with keys starting with $ is written {\"$map\": {…}})")
                }
            }
            return .map(try flexMap(members))
        }
    }

    private static func flexMap(_ members: [JSONMember]) throws -> [String: FlexValue] {
        var map: [String: FlexValue] = [:]
        for member in members { map[member.name] = try flex(member.value) }
        return map
    }
}

/// ISO 8601 times in UTC as `ObjectDump` writes them (`2024-05-01T12:00:00.250Z`; a year may
/// have a sign or more than 4 digits), read back into milliseconds or nanoseconds since 1970.
package enum ISO8601Units {
    /// The time `text` gives, in units of `1/perSecond` s (1000 or 10^9); nil when it is not of
    /// that form, has more fraction digits than the unit holds, or lies out of the Int64 range.
    package static func parse(_ text: String, perSecond: Int64) -> Int64? {
        var text = text
        return text.withUTF8 { parse(utf8: $0, perSecond: perSecond) }
    }

    /// `parse(_:perSecond:)` over the text's UTF-8 bytes (a byte that is not ASCII is no digit
    /// nor separator, so the form is the same).
    private static func parse(utf8 bytes: UnsafeBufferPointer<UInt8>, perSecond: Int64) -> Int64? {
        var index = 0
        /// A number of `digits` ASCII digits (as many as follow, which must be in the range).
        func number(digits: ClosedRange<Int>) -> Int64? {
            var value: Int64 = 0, count = 0
            while index < bytes.count, case let digit = bytes[index] &- UInt8(ascii: "0"), digit < 10 {
                guard count < digits.upperBound else { return nil }
                value = value * 10 + Int64(digit)
                count += 1
                index += 1
            }
            return digits.contains(count) ? value : nil
        }
        func skip(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }
        let negative = skip(UInt8(ascii: "-"))
        guard let yearDigits = number(digits: 1...12), skip(UInt8(ascii: "-")), let month = number(digits: 2...2),
              skip(UInt8(ascii: "-")), let day = number(digits: 2...2), skip(UInt8(ascii: "T")), let hour = number(digits: 2...2),
              skip(UInt8(ascii: ":")), let minute = number(digits: 2...2), skip(UInt8(ascii: ":")),
              let second = number(digits: 2...2) else { return nil }
        var fraction: Int64 = 0
        if skip(UInt8(ascii: ".")) {
            let start = index, allowed = perSecond == 1_000 ? 3 : 9
            guard let value = number(digits: 1...allowed) else { return nil }
            fraction = value
            for _ in (index - start)..<allowed { fraction *= 10 }
        }
        let year = negative ? -yearDigits : yearDigits
        guard skip(UInt8(ascii: "Z")), index == bytes.count, (1...12).contains(month), day >= 1,
              day <= daysIn(month: Int(month), year: Int(year)), hour < 24, minute < 60, second < 60
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: perSecond)
        let (units, overflow2) = scaled.addingReportingOverflow(fraction)
        return overflow || overflow2 ? nil : units
    }

    /// The days of `month` (1...12) in `year` of the proleptic Gregorian calendar.
    package static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a date in the proleptic Gregorian calendar (Howard Hinnant's
    /// days_from_civil).
    package static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
