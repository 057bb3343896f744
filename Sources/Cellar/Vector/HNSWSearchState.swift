// The working sets of one HNSW layer search: a binary max-heap of (distance, slot) pairs (used
// as a min-heap by pushing negated distances, as hnswlib does with its priority queues), and a
// visited set as a bitset over node slots. Every search allocates its own, so searches share no
// mutable state and may run concurrently with each other (never with a writer).

/// A binary max-heap of (distance, slot), ordered by distance.
struct HNSWHeap {
    /// The heap's elements in heap order.
    private(set) var elements: [(distance: Float, slot: Int32)] = []

    /// An empty heap with room for `capacity` elements.
    init(capacity: Int) { elements.reserveCapacity(capacity) }

    var count: Int { elements.count }
    var isEmpty: Bool { elements.isEmpty }
    /// The element with the largest distance.
    var top: (distance: Float, slot: Int32) { elements[0] }

    /// Adds an element.
    mutating func push(_ distance: Float, _ slot: Int32) {
        elements.append((distance, slot))
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) >> 1
            guard elements[parent].distance < elements[child].distance else { break }
            elements.swapAt(parent, child)
            child = parent
        }
    }

    /// Removes and returns the element with the largest distance.
    @discardableResult
    mutating func pop() -> (distance: Float, slot: Int32) {
        let result = elements[0]
        let last = elements.removeLast()
        if !elements.isEmpty {
            elements[0] = last
            var parent = 0
            let n = elements.count
            while true {
                let left = 2 * parent + 1
                guard left < n else { break }
                var largest = left
                if left + 1 < n && elements[left + 1].distance > elements[left].distance { largest = left + 1 }
                guard elements[largest].distance > elements[parent].distance else { break }
                elements.swapAt(parent, largest)
                parent = largest
            }
        }
        return result
    }

    /// The elements sorted by ascending distance (ties by slot, for determinism).
    func sortedAscending() -> [(distance: Float, slot: Int32)] {
        elements.sorted { $0.distance < $1.distance || ($0.distance == $1.distance && $0.slot < $1.slot) }
    }
}

/// A set of node slots as a bitset.
struct HNSWVisitedSet {
    private var words: [UInt64]

    /// An empty set for slots 0..<slotCount.
    init(slotCount: Int) { words = [UInt64](repeating: 0, count: (slotCount + 63) >> 6) }

    /// Inserts `slot`; true when it was not in the set.
    @inline(__always)
    mutating func insert(_ slot: Int32) -> Bool {
        let index = Int(slot) >> 6, bit = UInt64(1) << UInt64(slot & 63)
        if words[index] & bit != 0 { return false }
        words[index] |= bit
        return true
    }
}
