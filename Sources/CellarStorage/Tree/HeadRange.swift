/// The range of keys a node holds, as the big-endian words of its bounds' first 8 bytes, known
/// from the separators its parent routed the search through. Keys spread evenly over such a
/// range (ids handed out in sequence, and the separators above them) let a search start where
/// the key should be instead of in the middle: for a dense run of ids the first probe is the
/// entry itself, so a leaf costs one entry read instead of a binary search's four or five, each
/// a likely cache miss on a random get.
///
/// A guess is only a starting point: `NodeView.lowerBound(_:guess:)` and `childIndex(_:guess:)`
/// check it against the neighbouring entries and finish with a binary search, so any guess
/// (keys not evenly spread, a corrupt separator) gives the same answer as the plain search.
struct HeadRange {
    var low: UInt64 = 0
    var high: UInt64 = 0
    var hasLow = false
    var hasHigh = false

    /// No bounds: the root's range.
    static let unbounded = HeadRange()

    /// The range of child `index` of `branch`, whose own range is this one.
    @inline(__always)
    func narrowed(to index: Int, of branch: NodeView) -> HeadRange {
        var range = self
        if index > 0 {
            let (p, n) = branch.branchKey(index)
            range.hasLow = n >= 8
            if n >= 8 { range.low = UInt64(bigEndian: p.loadUnaligned(as: UInt64.self)) }
        }
        if index &+ 1 < branch.count {
            let (p, n) = branch.branchKey(index &+ 1)
            range.hasHigh = n >= 8
            if n >= 8 { range.high = UInt64(bigEndian: p.loadUnaligned(as: UInt64.self)) }
        }
        return range
    }

    /// Where `key` should be among `count` entries spread evenly over this range; nil when the
    /// range or the key gives nothing to go on (a bound missing, a key shorter than 8 bytes, all
    /// keys sharing their first 8 bytes, the key outside the range).
    ///
    /// Dense keys (ids handed out one after another, a leaf holding one key for each number of
    /// its range) are placed without arithmetic; small ranges and counts (the branches above
    /// such leaves) with one integer division; others in floating point. Each is a step of its
    /// own in the search's chain of dependent loads, so the cheaper the better.
    @inline(__always)
    func guess(_ key: SearchKey, count: Int) -> Int? {
        guard hasLow && hasHigh && key.count >= 8 && count > 1,
              high > low, key.head >= low, key.head < high else { return nil }
        let offset = key.head &- low, span = high &- low
        if span == UInt64(truncatingIfNeeded: count) { return Int(truncatingIfNeeded: offset) }
        // offset < span, so offset × count / span < count.
        if (offset | UInt64(truncatingIfNeeded: count)) >> 32 == 0 {
            return Int(truncatingIfNeeded: offset &* UInt64(truncatingIfNeeded: count) / span)
        }
        let fraction = Double(offset) / Double(span)
        return Swift.min(Int(fraction * Double(count)), count &- 1)
    }
}

extension NodeView {
    /// `lowerBound(key)` (a leaf only) starting at `guess` (any index below `count`): the guess
    /// and its neighbour on the key's side first, then a binary search of what is left.
    @inline(__always)
    func lowerBound(_ key: SearchKey, guess: Int) -> (index: Int, found: Bool) {
        assert(isLeaf && guess >= 0 && guess < count)
        let (p, n) = leafKey(guess)
        let c = key.order(of: p, n)
        if c == 0 { return (guess, true) }
        if c < 0 {
            // Entry `guess` sorts before the key: the answer is after it.
            let next = guess &+ 1
            if next == count { return (next, false) }
            let (q, m) = leafKey(next)
            let d = key.order(of: q, m)
            if d >= 0 { return (next, d == 0) }
            return lowerBound(key, from: next &+ 1, to: count)
        }
        // Entry `guess` sorts after the key: the answer is at or before it.
        if guess == 0 { return (0, false) }
        let (q, m) = leafKey(guess &- 1)
        let d = key.order(of: q, m)
        if d < 0 { return (guess, false) }
        if d == 0 { return (guess &- 1, true) }
        return lowerBound(key, from: 0, to: guess &- 1)
    }

    /// `childIndex(key)` (a branch only) starting at `guess` (any index below `count`).
    @inline(__always)
    func childIndex(_ key: SearchKey, guess: Int) -> Int {
        assert(!isLeaf && guess >= 0 && guess < count)
        // The first entry from 1 on whose key sorts after the search key; the child is the one
        // before it. Entry 0's key is never compared.
        let probe = Swift.max(guess, 1)
        guard probe < count else { return childIndex(key) }
        let (p, n) = branchKey(probe)
        if key.order(of: p, n) <= 0 {
            // Entry `probe` is at or below the key: the answer is after it.
            let next = probe &+ 1
            if next == count { return probe }
            let (q, m) = branchKey(next)
            if key.order(of: q, m) > 0 { return probe }
            return childIndex(key, from: next &+ 1, to: count)
        }
        if probe == 1 { return 0 }
        let (q, m) = branchKey(probe &- 1)
        if key.order(of: q, m) <= 0 { return probe &- 1 }
        return childIndex(key, from: 1, to: probe &- 1)
    }
}
