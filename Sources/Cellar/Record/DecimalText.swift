import Foundation

/// Decimals to and from their exact text, without a locale: what dumps, exports, imports, sync
/// and the generator's default values write and read. `Decimal(string:)` rounds a number with
/// more digits than it holds; `parse` refuses it instead, so a value read from text is the one
/// written.
@_spi(CellarGenerated) @_spi(Sync) public enum DecimalText {
    /// `value`'s exact text: plain digits (`-12.5`, `0.001`, `1200`) while the number's magnitude
    /// is between 10^-20 and 10^40, else one digit, a fraction and an exponent (`1.5E+45`); `NaN`.
    /// `parse` reads it back to the same value.
    public static func text(_ value: Decimal) -> String {
        if value.isNaN { return "NaN" }
        let stored = DecimalEncoding.bytes(value)
        return stored.withUnsafeBytes { raw in
            guard raw[0] != DecimalEncoding.zeroClass else { return "0" }
            var digits = (0..<DecimalEncoding.maxDigits).map { 0x30 + DecimalEncoding.digit(raw, $0) }
            while digits.last == 0x30 { digits.removeLast() }
            // The value is 0.<digits> × 10^adjusted.
            let adjusted = DecimalEncoding.adjustedExponent(raw)
            var text = raw[0] == DecimalEncoding.negativeClass ? "-" : ""
            let count = digits.count
            if adjusted > 0 && adjusted <= 40 {
                if adjusted >= count {
                    text += String(decoding: digits, as: UTF8.self) + String(repeating: "0", count: adjusted - count)
                } else {
                    text += String(decoding: digits[..<adjusted], as: UTF8.self) + "." + String(decoding: digits[adjusted...], as: UTF8.self)
                }
            } else if adjusted <= 0 && adjusted > -20 {
                text += "0." + String(repeating: "0", count: -adjusted) + String(decoding: digits, as: UTF8.self)
            } else {
                text += String(decoding: digits[..<1], as: UTF8.self)
                if count > 1 { text += "." + String(decoding: digits[1...], as: UTF8.self) }
                text += "E" + (adjusted - 1 >= 0 ? "+" : "") + String(adjusted - 1)
            }
            return text
        }
    }

    /// The decimal `text` writes exactly: an optional sign, digits with at most one `.`, and an
    /// optional exponent (`e` or `E`, a sign, digits), as JSON and PostgreSQL write numbers; or
    /// `NaN`. Nil for anything else, and for a number a `Decimal` cannot hold exactly (more than
    /// its 128-bit significand's digits, or an exponent beyond its range).
    public static func parse(_ text: String) -> Decimal? {
        if text == "NaN" { return .nan }
        let chars = Array(text.utf8)
        var index = 0
        var negative = false
        if index < chars.count, chars[index] == 0x2D || chars[index] == 0x2B {
            negative = chars[index] == 0x2D
            index += 1
        }
        var digits: [UInt8] = []   // every digit of the significand, as values 0…9
        var fractionDigits = 0
        var sawPoint = false
        while index < chars.count {
            let char = chars[index]
            if char >= 0x30 && char <= 0x39 {
                digits.append(char - 0x30)
                if sawPoint { fractionDigits += 1 }
            } else if char == 0x2E && !sawPoint {
                sawPoint = true
            } else {
                break
            }
            index += 1
        }
        guard !digits.isEmpty else { return nil }
        var exponent = 0
        if index < chars.count, chars[index] == 0x65 || chars[index] == 0x45 {
            index += 1
            var exponentNegative = false
            if index < chars.count, chars[index] == 0x2D || chars[index] == 0x2B {
                exponentNegative = chars[index] == 0x2D
                index += 1
            }
            let start = index
            while index < chars.count, chars[index] >= 0x30 && chars[index] <= 0x39, index - start < 6 {
                exponent = exponent * 10 + Int(chars[index] - 0x30)
                index += 1
            }
            guard index > start else { return nil }
            if exponentNegative { exponent = -exponent }
        }
        guard index == chars.count else { return nil }
        // 0.<significant> × 10^adjusted, the significant digits without leading or trailing zeros.
        guard let first = digits.firstIndex(where: { $0 != 0 }) else { return Decimal() }
        let last = digits.lastIndex(where: { $0 != 0 })!
        let significant = digits[first...last]
        let adjusted = exponent - fractionDigits + (digits.count - first)
        guard significant.count <= DecimalEncoding.maxDigits, abs(adjusted) < 1_000 else { return nil }
        var stored = [UInt8](repeating: 0, count: DecimalEncoding.width)
        stored.withUnsafeMutableBytes { out in
            for (offset, digit) in significant.enumerated() { DecimalEncoding.putDigit(digit, at: offset, in: out) }
            DecimalEncoding.finishNumber(out, negative: negative, adjusted: adjusted)
        }
        // The decoder checks what text cannot: a significand within 128 bits, an exponent in range.
        return stored.withUnsafeBytes { try? DecimalEncoding.decimal($0) }
    }
}
