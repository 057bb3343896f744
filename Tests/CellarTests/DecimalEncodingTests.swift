@_spi(CellarGenerated) @testable import Cellar
import CellarTestSupport
#if canImport(FoundationEssentials)
@_spi(SwiftCorelibsFoundation) import FoundationEssentials
#endif
import Foundation
import Testing

/// Stored decimals (`DecimalEncoding`): they read back as the numbers written, compare as bytes in
/// the numbers' order, are the same bytes for equal numbers, and bytes no decimal is stored as
/// fail to read.
@Suite struct DecimalEncodingTests {
    @Test func handPickedValuesRoundTrip() throws {
        let largest = "340282366920938463463374607431768211455"
        var values: [Decimal] = [
            0, 1, -1, Decimal.greatestFiniteMagnitude, Decimal.leastFiniteMagnitude,
            Decimal.leastNonzeroMagnitude, -Decimal.leastNonzeroMagnitude, Decimal.pi, -Decimal.pi,
        ]
        for text in ["0", "-0", "0E+5", "0.1", "-0.1", "1.50", "-1.50", "123456789.987654321", "-123456789.987654321",
                     largest, "-" + largest, largest + "e-128", "-" + largest + "e-128", largest + "e127", "-" + largest + "e127",
                     "1e-128", "-1e-128", "1e127", "10e127", "-10e127", "34028236692093846346337460743176821145e127",
                     "300000000000000000000000000000000000000e127", "99999999999999999999999999999999999999e-3", "18446744073709551616", "65536", "65535"] {
            values.append(try #require(Decimal(string: text), "\(text)"))
        }
        for value in values {
            let bytes = DecimalEncoding.bytes(value)
            #expect(bytes.count == DecimalEncoding.width)
            let back = try decode(bytes)
            #expect(back == value, "\(value)")
            #expect(back.description == canonical(value).description, "\(value): \(back)")
            #expect(DecimalEncoding.bytes(back) == bytes, "\(value)")
        }
        for nan in [Decimal.nan, Decimal.quietNaN, -Decimal.nan, fields(exponent: 7, length: 0, negative: true, high: 0, low: 5)] {
            #expect(nan.isNaN)
            #expect(DecimalEncoding.bytes(nan) == [0] + zeros(22))
            #expect(try decode(DecimalEncoding.bytes(nan)).isNaN)
        }
    }

    /// Foundation keeps decimals' fields where this build reads them (else decimals are written
    /// from their descriptions, which is slower).
    @Test func significandsAreReadFromTheFields() throws {
        let value = try #require(Decimal(string: "-12.5"))
        #expect(DecimalEncoding.storedSignificand(value) == DecimalEncoding.Significand(high: 0, low: 125))
    }

    @Test func layout() throws {
        func stored(_ text: String) throws -> [UInt8] { DecimalEncoding.bytes(try #require(Decimal(string: text))) }
        #expect(try stored("0") == [2] + zeros(22))
        #expect(try stored("1.5") == [3, 0x80, 0x01, 0x15] + zeros(19))
        #expect(try stored("-1.5") == [1, 0x7F, 0xFE, 0xEA] + [UInt8](repeating: 0xFF, count: 19))
        #expect(try stored("1204.5") == [3, 0x80, 0x04, 0x12, 0x04, 0x50] + zeros(17))
        #expect(try stored("0.00105") == [3, 0x7F, 0xFE, 0x10, 0x50] + zeros(18))
        #expect(try stored("10e127") == [3, 0x80, 0x81, 0x10] + zeros(19))
        #expect(try stored("1e-128") == [3, 0x7F, 0x81, 0x10] + zeros(19))
        #expect(try stored("340282366920938463463374607431768211455") ==
                [3, 0x80, 0x27, 0x34, 0x02, 0x82, 0x36, 0x69, 0x20, 0x93, 0x84, 0x63, 0x46, 0x33, 0x74, 0x60, 0x74, 0x31,
                 0x76, 0x82, 0x11, 0x45, 0x50])
    }

    /// Equal numbers of different scales, and decimals whose significand has trailing zeros or
    /// more words than it needs, are the same bytes.
    @Test func equalValuesHaveTheSameBytes() throws {
        let groups: [[Decimal]] = [
            try ["1.5", "1.50", "1.500", "15e-1", "0.15e1"].map { try #require(Decimal(string: $0)) } + [
                fields(exponent: -2, length: 8, negative: false, high: 0, low: 150),
                fields(exponent: -18, length: 5, negative: false, high: 0, low: 1_500_000_000_000_000_000),
            ],
            try ["-1.5", "-1.50", "-15e-1"].map { try #require(Decimal(string: $0)) } + [
                fields(exponent: -3, length: 2, negative: true, high: 0, low: 1500),
            ],
            try ["0", "-0", "0E+5", "0.000", "-0.0E-7"].map { try #require(Decimal(string: $0)) } + [
                Decimal(0), Decimal(), fields(exponent: 9, length: 0, negative: false, high: 0, low: 0),
            ],
            try ["100", "1e2", "100.00", "0.001e5"].map { try #require(Decimal(string: $0)) } + [
                Decimal(100), fields(exponent: -1, length: 1, negative: false, high: 0, low: 1000),
            ],
            try ["10e127", "100e126"].map { try #require(Decimal(string: $0)) } + [
                fields(exponent: 120, length: 2, negative: false, high: 0, low: 100_000_000),
            ],
        ]
        for group in groups {
            let bytes = DecimalEncoding.bytes(group[0])
            for value in group {
                #expect(DecimalEncoding.bytes(value) == bytes, "\(value) and \(group[0])")
                #expect(try decode(bytes) == value, "\(value)")
            }
        }
    }

    @Test func randomDecimalsRoundTrip() throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        for _ in 0..<20_000 {
            let value = Self.randomDecimal(&rng)
            #expect(DecimalEncoding.storedSignificand(value) == DecimalEncoding.describedSignificand(value), "seed \(seed): \(value)")
            let bytes = DecimalEncoding.bytes(value)
            let back = try decode(bytes)
            if value.isNaN {
                #expect(back.isNaN && bytes == [0] + zeros(22), "seed \(seed): \(value)")
                continue
            }
            #expect(back == value, "seed \(seed): \(value) read back as \(back)")
            #expect(back.description == canonical(value).description, "seed \(seed): \(value) read back as \(back)")
            #expect(DecimalEncoding.bytes(back) == bytes, "seed \(seed): \(value)")
            #expect(DecimalEncoding.bytes(canonical(value)) == bytes, "seed \(seed): \(value)")
        }
    }

    /// The bytes' order is the numbers' order, by Foundation's comparison and by the numbers'
    /// exact decimal expansions.
    @Test func bytesCompareInTheNumbersOrder() {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        for _ in 0..<20_000 {
            let x = Self.randomDecimal(&rng)
            let y = Self.related(to: x, &rng)
            guard !x.isNaN && !y.isNaN else { continue }
            let bytes = compare(DecimalEncoding.bytes(x), DecimalEncoding.bytes(y))
            #expect(bytes == exactCompare(x, y), "seed \(seed): \(x) and \(y)")
            #expect((bytes < 0) == (x < y) && (bytes == 0) == (x == y), "seed \(seed): \(x) and \(y)")
        }
    }

    @Test func nanSortsFirst() throws {
        let nan = DecimalEncoding.bytes(.nan)
        var rng = SplitMix64(seed: SplitMix64.testSeed())
        var values: [Decimal] = [Decimal.leastFiniteMagnitude, -1, 0, Decimal.greatestFiniteMagnitude]
        values += (0..<1_000).map { _ in Self.randomDecimal(&rng) }.filter { !$0.isNaN }
        for value in values {
            #expect(compare(nan, DecimalEncoding.bytes(value)) < 0, "\(value)")
        }
    }

    @Test func bytesNoDecimalIsStoredAsThrow() {
        func positive(_ adjusted: Int, _ digits: [UInt8]) -> [UInt8] {
            var bytes = [3, UInt8((adjusted + 0x8000) >> 8), UInt8((adjusted + 0x8000) & 0xFF)] + zeros(20)
            for (index, digit) in digits.enumerated() { bytes[3 + index / 2] |= index % 2 == 0 ? digit << 4 : digit }
            return bytes
        }
        func negative(_ bytes: [UInt8]) -> [UInt8] { [1] + bytes.dropFirst().map { ~$0 } }
        let nines = [UInt8](repeating: 9, count: 39)
        let corrupt: [[UInt8]] = [
            [4] + zeros(22), [0xFF] + zeros(22),                                    // no such class
            [0] + zeros(21) + [1], [0, 0x80] + zeros(21),                           // NaN with more
            [2] + zeros(21) + [1], [2, 0x80, 0x01, 0x15] + zeros(19),               // zero with more
            positive(1, []), negative(positive(1, [])),                             // no digits
            positive(1, [0, 1]), negative(positive(1, [0, 1])),                     // a leading zero
            positive(1, [1, 10]), positive(1, [0xF]), negative(positive(1, [1, 0xA])), // a nibble over 9
            positive(40, [1] + zeros(38) + [1]),                                   // 40 digits
            positive(39, [3, 4, 0, 2, 8, 2, 3, 6, 6, 9, 2, 0, 9, 3, 8, 4, 6, 3, 4, 6, 3, 3, 7, 4, 6, 0, 7, 4, 3, 1, 7, 6, 8, 2,
                          1, 1, 4, 5, 6]),                                          // 2^128
            positive(39, [4] + zeros(37) + [1]), positive(39, nines), negative(positive(39, nines)),  // over 2^128
            positive(-128, [1]), positive(-127, [1, 1]),                           // exponent below -128
            positive(-0x8000, [1]), negative(positive(-0x8000, [1])),
            positive(167, [1]), positive(166, [3, 5]), positive(0x7FFF, [1]),       // over the largest decimal
            [3, 0x80, 0x01, 0x15] + zeros(18),                                      // too short
        ]
        for bytes in corrupt {
            #expect(isCorrupt(bytes), "\(bytes)")
        }
        // The edges of those shapes are decimals.
        for bytes in [positive(-127, [1]), positive(-126, [1, 1]), positive(166, [3]), positive(165, [3, 4]),
                      positive(39, [3, 4, 0, 2, 8, 2, 3, 6, 6, 9, 2, 0, 9, 3, 8, 4, 6, 3, 4, 6, 3, 3, 7, 4, 6, 0, 7, 4, 3, 1, 7, 6,
                                    8, 2, 1, 1, 4, 5, 5])] {
            #expect(!isCorrupt(bytes) && (try? DecimalEncoding.bytes(decode(bytes))) == bytes, "\(bytes)")
        }
    }

    /// Random bytes either fail to read or are a decimal's bytes: the one stored as exactly them.
    @Test func randomBytesFailOrAreADecimals() {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        var decoded = 0
        for round in 0..<100_000 {
            var bytes = (0..<DecimalEncoding.width).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if round % 2 == 0 {
                // Mostly well formed: a class, an exponent near zero's, digits, then some changes.
                bytes[0] = UInt8(rng.next() % 4)
                bytes[1] = 0x80 &- UInt8(rng.next() % 2)
                let digits = Int(rng.next() % 41)
                for index in 0..<40 {
                    let digit = index < digits ? UInt8(rng.next() % 10) : 0
                    bytes[3 + index / 2] = index % 2 == 0 ? digit << 4 : bytes[3 + index / 2] | digit
                }
                if bytes[0] == 1 { for index in 1..<bytes.count { bytes[index] = ~bytes[index] } }
                if bytes[0] == 0 || bytes[0] == 2, rng.next() % 2 == 0 { for index in 1..<bytes.count { bytes[index] = 0 } }
                for _ in 0..<Int(rng.next() % 3) { bytes[Int(rng.next() % 23)] ^= UInt8(1) << (rng.next() % 8) }
            }
            guard let value = try? decode(bytes) else { continue }
            decoded += 1
            #expect(DecimalEncoding.bytes(value) == bytes, "seed \(seed): \(bytes) read as \(value)")
        }
        #expect(decoded > 1_000)
    }

    // MARK: Helpers

    func decode(_ bytes: [UInt8]) throws -> Decimal {
        try bytes.withUnsafeBytes { try DecimalEncoding.decimal($0) }
    }

    /// Whether reading `bytes` throws `fileCorrupt`.
    func isCorrupt(_ bytes: [UInt8]) -> Bool {
        do {
            _ = try decode(bytes)
            return false
        } catch let error as CellarError {
            return error.code == .fileCorrupt
        } catch {
            return false
        }
    }

    func zeros(_ count: Int) -> [UInt8] { [UInt8](repeating: 0, count: count) }

    /// The decimal of `value`'s number that Foundation makes from its digits.
    func canonical(_ value: Decimal) -> Decimal { Decimal(string: value.description) ?? .nan }

    /// The sign of the first difference of `x` and `y`, unsigned bytes (memcmp).
    func compare(_ x: [UInt8], _ y: [UInt8]) -> Int {
        for (a, b) in zip(x, y) where a != b { return a < b ? -1 : 1 }
        return x.count == y.count ? 0 : x.count < y.count ? -1 : 1
    }

    /// The order of two decimals by their exact decimal expansions (`description`).
    func exactCompare(_ x: Decimal, _ y: Decimal) -> Int {
        func parts(_ value: Decimal) -> (sign: Int, whole: [UInt8], fraction: [UInt8]) {
            var text = Array(value.description.utf8)
            let negative = text.first == UInt8(ascii: "-")
            if negative { text.removeFirst() }
            let point = text.firstIndex(of: UInt8(ascii: ".")) ?? text.count
            let whole = Array(text[..<point].drop { $0 == UInt8(ascii: "0") })
            var fraction = Array(text[min(point + 1, text.count)...])
            while fraction.last == UInt8(ascii: "0") { fraction.removeLast() }
            let sign = whole.isEmpty && fraction.isEmpty ? 0 : negative ? -1 : 1
            return (sign, whole, fraction)
        }
        let (a, b) = (parts(x), parts(y))
        guard a.sign == b.sign else { return a.sign < b.sign ? -1 : 1 }
        let magnitude = a.whole.count != b.whole.count ? (a.whole.count < b.whole.count ? -1 : 1)
            : a.whole != b.whole ? compare(a.whole, b.whole) : compare(a.fraction, b.fraction)
        return a.sign * magnitude
    }

    /// A decimal built field by field (the only way to a significand with trailing zeros or with
    /// more words than it needs).
    func fields(exponent: Int32, length: UInt32, negative: Bool, high: UInt64, low: UInt64) -> Decimal {
        Self.fields(exponent: exponent, length: length, negative: negative, high: high, low: low)
    }

    static func fields(exponent: Int32, length: UInt32, negative: Bool, high: UInt64, low: UInt64) -> Decimal {
        Decimal(_exponent: exponent, _length: length, _isNegative: negative ? 1 : 0, _isCompact: 0, _reserved: 0,
                _mantissa: (UInt16(truncatingIfNeeded: low), UInt16(truncatingIfNeeded: low >> 16),
                            UInt16(truncatingIfNeeded: low >> 32), UInt16(truncatingIfNeeded: low >> 48),
                            UInt16(truncatingIfNeeded: high), UInt16(truncatingIfNeeded: high >> 16),
                            UInt16(truncatingIfNeeded: high >> 32), UInt16(truncatingIfNeeded: high >> 48)))
    }

    /// Words a significand needs.
    static func words(high: UInt64, low: UInt64) -> UInt32 {
        UInt32((high != 0 ? 128 - high.leadingZeroBitCount : 64 - low.leadingZeroBitCount) + 15) / 16
    }

    /// A random decimal: random significand (any bits, small with trailing zeros, or near the
    /// largest), sometimes with more words than it needs, random exponent (often near zero),
    /// random sign; now and then zero or NaN.
    static func randomDecimal(_ rng: inout SplitMix64) -> Decimal {
        var (high, low) = (rng.next(), rng.next())
        switch rng.next() % 4 {
        case 0:
            let shift = Int(rng.next() % 128)
            (high, low) = shift >= 64 ? (0, high >> (shift - 64)) : (high >> shift, low >> shift | (shift == 0 ? 0 : high << (64 - shift)))
        case 1:
            (high, low) = (0, rng.next() % 1_000)
            for _ in 0..<rng.next() % 36 {
                let product = low.multipliedFullWidth(by: 10)
                let top = high.multipliedFullWidth(by: 10)
                let sum = top.low.addingReportingOverflow(product.high)
                guard top.high == 0 && !sum.overflow else { break }
                (high, low) = (sum.partialValue, product.low)
            }
        case 2: (high, low) = (UInt64.max, UInt64.max - rng.next() % 3)
        default: break
        }
        if rng.next() % 50 == 0 { (high, low) = (0, 0) }
        var length = words(high: high, low: low)
        if length > 0 && rng.next() % 4 == 0 { length += UInt32(rng.next() % UInt64(9 - length)) }
        let exponent = rng.next() % 2 == 0 ? Int32(rng.next() % 11) - 5 : Int32(Int8(truncatingIfNeeded: rng.next()))
        return fields(exponent: exponent, length: length, negative: rng.next() % 2 == 0, high: high, low: low)
    }

    /// A decimal to compare with `x`: another random one, one with `x`'s exponent, `x` times 10
    /// divided by 10 (mostly `x`), `x` with its last digit changed, or `-x`.
    static func related(to x: Decimal, _ rng: inout SplitMix64) -> Decimal {
        switch rng.next() % 5 {
        case 0:
            return x * 10 / 10
        case 1:
            let text = x.description
            guard let last = text.last?.wholeNumberValue else { return randomDecimal(&rng) }
            let digit = (last + 1 + Int(rng.next() % 9)) % 10
            return Decimal(string: String(text.dropLast()) + String(digit)) ?? randomDecimal(&rng)
        case 2:
            return -x
        case 3:
            var y = randomDecimal(&rng)
            if !y.isNaN && !x.isNaN { y = Decimal(sign: y.sign, exponent: x.exponent, significand: y.significand) }
            return y
        default:
            return randomDecimal(&rng)
        }
    }
}
