@_spi(CellarGenerated) import Cellar
import Foundation
import SwiftParser
import SwiftSyntax

/// The value a non-optional property reads from a record that has no field for it: a record
/// written before the property was added to the model. It comes from the property's initial value
/// (`var priority: Int = 3`) or from `// cellar: default = …`, and has the property's stored type.
public enum DefaultValue: Hashable, Sendable {
    case bool(Bool)
    /// A signed integer property (`Int8` … `Int64`, `Int`).
    case integer(Int64)
    /// An unsigned integer property (`UInt8` … `UInt64`, `UInt`, `Id`).
    case unsigned(UInt64)
    /// A `Float` or `Double` property; for a `Float` the value is exactly a `Float`'s.
    case floatingPoint(Double)
    case string(String)
    /// A `Date`: `seconds` since 1970-01-01 00:00:00 UTC, or since 2001-01-01 00:00:00 UTC (Foundation's
    /// reference date) when `sinceReferenceDate`: the generated code writes the initializer of that
    /// form, so the value is exactly the one written in the sources.
    case date(seconds: Double, sinceReferenceDate: Bool)
    /// A `Data` or `[UInt8]` property.
    case bytes([UInt8])
    /// A `UUID`, in its canonical upper-case form.
    case uuid(String)
    /// A `Decimal`: a Swift number literal as the sources wrote it (`isLiteral`: the generated
    /// code writes the literal, so Swift makes the same value of it, through `Double` for a
    /// fraction), or a decimal's exact text (`Decimal(string: "1.10")!`, `default = 1.10`).
    case decimal(String, isLiteral: Bool)
}

/// An initial value as the generator understands it, before it is checked against the property's
/// stored type.
indirect enum InitialValue {
    /// An integer literal, with a leading `-` in `negative`.
    case integer(negative: Bool, magnitude: UInt64, text: String)
    /// A float literal as written, without underscores, with its sign.
    case float(String)
    case bool(Bool)
    case string(String)
    case null
    /// `T()` of a built-in type other than `Date` and `UUID`: its zero value.
    case zero(TypeName)
    /// `T(literal)` or `literal as T` for a numeric built-in type `T`.
    case converted(TypeName, InitialValue)
    /// `Int8.max`, `.min`, `.zero` and the like.
    case staticMember(TypeName?, String)
    case date(seconds: Double, sinceReferenceDate: Bool)
    case uuid(String)
    /// `Decimal(string: "…")!`: a decimal's exact text.
    case decimal(String)
    /// `[]` or `[:]`: an empty collection (of bytes for `Data` and `[UInt8]`).
    case empty
    /// `[1, 2, 3]`: an array literal of integer literals.
    case array([InitialValue])
}

/// Why an initializer cannot be evaluated.
enum NotEvaluable: Error {
    /// `Date()`, `Date.now`, `UUID()`: a new value for each new object.
    case newValueEachTime
    /// A string literal with `\(…)`.
    case interpolation
    /// A function call, a reference to a constant, arithmetic, …
    case other
    /// A malformed literal that Swift would refuse too (`UUID(uuidString: "nope")!`), with the reason.
    case invalid(String)
}

enum DefaultValues {
    // MARK: Evaluating initializers

    /// Evaluates an initializer without type checking: literals (integers with `-`, `_`, hex,
    /// octal and binary; floats; `true`/`false`; strings without interpolation, escapes resolved),
    /// `nil`, `[]`, `[:]`, array literals of integers, `T()` of built-in types, `T(literal)` and
    /// `literal as T` for numeric types, `Int8.max`-style static members, `Date(timeIntervalSince1970:)`
    /// and `Date(timeIntervalSinceReferenceDate:)` of a number literal, `Date.distantPast`/`.distantFuture`,
    /// `UUID(uuidString: "…")!` and `Decimal(string: "…")!`.
    static func evaluate(_ expression: ExprSyntax) throws(NotEvaluable) -> InitialValue {
        if let literal = expression.as(IntegerLiteralExprSyntax.self) {
            return try integer(literal.literal.text, negative: false)
        }
        if let literal = expression.as(FloatLiteralExprSyntax.self) {
            return .float(literal.literal.text.filter { $0 != "_" })
        }
        if let literal = expression.as(BooleanLiteralExprSyntax.self) {
            return .bool(literal.literal.tokenKind == .keyword(.true))
        }
        if let literal = expression.as(StringLiteralExprSyntax.self) {
            if literal.segments.contains(where: { $0.is(ExpressionSegmentSyntax.self) }) { throw .interpolation }
            guard let value = literal.representedLiteralValue else { throw .invalid("the string literal does not parse") }
            return .string(value)
        }
        if expression.is(NilLiteralExprSyntax.self) { return .null }
        if let prefix = expression.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-" {
            if let literal = prefix.expression.as(IntegerLiteralExprSyntax.self) {
                return try integer(literal.literal.text, negative: true)
            }
            if let literal = prefix.expression.as(FloatLiteralExprSyntax.self) {
                return .float("-" + literal.literal.text.filter { $0 != "_" })
            }
            throw .other
        }
        if let array = expression.as(ArrayExprSyntax.self) {
            if array.elements.isEmpty { return .empty }
            return .array(try array.elements.map { element throws(NotEvaluable) in try evaluate(element.expression) })
        }
        if let dictionary = expression.as(DictionaryExprSyntax.self) {
            if case .colon = dictionary.content { return .empty }
            throw .other
        }
        if let sequence = expression.as(SequenceExprSyntax.self) {
            let elements = Array(sequence.elements)
            if elements.count == 3, let cast = elements[1].as(UnresolvedAsExprSyntax.self), cast.questionOrExclamationMark == nil,
               let type = elements[2].as(TypeExprSyntax.self) {
                return .converted(TypeName(type.type), try evaluate(elements[0]))
            }
            throw .other
        }
        if let member = expression.as(MemberAccessExprSyntax.self), member.declName.argumentNames == nil {
            let name = member.declName.baseName.text
            if name == "now" { throw .newValueEachTime }
            guard ["max", "min", "zero", "distantPast", "distantFuture"].contains(name) else { throw .other }
            guard let base = member.base else { return .staticMember(nil, name) }
            guard let type = TypeName(expression: base) else { throw .other }
            return .staticMember(type, name)
        }
        // `UUID(uuidString: "…")!` and `Decimal(string: "…")!`: a string literal read as Foundation
        // would, refused where the `!` would crash (or, for a decimal, where the value would round).
        if let unwrap = expression.as(ForceUnwrapExprSyntax.self), let call = unwrap.expression.as(FunctionCallExprSyntax.self),
           let type = TypeName(expression: call.calledExpression), let name = type.unqualifiedName,
           let label = ["UUID": "uuidString", "Decimal": "string"][name] {
            guard call.arguments.count == 1, let argument = call.arguments.first, argument.label?.text == label else {
                throw .other
            }
            guard case .string(let text) = try evaluate(argument.expression) else { throw .other }
            if name == "UUID" {
                guard let uuid = UUID(uuidString: text) else {
                    throw .invalid("\"\(text)\" is not a UUID (UUID(uuidString:) returns nil for it, so the `!` would crash); write one like \"E621E1F8-C36C-495A-93FC-0C247A3E6E5F\"")
                }
                return .uuid(uuid.uuidString)
            }
            guard let decimal = DecimalText.parse(text) else {
                throw .invalid("\"\(text)\" is not a decimal number the generator reads exactly (digits, one `.`, an optional exponent); write one like \"12.50\"")
            }
            return .decimal(DecimalText.text(decimal))
        }
        if let call = expression.as(FunctionCallExprSyntax.self), call.trailingClosure == nil,
           let type = TypeName(expression: call.calledExpression) {
            let arguments = Array(call.arguments)
            switch type.unqualifiedName {
            case "Date" where type.genericArguments.isEmpty:
                if arguments.isEmpty { throw .newValueEachTime }
                guard arguments.count == 1, let label = arguments[0].label?.text,
                      label == "timeIntervalSince1970" || label == "timeIntervalSinceReferenceDate" else { throw .other }
                let seconds: Double
                switch try evaluate(arguments[0].expression) {
                case .integer(let negative, let magnitude, _): seconds = negative ? -Double(magnitude) : Double(magnitude)
                case .float(let text):
                    guard let value = Double(text), value.isFinite else { throw .invalid("\(text) is not a finite number of seconds") }
                    seconds = value
                default: throw .other
                }
                return .date(seconds: seconds, sinceReferenceDate: label == "timeIntervalSinceReferenceDate")
            case "UUID" where type.genericArguments.isEmpty:
                throw arguments.isEmpty ? .newValueEachTime : .other
            default:
                guard let constructed = TypeMapping.builtIn(type) else { throw .other }
                if arguments.isEmpty { return .zero(type) }
                guard constructed.isInteger || [.float, .double, .decimal].contains(constructed.propertyType),
                      arguments.count == 1, arguments[0].label == nil else { throw .other }
                let value = try evaluate(arguments[0].expression)
                switch value {
                case .integer, .float: return .converted(type, value)
                default: throw .other
                }
            }
        }
        throw .other
    }

    private static func integer(_ literal: String, negative: Bool) throws(NotEvaluable) -> InitialValue {
        var digits = Substring(literal.filter { $0 != "_" })
        var radix = 10
        for (prefix, base) in [("0x", 16), ("0o", 8), ("0b", 2)] where digits.hasPrefix(prefix) {
            digits = digits.dropFirst(2)
            radix = base
        }
        guard let magnitude = UInt64(digits, radix: radix) else {
            throw .invalid("\(negative ? "-" : "")\(literal) does not fit in 64 bits")
        }
        return .integer(negative: negative, magnitude: magnitude, text: (negative ? "-" : "") + literal)
    }

    // MARK: Checking against the stored type

    /// The default a value gives a property stored as `stored`; throws a message (without the
    /// subject) when the value does not have that type or does not fit.
    static func value(_ initial: InitialValue, storedAs stored: StoredType) throws(DefaultMismatch) -> DefaultValue {
        let name = stored.swiftName
        switch initial {
        case .integer(let negative, let magnitude, let text):
            if stored.isInteger { return try integerValue(negative: negative, magnitude: magnitude, text: text, stored: stored) }
            if stored.propertyType == .decimal { return .decimal(text, isLiteral: true) }
            if stored.propertyType == .float || stored.propertyType == .double {
                let value = Double(magnitude) * (negative ? -1 : 1)
                return .floatingPoint(stored.propertyType == .float ? Double(Float(value)) : value)
            }
            throw DefaultMismatch("the integer \(text) is not a \(name)")
        case .float(let text):
            switch stored.propertyType {
            case .decimal: return .decimal(text, isLiteral: true)
            case .double:
                guard let value = Double(text), value.isFinite else { throw DefaultMismatch("\(text) is beyond Double's range (±1.7976931348623157e+308)") }
                return .floatingPoint(value)
            case .float:
                guard let value = Float(text), value.isFinite else { throw DefaultMismatch("\(text) is beyond Float's range (±3.4028235e+38)") }
                return .floatingPoint(Double(value))
            default:
                throw DefaultMismatch("the number \(text) is not a \(name)")
            }
        case .bool(let flag):
            guard stored.propertyType == .bool else { throw DefaultMismatch("\(flag) is not a \(name)") }
            return .bool(flag)
        case .string(let text):
            guard stored.propertyType == .string else { throw DefaultMismatch("a string is not a \(name)") }
            return .string(text)
        case .null:
            throw DefaultMismatch("nil is not a \(name) (only an optional property can be nil)")
        case .zero(let type):
            guard let constructed = TypeMapping.builtIn(type), constructed.swiftName == name
                    || (constructed.propertyType == .byteVector && stored.propertyType == .byteVector) else {
                throw DefaultMismatch("\(type)() is not a \(name)")
            }
            return zero(stored)
        case .converted(let type, let argument):
            guard let constructed = TypeMapping.builtIn(type), constructed.isInteger || [.float, .double, .decimal].contains(constructed.propertyType) else {
                throw DefaultMismatch("\(type) is not a number type")
            }
            guard constructed.swiftName == name || (type.unqualifiedName == "Id" && name == "UInt64") else {
                throw DefaultMismatch("a \(constructed.swiftName) is not a \(name)")
            }
            return try value(argument, storedAs: stored)
        case .staticMember(let type, let member):
            if let type {
                if stored.propertyType == .date || stored.propertyType == .dateNano, type.unqualifiedName == "Date" {
                    return try dateMember(member)
                }
                guard let named = TypeMapping.builtIn(type), named.swiftName == name
                        || (type.unqualifiedName == "Id" && name == "UInt64") else {
                    throw DefaultMismatch("\(type).\(member) is not a \(name)")
                }
            }
            if stored.propertyType == .date || stored.propertyType == .dateNano { return try dateMember(member) }
            switch member {
            case "zero" where stored.isInteger || [.float, .double, .decimal].contains(stored.propertyType):
                return zero(stored)
            case "max" where stored.isInteger:
                let bits = bitWidth(stored)
                return stored.isUnsigned ? .unsigned(bits == 64 ? UInt64.max : (1 << bits) - 1) : .integer(Int64.max >> (64 - bits))
            case "min" where stored.isInteger:
                return stored.isUnsigned ? .unsigned(0) : .integer(Int64.min >> (64 - bitWidth(stored)))
            default:
                throw DefaultMismatch("`.\(member)` is not a \(name)")
            }
        case .date(let seconds, let sinceReferenceDate):
            guard stored.propertyType == .date || stored.propertyType == .dateNano else { throw DefaultMismatch("a Date is not a \(name)") }
            return .date(seconds: seconds, sinceReferenceDate: sinceReferenceDate)
        case .uuid(let text):
            guard stored.propertyType == .uuid else { throw DefaultMismatch("a UUID is not a \(name)") }
            return .uuid(text)
        case .decimal(let text):
            guard stored.propertyType == .decimal else { throw DefaultMismatch("a Decimal is not a \(name)") }
            return .decimal(text, isLiteral: false)
        case .empty:
            // Collection properties read the empty collection here once they are stored.
            guard stored.propertyType == .byteVector else { throw DefaultMismatch("an empty collection is not a \(name)") }
            return .bytes([])
        case .array(let elements):
            guard stored.propertyType == .byteVector else { throw DefaultMismatch("an array is not a \(name)") }
            var bytes: [UInt8] = []
            for element in elements {
                guard case .integer(false, let magnitude, _) = element, magnitude <= 255 else {
                    throw DefaultMismatch("the elements of a \(name) must be integer literals from 0 to 255")
                }
                bytes.append(UInt8(magnitude))
            }
            return .bytes(bytes)
        }
    }

    private static func dateMember(_ member: String) throws(DefaultMismatch) -> DefaultValue {
        switch member {
        // Foundation's values, exactly.
        case "distantPast": return .date(seconds: -63_114_076_800, sinceReferenceDate: true)
        case "distantFuture": return .date(seconds: 63_113_904_000, sinceReferenceDate: true)
        default: throw DefaultMismatch("`.\(member)` is not a Date")
        }
    }

    private static func bitWidth(_ stored: StoredType) -> Int {
        switch stored.propertyType {
        case .byte: 8
        case .short: 16
        case .int: 32
        default: 64
        }
    }

    /// The range of an integer stored type, for messages (`-128...127`).
    static func range(_ stored: StoredType) -> String {
        let bits = bitWidth(stored)
        if stored.isUnsigned { return "0...\(bits == 64 ? UInt64.max : (1 << bits) - 1)" }
        return "\(Int64.min >> (64 - bits))...\(Int64.max >> (64 - bits))"
    }

    private static func integerValue(negative: Bool, magnitude: UInt64, text: String, stored: StoredType) throws(DefaultMismatch) -> DefaultValue {
        let bits = bitWidth(stored)
        let outside = DefaultMismatch("\(text) is outside \(stored.swiftName)'s range \(range(stored))")
        if stored.isUnsigned {
            guard !negative || magnitude == 0 else { throw outside }
            guard bits == 64 || magnitude < (1 << bits) else { throw outside }
            return .unsigned(magnitude)
        }
        let limit: UInt64 = 1 << (bits - 1)
        if negative {
            guard magnitude <= limit else { throw outside }
            return .integer(magnitude == limit ? Int64.min >> (64 - bits) : -Int64(magnitude))
        }
        guard magnitude < limit else { throw outside }
        return .integer(Int64(magnitude))
    }

    /// The zero value of a stored type, as a default.
    static func zero(_ stored: StoredType) -> DefaultValue {
        switch stored.propertyType.known {
        case .bool: .bool(false)
        case .float, .double: .floatingPoint(0)
        case .string: .string("")
        case .date, .dateNano: .date(seconds: 0, sinceReferenceDate: false)
        case .byteVector: .bytes([])
        case .uuid: .uuid("00000000-0000-0000-0000-000000000000")
        case .decimal: .decimal("0", isLiteral: true)
        // Built-in types (`StoredType`) are scalars; the rest never reach here.
        case .byte, .short, .char, .int, .long, .relation, .flex, .geoPoint, .embedded, .embeddedList, .collection, nil:
            stored.isUnsigned ? .unsigned(0) : .integer(0)
        }
    }

    // MARK: `// cellar: default = …`

    /// The default a `// cellar: default` annotation's JSON value gives a property stored as
    /// `stored`: a JSON `true`/`false` for Bool, a number for numbers (an integer one for integer
    /// types), a string for String, an ISO 8601 string (`"2024-01-01T00:00:00Z"`) or a number of
    /// seconds since 1970 for Date, a string for UUID, an array of bytes (0…255) for Data and `[UInt8]`,
    /// a number (or a string holding one) for Decimal, read exactly.
    static func value(annotated json: JSONValue, storedAs stored: StoredType) throws(DefaultMismatch) -> DefaultValue {
        let name = stored.swiftName
        switch (json, stored.propertyType) {
        case (.bool(let flag), .bool):
            return .bool(flag)
        case (.number(let text), _) where stored.isInteger:
            guard text.allSatisfy({ $0 == "-" || $0.isASCIIDigit }) else { throw DefaultMismatch("\(text) is not an integer") }
            let negative = text.hasPrefix("-")
            guard let magnitude = UInt64(text.dropFirst(negative ? 1 : 0)) else {
                throw DefaultMismatch("\(text) is outside \(name)'s range \(range(stored))")
            }
            return try integerValue(negative: negative, magnitude: magnitude, text: text, stored: stored)
        case (.number(let text), .float), (.number(let text), .double):
            return try value(.float(text), storedAs: stored)
        case (.string(let text), .string):
            return .string(text)
        case (.number(let text), .date), (.number(let text), .dateNano):
            guard let seconds = Double(text), seconds.isFinite else { throw DefaultMismatch("\(text) is not a finite number of seconds") }
            return .date(seconds: seconds, sinceReferenceDate: false)
        case (.string(let text), .date), (.string(let text), .dateNano):
            guard let seconds = iso8601(text) else {
                throw DefaultMismatch("\"\(text)\" is not an ISO 8601 date and time like \"2024-01-01T00:00:00Z\" (or with a fraction and an offset, \"2024-01-01T12:30:00.5+02:00\")")
            }
            return .date(seconds: seconds, sinceReferenceDate: false)
        case (.string(let text), .uuid):
            guard let uuid = UUID(uuidString: text) else { throw DefaultMismatch("\"\(text)\" is not a UUID like \"E621E1F8-C36C-495A-93FC-0C247A3E6E5F\"") }
            return .uuid(uuid.uuidString)
        case (.number(let text), .decimal), (.string(let text), .decimal):
            guard let decimal = DecimalText.parse(text) else { throw DefaultMismatch("\(text) is not a decimal number (digits, one `.`, an optional exponent)") }
            return .decimal(DecimalText.text(decimal), isLiteral: false)
        case (.array(let elements), .byteVector):
            var bytes: [UInt8] = []
            for element in elements {
                guard case .number(let text) = element, let byte = UInt8(text) else {
                    throw DefaultMismatch("the elements must be integers from 0 to 255")
                }
                bytes.append(byte)
            }
            return .bytes(bytes)
        default:
            throw DefaultMismatch("a \(name) property takes \(annotationForm(stored))")
        }
    }

    /// What `// cellar: default` takes for a stored type, for messages.
    static func annotationForm(_ stored: StoredType) -> String {
        switch stored.propertyType.known {
        case .bool: "`true` or `false`"
        case .float, .double: "a number (`default = 1.5`)"
        case .string: #"a JSON string (`default = "text"`)"#
        case .date, .dateNano: #"an ISO 8601 date and time (`default = "2024-01-01T00:00:00Z"`) or a number of seconds since 1970 (`default = 1704067200`)"#
        case .byteVector: "an array of bytes (`default = []`, `default = [1, 2]`)"
        case .uuid: #"a UUID string (`default = "00000000-0000-0000-0000-000000000000"`)"#
        case .decimal: #"a number, read exactly (`default = 12.50`)"#
        case .byte, .short, .char, .int, .long, .relation, .flex, .geoPoint, .embedded, .embeddedList, .collection, nil:
            "an integer in \(range(stored)) (`default = 0`)"
        }
    }

    /// Seconds since 1970 of `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM:SS` with an optional fraction, followed
    /// by `Z` or `±HH:MM` (a date alone is midnight UTC). Exact: the fraction's digits are parsed
    /// with the whole seconds.
    static func iso8601(_ text: String) -> Double? {
        let chars = Array(text.utf8)
        var index = 0
        func number(_ count: Int) -> Int? {
            guard index + count <= chars.count else { return nil }
            var value = 0
            for char in chars[index..<index + count] {
                guard char >= 0x30 && char <= 0x39 else { return nil }
                value = value * 10 + Int(char - 0x30)
            }
            index += count
            return value
        }
        func expect(_ char: Character) -> Bool {
            guard index < chars.count, chars[index] == char.asciiValue! else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
              (1...12).contains(month), (1...ISO8601Units.daysIn(month: month, year: year)).contains(day) else { return nil }
        let days = Int(ISO8601Units.daysFromCivil(year: Int64(year), month: Int64(month), day: Int64(day)))
        if index == chars.count { return Double(days * 86_400) }
        guard expect("T"), let hour = number(2), expect(":"), let minute = number(2), expect(":"), let second = number(2),
              hour < 24, minute < 60, second < 60 else { return nil }
        var fraction = ""
        if expect(".") {
            let start = index
            while index < chars.count, chars[index] >= 0x30 && chars[index] <= 0x39 { index += 1 }
            // At most nanoseconds, which a Double of a date near today holds to the microsecond anyway.
            guard index > start, index - start <= 9 else { return nil }
            fraction = String(decoding: chars[start..<index], as: UTF8.self)
            if fraction.allSatisfy({ $0 == "0" }) { fraction = "" }
        }
        var offset = 0
        if expect("Z") {
        } else if index < chars.count, chars[index] == UInt8(ascii: "+") || chars[index] == UInt8(ascii: "-") {
            let sign = chars[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let hours = number(2), expect(":"), let minutes = number(2), hours < 24, minutes < 60 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        guard index == chars.count else { return nil }
        let whole = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Double(fraction.isEmpty ? "\(whole)" : whole >= 0 ? "\(whole).\(fraction)" : "-\(-whole - 1).\(complement(fraction))")
    }

    /// The digits of `1 - 0.fraction` (for a negative whole number of seconds: -5 + 0.25 is
    /// -4.75); `fraction` has 1 to 9 digits, not all zeros.
    private static func complement(_ fraction: String) -> String {
        var scale = 1
        for _ in fraction { scale *= 10 }
        let digits = String(scale - Int(fraction)!)
        return String(repeating: "0", count: fraction.count - digits.count) + digits
    }
}

/// A value that is not of the property's stored type, or does not fit it.
struct DefaultMismatch: Error {
    var problem: String
    init(_ problem: String) { self.problem = problem }
}
