import Cellar
import CellarTestSupport
import Foundation
import Testing

@Suite struct QuerySmokeTests {
    @Test func basics() throws {
        let dir = TestDirectory("query-smoke"); defer { dir.remove() }
        let store = try Store(directoryPath: dir.path, model: queryModel())
        let items = store.box(for: QItem.self)
        for i in 1...50 {
            let item = QItem()
            item.title = "Item \(i % 7)"
            item.score = i % 3 == 0 ? nil : Int32(i - 25)
            item.rank = UInt64(i % 5)
            try items.put(item)
        }
        #expect(try items.query { QItem.score == 5 }.build().count() == 0)   // i = 30: nil
        #expect(try items.query { QItem.score == 6 }.build().count() == 1)
        #expect(try items.query { QItem.rank == 3 }.build().count() == 10)
        #expect(try items.query { QItem.title.startsWith("Item 1") }.build().count() == 8)
        #expect(try items.query { QItem.score.isNil() }.build().count() == 16)
        let ordered = try items.query { QItem.score > 10 }.ordered(by: QItem.score, flags: .descending).build().find()
        #expect(ordered.map(\.score) == [25, 24, 22, 21, 19, 18, 16, 15, 13, 12])
        #expect(try items.query { QItem.score > 10 }.build().property(QItem.score).max(Int.self) == 25)
    }
}
