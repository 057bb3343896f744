/// A strict JSON parser (RFC 8259) from UTF-8 bytes to `JSONValue`, for the model file.
///
/// It keeps what a round trip must not change — the order of an object's members and the text of
/// each number — and rejects everything RFC 8259 does not allow, plus what a model file must not
/// contain: invalid UTF-8, lone surrogates (`\uD800` without its pair), control characters in
/// strings, numbers outside the grammar (`01`, `1.`, `.5`, `+1`), trailing commas, anything after
/// the value, a byte order mark, duplicate member names (compared byte for byte) and nesting deeper
/// than `maximumDepth`.
///
/// It never traps on any input and takes time linear in the input's size. Errors are
/// `CellarError.schema` with a message naming the source, the problem and its line and column,
/// e.g. `model.json: expected ',' or '}' after an object member, found '"' at line 7 column 5`.
@_spi(Testing) @_spi(Sync) public enum JSONParser {
    /// The deepest nesting of arrays and objects accepted (the model file needs 5).
    public static let maximumDepth = 64

    /// Parses one JSON value (with optional whitespace around it) from `bytes`.
    ///
    /// - Parameters:
    ///   - bytes: the UTF-8 text of one JSON value.
    ///   - source: how to name the input in error messages, usually the file name.
    /// - Throws: `CellarError.schema` naming the problem with its line and column.
    public static func parse(_ bytes: [UInt8], source: String = "JSON") throws -> JSONValue {
        try bytes.withUnsafeBytes { try parse($0, source: source) }
    }

    /// Parses one JSON value (with optional whitespace around it) from the bytes in `buffer`.
    ///
    /// - Parameters:
    ///   - buffer: the UTF-8 text of one JSON value.
    ///   - source: how to name the input in error messages, usually the file name.
    /// - Throws: `CellarError.schema` naming the problem with its line and column.
    public static func parse(_ buffer: UnsafeRawBufferPointer, source: String = "JSON") throws -> JSONValue {
        var parser = Parser(input: buffer, source: source)
        return try parser.parseDocument()
    }
}

private let quote: UInt8 = 0x22       // "
private let backslash: UInt8 = 0x5C   // \
private let comma: UInt8 = 0x2C       // ,
private let colon: UInt8 = 0x3A       // :
private let openBrace: UInt8 = 0x7B   // {
private let closeBrace: UInt8 = 0x7D  // }
private let openBracket: UInt8 = 0x5B // [
private let closeBracket: UInt8 = 0x5D // ]
private let minus: UInt8 = 0x2D       // -
private let plus: UInt8 = 0x2B        // +
private let dot: UInt8 = 0x2E         // .
private let zero: UInt8 = 0x30        // 0
private let nine: UInt8 = 0x39        // 9

private struct Parser {
    let input: UnsafeRawBufferPointer
    let source: String
    var pos = 0
    /// The bytes of the string being read (reused between strings).
    var scratch: [UInt8] = []

    init(input: UnsafeRawBufferPointer, source: String) {
        self.input = input
        self.source = source
    }

    /// The byte at `pos`, or nil at the end.
    var current: UInt8? { pos < input.count ? input[pos] : nil }

    mutating func parseDocument() throws -> JSONValue {
        if input.count >= 3 && input[0] == 0xEF && input[1] == 0xBB && input[2] == 0xBF {
            throw error("the file starts with a byte order mark (BOM); save it as UTF-8 without a BOM", at: 0)
        }
        skipWhitespace()
        if pos == input.count {
            throw error(input.isEmpty ? "no JSON value: the input is empty" : "no JSON value: the input is only whitespace", at: pos)
        }
        let value = try parseValue(depth: 0)
        skipWhitespace()
        if let byte = current {
            throw error("unexpected \(describe(byte)) after the end of the JSON value (only whitespace may follow it)", at: pos)
        }
        return value
    }

    mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
            pos += 1
        }
    }

    /// One value at `pos` (whitespace skipped already). `depth` is the number of arrays and
    /// objects around it.
    mutating func parseValue(depth: Int) throws -> JSONValue {
        guard let byte = current else {
            throw error("unexpected end of the input: expected a value", at: pos)
        }
        switch byte {
        case openBrace:
            return try parseObject(depth: depth + 1)
        case openBracket:
            return try parseArray(depth: depth + 1)
        case quote:
            return .string(try parseString())
        case 0x74: // t
            try parseLiteral("true")
            return .bool(true)
        case 0x66: // f
            try parseLiteral("false")
            return .bool(false)
        case 0x6E: // n
            try parseLiteral("null")
            return .null
        case minus, zero...nine:
            return .number(try parseNumber())
        default:
            throw error("expected a value (an object, array, string, number, true, false or null), found \(describe(byte))", at: pos)
        }
    }

    mutating func checkDepth(_ depth: Int) throws {
        if depth > JSONParser.maximumDepth {
            throw error("arrays and objects are nested deeper than \(JSONParser.maximumDepth) levels", at: pos)
        }
    }

    mutating func parseObject(depth: Int) throws -> JSONValue {
        try checkDepth(depth)
        let opened = pos
        pos += 1
        skipWhitespace()
        if current == closeBrace {
            pos += 1
            return .object([])
        }
        var members: [JSONMember] = []
        var seen = Set<[UInt8]>()
        while true {
            skipWhitespace()
            guard let byte = current else {
                throw error("unexpected end of the input: the object opened at \(place(opened)) is not closed", at: pos)
            }
            guard byte == quote else {
                if byte == closeBrace && !members.isEmpty {
                    throw error("a comma before '}' (trailing commas are not allowed)", at: pos)
                }
                throw error("expected a member name in double quotes, found \(describe(byte))", at: pos)
            }
            let nameStart = pos
            let name = try parseString()
            if !seen.insert(scratch).inserted {
                throw error("the member name \(quoted(name)) appears twice in the same object", at: nameStart)
            }
            skipWhitespace()
            guard let separator = current else {
                throw error("unexpected end of the input: expected ':' after the member name \(quoted(name))", at: pos)
            }
            guard separator == colon else {
                throw error("expected ':' after the member name \(quoted(name)), found \(describe(separator))", at: pos)
            }
            pos += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            members.append(JSONMember(name, value))
            skipWhitespace()
            guard let next = current else {
                throw error("unexpected end of the input: the object opened at \(place(opened)) is not closed", at: pos)
            }
            if next == comma {
                pos += 1
            } else if next == closeBrace {
                pos += 1
                return .object(members)
            } else {
                throw error("expected ',' or '}' after an object member, found \(describe(next))", at: pos)
            }
        }
    }

    mutating func parseArray(depth: Int) throws -> JSONValue {
        try checkDepth(depth)
        let opened = pos
        pos += 1
        skipWhitespace()
        if current == closeBracket {
            pos += 1
            return .array([])
        }
        var elements: [JSONValue] = []
        while true {
            skipWhitespace()
            guard let byte = current else {
                throw error("unexpected end of the input: the array opened at \(place(opened)) is not closed", at: pos)
            }
            if byte == closeBracket {
                throw error("a comma before ']' (trailing commas are not allowed)", at: pos)
            }
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard let next = current else {
                throw error("unexpected end of the input: the array opened at \(place(opened)) is not closed", at: pos)
            }
            if next == comma {
                pos += 1
            } else if next == closeBracket {
                pos += 1
                return .array(elements)
            } else {
                throw error("expected ',' or ']' after an array element, found \(describe(next))", at: pos)
            }
        }
    }

    mutating func parseLiteral(_ word: StaticString) throws {
        let start = pos
        let count = word.utf8CodeUnitCount
        var matched = 0
        word.withUTF8Buffer { literal in
            while matched < count, pos + matched < input.count, input[pos + matched] == literal[matched] {
                matched += 1
            }
        }
        guard matched == count else {
            throw error("invalid literal (expected true, false or null)", at: start)
        }
        pos += count
    }

    /// A number per RFC 8259's grammar, returned as its text.
    mutating func parseNumber() throws -> String {
        let start = pos
        if current == minus {
            pos += 1
        }
        guard let first = current else {
            throw error("unexpected end of the input: expected a digit after '-'", at: pos)
        }
        if first == zero {
            pos += 1
            if let next = current, isDigit(next) {
                throw error("a number must not start with 0 followed by more digits (leading zeros are not allowed)", at: start)
            }
        } else if isDigit(first) {
            skipDigits()
        } else {
            throw error("expected a digit after '-', found \(describe(first))", at: pos)
        }
        if current == dot {
            pos += 1
            guard let next = current, isDigit(next) else {
                throw error("expected a digit after the decimal point", at: pos)
            }
            skipDigits()
        }
        if current == 0x65 || current == 0x45 { // e E
            pos += 1
            if current == plus || current == minus {
                pos += 1
            }
            guard let next = current, isDigit(next) else {
                throw error("expected a digit in the exponent", at: pos)
            }
            skipDigits()
        }
        return String(decoding: UnsafeRawBufferPointer(rebasing: input[start..<pos]), as: UTF8.self)
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= zero && byte <= nine }

    mutating func skipDigits() {
        while let byte = current, isDigit(byte) {
            pos += 1
        }
    }

    /// A string at `pos` (at its opening quote). Its UTF-8 bytes are left in `scratch`.
    mutating func parseString() throws -> String {
        let opened = pos
        pos += 1
        scratch.removeAll(keepingCapacity: true)
        while true {
            guard let byte = current else {
                throw error("unexpected end of the input: the string opened at \(place(opened)) is not closed", at: pos)
            }
            switch byte {
            case quote:
                pos += 1
                return String(decoding: scratch, as: UTF8.self)
            case backslash:
                try parseEscape()
            case 0x00..<0x20:
                throw error("control character U+\(hex(byte, digits: 4)) in a string (write it as an escape: \\n, \\t, \\r, \\b, \\f or \\u\(hex(byte, digits: 4)))", at: pos)
            case 0x20..<0x80:
                scratch.append(byte)
                pos += 1
            default:
                try copyUTF8Sequence(lead: byte)
            }
        }
    }

    /// One escape sequence at `pos` (at its backslash), appended to `scratch` as UTF-8.
    mutating func parseEscape() throws {
        let start = pos
        pos += 1
        guard let kind = current else {
            throw error("unexpected end of the input in an escape sequence", at: pos)
        }
        pos += 1
        switch kind {
        case quote: scratch.append(quote)
        case backslash: scratch.append(backslash)
        case 0x2F: scratch.append(0x2F) // /
        case 0x62: scratch.append(0x08) // b
        case 0x66: scratch.append(0x0C) // f
        case 0x6E: scratch.append(0x0A) // n
        case 0x72: scratch.append(0x0D) // r
        case 0x74: scratch.append(0x09) // t
        case 0x75: // u
            let unit = try parseHex4(escapeStart: start)
            switch unit {
            case 0xD800...0xDBFF:
                // A high surrogate: must be followed by an escaped low surrogate.
                let second = pos
                guard pos + 1 < input.count, input[pos] == backslash, input[pos + 1] == 0x75 else {
                    throw error("lone surrogate \\u\(hex(unit, digits: 4)): a high surrogate must be followed by a low one (\\uDC00 to \\uDFFF)", at: start)
                }
                pos += 2
                let low = try parseHex4(escapeStart: second)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw error("lone surrogate \\u\(hex(unit, digits: 4)): it is followed by \\u\(hex(low, digits: 4)), not by a low surrogate (\\uDC00 to \\uDFFF)", at: start)
                }
                appendScalar(0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00))
            case 0xDC00...0xDFFF:
                throw error("lone surrogate \\u\(hex(unit, digits: 4)): a low surrogate without a high one before it", at: start)
            default:
                appendScalar(UInt32(unit))
            }
        default:
            throw error("invalid escape sequence \\\(describeBare(kind)) (valid: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)", at: start)
        }
    }

    /// Four hex digits at `pos` (after `\u`).
    mutating func parseHex4(escapeStart: Int) throws -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard let byte = current else {
                throw error("unexpected end of the input in a \\u escape (it needs four hex digits)", at: pos)
            }
            let digit: UInt8
            switch byte {
            case zero...nine: digit = byte - zero
            case 0x41...0x46: digit = byte - 0x41 + 10 // A-F
            case 0x61...0x66: digit = byte - 0x61 + 10 // a-f
            default:
                throw error("a \\u escape needs four hex digits, found \(describe(byte))", at: pos)
            }
            value = value << 4 | UInt16(digit)
            pos += 1
        }
        return value
    }

    mutating func appendScalar(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(0xC0 | UInt8(scalar >> 6))
            scratch.append(0x80 | UInt8(scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(0xE0 | UInt8(scalar >> 12))
            scratch.append(0x80 | UInt8((scalar >> 6) & 0x3F))
            scratch.append(0x80 | UInt8(scalar & 0x3F))
        default:
            scratch.append(0xF0 | UInt8(scalar >> 18))
            scratch.append(0x80 | UInt8((scalar >> 12) & 0x3F))
            scratch.append(0x80 | UInt8((scalar >> 6) & 0x3F))
            scratch.append(0x80 | UInt8(scalar & 0x3F))
        }
    }

    /// A multi-byte UTF-8 sequence at `pos` (lead byte `lead` ≥ 0x80), checked per Unicode's
    /// table of well-formed sequences (no overlong forms, no surrogates, nothing above U+10FFFF)
    /// and copied to `scratch`.
    mutating func copyUTF8Sequence(lead: UInt8) throws {
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default:
            throw error("invalid UTF-8: byte 0x\(hex(lead, digits: 2)) cannot start a character; the file must be UTF-8", at: pos)
        }
        for offset in 1..<length {
            let range = offset == 1 ? secondRange : 0x80...0xBF
            guard pos + offset < input.count, range.contains(input[pos + offset]) else {
                throw error("invalid UTF-8: the character starting with byte 0x\(hex(lead, digits: 2)) is cut short or malformed; the file must be UTF-8", at: pos)
            }
        }
        for offset in 0..<length {
            scratch.append(input[pos + offset])
        }
        pos += length
    }

    // MARK: Messages

    func error(_ reason: String, at offset: Int) -> CellarError {
        .schema("\(source): \(reason) at \(place(offset))")
    }

    /// "line L column C" of a byte offset (both 1-based; columns count characters, i.e. UTF-8
    /// lead bytes).
    func place(_ offset: Int) -> String {
        var line = 1
        var column = 1
        var index = 0
        let end = min(offset, input.count)
        while index < end {
            let byte = input[index]
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
            index += 1
        }
        return "line \(line) column \(column)"
    }

    func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F {
            return byte == 0x27 ? "\"'\"" : "'\(Character(Unicode.Scalar(byte)))'"
        }
        switch byte {
        case 0x20: return "a space"
        case 0x0A: return "a line break"
        case 0x09: return "a tab"
        default: return "byte 0x\(hex(byte, digits: 2))"
        }
    }

    func describeBare(_ byte: UInt8) -> String {
        byte >= 0x21 && byte < 0x7F ? String(Character(Unicode.Scalar(byte))) : "(byte 0x\(hex(byte, digits: 2)))"
    }

    func quoted(_ name: String) -> String {
        jsonQuotedForMessage(name)
    }
}

/// `value` as a JSON string literal for an error message, shortened to about 60 characters.
func jsonQuotedForMessage(_ value: String) -> String {
    var shown = value
    if value.unicodeScalars.count > 60 {
        shown = String(String.UnicodeScalarView(value.unicodeScalars.prefix(57))) + "..."
    }
    return String(decoding: JSONWriter.bytes(.string(shown)), as: UTF8.self)
}

/// `value` in upper-case hex with at least `digits` digits.
private func hex<T: BinaryInteger>(_ value: T, digits: Int) -> String {
    let text = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, digits - text.count)) + text
}
