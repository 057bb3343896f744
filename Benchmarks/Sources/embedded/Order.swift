import Cellar
import Foundation

// The embedded-object benchmark's `Order` as an app declares it; its binding and
// `model-embedded.json` come from cellar-generator (run from the repository's root after changing
// this entity or its embedded types):
//   swift package --package-path Benchmarks --allow-writing-to-package-directory cellar-generate --target embedded

/// An order and its lines: the lines are embedded objects, stored inside the order's record.
struct Order: Entity, Equatable {
    var id: Id = 0
    /// `customer%05d`, one of 10,000 customers.
    var customer: String = ""
    /// A moment in 2026, whole milliseconds (what both engines store exactly).
    var created: Date = Date(timeIntervalSince1970: 0)
    /// 0 to 6 lines, in the order they were added.
    var lines: [OrderLine] = []
}
