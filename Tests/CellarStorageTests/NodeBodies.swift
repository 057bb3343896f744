@testable import CellarStorage

/// Node bodies in `NodeView`'s layout, built byte by byte for tests that hold nodes in memory: a
/// header (kind, three zero bytes, the entry count), one 4-byte slot per entry (the entry's offset
/// from the body's start), then the entries. A leaf entry is key length, value length (its top bit
/// set for an out-of-line value, whose 8-byte reference is the value), key, value; a branch entry
/// is the child's reference, key length, key. All little-endian.
enum NodeBodies {
    static func le32(_ v: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(v).littleEndian) { Array($0) } }
    static func le64(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }

    /// A leaf entry holding `value` inline.
    static func leafEntry(key: [UInt8], value: [UInt8]) -> [UInt8] {
        le32(key.count) + le32(value.count) + key + value
    }

    /// A leaf entry whose value (`length` bytes) lies out of line, at `reference`.
    static func outOfLineEntry(key: [UInt8], length: Int, reference: UInt64) -> [UInt8] {
        le32(key.count) + le32(Int(NodeView.outOfLineBit) | length) + key + le64(reference)
    }

    /// A branch entry: `key` and the reference of its child.
    static func branchEntry(key: [UInt8], child: UInt64) -> [UInt8] {
        le64(child) + le32(key.count) + key
    }

    /// The body whose slots (one per entry) are `slots`, over `heap`: what follows the slots.
    static func body(isLeaf: Bool, slots: [Int], heap: [UInt8]) -> [UInt8] {
        [isLeaf ? NodeView.leafKind : NodeView.branchKind, 0, 0, 0] + le32(slots.count) + slots.flatMap(le32) + heap
    }

    /// The body the engine writes: `entries` (in key order) back to back after the slots.
    static func compact(_ entries: [[UInt8]], isLeaf: Bool) -> [UInt8] {
        var slots: [Int] = []
        var at = 8 + 4 * entries.count
        for entry in entries {
            slots.append(at)
            at += entry.count
        }
        return body(isLeaf: isLeaf, slots: slots, heap: entries.flatMap { $0 })
    }
}
