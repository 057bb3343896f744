@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

/// A query tells a caller that collects its matches how many there will be (so `find()` reserves
/// its array once) only when it knows: the number it gives is the number it then visits.
@Suite struct QueryExpectedCountTests {
    /// The visit's announced count (nil when none) and how many records it gave.
    func visit(_ query: Query<QItem>, offset: Int = 0, limit: Int? = nil) throws -> (expected: Int?, visited: Int) {
        var expected: Int?
        var visited = 0
        try query.visitRecords(offset: offset, limit: limit, expecting: { count in
            #expect(expected == nil, "announced twice")
            #expect(visited == 0, "announced after a record")
            expected = count
        }) { _, _ in
            visited += 1
            return true
        }
        return (expected, visited)
    }

    @Test func announcedCountsAreTheVisitedOnes() throws {
        let store = try Store(directoryPath: "memory:expected-count", model: queryModel())
        let box = store.box(for: QItem.self)
        for i in 0..<40 {
            let item = QItem()
            item.title = ["Shopping", "Work", "shop", "Home"][i % 4]
            item.score = Int32(i)
            item.rank = UInt64(i % 5)
            item.flag = i % 3 == 0
            try box.put(item)
        }
        let everything = try box.query().build()
        #expect(try visit(everything) == (40, 40))
        #expect(try visit(everything, offset: 35, limit: 10) == (5, 5))
        #expect(try visit(everything, offset: 50, limit: 10) == (0, 0))
        #expect(try visit(everything, offset: 3, limit: 4) == (4, 4))

        let byIndex = try box.query { QItem.rank == 3 }.build()
        #expect(try visit(byIndex) == (8, 8))
        #expect(try visit(byIndex, offset: 2, limit: 3) == (3, 3))

        // An index that does not decide the condition alone gives candidates, not matches.
        let filtered = try box.query { QItem.rank == 3 && QItem.flag == true }.build()
        let (expected, visited) = try visit(filtered)
        #expect(visited == 3)   // i = 3, 18, 33
        #expect(expected == nil || expected == visited)

        let ordered = try box.query { QItem.rank == 3 }.ordered(by: QItem.score, flags: .descending).build()
        #expect(try visit(ordered, offset: 1, limit: 5) == (5, 5))
        #expect(try visit(ordered) == (8, 8))
        #expect(try ordered.find(offset: 1, limit: 5).map(\.score) == [33, 28, 23, 18, 13])
        #expect(try byIndex.find().map(\.score) == [3, 8, 13, 18, 23, 28, 33, 38])
    }
}
