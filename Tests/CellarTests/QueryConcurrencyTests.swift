@_spi(CellarGenerated) @_spi(Testing) import Cellar
import CellarStorage
import CellarTestSupport
import Dispatch
import Foundation
import Testing

/// Readers querying while a writer commits: within one read transaction, what an index answers
/// (count from the index alone) and what the records answer (a scan) always agree, because the
/// index changes in the same transaction as its objects.
@Suite struct QueryConcurrencyTests {
    @Test func indexAndRecordsAgreeInEverySnapshot() throws {
        let seed = SplitMix64.testSeed()
        let dir = TestDirectory("query-concurrency")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.path, model: queryModel(), options: StoreOptions(durability: .none))
        let box = store.box(for: QItem.self)
        try box.put((0..<400).map { i in
            let item = QItem()
            item.score = Int32(i % 10)
            item.title = "t\(i % 7)"
            return item
        })
        let stop = Locked(false)
        let failures = Locked<[String]>([])
        let group = DispatchGroup()
        for reader in 0..<3 {
            group.enter()
            DispatchQueue.global().async {
                defer { group.leave() }
                var rng = SplitMix64(seed: seed &+ UInt64(reader))
                do {
                    var rounds = 0
                    while !stop.current || rounds < 20 {
                        rounds += 1
                        let v = Int32.random(in: 0..<10, using: &rng)
                        try store.runInReadOnlyTransaction {
                            let fromIndex = try box.query { QItem.score == v }.build().count()
                            let fromRecords = try box.query { QItem.score == v || QItem.score == v }.build().count()
                            let ids = try box.query { QItem.score == v }.build().findIds().map(\.value)
                            let scanned = try box.query { QItem.score == v || QItem.score == v }.build().findIds().map(\.value)
                            let total = try box.count()
                            if fromIndex != fromRecords || ids != scanned || total != 400 {
                                failures.add("seed \(seed): score \(v): index \(fromIndex), records \(fromRecords)")
                            }
                        }
                    }
                } catch {
                    failures.add("seed \(seed): \(error)")
                }
            }
        }
        var rng = SplitMix64(seed: seed)
        for _ in 0..<150 {
            try store.runInTransaction {
                for _ in 0..<10 {
                    let id = Id.random(in: 1...400, using: &rng)
                    let item = try #require(try box.get(id))
                    item.score = Int32.random(in: 0..<10, using: &rng)
                    try box.put(item)
                }
            }
        }
        stop.withLock { $0 = true }
        group.wait()
        #expect(failures.current.isEmpty, "\(failures.current.prefix(3))")
        store.close()
        #expect(try verifyStore(dir.path).indexEntries > 0)
    }
}
