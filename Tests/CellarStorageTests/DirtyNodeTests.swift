@testable import CellarStorage
import CellarTestSupport
import Testing

/// `DirtyNode`'s copy of a committed node and its encoding at commit: whatever the layout of the
/// node copied (entries back to back in key order, as the engine writes them, or reversed,
/// shuffled, with gaps between them, as another writer might), the copy reads entry by entry as
/// the node does, and encodes compactly, entries in key order, with exactly its dirty references
/// resolved; the same bytes whether the copy is still in its first layout (encoded at once) or
/// was changed (encoded entry by entry).
@Suite struct DirtyNodeTests {
    enum Layout: CaseIterable { case backToBack, reversed, shuffled, gaps }

    /// A node's entries (each one's bytes, in key order) and whether it is a leaf.
    struct Entries {
        var isLeaf: Bool
        var bytes: [[UInt8]]
    }

    /// Random entries: leaf entries with inline values of 0–40 bytes or out-of-line references,
    /// or branch entries with references to committed children.
    static func entries(_ rng: inout SplitMix64, isLeaf: Bool) -> Entries {
        var keys = Set<UInt64>()
        let n = 1 + Int(rng.next() % 60)
        while keys.count < n { keys.insert(rng.next() % 10_000) }
        let bytes = keys.sorted().map { number -> [UInt8] in
            let key = bigEndianKey(number) + [UInt8](repeating: 7, count: Int(rng.next() % 5))
            guard isLeaf else { return NodeBodies.branchEntry(key: key, child: rng.next() % (1 << 40)) }
            if rng.next() % 4 == 0 {
                return NodeBodies.outOfLineEntry(key: key, length: 2_000, reference: rng.next() % (1 << 40))
            }
            let value = (0..<Int(rng.next() % 41)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            return NodeBodies.leafEntry(key: key, value: value)
        }
        return Entries(isLeaf: isLeaf, bytes: bytes)
    }

    /// The node body holding `entries` laid out as `layout` says.
    static func body(_ entries: Entries, _ layout: Layout, _ rng: inout SplitMix64) -> [UInt8] {
        let n = entries.bytes.count
        var order = Array(0..<n)
        switch layout {
        case .backToBack, .gaps: break
        case .reversed: order.reverse()
        case .shuffled: order.shuffle(using: &rng)
        }
        var slots = [Int](repeating: 0, count: n)
        var heap: [UInt8] = []
        for i in order {
            if layout == .gaps { heap += [UInt8](repeating: 0xEE, count: Int(rng.next() % 9)) }
            slots[i] = 8 + 4 * n + heap.count
            heap += entries.bytes[i]
        }
        return NodeBodies.body(isLeaf: entries.isLeaf, slots: slots, heap: heap)
    }

    /// The entries of a node body, in key order.
    static func entries(from body: [UInt8]) -> [[UInt8]] {
        body.withUnsafeBytes { raw in
            let view = NodeView(body: raw.baseAddress!)
            return (0..<view.count).map { Array(UnsafeRawBufferPointer(start: view.entry($0), count: view.entrySize($0))) }
        }
    }

    static func encoded(_ node: DirtyNode, resolve: (UInt64) -> UInt64) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: node.encodedSize) { buffer, count in
            node.encode(into: UnsafeMutableRawPointer(buffer.baseAddress!), resolve: resolve)
            count = node.encodedSize
        }
    }

    @Test(arguments: Layout.allCases)
    func copiesReadAndEncodeAsTheNode(layout: Layout) throws {
        var rng = SplitMix64(seed: 0xD1E7 &+ UInt64(Layout.allCases.firstIndex(of: layout)!))
        for round in 0..<200 {
            let isLeaf = round % 2 == 0
            var entries = Self.entries(&rng, isLeaf: isLeaf)
            let body = Self.body(entries, layout, &rng)
            let copy = body.withUnsafeBytes { DirtyNode(copying: NodeView(body: $0.baseAddress!), capacity: round % 3 == 0 ? 64 : 4096) }
            let view = copy.view
            #expect(view.count == entries.bytes.count && view.isLeaf == isLeaf, "\(layout), round \(round)")
            for (i, bytes) in entries.bytes.enumerated() {
                #expect(Array(UnsafeRawBufferPointer(start: view.entry(i), count: view.entrySize(i))) == bytes,
                        "\(layout), round \(round): entry \(i)")
            }
            #expect(copy.encodedSize == NodeBodies.compact(entries.bytes, isLeaf: isLeaf).count, "\(layout), round \(round): size")

            // Some references made dirty in place (as a write does on its way down), each resolved
            // to an offset of its own; committed ones must not be passed to `resolve`.
            var dirty: [Int: UInt64] = [:]
            for i in entries.bytes.indices where rng.next() % 3 == 0 {
                let tagged = dirtyTag | UInt64(i)
                if isLeaf {
                    guard view.valueWord(i) & NodeView.outOfLineBit != 0 else { continue }
                    copy.setOutOfLineRef(i, tagged)
                    let keyLength = Int(view.entry(i).loadLE(UInt32.self, at: 0))
                    entries.bytes[i].replaceSubrange((8 + keyLength)..<(16 + keyLength), with: NodeBodies.le64(5_000 + UInt64(i)))
                } else {
                    copy.setChild(i, tagged)
                    entries.bytes[i].replaceSubrange(0..<8, with: NodeBodies.le64(5_000 + UInt64(i)))
                }
                dirty[i] = 5_000 + UInt64(i)
            }
            let resolve = { (ref: UInt64) -> UInt64 in
                guard ref & dirtyTag != 0 else { return ref }
                return dirty[Int(ref & ~dirtyTag)] ?? 0
            }
            let expected = NodeBodies.compact(entries.bytes, isLeaf: isLeaf)
            #expect(Self.encoded(copy, resolve: resolve) == expected, "\(layout), round \(round): encoded as copied")

            // Changed (an entry added past the last and removed again): encoded entry by entry,
            // to the same bytes.
            let last = try #require(entries.bytes.last)
            let key = [UInt8](repeating: 0xFF, count: 9)
            key.withUnsafeBytes { key in
                last.withUnsafeBytes { last in
                    if isLeaf {
                        copy.insertLeaf(at: copy.count, key: key, value: UnsafeRawBufferPointer(rebasing: last.prefix(3)))
                    } else {
                        copy.insertBranch(at: copy.count, key: key, child: 1)
                    }
                }
            }
            copy.remove(at: copy.count - 1)
            #expect(Self.encoded(copy, resolve: resolve) == expected, "\(layout), round \(round): encoded after a change")

            // A fresh copy with one entry removed, and one split in two: each encodes to the
            // entries it keeps.
            let removed = body.withUnsafeBytes { DirtyNode(copying: NodeView(body: $0.baseAddress!), capacity: 4096) }
            let gone = Int(rng.next() % UInt64(removed.count))
            removed.remove(at: gone)
            var kept = Self.entries(from: body)
            kept.remove(at: gone)
            #expect(Self.encoded(removed, resolve: resolve) == NodeBodies.compact(kept, isLeaf: isLeaf), "\(layout), round \(round): removed")
            let left = body.withUnsafeBytes { DirtyNode(copying: NodeView(body: $0.baseAddress!), capacity: 4096) }
            let all = Self.entries(from: body)
            let at = Int(rng.next() % UInt64(all.count))
            let right = left.splitOff(from: at, capacity: 4096)
            #expect(Self.encoded(left, resolve: resolve) == NodeBodies.compact(Array(all[..<at]), isLeaf: isLeaf), "\(layout), round \(round): left")
            #expect(Self.encoded(right, resolve: resolve) == NodeBodies.compact(Array(all[at...]), isLeaf: isLeaf), "\(layout), round \(round): right")
        }
    }
}
