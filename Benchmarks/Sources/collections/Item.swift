import Cellar

// The collection benchmark's `Item` as an app declares it; its binding and `model-collections.json`
// come from cellar-generator (run from the repository's root after changing this entity):
//   swift package --package-path Benchmarks --allow-writing-to-package-directory cellar-generate --target collections

struct Item: Entity, Equatable {
    var id: Id = 0
    /// 20 ASCII characters: `Item title %09d`.
    var title: String = ""
    /// 5 distinct tags out of 1,000 (`tag0000` … `tag0999`), in ascending order.
    // cellar: index
    var tags: [String] = []
    /// 8 numbers in 0..<1,000,000.
    var scores: [Int] = []
    /// 4 entries: color, size, shape and owner, each one of a few values (`Workload.attributeValues`).
    var attributes: [String: String] = [:]
}
