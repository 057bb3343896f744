import Cellar
import Foundation

// The example's entity, as an app declares it. Its binding and `model-sync-example.json` come
// from the generator (run from the repository's root after changing this entity):
//   .build/debug/cellar-generator --target SyncExample --sources Sync/Sources/SyncExample \
//       --model Sync/Sources/SyncExample/model-sync-example.json \
//       --output Sync/Sources/SyncExample/generated/EntityInfo-sync-example.generated.swift --visibility internal

/// A to-do item, kept on every device of its user.
final class Todo: Entity {
    var id: Id = 0
    var title: String = ""
    var done: Bool = false
    var note: String = ""

    required init() {}

    init(title: String) {
        self.title = title
    }
}
