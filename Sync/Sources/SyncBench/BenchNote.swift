import Cellar
import Foundation

// The sync benchmark's object, as an app declares it. Its binding and `model-sync-bench.json`
// come from the generator (run from the repository's root after changing this entity):
//   .build/debug/cellar-generator --target SyncBench --sources Sync/Sources/SyncBench \
//       --model Sync/Sources/SyncBench/model-sync-bench.json \
//       --output Sync/Sources/SyncBench/generated/EntityInfo-sync-bench.generated.swift --visibility internal

/// A note of about 150 bytes: the shape of the CRUD benchmark's object.
final class BenchNote: Entity {
    var id: Id = 0
    /// `note 000000042`: unique, so a receiver can check each object arrived once.
    var title: String = ""
    var text: String = ""
    var count: Int = 0
    var score: Double = 0
    var updated: Date = Date(timeIntervalSince1970: 0)

    required init() {}

    init(number: Int) {
        title = BenchNote.title(number)
        text = "Body \(number) " + String(repeating: "lorem ipsum ", count: 8)
        count = number
        score = Double(number) / 3
        updated = Date(timeIntervalSince1970: 1_700_000_000 + Double(number))
    }

    static func title(_ number: Int) -> String {
        let digits = String(number)
        return "note " + String(repeating: "0", count: max(0, 9 - digits.count)) + digits
    }
}
