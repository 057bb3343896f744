// Id → slot for an HNSW graph, built for the graph's one kind of key (object ids, UInt64) and
// value (slots, Int32 ≥ 0). Two forms:
// - **dense** (the usual case: a box hands out ids in sequence): a table indexed by the id's
//   distance from the lowest, as long as the ids' span stays within a few times their count;
// - **hashed** otherwise: open addressing with linear probing. Ids are the store's own, not an
//   attacker's, so a multiplicative (Fibonacci) hash is enough; a removal shifts the entries
//   after it back (no tombstones), so lookups never slow down with churn.
// A map turns hashed for good the first time an id would stretch the dense table too far.
//
// Why not `Dictionary<UInt64, Int32>`: opening a graph from its image rebuilds this map for
// every node before the first query can run, and a `Dictionary` (SipHash, generic storage)
// spent about a third of that load building it (100,000 nodes: 8 of 27 ms).
//
// A value type over arrays, as the `Dictionary` was: a copy shares the storage until one side
// writes.

struct HNSWIdMap {
    /// Dense form: the slot of id `low + i` at `direct[i]`, or `empty`. Unused once hashed.
    private var direct: [Int32] = []
    private var low: UInt64 = 0
    /// Whether the map is in its hashed form.
    private var hashed = false
    /// Hashed form, per bucket: the key (meaningless where `slots` holds `empty`).
    private var keys: [UInt64] = []
    /// Hashed form, per bucket: the value, or `empty`.
    private var slots: [Int32] = []
    /// `slots.count - 1` (a power of two minus one).
    private var mask = 0
    /// log2 of the bucket count: the hash's top bits pick the bucket.
    private var bits = 0
    /// Entries held.
    private(set) var count = 0

    private static let empty: Int32 = -1

    init() {}

    var isEmpty: Bool { count == 0 }

    /// Whether ids spanning `span` values are dense enough for the table, with `entries` held.
    @inline(__always)
    private static func dense(span: UInt64, entries: Int) -> Bool { span <= UInt64(4 * entries + 64) }

    /// Dense form: where `key`'s slot is in `direct`; nil when the table does not cover it.
    @inline(__always)
    private func directIndex(_ key: UInt64) -> Int? {
        key >= low && key - low < UInt64(direct.count) ? Int(key - low) : nil
    }

    /// The slot of `key`; setting nil removes it.
    subscript(key: UInt64) -> Int32? {
        get {
            if !hashed {
                guard let index = directIndex(key) else { return nil }
                let slot = direct[index]
                return slot == Self.empty ? nil : slot
            }
            let (index, found) = bucket(of: key)
            return found ? slots[index] : nil
        }
        set {
            if let newValue { updateValue(newValue, forKey: key) } else { removeValue(forKey: key) }
        }
    }

    /// Sets `key`'s slot; the slot it had, if any.
    @discardableResult
    mutating func updateValue(_ slot: Int32, forKey key: UInt64) -> Int32? {
        precondition(slot >= 0, "an HNSW slot is never negative")
        if !hashed {
            if count == 0 && direct.isEmpty { low = key }
            if let index = directIndex(key) {
                let old = direct[index]
                direct[index] = slot
                if old == Self.empty { count += 1; return nil }
                return old
            }
            let (newLow, end) = (min(low, key), max(low + UInt64(direct.count), key &+ 1))
            if key < UInt64.max, Self.dense(span: end - newLow, entries: count + 1) {
                stretch(low: newLow, end: end)
                direct[Int(key - low)] = slot
                count += 1
                return nil
            }
            hash()
        }
        // At most half full: short probes.
        if (count + 1) * 2 > slots.count { rehash(buckets: Swift.max(16, slots.count * 2)) }
        let (index, found) = bucket(of: key)
        if found {
            let old = slots[index]
            slots[index] = slot
            return old
        }
        keys[index] = key
        slots[index] = slot
        count += 1
        return nil
    }

    /// Removes `key`; the slot it had, if any.
    @discardableResult
    mutating func removeValue(forKey key: UInt64) -> Int32? {
        if !hashed {
            guard let index = directIndex(key), direct[index] != Self.empty else { return nil }
            let old = direct[index]
            direct[index] = Self.empty
            count -= 1
            return old
        }
        var (hole, found) = bucket(of: key)
        guard found else { return nil }
        let old = slots[hole]
        // Backward shift: each later entry of the run moves into the hole when its home is not
        // between the hole and itself (cyclically), so every entry stays reachable from its home.
        var index = hole
        while true {
            index = (index + 1) & mask
            guard slots[index] != Self.empty else { break }
            let from = home(keys[index])
            let stays = hole <= index ? (hole < from && from <= index) : (hole < from || from <= index)
            if !stays {
                keys[hole] = keys[index]
                slots[hole] = slots[index]
                hole = index
            }
        }
        slots[hole] = Self.empty
        count -= 1
        return old
    }

    /// The map of every live slot's id to the slot (`ids[s] → s` where `levels[s] ≥ 0`), built
    /// in one pass as a graph's image is opened: the dense table sized to the ids' span at once,
    /// else the hashed form sized to the count. Nil when an id is given to two slots.
    static func building(ids: UnsafeBufferPointer<UInt64>, levels: UnsafeBufferPointer<Int32>) -> HNSWIdMap? {
        precondition(ids.count == levels.count, "an id and a level per slot")
        var map = HNSWIdMap()
        var (lowest, highest, entries) = (UInt64.max, UInt64.min, 0)
        for slot in ids.indices where levels[slot] >= 0 {
            lowest = Swift.min(lowest, ids[slot])
            highest = Swift.max(highest, ids[slot])
            entries += 1
        }
        guard entries > 0 else { return map }
        guard highest - lowest < UInt64.max, dense(span: highest - lowest + 1, entries: entries) else {
            map.hashed = true
            map.reserveCapacity(entries)
            for slot in ids.indices where levels[slot] >= 0 {
                guard map.updateValue(Int32(slot), forKey: ids[slot]) == nil else { return nil }
            }
            return map
        }
        map.low = lowest
        map.direct = [Int32](repeating: empty, count: Int(highest - lowest + 1))
        let unique = map.direct.withUnsafeMutableBufferPointer { direct in
            for slot in ids.indices where levels[slot] >= 0 {
                let index = Int(ids[slot] &- lowest)
                guard direct[index] == empty else { return false }
                direct[index] = Int32(slot)
            }
            return true
        }
        guard unique else { return nil }
        map.count = entries
        return map
    }

    /// Room for `capacity` entries without growing, as far as the form allows (the dense
    /// table grows with the ids' span, which is not known yet).
    mutating func reserveCapacity(_ capacity: Int) {
        if !hashed {
            direct.reserveCapacity(capacity)
            return
        }
        var buckets = 16
        while buckets < capacity * 2 { buckets *= 2 }
        if buckets > slots.count { rehash(buckets: buckets) }
    }

    /// The keys, in no particular order.
    var keysInAnyOrder: [UInt64] {
        var result: [UInt64] = []
        result.reserveCapacity(count)
        if !hashed {
            for index in direct.indices where direct[index] != Self.empty { result.append(low + UInt64(index)) }
        } else {
            for index in slots.indices where slots[index] != Self.empty { result.append(keys[index]) }
        }
        return result
    }

    // MARK: Dense form

    /// Makes the table cover ids `newLow..<end` at least, with room to grow into on the side
    /// it grows: ids arriving downwards (or upwards) move the table a logarithmic number of
    /// times, not at every id.
    private mutating func stretch(low newLow: UInt64, end: UInt64) {
        if newLow < low {
            // As much again as the table holds, down to id 0 at most.
            let before = Swift.max(Int(low - newLow), Int(Swift.min(UInt64(direct.count), low)))
            direct.insert(contentsOf: repeatElement(Self.empty, count: before), at: 0)
            low -= UInt64(before)
        }
        let needed = Int(end - low)
        if needed > direct.count {
            let room = Swift.min(Swift.max(needed, direct.count * 2), 4 * (count + 1) + 64)
            direct.append(contentsOf: repeatElement(Self.empty, count: Swift.max(needed, room) - direct.count))
        }
    }

    /// Turns the map into its hashed form, with every entry.
    private mutating func hash() {
        let (old, oldLow, entries) = (direct, low, count)
        hashed = true
        direct = []
        count = 0
        reserveCapacity(entries + 1)
        for (index, slot) in old.enumerated() where slot != Self.empty { updateValue(slot, forKey: oldLow + UInt64(index)) }
    }

    // MARK: Hashed form

    /// The bucket where the search for `key` starts.
    @inline(__always)
    private func home(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - bits))
    }

    /// The bucket holding `key`, or the empty one where it would go.
    @inline(__always)
    private func bucket(of key: UInt64) -> (index: Int, found: Bool) {
        var index = home(key)
        while true {
            let slot = slots[index]
            if slot == Self.empty { return (index, false) }
            if keys[index] == key { return (index, true) }
            index = (index + 1) & mask
        }
    }

    private mutating func rehash(buckets: Int) {
        let (oldKeys, oldSlots) = (keys, slots)
        keys = [UInt64](repeating: 0, count: buckets)
        slots = [Int32](repeating: Self.empty, count: buckets)
        mask = buckets - 1
        bits = buckets.trailingZeroBitCount
        for index in oldSlots.indices where oldSlots[index] != Self.empty {
            let (bucket, _) = bucket(of: oldKeys[index])
            keys[bucket] = oldKeys[index]
            slots[bucket] = oldSlots[index]
        }
    }
}
