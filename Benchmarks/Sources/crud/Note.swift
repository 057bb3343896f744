import Cellar
import Foundation

// The CRUD workload's `Note` as an app declares it; its binding and `model-crud.json` come from the
// `cellar-generate` plugin (run from the repository's root after changing this entity):
//   swift package --package-path Benchmarks --allow-writing-to-package-directory cellar-generate --target crud
// Property ids 1...6 in this order = the CRUD workload's ObjectBox property ids (record slots 0...5).

struct Note: Entity {
    var id: Id = 0
    /// 20 ASCII characters: `Note title %09d`.
    var title: String = ""
    /// 100 ASCII characters: `Body %09d ` and the first 85 characters of the lorem ipsum.
    var text: String = ""
    /// Milliseconds since 1970 (ObjectBox type Date): 1_700_000_000_000 + 1000 i.
    var creationDate: Date = Date(timeIntervalSince1970: 0)
    var modificationDate: Date = Date(timeIntervalSince1970: 0)
    /// ((i − 1) % 100) + 1.
    // cellar: index
    var author: UInt64 = 0
}
