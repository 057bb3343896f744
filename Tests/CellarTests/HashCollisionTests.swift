@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

/// Two strings whose 32-bit index hash is the same: a hash index must tell them apart by the
/// records, for queries and for unique constraints.
@Suite struct HashCollisionTests {
    /// The first pair of "v<n>" strings with equal `IndexKey.hash32` (a birthday search).
    static let collision: (String, String) = {
        var seen: [UInt32: String] = [:]
        var n = 0
        while true {
            let string = "v\(n)"
            let hash = Array(string.utf8).withUnsafeBytes { IndexKey.hash32($0) }
            if let other = seen[hash] { return (other, string) }
            seen[hash] = string
            n += 1
        }
    }()

    @Test func queriesAndUniqueConstraintsSeeThroughCollisions() throws {
        let (a, b) = Self.collision
        #expect(a != b)
        let store = try Store(directoryPath: "memory:collision", model: queryModel())
        // QItem.text: a hash index.
        let items = store.box(for: QItem.self)
        let first = QItem()
        first.text = a
        let second = QItem()
        second.text = b
        try items.put([first, second])
        #expect(try items.query { QItem.text == a }.build().findIds().map(\.value) == [first.id])
        #expect(try items.query { QItem.text == b }.build().count() == 1)
        #expect(try items.query { QItem.text.isIn([a, b]) }.build().count() == 2)
        // QAuthor.name: unique with a hash index; the colliding name is no violation.
        let authors = store.box(for: QAuthor.self)
        try authors.put(QAuthor(a))
        try authors.put(QAuthor(b))
        #expect(throws: CellarError.uniqueViolation(property: "QAuthor.name", value: "\"\(b)\"")) { try authors.put(QAuthor(b)) }
        #expect(try authors.count() == 2)
    }
}
