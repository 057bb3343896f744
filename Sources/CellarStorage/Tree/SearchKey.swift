/// A key being searched for in a node, its first 8 bytes loaded once as a big-endian word: most
/// comparisons of a search are decided by those bytes (an object key is 8 bytes, an index key
/// starts with the 8-byte value), so each probe costs one load and one compare.
struct SearchKey {
    let base: UnsafeRawPointer
    let count: Int
    /// Bytes 0..<8 as a big-endian word; 0 when the key is shorter (then unused).
    let head: UInt64

    @inline(__always)
    init(_ base: UnsafeRawPointer, _ count: Int) {
        self.base = base
        self.count = count
        head = count >= 8 ? UInt64(bigEndian: base.loadUnaligned(as: UInt64.self)) : 0
    }

    /// `KeyCompare.compare(other, otherCount, self)`: negative when `other` sorts first.
    @inline(__always)
    func order(of other: UnsafeRawPointer, _ otherCount: Int) -> Int {
        guard count >= 8 && otherCount >= 8 else { return KeyCompare.compare(other, otherCount, base, count) }
        let h = UInt64(bigEndian: other.loadUnaligned(as: UInt64.self))
        if h != head { return h < head ? -1 : 1 }
        if otherCount == 8 && count == 8 { return 0 }
        return KeyCompare.compare(other + 8, otherCount &- 8, base + 8, count &- 8)
    }
}

extension UnsafeRawBufferPointer {
    /// The start of the buffer; for an empty buffer (which may have none) any non-null pointer,
    /// never read through because the count is 0.
    @inlinable @inline(__always)
    public var nonNullBase: UnsafeRawPointer { baseAddress ?? UnsafeRawPointer(bitPattern: 1)! }
}
