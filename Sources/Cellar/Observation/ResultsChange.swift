// The change between two versions of a query's results, as a list view applies it: which rows
// went, which came, which stayed but changed. The conventions are Realm's (`RealmCollectionChange`)
// and UIKit's batch updates: deletions are indices into the old results, insertions and
// modifications indices into the new ones, every list ascending. There are no moves: an object
// whose place relative to the others changed is reported as deleted and inserted, which is what a
// table view animates anyway.
//
// Computing it: the objects in both versions keep their relative order except for the ones that
// moved. The largest set that kept it is a longest increasing subsequence of their new positions
// taken in old order (O(n log n)); every other common object is reported as deleted and inserted.

/// How a live query's results changed in one update (see ``LiveResults``).
public struct ResultsChange: Sendable, Equatable {
    /// Indices into the previous results of the objects that left (or moved), ascending.
    public var deletions: [Int]
    /// Indices into the new results of the objects that came (or moved), ascending.
    public var insertions: [Int]
    /// Indices into the new results of objects that are in both versions, at the same place
    /// relative to the others, and were changed by a commit since the previous version.
    public var modifications: [Int]
    /// The same modified objects' indices in the previous results (for UIKit's `reloadRows`
    /// inside batch updates, which takes old indices).
    public var modificationsInPrevious: [Int]
    /// The ids of the deleted, inserted and modified objects, in the order of their indices.
    public var deletedIds: [Id]
    public var insertedIds: [Id]
    public var modifiedIds: [Id]
    /// Whether this is the first result (everything is an insertion).
    public var isInitial: Bool

    /// Whether nothing changed.
    public var isEmpty: Bool { deletions.isEmpty && insertions.isEmpty && modifications.isEmpty }

    /// The change from `old` to `new` (ids in result order, each at most once), where the objects
    /// `changed` were written since `old` was read.
    static func between(_ old: [Id], _ new: [Id], changed: Set<Id>) -> ResultsChange {
        var oldIndex: [Id: Int] = [:]
        oldIndex.reserveCapacity(old.count)
        for (i, id) in old.enumerated() { oldIndex[id] = i }
        // Common objects: (old index, new index), in new order.
        var common: [(old: Int, new: Int)] = []
        for (j, id) in new.enumerated() {
            if let i = oldIndex[id] { common.append((i, j)) }
        }
        // The common objects that kept their relative order: a longest increasing subsequence
        // of the old indices taken in new order.
        let kept = Self.longestIncreasing(common.map(\.old))
        var keptOld = [Bool](repeating: false, count: old.count)
        var keptNew = [Bool](repeating: false, count: new.count)
        for k in kept {
            keptOld[common[k].old] = true
            keptNew[common[k].new] = true
        }
        var change = ResultsChange(deletions: [], insertions: [], modifications: [], modificationsInPrevious: [],
                                   deletedIds: [], insertedIds: [], modifiedIds: [], isInitial: false)
        for (i, id) in old.enumerated() where !keptOld[i] {
            change.deletions.append(i)
            change.deletedIds.append(id)
        }
        for (j, id) in new.enumerated() {
            if !keptNew[j] {
                change.insertions.append(j)
                change.insertedIds.append(id)
            } else if changed.contains(id) {
                change.modifications.append(j)
                change.modificationsInPrevious.append(oldIndex[id]!)
                change.modifiedIds.append(id)
            }
        }
        return change
    }

    /// The first result: every object an insertion.
    static func initial(_ ids: [Id]) -> ResultsChange {
        ResultsChange(deletions: [], insertions: Array(ids.indices), modifications: [], modificationsInPrevious: [],
                      deletedIds: [], insertedIds: ids, modifiedIds: [], isInitial: true)
    }

    /// Positions (into `values`) of a longest strictly increasing subsequence, ascending.
    static func longestIncreasing(_ values: [Int]) -> [Int] {
        guard !values.isEmpty else { return [] }
        // tails[k]: the position of the smallest last value of an increasing run of length k + 1.
        var tails: [Int] = []
        var previous = [Int](repeating: -1, count: values.count)
        for (i, value) in values.enumerated() {
            var low = 0, high = tails.count
            while low < high {
                let mid = (low + high) / 2
                if values[tails[mid]] < value { low = mid + 1 } else { high = mid }
            }
            if low > 0 { previous[i] = tails[low - 1] }
            if low == tails.count { tails.append(i) } else { tails[low] = i }
        }
        var result: [Int] = []
        var at = tails.last!
        while at >= 0 {
            result.append(at)
            at = previous[at]
        }
        return result.reversed()
    }

    /// `old` with this change applied: the deletions removed (by old index), then `inserted(j)`
    /// placed at each insertion's new index, then `modified(j, element)` applied at each
    /// modification. What a list view does with the change; tests check it gives the new results.
    public func applied<T>(to old: [T], inserted: (Int) -> T, modified: (Int, T) -> T = { $1 }) -> [T] {
        var result = old
        for i in deletions.reversed() { result.remove(at: i) }
        for j in insertions { result.insert(inserted(j), at: j) }
        for j in modifications { result[j] = modified(j, result[j]) }
        return result
    }
}
