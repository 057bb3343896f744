@_spi(CellarGenerated) @_spi(Testing) import Cellar
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

@Suite struct QueryApiTests {
    func store(_ name: String) throws -> (Store, Box<QItem>) {
        let store = try Store(directoryPath: "memory:\(name)", model: queryModel())
        let box = store.box(for: QItem.self)
        for i in 0..<20 {
            let item = QItem()
            item.title = ["Shopping", "Work", "shop", "Home"][i % 4]
            item.score = Int32(i)
            item.amount = Double(i) / 4
            item.created = Date(timeIntervalSince1970: Double(i * 60))
            try box.put(item)
        }
        return (store, box)
    }

    @Test func parametersByPropertyAndAlias() throws {
        let (_, box) = try store("params")
        let query = try box.query { QItem.title == "Work" }.build()
        #expect(try query.count() == 5)
        query.setParameter(QItem.title, to: "Home")
        #expect(try query.find().map(\.score) == [3, 7, 11, 15, 19])
        let range = try box.query { (QItem.score > 1).alias("low") && (QItem.score < 5).alias("high") }.build()
        #expect(try range.findIds().map(\.value) == [3, 4, 5])
        range.setParameter("high", to: 8)
        range.setParameter("low", to: 5)
        #expect(try range.findIds().map(\.value) == [7, 8])
        let between = try box.query { QItem.score.isBetween(2, and: 4) }.build()
        between.setParameters(QItem.score, from: 10, to: 12)
        #expect(try between.count() == 3)
        let isIn = try box.query { QItem.score.isIn([1, 2]) }.build()
        isIn.setParameter(QItem.score, to: [5, 6, 7])
        #expect(try isIn.count() == 3)
        // Mistakes surface on the next run.
        range.setParameter(QItem.score, to: 3)
        #expect(throws: CellarError.self) { try range.count() }
        query.setParameter(QItem.title, to: 3)
        #expect(throws: CellarError.self) { try query.find() }
        query.setParameter(QItem.title, to: "Work")
        #expect(try query.count() == 5)
    }

    @Test func uniqueFirstAndPaging() throws {
        let (_, box) = try store("unique")
        #expect(try box.query { QItem.score == 3 }.build().findUnique()?.title == "Home")
        #expect(try box.query { QItem.score == 99 }.build().findUnique() == nil)
        #expect(throws: CellarError.nonUniqueResult(count: 5)) { try box.query { QItem.title == "Work" }.build().findUnique() }
        let ordered = try box.query { QItem.title.startsWith("shop", caseSensitive: false) }
            .ordered(by: QItem.title, flags: .caseSensitive).ordered(by: QItem.score, flags: .descending).build()
        #expect(try ordered.find().map(\.score) == [16, 12, 8, 4, 0, 18, 14, 10, 6, 2])
        #expect(try ordered.find(offset: 3, limit: 4).map(\.score) == [4, 0, 18, 14])
        #expect(try ordered.findIds(offset: 8, limit: 5).map(\.value) == [7, 3])
        #expect(throws: CellarError.self) { try ordered.find(offset: -1, limit: nil) }
    }

    @Test func visitingWithoutBuildingAndStoppingEarly() throws {
        let (_, box) = try store("visit")
        let work = try box.query { QItem.title == "Work" }.ordered(by: QItem.score, flags: .descending).build()
        var seen: [Int32] = []
        try work.forEach(while: { item in seen.append(item.score!); return seen.count < 3 })
        #expect(seen == [17, 13, 9])
        var lengths = 0
        var dates: [Date] = []
        try work.visit { view in
            lengths += try view.utf8Count(QItem.title) ?? 0
            dates.append(try view.date(QItem.created)!)
            #expect(try view.double(QItem.amount) == Double(view.id - 1) / 4)
            #expect(try view.object().id == view.id)
            return true
        }
        #expect(lengths == 20)
        #expect(dates.count == 5)
        try work.visit { view in
            #expect(throws: CellarError.self) { try view.integer(QItem.title) }
            #expect(throws: CellarError.self) { try view.string(QItem.score) }
            return false
        }
    }

    @Test func queryWithoutConditionsIsEveryObjectInIdOrder() throws {
        let (_, box) = try store("everything")
        try box.remove(try box.query { QItem.score == 5 }.build().findIds().first!)
        let all = try box.all()
        let query = try box.query().build()
        #expect(try query.find().map(\.id) == all.map(\.id))
        #expect(try query.find().map(\.title) == all.map(\.title))
        #expect(try query.findIds().map(\.value) == all.map(\.id))
        #expect(try query.count() == all.count)
        var visited: [(Id, Int64?)] = []
        try query.visit { visited.append(($0.id, try $0.integer(QItem.score))); return true }
        #expect(visited.map(\.0) == all.map(\.id))
        #expect(visited.map(\.1) == all.map { $0.score.map(Int64.init) })
        var firstThree: [Id] = []
        try query.visit { firstThree.append($0.id); return firstThree.count < 3 }
        #expect(firstThree == Array(all.prefix(3).map(\.id)))
        #expect(try query.find(offset: 2, limit: 4).map(\.id) == Array(all[2..<6].map(\.id)))
    }

    @Test func visitingOneObjectById() throws {
        let (store, box) = try store("visit-id")
        let ids = try box.query().build().findIds()
        let third = ids[2]
        let title: String?? = try box.visit(id: third) { try $0.string(QItem.title) }
        #expect(title == .some(try box.get(third)!.title))
        #expect(try box.visit(id: third.value) { $0.id } == third.value)
        #expect(try box.visit(id: third) { try $0.integer(QItem.score) } == .some(2))
        #expect(try box.visit(id: 999_999) { _ in 1 } == nil)
        #expect(throws: CellarError.self) { try box.visit(id: third) { try $0.integer(QItem.title) } }
        try store.runInTransaction {
            // Inside a write transaction: its own put is seen, and so is its removal.
            let item = QItem()
            item.title = "fresh"
            let id = try box.put(item)
            let fresh: String?? = try box.visit(id: id) { try $0.string(QItem.title) }
            #expect(fresh == .some("fresh"))
            try box.remove(id)
            #expect(try box.visit(id: id) { _ in true } == nil)
        }
    }

    @Test func propertyQueriesAndRemove() throws {
        let (_, box) = try store("property")
        let work = try box.query { QItem.title == "Work" }.build()
        let scores = work.property(QItem.score)
        #expect(try scores.sum() == 1 + 5 + 9 + 13 + 17)
        #expect(try scores.sumInteger() == 45)
        #expect(try scores.average() == 9)
        #expect(try scores.min(Int.self) == 1)
        #expect(try scores.max() == .integer(17))            // untyped: the stored value
        let latest: Date? = try work.property(QItem.created).max()
        #expect(latest == Date(timeIntervalSince1970: 17 * 60))
        #expect(try work.property(QItem.title).find().count == 5)
        #expect(try work.property(QItem.created).max(Date.self) == Date(timeIntervalSince1970: 17 * 60))
        #expect(try work.property(QItem.amount).find(Double.self) == [0.25, 1.25, 2.25, 3.25, 4.25])
        #expect(try box.query().build().property(QItem.title).distinct().count() == 4)
        #expect(try box.query().build().property(QItem.title).distinct(caseSensitive: false).count() == 4)
        #expect(throws: CellarError.self) { try work.property(QItem.title).sum() }
        #expect(throws: CellarError.self) { try work.property(QItem.title).max(Int.self) }
        #expect(try work.remove() == 5)
        #expect(try box.count() == 15)
        #expect(try work.count() == 0)
    }

    @Test func badConditionsAreRefusedByBuild() throws {
        let (_, box) = try store("bad")
        #expect(throws: CellarError.self) { try box.query { QItem.score == "three" }.build() }
        #expect(throws: CellarError.self) { try box.query { QItem.title > 3 }.build() }
        #expect(throws: CellarError.self) { try box.query { QItem.rank == -1 }.build() }
        #expect(throws: CellarError.self) { try box.query { QItem.score == Date() }.build() }
        #expect(throws: CellarError.self) { try box.query { QItem.score.startsWith("1") }.build() }
        #expect(throws: CellarError.self) { try box.query { QItem.blob.contains("x") }.build() }
        #expect(throws: CellarError.self) { try box.query { (QItem.score == 1 || QItem.score == 2).alias("x") }.build() }
        let foreign = Property<QItem>(name: "ghost", id: 42, type: .long)
        #expect(throws: CellarError.self) { try box.query { foreign == 1 }.build() }
        #expect(try box.query { QItem.score == 2.0 }.build().count() == 1)
        #expect(throws: CellarError.self) { try box.query { QItem.score == 2.5 }.build() }
    }
}
