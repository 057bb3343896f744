/// Writes a `JSONValue` as UTF-8 text in the layout of ObjectBox's model file.
///
/// The layout: two spaces of indentation per level, one member or element per line,
/// `"name": value` with one space after the colon, `[]` and `{}` for empty arrays and objects,
/// no trailing newline (the model file adds one). Members and elements are written in the order
/// they have (sorting is the caller's choice), numbers exactly as their text, strings with the
/// minimal escaping: `\"`, `\\`, and control characters as `\n`, `\t`, `\r`, `\b`, `\f` or `\u00XX`;
/// everything else, `/` and non-ASCII characters included, as its UTF-8 bytes.
///
/// The output depends only on the value, so writing is deterministic. A `.number` built in code is
/// written as it is, without checking that it is valid JSON.
@_spi(Testing) @_spi(Sync) @_spi(Tools) public enum JSONWriter {
    /// `value` as UTF-8 text (without a trailing newline).
    public static func bytes(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        write(value, indent: 0, into: &out)
        return out
    }

    /// `value` as text (without a trailing newline).
    public static func string(_ value: JSONValue) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    /// `value` on one line, without spaces (JSON lines).
    public static func compact(_ value: JSONValue) -> String {
        var out: [UInt8] = []
        writeCompact(value, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func writeCompact(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .array(let elements):
            out.append(0x5B)
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(0x2C) }
                writeCompact(element, into: &out)
            }
            out.append(0x5D)
        case .object(let members):
            out.append(0x7B)
            for (index, member) in members.enumerated() {
                if index > 0 { out.append(0x2C) }
                writeString(member.name, into: &out)
                out.append(0x3A)
                writeCompact(member.value, into: &out)
            }
            out.append(0x7D)
        default:
            write(value, indent: 0, into: &out)
        }
    }

    /// Appends `value` to `out`; `indent` is the indentation (in spaces) of the line it starts on.
    static func write(_ value: JSONValue, indent: Int, into out: inout [UInt8]) {
        switch value {
        case .null:
            out.append(contentsOf: "null".utf8)
        case .bool(let flag):
            out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let text):
            out.append(contentsOf: text.utf8)
        case .string(let text):
            writeString(text, into: &out)
        case .array(let elements):
            if elements.isEmpty {
                out.append(contentsOf: "[]".utf8)
                return
            }
            out.append(contentsOf: "[\n".utf8)
            for (index, element) in elements.enumerated() {
                out.append(contentsOf: repeatElement(0x20, count: indent + 2))
                write(element, indent: indent + 2, into: &out)
                if index < elements.count - 1 { out.append(0x2C) }
                out.append(0x0A)
            }
            out.append(contentsOf: repeatElement(0x20, count: indent))
            out.append(0x5D)
        case .object(let members):
            if members.isEmpty {
                out.append(contentsOf: "{}".utf8)
                return
            }
            out.append(contentsOf: "{\n".utf8)
            for (index, member) in members.enumerated() {
                out.append(contentsOf: repeatElement(0x20, count: indent + 2))
                writeString(member.name, into: &out)
                out.append(contentsOf: ": ".utf8)
                write(member.value, indent: indent + 2, into: &out)
                if index < members.count - 1 { out.append(0x2C) }
                out.append(0x0A)
            }
            out.append(contentsOf: repeatElement(0x20, count: indent))
            out.append(0x7D)
        }
    }

    /// Appends `text` as a JSON string literal with the minimal escaping.
    static func writeString(_ text: String, into out: inout [UInt8]) {
        out.append(0x22)
        for byte in text.utf8 {
            switch byte {
            case 0x22: out.append(contentsOf: [0x5C, 0x22])  // \"
            case 0x5C: out.append(contentsOf: [0x5C, 0x5C])  // \\
            case 0x0A: out.append(contentsOf: [0x5C, 0x6E])  // \n
            case 0x09: out.append(contentsOf: [0x5C, 0x74])  // \t
            case 0x0D: out.append(contentsOf: [0x5C, 0x72])  // \r
            case 0x08: out.append(contentsOf: [0x5C, 0x62])  // \b
            case 0x0C: out.append(contentsOf: [0x5C, 0x66])  // \f
            case 0x00..<0x20:
                let digits: [UInt8] = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
            default:
                out.append(byte)
            }
        }
        out.append(0x22)
    }
}
