#if canImport(FoundationEssentials)
// Outside Apple platforms Foundation keeps `Decimal`'s fields internal and exports its field-wise
// initializer only as SPI.
@_spi(SwiftCorelibsFoundation) import FoundationEssentials
#else
import Foundation
#endif

/// How decimals are stored: 23 bytes whose byte order (unsigned, byte by byte) is the order of the
/// numbers, and equal numbers (1.5 and 1.50, 0 and 0E+5) have the same bytes, so that indexes and
/// queries compare decimals as bytes.
///
/// Byte 0 is the class: 0 NaN (sorting before every number), 1 negative, 2 zero, 3 positive; NaN
/// and zero have 22 zero bytes after it. Any other number's magnitude is 0.ddd… × 10^a, its digits
/// starting and ending with one that is not zero (at most 39, the digits of a 128-bit significand):
/// bytes 1–2 hold a + 0x8000 big-endian, bytes 3–22 the digits, two a byte, high nibble first,
/// padded with zero nibbles. A negative number's bytes 1–22 are inverted, so that a larger
/// magnitude sorts lower.
@_spi(CellarGenerated) public enum DecimalEncoding {
    /// Bytes of a stored decimal.
    public static let width = 23

    /// The stored bytes of `value` (exactly `width` bytes).
    public static func bytes(_ value: Decimal) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: width)
        bytes.withUnsafeMutableBytes { write(value, to: $0) }
        return bytes
    }

    /// Writes the stored bytes of `value` into `out`, which holds at least `width` bytes.
    public static func write(_ value: Decimal, to out: UnsafeMutableRawBufferPointer) {
        precondition(out.count >= width, "a decimal takes \(width) bytes")
        for index in 0..<width { out[index] = 0 }
        if value.isNaN {
            out[0] = nanClass
            return
        }
        var rest = storedSignificand(value) ?? describedSignificand(value)
        if rest == Significand() {
            out[0] = zeroClass
            return
        }
        // The significand's digits, most significant first: a digit of at most 3 and two chunks of
        // 19, or fewer. Its trailing zeros are written too: they are the padding's zero nibbles,
        // and counting them leaves a, the exponent plus the digits' count, what it is without them.
        var count = 0
        func put(_ chunk: UInt64, digits: Int) {
            var chunk = chunk
            for index in stride(from: count + digits - 1, through: count, by: -1) {
                putDigit(UInt8(chunk % 10), at: index, in: out)
                chunk /= 10
            }
            count += digits
        }
        let low = rest.divide(by: chunkDivisor), middle = rest.divide(by: chunkDivisor), high = rest.low
        if high != 0 {
            put(high, digits: 1)
            put(middle, digits: 19)
            put(low, digits: 19)
        } else if middle != 0 {
            put(middle, digits: digitCount(middle))
            put(low, digits: 19)
        } else {
            put(low, digits: digitCount(low))
        }
        finishNumber(out, negative: value.sign == .minus, adjusted: value.exponent + count)
    }

    /// The decimal whose stored bytes are the first `width` at `raw`; throws `fileCorrupt` for
    /// bytes no decimal is stored as.
    public static func decimal(_ raw: UnsafeRawBufferPointer) throws -> Decimal {
        guard raw.count >= width else { throw corrupt("has \(raw.count) bytes, not \(width)") }
        let kind = raw[0]
        guard kind <= positiveClass else { throw corrupt("has class \(kind)") }
        if kind == nanClass || kind == zeroClass {
            for index in 1..<width where raw[index] != 0 {
                throw corrupt("is \(kind == nanClass ? "NaN" : "zero") with byte \(index) not zero")
            }
            return kind == nanClass ? .nan : Decimal()
        }
        func digit(_ index: Int) -> UInt8 { Self.digit(raw, index) }
        var count = 0
        for index in 0..<maxDigits {
            let digit = digit(index)
            guard digit <= 9 else { throw corrupt("has digit \(index) of \(digit)") }
            if digit != 0 { count = index + 1 }
        }
        guard digit(0) != 0 else { throw corrupt("starts with a zero digit") }
        var significand = Significand()
        for index in 0..<count {
            guard significand.multiplyBy10(adding: digit(index)) else { throw corrupt("has a significand over 128 bits") }
        }
        let adjusted = adjustedExponent(raw)
        var exponent = adjusted - count
        guard exponent >= -128 else { throw corrupt("has exponent \(exponent), below -128") }
        // Above 127 the exponent's excess goes to the significand, as trailing zeros.
        while exponent > 127 {
            guard significand.multiplyBy10(adding: 0) else {
                throw corrupt("has exponent \(adjusted - count) with \(count) digits, over the largest decimal")
            }
            exponent -= 1
        }
        return Decimal(_exponent: Int32(exponent), _length: significand.words, _isNegative: kind == negativeClass ? 1 : 0,
                       _isCompact: 1, _reserved: 0, _mantissa: significand.mantissa)
    }

    static let nanClass: UInt8 = 0
    static let negativeClass: UInt8 = 1
    static let zeroClass: UInt8 = 2
    static let positiveClass: UInt8 = 3

    // MARK: The layout of a nonzero number (also what `DecimalText` reads and writes)

    /// The digits the bytes after the class and the exponent hold, two a byte.
    static let maxDigits = 2 * (width - 3)

    /// Puts `digit` (0…9) in digit place `index` (0 ..< `maxDigits`) of `out`, whose digits are
    /// zero there and not yet inverted.
    static func putDigit(_ digit: UInt8, at index: Int, in out: UnsafeMutableRawBufferPointer) {
        out[3 + index / 2] |= index % 2 == 0 ? digit << 4 : digit
    }

    /// Writes the class and the exponent of a nonzero number whose digits (`putDigit`) are in
    /// `out`: its value is 0.ddd… × 10^`adjusted`. A negative number's bytes after the class are
    /// inverted.
    static func finishNumber(_ out: UnsafeMutableRawBufferPointer, negative: Bool, adjusted: Int) {
        let biased = UInt16(truncatingIfNeeded: adjusted + 0x8000)
        out[1] = UInt8(truncatingIfNeeded: biased >> 8)
        out[2] = UInt8(truncatingIfNeeded: biased)
        out[0] = negative ? negativeClass : positiveClass
        if negative { for index in 1..<width { out[index] = ~out[index] } }
    }

    /// Digit place `index` of the stored bytes `raw` of a nonzero number (a nibble, 0…15 in bytes
    /// that are not a decimal's).
    static func digit(_ raw: UnsafeRawBufferPointer, _ index: Int) -> UInt8 {
        let byte = raw[3 + index / 2] ^ (raw[0] == negativeClass ? 0xFF : 0)
        return index % 2 == 0 ? byte >> 4 : byte & 0x0F
    }

    /// The exponent `adjusted` of the stored bytes `raw` of a nonzero number: its value is
    /// 0.ddd… × 10^`adjusted`.
    static func adjustedExponent(_ raw: UnsafeRawBufferPointer) -> Int {
        let flip: UInt8 = raw[0] == negativeClass ? 0xFF : 0
        return Int(UInt16(raw[1] ^ flip) << 8 | UInt16(raw[2] ^ flip)) - 0x8000
    }

    /// 10^19, the largest power of 10 below 2^64: the significand is written in chunks of its digits.
    private static let chunkDivisor: UInt64 = 10_000_000_000_000_000_000

    /// The number of decimal digits of `value`.
    private static func digitCount(_ value: UInt64) -> Int {
        var count = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            count += 1
        }
        return count
    }

    private static func corrupt(_ what: String) -> CellarError {
        CellarError.fileCorrupt("a stored decimal \(what)")
    }

    #if canImport(FoundationEssentials)
    /// `value`'s significand read from its stored fields, or nil if Foundation does not store them
    /// the way this reads them (`storageIsKnown`). Foundation keeps them internal here: an 8-bit
    /// exponent, a byte with the number of 16-bit words in use in its high nibble, two reserved
    /// bytes, then eight 16-bit words, least significant first.
    static func storedSignificand(_ value: Decimal) -> Significand? {
        storageIsKnown ? readStorage(value) : nil
    }

    /// Whether Foundation stores a decimal's fields where `storedSignificand` reads them: checked
    /// once, on decimals of known significands.
    static let storageIsKnown = MemoryLayout<Decimal>.size == 20
        && readStorage(Decimal(_exponent: -5, _length: 3, _isNegative: 1, _isCompact: 0, _reserved: 0,
                               _mantissa: (0x1234, 0x5678, 0x9ABC, 0, 0, 0, 0, 0))) == Significand(high: 0, low: 0x9ABC_5678_1234)
        && readStorage(Decimal(0x0123_4567_89AB_CDEF as UInt64)) == Significand(high: 0, low: 0x0123_4567_89AB_CDEF)
        && readStorage(Decimal.greatestFiniteMagnitude) == Significand(high: .max, low: .max)

    private static func readStorage(_ value: Decimal) -> Significand {
        withUnsafeBytes(of: value) { Significand(words: UnsafeRawBufferPointer(rebasing: $0[4..<20]), count: Int($0[1] >> 4)) }
    }
    #else
    /// `value`'s significand, from its fields.
    static func storedSignificand(_ value: Decimal) -> Significand? {
        withUnsafeBytes(of: value._mantissa) { Significand(words: $0, count: Int(value._length)) }
    }
    #endif

    /// `value`'s significand from its description: slower than `storedSignificand`, for when
    /// that cannot read it.
    static func describedSignificand(_ value: Decimal) -> Significand {
        var significand = Significand()
        for character in value.significand.description.utf8 where (0x30...0x39).contains(character) {
            _ = significand.multiplyBy10(adding: character - 0x30)
        }
        return significand
    }

    /// A decimal's significand: a 128-bit unsigned integer.
    struct Significand: Equatable {
        var high: UInt64 = 0
        var low: UInt64 = 0

        init() {}

        init(high: UInt64, low: UInt64) {
            self.high = high
            self.low = low
        }

        /// The significand of 16-bit `words`, least significant first, of which the first `count`
        /// are in use (`Decimal`'s mantissa).
        init(words: UnsafeRawBufferPointer, count: Int) {
            for index in stride(from: min(count, words.count / 2) - 1, through: 0, by: -1) {
                let word = UInt64(words.loadUnaligned(fromByteOffset: 2 * index, as: UInt16.self))
                (high, low) = (high << 16 | low >> 48, low << 16 | word)
            }
        }

        /// Multiplies by 10 and adds `digit`; false, and the value unchanged, when the result takes
        /// more than 128 bits.
        mutating func multiplyBy10(adding digit: UInt8) -> Bool {
            let low = self.low.multipliedFullWidth(by: 10)
            let high = self.high.multipliedFullWidth(by: 10)
            let (newLow, carry) = low.low.addingReportingOverflow(UInt64(digit))
            let (sum, overflow) = high.low.addingReportingOverflow(low.high)
            let (newHigh, carryOverflow) = sum.addingReportingOverflow(carry ? 1 : 0)
            guard high.high == 0 && !overflow && !carryOverflow else { return false }
            (self.high, self.low) = (newHigh, newLow)
            return true
        }

        /// Divides by `divisor` (not zero); returns the remainder.
        mutating func divide(by divisor: UInt64) -> UInt64 {
            let (highQuotient, highRemainder) = high.quotientAndRemainder(dividingBy: divisor)
            let (lowQuotient, remainder) = divisor.dividingFullWidth((highRemainder, low))
            (high, low) = (highQuotient, lowQuotient)
            return remainder
        }

        /// The number of 16-bit words up to the highest one that is not zero.
        var words: UInt32 {
            let bits = high != 0 ? 128 - high.leadingZeroBitCount : 64 - low.leadingZeroBitCount
            return UInt32((bits + 15) / 16)
        }

        /// The 16-bit words, least significant first, as `Decimal` keeps them.
        var mantissa: (UInt16, UInt16, UInt16, UInt16, UInt16, UInt16, UInt16, UInt16) {
            (UInt16(truncatingIfNeeded: low), UInt16(truncatingIfNeeded: low >> 16),
             UInt16(truncatingIfNeeded: low >> 32), UInt16(truncatingIfNeeded: low >> 48),
             UInt16(truncatingIfNeeded: high), UInt16(truncatingIfNeeded: high >> 16),
             UInt16(truncatingIfNeeded: high >> 32), UInt16(truncatingIfNeeded: high >> 48))
        }
    }
}
