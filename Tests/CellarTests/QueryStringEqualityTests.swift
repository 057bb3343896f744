@_spi(CellarGenerated) @_spi(Testing) import Cellar
import CellarTestSupport
import Foundation
import Testing

/// Strings compare by their UTF-8 bytes in every part of a query: conditions, `distinct()`,
/// ordering, extremes and `QueryValue`s. Swift's `String` compares (and hashes) by canonical
/// equivalence instead, under which a precomposed "é" and "e" + a combining acute accent are equal.
@Suite struct QueryStringEqualityTests {
    static let precomposed = "\u{E9}cole"          // é as one code point
    static let decomposed = "e\u{301}cole"         // e + combining acute accent
    static let upperPrecomposed = "\u{C9}cole"     // É as one code point
    static let upperDecomposed = "E\u{301}cole"    // E + combining acute accent

    func store(_ name: String, titles: [String]) throws -> Box<QItem> {
        let store = try Store(directoryPath: "memory:\(name)", model: queryModel())
        let box = store.box(for: QItem.self)
        for title in titles {
            let item = QItem()
            item.title = title
            item.text = title
            try box.put(item)
        }
        return box
    }

    @Test func theTwoSpellingsAreEqualStringsToSwiftButNotTheSameBytes() {
        #expect(Self.precomposed == Self.decomposed)
        #expect(!Self.precomposed.utf8.elementsEqual(Self.decomposed.utf8))
    }

    @Test func distinctTellsApartWhatConditionsTellApart() throws {
        let titles = [Self.precomposed, Self.decomposed, Self.precomposed, Self.decomposed, Self.decomposed]
        let box = try store("distinct-bytes", titles: titles)
        for property in [QItem.title, QItem.text] {   // a value index and a hash index: neither is used
            #expect(try box.query { property == Self.precomposed }.build().count() == 2)
            #expect(try box.query { property == Self.decomposed }.build().count() == 3)
            #expect(try box.query { property.isIn([Self.precomposed]) }.build().count() == 2)
            let distinct = try box.query().build().property(property).distinct()
            let values = try distinct.find(String.self)
            #expect(values.map { Array($0.utf8) } == [Array(Self.precomposed.utf8), Array(Self.decomposed.utf8)],
                    "the first of each value, in id order, as stored")
            #expect(try distinct.count() == 2)
            #expect(try distinct.find() == [.string(Self.precomposed), .string(Self.decomposed)])
        }
    }

    @Test func distinctIgnoringCaseGroupsWhatCaseInsensitiveConditionsGroup() throws {
        let titles = [Self.upperPrecomposed, Self.precomposed, Self.upperDecomposed, Self.decomposed, "\u{C9}COLE", "Ecole"]
        let box = try store("distinct-case", titles: titles)
        let distinct = try box.query().build().property(QItem.title).distinct(caseSensitive: false).find(String.self)
        #expect(distinct.map { Array($0.utf8) } == [Array(Self.upperPrecomposed.utf8), Array(Self.upperDecomposed.utf8), Array("Ecole".utf8)])
        #expect(try box.query().build().property(QItem.title).distinct(caseSensitive: false).count() == 3)
        // Each distinct value stands for exactly the objects a case-insensitive == finds.
        var covered = 0
        for value in distinct {
            let matches = try box.query { QItem.title.isEqual(to: value, caseSensitive: false) }.build().count()
            #expect(matches == titles.filter { Self.foldedBytes($0) == Self.foldedBytes(value) }.count, "\(value)")
            covered += matches
        }
        #expect(covered == titles.count)
    }

    @Test func orderingAndExtremesFollowTheBytes() throws {
        // "e" (0x65) sorts before the first byte of "é" (0xC3); Swift's `<` compares the two as equal.
        let box = try store("order-bytes", titles: [Self.precomposed, Self.decomposed])
        let ordered = try box.query().ordered(by: QItem.title, flags: .caseSensitive).build().find().map { Array($0.title.utf8) }
        #expect(ordered == [Array(Self.decomposed.utf8), Array(Self.precomposed.utf8)])
        let descending = try box.query().ordered(by: QItem.title, flags: [.caseSensitive, .descending]).build().find().map { Array($0.title.utf8) }
        #expect(descending == [Array(Self.precomposed.utf8), Array(Self.decomposed.utf8)])
        let titles = try box.query().build().property(QItem.title)
        #expect(try titles.min(String.self).map { Array($0.utf8) } == Array(Self.decomposed.utf8))
        #expect(try titles.max(String.self).map { Array($0.utf8) } == Array(Self.precomposed.utf8))
        #expect(try box.query { QItem.title < Self.precomposed }.build().count() == 1)
    }

    @Test func uniqueConstraintsCompareTheBytes() throws {
        let store = try Store(directoryPath: "memory:unique-bytes", model: queryModel())
        let authors = store.box(for: QAuthor.self)
        // `name`: unique through a hash index; `email`: unique through a value index, replacing.
        let first = try authors.put(QAuthor(Self.precomposed, email: Self.precomposed))
        let second = try authors.put(QAuthor(Self.decomposed, email: Self.decomposed))
        #expect(try authors.count() == 2 && first != second)
        #expect(throws: CellarError.self) { try authors.put(QAuthor(Self.decomposed)) }
        _ = try authors.put(QAuthor("other", email: Self.decomposed))
        #expect(try authors.get(second) == nil, "replaced: the same bytes")
        #expect(try authors.get(first)?.email == Self.precomposed)
    }

    @Test func queryValuesCompareAndHashStringsByBytes() {
        let a = QueryValue.string(Self.precomposed), b = QueryValue.string(Self.decomposed)
        #expect(a != b)
        #expect(a == .string(String(decoding: Array(Self.precomposed.utf8), as: UTF8.self)))
        #expect(Set([a, b, a]).count == 2)
        #expect(Set([QueryValue.floating(0), .floating(-0.0)]).count == 1, "-0 equals 0, as in conditions")
        #expect(QueryValue.integer(1) != .unsigned(1))
    }

    /// What case-insensitive conditions compare: the lowercased string's UTF-8 bytes.
    static func foldedBytes(_ string: String) -> [UInt8] { Array(string.lowercased().utf8) }
}
