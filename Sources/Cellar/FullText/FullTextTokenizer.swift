import Foundation

/// Splits text into the tokens a full-text index stores and a full-text query looks for.
///
/// The rules:
///
/// - A token is a word: a run of letters (general category `L*`), digits and other numbers
///   (`N*`) and marks (`M*`). Everything else (whitespace, punctuation, symbols, emoji, control
///   characters) separates words: `don't` is `don` and `t`, `snake_case` is `snake` and `case`,
///   `3.14` is `3` and `14`. Bytes that are not valid UTF-8 separate words too.
/// - A mark belongs to the word it follows (or to the single-character token of Han or kana it
///   follows); a mark that follows no word (after a space, a symbol or an emoji) is ignored.
/// - Each Han ideograph, Hiragana and Katakana character is a token of its own, with the marks
///   that follow it: those scripts do not put spaces between words. Hangul and every other
///   script form words like Latin.
/// - Tokens are folded, so that search ignores case and diacritics. Each character of a word
///   folds on its own: it is lowercased (Unicode's lowercase mapping, not full case folding:
///   `ß` stays `ß`, and `SS` becomes `ss`), decomposed canonically (NFD), stripped of its
///   combining marks that are diacritics (Unicode's `Diacritic` property: `é` → `e`, `Å` → `a`,
///   `ü` → `u`, `İ` → `i`, `が` → `か`; variation selectors go too; marks that are not
///   diacritics, such as most vowel signs of Indic scripts, stay), and composed again (NFC).
///   Greek final sigma `ς` folds to `σ`.
///   Compatibility forms are not folded (`ﬁ` is not `fi`, full-width `Ａ` is not `a`).
/// - There is no stemming and there are no stop words: `the` is a token like any other.
/// - A token whose folded UTF-8 is longer than `maxTokenBytes` is skipped, not truncated: it
///   is neither indexed nor searchable (a query naming one is rejected by
///   `FullTextQuery.parse(_:)`).
///
/// ASCII text is scanned byte by byte without allocating; other characters are classified and
/// folded through a table of the Basic Multilingual Plane, built once on first use.
@_spi(Testing) public enum FullTextTokenizer {
    /// The longest token, in bytes of folded UTF-8. A longer word is skipped (neither indexed
    /// nor found), not truncated.
    public static let maxTokenBytes = 64

    /// Calls `body` with the folded UTF-8 bytes of each token of `utf8`, in text order, repeated
    /// tokens as often as they occur. The bytes are valid only during the call.
    public static func forEachToken(in utf8: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maxTokenBytes) { buffer in
            var cursor = TokenCursor(input: utf8, output: buffer.baseAddress!)
            while cursor.next() {
                try body(cursor.token)
            }
        }
    }

    /// The folded tokens of `text`, in text order, repeats included.
    public static func tokens(of text: String) -> [String] {
        var text = text
        return text.withUTF8 { bytes in
            var tokens: [String] = []
            forEachToken(in: UnsafeRawBufferPointer(bytes)) { tokens.append(String(decoding: $0, as: UTF8.self)) }
            return tokens
        }
    }

    /// The folded tokens of `text` as bytes and the number of words skipped for being longer than
    /// `maxTokenBytes` (the query parser rejects those).
    static func tokenBytes(of text: Substring) -> (tokens: [[UInt8]], skipped: Int) {
        var text = String(text)
        return text.withUTF8 { bytes in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maxTokenBytes) { buffer in
                var cursor = TokenCursor(input: UnsafeRawBufferPointer(bytes), output: buffer.baseAddress!)
                var tokens: [[UInt8]] = []
                while cursor.next() { tokens.append(Array(cursor.token)) }
                return (tokens, cursor.skipped)
            }
        }
    }
}

/// The tokenizer's state: where it is in the input, and the token being built.
struct TokenCursor {
    private let input: UnsafeRawBufferPointer
    private let output: UnsafeMutablePointer<UInt8>
    private var position = 0
    /// The folded length of the token being built; more than `maxTokenBytes` when it is too long
    /// (only the first `maxTokenBytes` are written).
    private var length = 0
    /// A token is open (it may still be empty: a run of marks that fold to nothing).
    private var open = false
    /// The open token is a single Han or kana character (and its marks).
    private var single = false
    /// The table of the Basic Multilingual Plane, fetched on the first non-ASCII character.
    private var table: FoldTable?
    /// Words skipped for being longer than `maxTokenBytes`.
    private(set) var skipped = 0

    init(input: UnsafeRawBufferPointer, output: UnsafeMutablePointer<UInt8>) {
        self.input = input
        self.output = output
    }

    /// The token `next()` found: valid until the next call.
    var token: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: output, count: length) }

    /// Moves to the next token; false at the end of the input.
    mutating func next() -> Bool {
        length = 0
        open = false
        single = false
        let count = input.count
        while position < count {
            let byte = input[position]
            if byte < 0x80 {
                let lower = byte | 0x20
                let folded: UInt8
                if lower &- 0x61 < 26 {
                    folded = lower
                } else if byte &- 0x30 < 10 {
                    folded = byte
                } else {
                    position += 1
                    if open, close() { return true }
                    continue
                }
                if single, close() { return true }
                open = true
                if length < FullTextTokenizer.maxTokenBytes { output[length] = folded }
                length += 1
                position += 1
                continue
            }
            guard let (scalar, width) = decode(at: position, lead: byte) else {
                position += 1
                if open, close() { return true }
                continue
            }
            let entry: UInt32
            if scalar < 0x1_0000 {
                if table == nil { table = FoldTable.shared }
                entry = table.unsafelyUnwrapped.entries[Int(scalar)]
            } else {
                entry = FoldTable.entry(for: scalar)
            }
            switch entry & FoldTable.kindMask {
            case FoldTable.word:
                if single, close() { return true }
            case FoldTable.mark:
                if !open {
                    position += width
                    continue
                }
            case FoldTable.single:
                if open, close() { return true }
                single = true
            default:
                position += width
                if open, close() { return true }
                continue
            }
            open = true
            position += width
            append(entry, scalar: scalar)
        }
        return open && close()
    }

    /// Ends the open token: true when it is one to report, false when it folded to nothing or
    /// was too long (then the cursor is ready for the next).
    private mutating func close() -> Bool {
        open = false
        single = false
        if length == 0 { return false }
        if length <= FullTextTokenizer.maxTokenBytes { return true }
        skipped += 1
        length = 0
        return false
    }

    /// Appends the fold of a character with its table entry.
    private mutating func append(_ entry: UInt32, scalar: UInt32) {
        if entry & FoldTable.dropped != 0 { return }
        if entry & FoldTable.several != 0 {
            let bytes = FoldTable.folds(of: scalar)
            if length + bytes.count <= FullTextTokenizer.maxTokenBytes {
                for (offset, byte) in bytes.enumerated() { output[length + offset] = byte }
            }
            length += bytes.count
            return
        }
        appendUTF8(entry & FoldTable.valueMask)
    }

    /// Appends one scalar's UTF-8.
    @inline(__always)
    private mutating func appendUTF8(_ value: UInt32) {
        let width = value < 0x80 ? 1 : value < 0x800 ? 2 : value < 0x1_0000 ? 3 : 4
        if length + width <= FullTextTokenizer.maxTokenBytes {
            let out = output + length
            switch width {
            case 1:
                out[0] = UInt8(value)
            case 2:
                out[0] = UInt8(0xC0 | value >> 6)
                out[1] = UInt8(0x80 | value & 0x3F)
            case 3:
                out[0] = UInt8(0xE0 | value >> 12)
                out[1] = UInt8(0x80 | value >> 6 & 0x3F)
                out[2] = UInt8(0x80 | value & 0x3F)
            default:
                out[0] = UInt8(0xF0 | value >> 18)
                out[1] = UInt8(0x80 | value >> 12 & 0x3F)
                out[2] = UInt8(0x80 | value >> 6 & 0x3F)
                out[3] = UInt8(0x80 | value & 0x3F)
            }
        }
        length += width
    }

    /// The scalar of the well-formed UTF-8 sequence at `index` starting with `lead` (not ASCII)
    /// and its width in bytes; nil when the sequence is not well-formed (overlong, a surrogate,
    /// beyond U+10FFFF, truncated, or a stray continuation byte).
    @inline(__always)
    private func decode(at index: Int, lead: UInt8) -> (UInt32, Int)? {
        let count = input.count
        @inline(__always) func continuation(_ offset: Int) -> UInt32? {
            guard index + offset < count else { return nil }
            let byte = input[index + offset]
            return byte & 0xC0 == 0x80 ? UInt32(byte & 0x3F) : nil
        }
        switch lead {
        case 0xC2...0xDF:
            guard let b1 = continuation(1) else { return nil }
            return (UInt32(lead & 0x1F) << 6 | b1, 2)
        case 0xE0...0xEF:
            guard let b1 = continuation(1), let b2 = continuation(2) else { return nil }
            let value = UInt32(lead & 0x0F) << 12 | b1 << 6 | b2
            guard value >= 0x800, !(0xD800...0xDFFF).contains(value) else { return nil }
            return (value, 3)
        case 0xF0...0xF4:
            guard let b1 = continuation(1), let b2 = continuation(2), let b3 = continuation(3) else { return nil }
            let value = UInt32(lead & 0x07) << 18 | b1 << 12 | b2 << 6 | b3
            guard value >= 0x1_0000, value <= 0x10_FFFF else { return nil }
            return (value, 4)
        default:
            return nil
        }
    }
}

/// How each character of the Basic Multilingual Plane tokenizes and folds, computed once; the
/// planes above are computed character by character (they are rare in text).
///
/// An entry holds the kind in `kindMask` (separator, word character, mark, or a character that is
/// a token of its own) and the fold: nothing (`dropped`), one scalar (`valueMask`), or several
/// (`several`: computed again when met; rare).
final class FoldTable: Sendable {
    static let kindMask: UInt32 = 0x0300_0000
    static let separator: UInt32 = 0
    static let word: UInt32 = 0x0100_0000
    static let mark: UInt32 = 0x0200_0000
    static let single: UInt32 = 0x0300_0000
    static let dropped: UInt32 = 0x0400_0000
    static let several: UInt32 = 0x0800_0000
    static let valueMask: UInt32 = 0x001F_FFFF

    static let shared = FoldTable()

    /// One entry per scalar value below U+10000 (surrogates are separators).
    let entries: [UInt32]

    private init() {
        var entries = [UInt32](repeating: 0, count: 0x1_0000)
        for value in UInt32(0)..<0x1_0000 {
            entries[Int(value)] = FoldTable.entry(for: value)
        }
        self.entries = entries
    }

    /// The entry of scalar value `value`.
    static func entry(for value: UInt32) -> UInt32 {
        if value < 0x80 {
            let byte = UInt8(value)
            let lower = byte | 0x20
            if lower &- 0x61 < 26 { return word | UInt32(lower) }
            if byte &- 0x30 < 10 { return word | value }
            return separator
        }
        // Han and Hangul syllables fold to themselves (Hangul decomposes and composes again);
        // answering them here keeps building the table quick.
        if (0x4E00...0x9FFF).contains(value) || (0x3400...0x4DBF).contains(value) { return single | value }
        if (0xAC00...0xD7A3).contains(value) { return word | value }
        guard let scalar = Unicode.Scalar(value) else { return separator }
        let kind: UInt32
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber:
            kind = isSingleTokenCharacter(value) ? single : word
        case .nonspacingMark, .spacingMark, .enclosingMark:
            kind = mark
        default:
            return separator
        }
        // Supplementary Han other than the compatibility ideographs folds to itself.
        if kind == single, value >= 0x2_0000, !(0x2_F800...0x2_FA1F).contains(value) { return single | value }
        let folded = fold(scalar)
        switch folded.count {
        case 0: return kind | dropped
        case 1: return kind | folded[0].value
        default: return kind | several
        }
    }

    /// The UTF-8 of the fold of `scalar` when it is several scalars.
    static func folds(of scalar: UInt32) -> [UInt8] {
        guard let scalar = Unicode.Scalar(scalar) else { return [] }
        var bytes: [UInt8] = []
        for folded in fold(scalar) { bytes.append(contentsOf: String(folded).utf8) }
        return bytes
    }

    /// Han ideographs, Hiragana and Katakana: each is a token of its own.
    static func isSingleTokenCharacter(_ value: UInt32) -> Bool {
        switch value {
        case 0x3005...0x3007, 0x3021...0x3029, 0x3038...0x303B,   // ideographic iteration marks and numbers
             0x3040...0x309F,                                      // Hiragana
             0x30A0...0x30FF, 0x31F0...0x31FF, 0xFF66...0xFF9F,    // Katakana (and its extensions, half-width)
             0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF,    // Han (extension A, unified, compatibility)
             0x1AFF0...0x1B16F,                                    // kana supplements and extensions
             0x20000...0x3FFFF:                                    // Han in the supplementary planes
            true
        default:
            false
        }
    }

    /// The fold of one character: lowercased (unless `lowercase` is false: what a query that
    /// ignores diacritics but not case compares), decomposed, stripped of diacritic marks, composed.
    static func fold(_ scalar: Unicode.Scalar, lowercase: Bool = true) -> [Unicode.Scalar] {
        let lowered = (lowercase ? scalar.properties.lowercaseMapping : String(scalar)).decomposedStringWithCanonicalMapping
        var kept = String.UnicodeScalarView()
        for part in lowered.unicodeScalars {
            switch part.properties.generalCategory {
            case .nonspacingMark, .spacingMark, .enclosingMark:
                if !part.properties.isDiacritic && !part.properties.isVariationSelector { kept.append(part) }
            default:
                kept.append(lowercase && part == "ς" ? "σ" : part)
            }
        }
        return Array(String(kept).precomposedStringWithCanonicalMapping.unicodeScalars)
    }
}
