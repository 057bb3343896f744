@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

/// `like` with `*` and `?`, and string conditions that ignore diacritics (and case), on an
/// indexed String (`QItem.title`, value index) and a hash-indexed one (`QItem.text`), compared
/// with answers worked out here: a regular-expression oracle for `like`, Foundation's
/// `.diacriticInsensitive` folding for diacritics, `lowercased()` for case.
@Suite struct LikeAndDiacriticTests {
    static let titles = ["Café", "cafe", "CAFÉ", "Cafétéria", "crème brûlée", "Crème", "creme", "naïve", "Naive", "Ångström",
                         "angstrom", "Inv-2024-01", "Inv-2024-1", "inv-2025-12", "", "a*b", "a?b", "ab", "日本語", "Straße", "ﬁx", "résumé"]

    static func store(_ name: String) throws -> Store {
        let store = try Store(directoryPath: "memory:\(name)", model: queryModel())
        try store.box(for: QItem.self).put(titles.map { title in
            let item = QItem()
            item.title = title
            item.text = title
            return item
        })
        return store
    }

    /// `like` as a regular expression over the whole value (`*` → `.*`, `?` → one character),
    /// value and pattern folded by Foundation first.
    static func likeOracle(_ value: String, _ pattern: String, caseSensitive: Bool, diacriticSensitive: Bool) -> Bool {
        // Case: lowercased, as documented (Foundation's case folding would also turn the
        // ligature ﬁ into two letters); diacritics: Foundation's.
        func fold(_ s: String) -> String {
            let cased = caseSensitive ? s : s.lowercased()
            return diacriticSensitive ? cased : cased.folding(options: .diacriticInsensitive, locale: nil)
        }
        var regex = "^"
        for character in fold(pattern) {
            switch character {
            case "*": regex += ".*"
            case "?": regex += "."
            default: regex += NSRegularExpression.escapedPattern(for: String(character))
            }
        }
        regex += "$"
        return fold(value).range(of: regex, options: .regularExpression) != nil
    }

    static func expected(_ predicate: (String) -> Bool) -> [String] { titles.filter(predicate).sorted() }

    func found(_ store: Store, _ condition: QueryCondition<QItem>) throws -> [String] {
        try store.box(for: QItem.self).query { condition }.build().find().map(\.title).sorted()
    }

    @Test func likeMatchesWholeValuesWithWildcards() throws {
        let store = try Self.store("like")
        defer { store.close() }
        let patterns = ["Inv-2024-*", "Inv-202?-1*", "inv-*", "*é*", "a*b", "a?b", "*", "", "?", "Caf?", "C*e", "*ß*", "日*", "??", "*-1"]
        for pattern in patterns {
            for caseSensitive in [true, false] {
                for diacriticSensitive in [true, false] {
                    let want = Self.expected {
                        Self.likeOracle($0, pattern, caseSensitive: caseSensitive, diacriticSensitive: diacriticSensitive)
                    }
                    for property in [QItem.title, QItem.text] {
                        let got = try found(store, property.like(pattern, caseSensitive: caseSensitive, diacriticSensitive: diacriticSensitive))
                        #expect(got == want, "\(property.name) like \"\(pattern)\" case \(caseSensitive) diacritics \(diacriticSensitive)")
                    }
                }
            }
        }
        // The value index serves the part before the first wildcard; a folded like does not.
        let box = store.box(for: QItem.self)
        func usesIndex(_ condition: QueryCondition<QItem>) throws -> Bool {
            if case .index = try box.query({ condition }).build().compiled.plan.source { return true }
            return false
        }
        #expect(try usesIndex(QItem.title.like("Inv-2024-*")))
        #expect(try !usesIndex(QItem.title.like("*2024")))
        #expect(try !usesIndex(QItem.title.like("Inv*", caseSensitive: false)))
        #expect(try !usesIndex(QItem.title.like("Inv*", diacriticSensitive: false)))
    }

    @Test func diacriticInsensitiveConditionsFoldLikeFoundation() throws {
        let store = try Self.store("diacritics")
        defer { store.close() }
        func fold(_ s: String, _ caseSensitive: Bool) -> String {
            (caseSensitive ? s : s.lowercased()).folding(options: .diacriticInsensitive, locale: nil)
        }
        for operand in ["cafe", "Cafe", "creme", "naive", "angstrom", "Angstrom", "resume", "Straße", "caf"] {
            for caseSensitive in [true, false] {
                for property in [QItem.title, QItem.text] {
                    let conditions: [(String, QueryCondition<QItem>, (String) -> Bool)] = [
                        ("==", property.isEqual(to: operand, caseSensitive: caseSensitive, diacriticSensitive: false),
                         { fold($0, caseSensitive) == fold(operand, caseSensitive) }),
                        ("!=", property.isNotEqual(to: operand, caseSensitive: caseSensitive, diacriticSensitive: false),
                         { fold($0, caseSensitive) != fold(operand, caseSensitive) }),
                        ("startsWith", property.startsWith(operand, caseSensitive: caseSensitive, diacriticSensitive: false),
                         { fold($0, caseSensitive).hasPrefix(fold(operand, caseSensitive)) }),
                        ("contains", property.contains(operand, caseSensitive: caseSensitive, diacriticSensitive: false),
                         { fold($0, caseSensitive).contains(fold(operand, caseSensitive)) }),
                        ("isIn", property.isIn([operand, "NAÏVE"], caseSensitive: caseSensitive, diacriticSensitive: false),
                         { [fold(operand, caseSensitive), fold("NAÏVE", caseSensitive)].contains(fold($0, caseSensitive)) }),
                    ]
                    for (name, condition, predicate) in conditions {
                        #expect(try found(store, condition) == Self.expected(predicate),
                                "\(property.name) \(name) \"\(operand)\" case \(caseSensitive)")
                    }
                }
            }
        }
        // Compared as stored, é is not e.
        #expect(try found(store, QItem.title == "cafe") == ["cafe"])
        // Only strings fold diacritics.
        #expect(throws: CellarError.self) {
            _ = try store.box(for: QItem.self).query { QItem.score.isEqual(to: 3, diacriticSensitive: false) }.build()
        }
    }
}
