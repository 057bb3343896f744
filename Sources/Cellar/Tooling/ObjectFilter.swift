import Foundation

/// A condition on the objects `ObjectDump` decodes, parsed from text: what `cellar dump --where`
/// takes. It is evaluated on each decoded object (a scan; no index is used), so it works on any
/// store with its stored model alone.
///
/// ```
/// title startsWith "Shop" and (status == 1 or tags contains "home")
/// place.city == 'Lyon' and not text is null
/// ```
/// - comparisons: `==`, `!=`, `<`, `<=`, `>`, `>=` (numbers as numbers, text as text, dates as
///   their ISO 8601 text), `startsWith`, `endsWith`, `contains` (text in text, or an element of a
///   list or set), `is null`, `is not null`;
/// - values: numbers, `"text"` or `'text'` (with `\"`, `\'`, `\\` escapes), `true`, `false`, `null`;
/// - `and` binds tighter than `or`; `not` and parentheses as usual;
/// - a property is named as `dump` shows it; an embedded object's with a dot (`place.city`).
///
/// A property no object of the entity has throws `illegalArgument` at parse time when the names
/// are known (`knownNames`); a comparison of values of different kinds is false.
package indirect enum ObjectFilter: Equatable {
    case all([ObjectFilter])
    case any([ObjectFilter])
    case not(ObjectFilter)
    case compare(path: [String], op: Operator, value: JSONValue)
    case isNull(path: [String])

    package enum Operator: String, Equatable, CaseIterable {
        case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
        case startsWith, endsWith, contains
    }

    /// Parses `text`. `knownNames`: the names a path may start with (nil: any).
    package static func parse(_ text: String, knownNames: Set<String>? = nil) throws -> ObjectFilter {
        var parser = Parser(text: Array(text.unicodeScalars), knownNames: knownNames)
        let filter = try parser.expression()
        parser.skipSpace()
        guard parser.atEnd else { throw parser.error("unexpected \(parser.rest)") }
        return filter
    }

    /// Whether `object` (an `ObjectDump` object) matches.
    package func matches(_ object: JSONValue) -> Bool {
        switch self {
        case .all(let filters): return filters.allSatisfy { $0.matches(object) }
        case .any(let filters): return filters.contains { $0.matches(object) }
        case .not(let filter): return !filter.matches(object)
        case .isNull(let path): return Self.value(at: path, in: object) == .null
        case .compare(let path, let op, let value):
            return Self.compare(Self.value(at: path, in: object), op, value)
        }
    }

    private static func value(at path: [String], in object: JSONValue) -> JSONValue {
        var current = object
        for name in path {
            guard case .object(let members) = current, let member = members.first(where: { $0.name == name }) else { return .null }
            current = member.value
        }
        return current
    }

    private static func compare(_ left: JSONValue, _ op: Operator, _ right: JSONValue) -> Bool {
        switch op {
        case .contains:
            if case .array(let elements) = left { return elements.contains { compare($0, .equal, right) } }
            if case .string(let text) = left, case .string(let part) = right { return text.contains(part) }
            return false
        case .startsWith, .endsWith:
            guard case .string(let text) = left, case .string(let part) = right else { return false }
            return op == .startsWith ? text.hasPrefix(part) : text.hasSuffix(part)
        default:
            break
        }
        let order: Int?
        switch (left, right) {
        case (.number(let a), .number(let b)): order = numericOrder(a, b)
        case (.string(let a), .string(let b)): order = a == b ? 0 : (a < b ? -1 : 1)
        case (.bool(let a), .bool(let b)): order = a == b ? 0 : (!a ? -1 : 1)
        case (.null, .null): order = 0
        default: order = nil
        }
        guard let order else { return op == .notEqual }
        switch op {
        case .equal: return order == 0
        case .notEqual: return order != 0
        case .less: return order < 0
        case .lessOrEqual: return order <= 0
        case .greater: return order > 0
        case .greaterOrEqual: return order >= 0
        default: return false
        }
    }

    /// Compares two numbers given as text: exactly when both are integers (64-bit ids and
    /// counters do not fit a Double) or decimals of up to 38 digits (Decimal properties), else as
    /// Doubles.
    private static func numericOrder(_ a: String, _ b: String) -> Int? {
        if let x = Int64(a), let y = Int64(b) { return x == y ? 0 : (x < y ? -1 : 1) }
        if let x = UInt64(a), let y = UInt64(b) { return x == y ? 0 : (x < y ? -1 : 1) }
        if let x = DecimalText.parse(a), let y = DecimalText.parse(b), !x.isNaN, !y.isNaN { return x == y ? 0 : (x < y ? -1 : 1) }
        guard let x = Double(a), let y = Double(b) else { return nil }
        return x == y ? 0 : (x < y ? -1 : 1)
    }

    /// A recursive-descent parser over the filter's text.
    private struct Parser {
        let text: [Unicode.Scalar]
        let knownNames: Set<String>?
        var position = 0

        var atEnd: Bool { position >= text.count }
        var rest: String { "\"" + String(String.UnicodeScalarView(text[position...].prefix(20))) + "\"" }

        func error(_ message: String) -> CellarError {
            CellarError.illegalArgument("filter, at character \(position + 1): \(message)")
        }

        mutating func skipSpace() {
            while !atEnd, text[position].properties.isWhitespace { position += 1 }
        }

        /// The word at the position (letters, digits, `_`, `.`), consumed when `consume`.
        mutating func word(consume: Bool = true) -> String? {
            skipSpace()
            var end = position
            while end < text.count, text[end].properties.isAlphabetic || ("0"..."9").contains(text[end]) || text[end] == "_" || text[end] == "." {
                end += 1
            }
            guard end > position else { return nil }
            let word = String(String.UnicodeScalarView(text[position..<end]))
            if consume { position = end }
            return word
        }

        mutating func keyword(_ names: String...) -> Bool {
            let start = position
            if let word = word(), names.contains(word.lowercased()) { return true }
            position = start
            return false
        }

        mutating func symbol(_ symbol: String) -> Bool {
            skipSpace()
            let scalars = Array(symbol.unicodeScalars)
            guard position + scalars.count <= text.count, Array(text[position..<(position + scalars.count)]) == scalars else { return false }
            position += scalars.count
            return true
        }

        mutating func expression() throws -> ObjectFilter {
            var terms = [try term()]
            while keyword("or") || symbol("||") { terms.append(try term()) }
            return terms.count == 1 ? terms[0] : .any(terms)
        }

        mutating func term() throws -> ObjectFilter {
            var factors = [try factor()]
            while keyword("and") || symbol("&&") { factors.append(try factor()) }
            return factors.count == 1 ? factors[0] : .all(factors)
        }

        mutating func factor() throws -> ObjectFilter {
            if symbol("(") {
                let inner = try expression()
                guard symbol(")") else { throw error("expected )") }
                return inner
            }
            if keyword("not") || symbol("!") && !symbol("=") { return .not(try factor()) }
            return try comparison()
        }

        mutating func comparison() throws -> ObjectFilter {
            guard let name = word(), let first = name.unicodeScalars.first, first.properties.isAlphabetic || first == "_" else {
                throw error(atEnd ? "expected a property name, found the end" : "expected a property name, found \(rest)")
            }
            let path = name.split(separator: ".").map(String.init)
            if let knownNames, !knownNames.contains(path[0]) {
                throw error("no property \(path[0]) (there are \(knownNames.sorted().joined(separator: ", ")))")
            }
            if keyword("is") {
                if keyword("not") {
                    guard keyword("null") else { throw error("expected null after is not") }
                    return .not(.isNull(path: path))
                }
                guard keyword("null") else { throw error("expected null after is") }
                return .isNull(path: path)
            }
            let op: Operator
            if let word = word(consume: false), let named = Operator.allCases.first(where: { $0.rawValue.lowercased() == word.lowercased() && $0.rawValue.first!.isLetter }) {
                _ = self.word()
                op = named
            } else if let symbolic = ["==", "!=", "<=", ">=", "<", ">", "="].first(where: { symbol($0) }) {
                op = symbolic == "=" ? .equal : Operator(rawValue: symbolic)!
            } else {
                throw error("expected a comparison (==, !=, <, <=, >, >=, startsWith, endsWith, contains, is null) after \(name)")
            }
            return .compare(path: path, op: op, value: try literal())
        }

        mutating func literal() throws -> JSONValue {
            skipSpace()
            guard !atEnd else { throw error("expected a value, found the end") }
            let quote = text[position]
            if quote == "\"" || quote == "'" {
                position += 1
                var scalars = String.UnicodeScalarView()
                while !atEnd, text[position] != quote {
                    if text[position] == "\\", position + 1 < text.count { position += 1 }
                    scalars.append(text[position])
                    position += 1
                }
                guard !atEnd else { throw error("a text value is not closed") }
                position += 1
                return .string(String(scalars))
            }
            let start = position
            while !atEnd, "+-.0123456789eE".unicodeScalars.contains(text[position]) { position += 1 }
            if position > start {
                let number = String(String.UnicodeScalarView(text[start..<position]))
                guard Double(number) != nil else { throw error("\(number) is not a number") }
                return .number(number.hasPrefix("+") ? String(number.dropFirst()) : number)
            }
            if keyword("true") { return .bool(true) }
            if keyword("false") { return .bool(false) }
            if keyword("null") { return .null }
            throw error("expected a value (a number, \"text\", true, false or null), found \(rest)")
        }
    }
}
