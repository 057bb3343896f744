@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

/// `ordered(by: QItem.author, QAuthor.name)`: sorting through a to-one relation, compared with
/// sorting in memory; objects without a target (none set, or removed) sort as values that are nil.
@Suite struct LinkOrderTests {
    @Test func sortsByTheTargetsProperty() throws {
        let store = try Store(directoryPath: "memory:link-order", model: queryModel())
        defer { store.close() }
        let authors = store.box(for: QAuthor.self)
        let items = store.box(for: QItem.self)
        let people = ["Cy", "ada", "Bob", "Dee"].map { QAuthor($0) }
        try authors.put(people)
        var random = SplitMix64(seed: 9)
        var expectedNames: [Id: String?] = [:]
        for index in 0..<60 {
            let item = QItem()
            item.title = "item \(index)"
            let pick = Int(random.next() % 5)
            if pick < 4 { item.author.target = people[pick] }
            try items.put(item)
            expectedNames[item.id] = pick < 4 ? people[pick].name : nil
        }
        // Dee goes: her items point at nothing now.
        #expect(try authors.remove(people[3].id))
        for (id, name) in expectedNames where name == "Dee" { expectedNames[id] = .some(nil) }

        func expected(_ flags: OrderFlags) -> [Id] {
            expectedNames.keys.sorted { a, b in
                let (x, y) = (expectedNames[a]!, expectedNames[b]!)
                let (fx, fy) = (x.map { flags.contains(.caseSensitive) ? $0 : $0.lowercased() },
                                y.map { flags.contains(.caseSensitive) ? $0 : $0.lowercased() })
                switch (fx, fy) {
                case (nil, nil): return a < b
                case (nil, _): return !flags.contains(.nullsLast)
                case (_, nil): return flags.contains(.nullsLast)
                case (let x?, let y?):
                    if x == y { return a < b }
                    return flags.contains(.descending) ? x > y : x < y
                }
            }
        }
        for flags in [[], .descending, .nullsLast, .caseSensitive, [.descending, .nullsLast]] as [OrderFlags] {
            let found = try items.query().ordered(by: QItem.author, QAuthor.name, flags: flags).build().findIds().map(\.value)
            #expect(found == expected(flags), "flags \(flags.rawValue)")
        }
        // With a condition and a second order, and a page of the result.
        let page = try items.query { QItem.title.startsWith("item 1") }
            .ordered(by: QItem.author, QAuthor.name).ordered(by: QItem.title, flags: .descending)
            .build().find(offset: 2, limit: 5).map(\.id)
        let wanted = expectedNames.keys.filter { (try? items.get($0)?.title.hasPrefix("item 1")) == true }
            .sorted { a, b in
                let (x, y) = (expectedNames[a]!?.lowercased(), expectedNames[b]!?.lowercased())
                if x != y { return x == nil ? true : y == nil ? false : x! < y! }
                return (try! items.get(a)!.title) > (try! items.get(b)!.title)
            }
        #expect(page == Array(wanted.dropFirst(2).prefix(5)))
        // Through a property that is not a to-one relation, or to another entity: refused.
        #expect(throws: CellarError.self) { _ = try items.query().ordered(by: QItem.title, QAuthor.name).build() }
        #expect(throws: CellarError.self) { _ = try items.query().ordered(by: QItem.author, QTag.label).build() }
    }
}
