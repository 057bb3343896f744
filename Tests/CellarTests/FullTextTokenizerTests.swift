@_spi(Testing) import Cellar
import CellarTestSupport
import Foundation
import Testing

/// `FullTextTokenizer`: words, folding, CJK, long tokens, invalid UTF-8, and a randomized
/// comparison with a slow tokenizer written from Foundation's string APIs.
@Suite struct FullTextTokenizerTests {
    private func tokens(_ text: String) -> [String] { FullTextTokenizer.tokens(of: text) }

    private func tokens(bytes: [UInt8]) -> [String] {
        var result: [String] = []
        bytes.withUnsafeBytes { buffer in
            FullTextTokenizer.forEachToken(in: buffer) { result.append(String(decoding: $0, as: UTF8.self)) }
        }
        return result
    }

    @Test func asciiWordsAreLowercasedAndSplitByEverythingElse() {
        #expect(tokens("Hello, World! 42x") == ["hello", "world", "42x"])
        #expect(tokens("e-mail don't snake_case a.b/c\td\ne") == ["e", "mail", "don", "t", "snake", "case", "a", "b", "c", "d", "e"])
        #expect(tokens("the the THE") == ["the", "the", "the"])
        #expect(tokens("") == [])
        #expect(tokens("  ,.;!  ") == [])
        #expect(tokens("ABCXYZ abcxyz 0189 @[`{") == ["abcxyz", "abcxyz", "0189"])
    }

    @Test func caseAndDiacriticsFold() {
        #expect(tokens("Café CAFÉ cafe\u{301} CAFE\u{301}") == ["cafe", "cafe", "cafe", "cafe"])
        #expect(tokens("Ångström Ålesund") == ["angstrom", "alesund"])
        #expect(tokens("İstanbul ıi") == ["istanbul", "ıi"])
        #expect(tokens("Über naïve façade Ñandú") == ["uber", "naive", "facade", "nandu"])
        #expect(tokens("ΟΔΟΣ οδός Οδός") == ["οδοσ", "οδοσ", "οδοσ"])
        #expect(tokens("Привет ЁЛКА ёлка") == ["привет", "елка", "елка"])
        #expect(tokens("Œuvre") == ["œuvre"])
    }

    @Test func sharpSStaysAndCompatibilityFormsAreNotFolded() {
        #expect(tokens("Straße STRASSE") == ["straße", "strasse"])
        #expect(tokens("ẞ") == ["ß"])
        #expect(tokens("ﬁne Ａbc") == ["ﬁne", "ａbc"])
    }

    @Test func marksAttachToTheWordTheyFollow() {
        // Combining diacritics are dropped, wherever they are in the word.
        #expect(tokens("a\u{301}\u{327}b c\u{30A}") == ["ab", "c"])
        // A mark that follows no word is ignored.
        #expect(tokens("\u{301}abc") == ["abc"])
        #expect(tokens("\u{301} \u{308}") == [])
        #expect(tokens("x ❤️ y") == ["x", "y"])
        // Marks that are not diacritics stay (the Devanagari vowel signs); the virama is a diacritic.
        #expect(tokens("हिन्दी भाषा") == ["\u{939}\u{93F}\u{928}\u{926}\u{940}", "भाषा"])
        // A character whose fold is several scalars (Tibetan GHA decomposes into GA and a
        // subjoined HA, a mark that is no diacritic).
        #expect(tokens("\u{0F43}") == ["\u{0F42}\u{0FB7}"])
        #expect(tokens("x\u{0F43}y") == SlowTokenizer.tokens(of: "x\u{0F43}y"))
        // Variation selectors go.
        #expect(tokens("葛\u{E0100}") == ["葛"])
    }

    @Test func digitsAndOtherNumbersAreWordCharacters() {
        #expect(tokens("3.14 v2 ٣٤ Ⅻ ½ x²") == ["3", "14", "v2", "٣٤", "ⅻ", "½", "x²"])
    }

    @Test func hanAndKanaAreTokensOfTheirOwn() {
        #expect(tokens("東京タワーに行く") == ["東", "京", "タ", "ワ", "ー", "に", "行", "く"])
        #expect(tokens("iPhone用ケース") == ["iphone", "用", "ケ", "ー", "ス"])
        #expect(tokens("中文abc字") == ["中", "文", "abc", "字"])
        #expect(tokens("𠮷野家") == ["𠮷", "野", "家"])
        // The voiced-sound mark is a diacritic: が folds to か, composed or not.
        #expect(tokens("が か\u{3099}") == ["か", "か"])
        // A compatibility ideograph folds to its unified ideograph.
        #expect(tokens("\u{F900}") == ["\u{8C48}"])
    }

    @Test func hangulAndOtherScriptsFormWords() {
        #expect(tokens("한국어 텍스트, 검색!") == ["한국어", "텍스트", "검색"])
        #expect(tokens("مرحبا بالعالم") == ["مرحبا", "بالعالم"])
        #expect(tokens("שלום עולם") == ["שלום", "עולם"])
        #expect(tokens("สวัสดี ครับ").count == 2)
    }

    @Test func emojiAndSymbolsSeparate() {
        #expect(tokens("fire🔥truck 👍🏽ok €5 a+b=c") == ["fire", "truck", "ok", "5", "a", "b", "c"])
    }

    @Test func aTokenLongerThanTheLimitIsSkippedNotTruncated() {
        let limit = FullTextTokenizer.maxTokenBytes
        #expect(limit == 64)
        let fits = String(repeating: "a", count: limit)
        let tooLong = String(repeating: "b", count: limit + 1)
        #expect(tokens(fits) == [fits])
        #expect(tokens("short \(tooLong) next") == ["short", "next"])
        #expect(tokens("\(tooLong)東") == ["東"])
        // The limit is on the folded UTF-8: 33 `é` fold to 33 bytes, 33 `ж` are 66.
        #expect(tokens(String(repeating: "É", count: 33)) == [String(repeating: "e", count: 33)])
        #expect(tokens(String(repeating: "ж", count: 32)) == [String(repeating: "ж", count: 32)])
        #expect(tokens("x " + String(repeating: "ж", count: 33) + " y") == ["x", "y"])
        // At the limit, the last character's whole fold counts.
        #expect(tokens(String(repeating: "a", count: 63) + "É") == [String(repeating: "a", count: 63) + "e"])
        #expect(tokens(String(repeating: "a", count: 63) + "Ж") == [])
        #expect(tokens(String(repeating: "a", count: 62) + "\u{0F43}") == [])
        // Dropped diacritics do not count.
        #expect(tokens(String(repeating: "e\u{301}", count: 64)) == [String(repeating: "e", count: 64)])
    }

    @Test func invalidUTF8SeparatesWords() {
        #expect(tokens(bytes: [0x61, 0xFF, 0x62]) == ["a", "b"])
        #expect(tokens(bytes: [0x61, 0xC3, 0x28, 0x62]) == ["a", "b"])          // a lead byte without continuation
        #expect(tokens(bytes: [0x61, 0xE2, 0x82, 0x63]) == ["a", "c"])          // truncated
        #expect(tokens(bytes: [0x61, 0xED, 0xA0, 0x80, 0x64]) == ["a", "d"])    // a surrogate
        #expect(tokens(bytes: [0x61, 0xF4, 0x90, 0x80, 0x80, 0x65]) == ["a", "e"]) // beyond U+10FFFF
        #expect(tokens(bytes: [0x61, 0xC0, 0xAF, 0x66]) == ["a", "f"])          // overlong
        #expect(tokens(bytes: [0x80, 0x67, 0xC3]) == ["g"])                     // stray continuation, cut at the end
        #expect(tokens(bytes: [0x63, 0x61, 0x66, 0xC3, 0xA9]) == ["cafe"])
    }

    @Test func theBufferHoldsEachTokenDuringTheCall() {
        var seen: [[UInt8]] = []
        Array("One two ÜBER".utf8).withUnsafeBytes { buffer in
            FullTextTokenizer.forEachToken(in: buffer) { seen.append(Array($0)) }
        }
        #expect(seen == [Array("one".utf8), Array("two".utf8), Array("uber".utf8)])
    }

    @Test func theBodyMayThrow() {
        struct Stop: Error {}
        var count = 0
        #expect(throws: Stop.self) {
            try Array("a b c".utf8).withUnsafeBytes { buffer in
                try FullTextTokenizer.forEachToken(in: buffer) { _ in
                    count += 1
                    if count == 2 { throw Stop() }
                }
            }
        }
        #expect(count == 2)
    }

    @Test func theWordListTokenizesAsTheSlowTokenizerSays() {
        let words = WordList.words
        #expect(words.count > 4_000)
        #expect(words.contains("Düsseldorf"))
        #expect(!words.contains { $0.contains("'") })
        for word in words {
            #expect(tokens(word) == SlowTokenizer.tokens(of: word), "\(word)")
            #expect(!tokens(word).isEmpty, "\(word)")
        }
        #expect(tokens(words.joined(separator: " ")).count >= words.count)
    }

    // MARK: Randomized comparison

    @Test func randomTextTokenizesAsTheSlowTokenizerSays() {
        let seed = SplitMix64.testSeed()
        var random = SplitMix64(seed: seed)
        for round in 0..<4000 {
            let text = RandomText.make(&random)
            let fast = tokens(text)
            let slow = SlowTokenizer.tokens(of: text)
            #expect(fast == slow, "seed \(seed), round \(round): \(text.unicodeScalars.map { String($0.value, radix: 16) })")
            if fast != slow { return }
        }
    }

    @Test func randomBytesTokenizeAsTheirRepairedText() {
        let seed = SplitMix64.testSeed()
        var random = SplitMix64(seed: seed)
        for round in 0..<3000 {
            var bytes = Array(RandomText.make(&random).utf8)
            // Damage a few bytes: invalid UTF-8 reads as the replacement character, a separator.
            for _ in 0..<Int.random(in: 0...3, using: &random) where !bytes.isEmpty {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            let fast = tokens(bytes: bytes)
            let slow = SlowTokenizer.tokens(of: String(decoding: bytes, as: UTF8.self))
            #expect(fast == slow, "seed \(seed), round \(round): \(bytes)")
            if fast != slow { return }
        }
    }
}

/// The tokenizer's rules, written plainly with Foundation's string APIs: classify each scalar by
/// its general category, collect words, fold each whole word.
enum SlowTokenizer {
    static func tokens(of text: String) -> [String] {
        var result: [String] = []
        var word = String.UnicodeScalarView()
        var open = false
        var single = false
        func close() {
            if open {
                let folded = fold(String(word))
                if !folded.isEmpty && folded.utf8.count <= 64 { result.append(folded) }
            }
            word = String.UnicodeScalarView()
            open = false
            single = false
        }
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                 .decimalNumber, .letterNumber, .otherNumber:
                if isHanOrKana(scalar) || single { close() }
                word.append(scalar)
                open = true
                single = isHanOrKana(scalar)
            case .nonspacingMark, .spacingMark, .enclosingMark:
                if open { word.append(scalar) }
            default:
                close()
            }
        }
        close()
        return result
    }

    static func fold(_ word: String) -> String {
        // Final sigma to sigma scalar by scalar (`replacingOccurrences` compares characters, and
        // `ς` with an accent is another character).
        let lowered = String(String.UnicodeScalarView(word.lowercased().unicodeScalars.map { $0 == "ς" ? "σ" : $0 }))
        let kept = lowered.decomposedStringWithCanonicalMapping.unicodeScalars.filter { scalar in
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .spacingMark, .enclosingMark:
                !scalar.properties.isDiacritic && !scalar.properties.isVariationSelector
            default:
                true
            }
        }
        return String(String.UnicodeScalarView(kept)).precomposedStringWithCanonicalMapping
    }

    static func isHanOrKana(_ scalar: Unicode.Scalar) -> Bool {
        let ranges: [ClosedRange<UInt32>] = [
            0x3005...0x3007, 0x3021...0x3029, 0x3038...0x303B, 0x3040...0x309F, 0x30A0...0x30FF,
            0x31F0...0x31FF, 0xFF66...0xFF9F, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF,
            0x1AFF0...0x1B16F, 0x20000...0x3FFFF,
        ]
        return ranges.contains { $0.contains(scalar.value) }
    }
}

/// Random text mixing ASCII, Latin with accents (composed and combining), Greek, Cyrillic, Han,
/// kana, Hangul, emoji and punctuation, with now and then a word long enough to pass the limit.
enum RandomText {
    static let pools: [[Unicode.Scalar]] = [
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
        "àáâãäåæçèéêëìíîïñòóôõöøùúûüýÿÀÉÎÕÜßẞŒœŁłĞğİıŠšŽžǅǈ",
        "\u{301}\u{308}\u{327}\u{30A}\u{303}\u{FE0F}",
        "ΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩαβγδεζηθικλμνξοπρστυφχψωςάέήίόύώϊΐΆΈ",
        "АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯабвгдеёжзийклмнопрстуфхцчшщъыьэюяЇїІі",
        "東京日本語中文字漢𠀀𠮷ひらがなカタカナがぱーｶﾀ々〇",
        "한국어텍스트검색",
        "🔥😀👍🏽❤🇫🇷\u{200D}",
        " ,.;:!?-_'\"()[]{}@#$%^&*+=/\\|~`\t\n¡¿«»—–…·",
        "0123456789٠١٢٣½²Ⅻ",
    ].map { Array($0.unicodeScalars) }

    static func make(_ random: inout SplitMix64) -> String {
        var scalars = String.UnicodeScalarView()
        let count = Int.random(in: 0...40, using: &random)
        var pool = pools[Int.random(in: 0..<pools.count, using: &random)]
        for _ in 0..<count {
            if Int.random(in: 0..<4, using: &random) == 0 { pool = pools[Int.random(in: 0..<pools.count, using: &random)] }
            if Int.random(in: 0..<200, using: &random) == 0 {
                let letter = pools[Int.random(in: 0..<2, using: &random)].randomElement(using: &random)!
                for _ in 0..<Int.random(in: 20...70, using: &random) { scalars.append(letter) }
            }
            scalars.append(pool.randomElement(using: &random)!)
        }
        return String(scalars)
    }
}
