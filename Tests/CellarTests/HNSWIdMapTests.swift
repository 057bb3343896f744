// The HNSW graph's id → slot map, against a `Dictionary` doing the same: random inserts,
// updates, removals and lookups, with ids handed out in sequence (the dense form), with gaps,
// and far apart (the hashed form), and across the change from one form to the other.

@testable import Cellar
import CellarTestSupport
import Testing

struct HNSWIdMapTests {
    /// Runs `steps` random operations on ids drawn by `nextId`, checking every answer and, at
    /// the end, every id ever used and the keys.
    private func compare(seed: UInt64, steps: Int, nextId: (inout SplitMix64) -> UInt64) {
        var random = SplitMix64(seed: seed)
        var map = HNSWIdMap(), model: [UInt64: Int32] = [:]
        var used: [UInt64] = []
        for _ in 0..<steps {
            let roll = random.next() % 10
            if roll < 5 || used.isEmpty {
                let id = nextId(&random), slot = Int32(random.next() % 1_000_000)
                used.append(id)
                #expect(map.updateValue(slot, forKey: id) == model.updateValue(slot, forKey: id))
            } else if roll < 7 {
                let id = used[Int(random.next() % UInt64(used.count))]
                #expect(map.removeValue(forKey: id) == model.removeValue(forKey: id))
            } else if roll < 8 {
                let id = used[Int(random.next() % UInt64(used.count))]
                let slot = Int32(random.next() % 1_000_000)
                map[id] = slot
                model[id] = slot
            } else {
                let id = random.next() % 2 == 0 ? used[Int(random.next() % UInt64(used.count))] : nextId(&random)
                #expect(map[id] == model[id])
            }
            #expect(map.count == model.count)
        }
        for id in used { #expect(map[id] == model[id]) }
        #expect(map.keysInAnyOrder.sorted() == model.keys.sorted())
        #expect(map.isEmpty == model.isEmpty)
    }

    @Test func idsInSequence() {
        var next: UInt64 = 1
        compare(seed: 1, steps: 20_000) { _ in defer { next += 1 }; return next }
    }

    @Test func idsInDescendingOrder() {
        var next: UInt64 = 40_000
        compare(seed: 5, steps: 20_000) { _ in defer { next -= 1 }; return next }
    }

    @Test func idsWithGapsAndOutOfOrder() {
        compare(seed: 2, steps: 20_000) { random in 1_000 + random.next() % 30_000 }
    }

    @Test func idsFarApart() {
        compare(seed: 3, steps: 20_000) { random in random.next() }
    }

    /// Dense at first, then ids far beyond the span (the map turns hashed), then below the
    /// lowest id, and the largest id there is.
    @Test func fromDenseToHashed() {
        var step: UInt64 = 0
        compare(seed: 4, steps: 30_000) { random in
            step += 1
            switch step {
            case ..<5_000: return 500 + step
            case 5_000: return UInt64.max
            case ..<10_000: return random.next() % 2 == 0 ? step : 1 << 40 + step
            default: return random.next() % 6_000
            }
        }
    }

    /// The map built at once from a graph's slots (as an image is opened) answers as the one
    /// built an entry at a time: ids in sequence, shuffled, with gaps, far apart, with free slots
    /// (level -1) between; an id given to two live slots makes no map, one shared with a free
    /// slot does.
    @Test func builtFromSlots() {
        var random = SplitMix64(seed: 6)
        let shapes: [(Int) -> UInt64] = [
            { UInt64($0) + 1 }, { 70_000 - UInt64($0) }, { UInt64($0) * 3 + 11 }, { UInt64($0) << 36 | 5 },
        ]
        for (shape, id) in shapes.enumerated() {
            for count in [0, 1, 2, 700, 5_000] {
                var ids = (0..<count).map(id)
                ids.shuffle(using: &random)
                let levels = ids.indices.map { _ in random.next() % 5 == 0 ? Int32(-1) : Int32(random.next() % 3) }
                var expected = HNSWIdMap()
                for slot in ids.indices where levels[slot] >= 0 { expected[ids[slot]] = Int32(slot) }
                let built = ids.withUnsafeBufferPointer { i in levels.withUnsafeBufferPointer { HNSWIdMap.building(ids: i, levels: $0) } }
                guard let built else {
                    Issue.record("shape \(shape), \(count) slots: no map")
                    continue
                }
                #expect(built.count == expected.count)
                #expect(built.keysInAnyOrder.sorted() == expected.keysInAnyOrder.sorted())
                for slot in ids.indices { #expect(built[ids[slot]] == expected[ids[slot]]) }
                #expect(built[id(count)] == nil && built[0] == nil && built[UInt64.max] == nil)
                // It grows as the incremental one does.
                var grown = built
                grown[id(count + 1)] = 99
                #expect(grown[id(count + 1)] == 99 && grown.count == expected.count + 1)
                guard count >= 2, let live = levels.firstIndex(where: { $0 >= 0 }) else { continue }
                var twice = ids
                let other = live == 0 ? 1 : 0
                twice[other] = ids[live]
                var levelsTwice = levels
                levelsTwice[other] = 0
                #expect(twice.withUnsafeBufferPointer { i in levelsTwice.withUnsafeBufferPointer { HNSWIdMap.building(ids: i, levels: $0) } } == nil,
                        "shape \(shape): an id given twice")
                levelsTwice[other] = -1
                #expect(twice.withUnsafeBufferPointer { i in levelsTwice.withUnsafeBufferPointer { HNSWIdMap.building(ids: i, levels: $0) } } != nil,
                        "shape \(shape): an id shared with a free slot")
            }
        }
    }

    /// Removing every entry and adding again, in both forms.
    @Test func emptiedAndRefilled() {
        for far in [false, true] {
            var map = HNSWIdMap()
            let ids = (0..<5_000).map { UInt64($0) * (far ? 1 << 33 : 1) + 7 }
            for (slot, id) in ids.enumerated() { #expect(map.updateValue(Int32(slot), forKey: id) == nil) }
            for id in ids.reversed() { #expect(map.removeValue(forKey: id) != nil) }
            #expect(map.isEmpty && map.keysInAnyOrder.isEmpty)
            for id in ids { #expect(map[id] == nil) }
            for (slot, id) in ids.enumerated() { map[id] = Int32(slot) }
            for (slot, id) in ids.enumerated() { #expect(map[id] == Int32(slot)) }
        }
    }
}
