@_spi(Sync) import Cellar
import Foundation

/// Values to and from the text PostgreSQL reads and prints for each column type. Every value
/// travels as text with a cast in the statement (`$1::bigint`), and is read back as
/// `column::text`: one path for every type, exact for each (floating-point numbers print their
/// shortest round-trip form on PostgreSQL 12 and later).
enum ColumnText {
    /// The text of `value` for a column of `type` (nil: SQL NULL).
    static func text(_ value: ReplicaValue) -> String? {
        switch value {
        case .null: return nil
        case .bool(let flag): return flag ? "true" : "false"
        case .integer(let number): return String(number)
        case .unsigned(let number): return String(number)
        case .float(let number): return floatText(number)
        case .double(let number): return floatText(number)
        case .decimal(let number): return DecimalText.text(number)
        case .string(let text): return text
        case .bytes(let bytes): return hex(bytes)
        case .uuid(let uuid), .reference(let uuid): return UUIDText.text(uuid)
        case .json(let text): return JSONBText.stable(text)
        }
    }

    /// `value(_:of:)` of a cell's bytes (nil: NULL).
    static func value(_ utf8: UnsafeBufferPointer<UInt8>?, of property: ReplicaSchema.Property) throws -> ReplicaValue {
        try value(utf8.map { String(decoding: $0, as: UTF8.self) }, of: property)
    }

    /// The value of `text` (as `column::text` printed it; nil for NULL) for a property.
    static func value(_ text: String?, of property: ReplicaSchema.Property) throws -> ReplicaValue {
        guard let text else { return .null }
        func bad() -> SyncError { SyncError(.schema, "the server's \(property.name) holds \(text.prefix(40)), not a \(property.column.rawValue)") }
        switch property.column {
        case .boolean:
            switch text { case "true", "t": return .bool(true); case "false", "f": return .bool(false); default: throw bad() }
        case .bigint: guard let number = Int64(text) else { throw bad() }; return .integer(number)
        case .numeric: guard let number = UInt64(text) else { throw bad() }; return .unsigned(number)
        case .real: guard let number = parseFloat(text).map(Float.init) else { throw bad() }; return .float(number)
        case .doublePrecision: guard let number = parseFloat(text) else { throw bad() }; return .double(number)
        case .decimal: guard let number = DecimalText.parse(text) else { throw bad() }; return .decimal(number)
        case .text: return .string(text)
        case .bytea: guard let bytes = unhex(text) else { throw bad() }; return .bytes(bytes)
        case .uuid:
            guard let uuid = UUIDText.uuid(text) else { throw bad() }
            return property.targetUid == nil ? .uuid(uuid) : .reference(uuid)
        case .jsonb: return .json(text)
        case .uuidArray: throw bad()
        }
    }

    /// The SQL expression that turns `text` (an SQL expression of type `text`) into a value of
    /// `column`.
    static func cast(_ text: String, _ column: ReplicaSchema.ColumnType) -> String {
        switch column {
        case .bytea: return "decode(\(text), 'hex')"
        default: return "\(text)::\(column.rawValue)"
        }
    }

    /// The SQL expression that reads `column` (a quoted name) as text.
    static func read(_ name: String, _ column: ReplicaSchema.ColumnType) -> String {
        switch column {
        case .bytea: return "encode(\(name), 'hex')"
        default: return "\(name)::text"
        }
    }

    /// A `uuid[]` literal: `{…,…}`.
    static func uuidArray(_ uuids: [UUID]) -> String {
        "{" + uuids.map { UUIDText.text($0) }.joined(separator: ",") + "}"
    }

    /// `uuids(_:)` of a cell's bytes (nil: NULL).
    static func uuids(_ utf8: UnsafeBufferPointer<UInt8>?) throws -> [UUID] {
        try uuids(utf8.map { String(decoding: $0, as: UTF8.self) })
    }

    /// The UUIDs of a `uuid[]` printed as text.
    static func uuids(_ text: String?) throws -> [UUID] {
        guard let text, text.count > 2 else { return [] }
        return try text.dropFirst().dropLast().split(separator: ",").map {
            guard let uuid = UUIDText.uuid($0) else { throw SyncError(.schema, "the server holds \($0) in a list of ids") }
            return uuid
        }
    }

    private static func floatText<F: BinaryFloatingPoint & LosslessStringConvertible>(_ number: F) -> String {
        if number.isNaN { return "NaN" }
        if number.isInfinite { return number < 0 ? "-Infinity" : "Infinity" }
        return String(number)
    }

    private static func parseFloat(_ text: String) -> Double? {
        switch text {
        case "NaN": return .nan
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        default: return Double(text)
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = UUIDText.digits
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func unhex(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = UUIDText.nibble(utf8[index]), let low = UUIDText.nibble(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}

/// JSON text that `jsonb` keeps exactly. `jsonb` stores numbers as `numeric`, which prints
/// `1e+20` as `100000000000000000000`: a double in a flex value would come back as an integer.
/// Numbers with an exponent are written out in full, with a fraction (`100000000000000000000.0`),
/// which `numeric` keeps and which parses to the same double.
enum JSONBText {
    static func stable(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }),
              let value = try? JSONParser.parse(Array(text.utf8)) else { return text }
        return JSONWriter.string(expand(value))
    }

    private static func expand(_ value: JSONValue) -> JSONValue {
        switch value {
        case .number(let text): return .number(plain(text))
        case .array(let elements): return .array(elements.map(expand))
        case .object(let members): return .object(members.map { JSONMember($0.name, expand($0.value)) })
        default: return value
        }
    }

    /// `text` (a JSON number) without an exponent: the same decimal value, with a fraction.
    static func plain(_ text: String) -> String {
        guard let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }), let exponent = Int(text[text.index(after: e)...]) else { return text }
        var mantissa = String(text[..<e])
        let negative = mantissa.hasPrefix("-")
        if negative { mantissa.removeFirst() }
        let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        var digits = String(parts[0]) + (parts.count > 1 ? String(parts[1]) : "")
        var point = parts[0].count + exponent
        if point <= 0 {
            digits = String(repeating: "0", count: 1 - point) + digits
            point = 1
        }
        if digits.count < point { digits += String(repeating: "0", count: point - digits.count) }
        var whole = String(digits.prefix(point))
        var fraction = String(digits.dropFirst(point))
        while whole.count > 1, whole.hasPrefix("0") { whole.removeFirst() }
        while fraction.count > 1, fraction.hasSuffix("0") { fraction.removeLast() }
        if fraction.isEmpty { fraction = "0" }
        return (negative ? "-" : "") + whole + "." + fraction
    }
}

/// The texts of clocks as a push sends them, each made once for a run of equal clocks (the
/// values of one commit share one): a clock's text is 32 bytes, an allocation each time it is
/// made. The text of no clock is the empty one, older than any other.
struct ClockTexts {
    private var last: ReplicaClock?
    private var lastText = ""

    mutating func text(of clock: ReplicaClock?) -> String {
        guard let clock else { return "" }
        if clock != last {
            last = clock
            lastText = clock.text
        }
        return lastText
    }
}
