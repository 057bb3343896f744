/// Puts a write transaction holds back for one tree, to apply them later in key order.
///
/// Why: a secondary index's keys arrive in the order objects are written, which is seldom the
/// index's order (notes by author: each insert lands in another leaf), so each put would descend
/// from the root and miss the cache on the way. Sorted, the same entries go to one leaf after the
/// other, nearly all through the tree's finger (see `Finger`). `WriteTransaction.putDeferred`
/// buffers here; the transaction applies the buffer (`WriteTransaction.applyDeferred`) before
/// anything else touches the tree, so no read can tell a deferred put from an immediate one.
///
/// Keys and values are copied into one growing byte buffer; an entry is where its key starts and
/// the two lengths. The sort is stable (a later put of the same key must win): a radix sort on
/// the first 16 bytes when every key is at most that long (index keys are a value part and an
/// 8-byte id), else a comparison sort with the entry's position as the tie-breaker.
final class DeferredPuts {
    /// A tree's first puts in a transaction go in at once; puts are held back from this many on.
    static let holdBackAfter = 64
    /// Apply once this many bytes of keys and values are held…
    static let byteLimit = 8 << 20
    /// …or this many entries. Small enough for the sort's two buffers (24 bytes an entry) to
    /// stay in the cache; large enough that each leaf a batch reaches gets many keys at once.
    static let entryLimit = 1 << 14

    /// Where an entry's key starts in `bytes` (its value follows it), and the two lengths.
    struct Entry {
        var offset: Int
        var keyLength: Int
        var valueLength: Int
    }

    /// The mutable fields, behind a pointer (a class's stored `var`s cost an exclusivity check on
    /// every access, and an append touches them all).
    private struct Fields {
        var bytes: UnsafeMutableRawPointer
        var byteCapacity: Int
        var used = 0
        var entries: UnsafeMutablePointer<Entry>
        var entryCapacity: Int
        var count = 0
        /// The longest key held (decides the sort).
        var longestKey = 0
        /// Whether any entry has a value (an index's never do).
        var hasValues = false
    }

    private let fields: UnsafeMutablePointer<Fields>
    /// The radix sort's two buffers and its counts, kept from one batch to the next (touched
    /// once a batch, not per entry: plain stored properties).
    private var sortBuffers: (UnsafeMutablePointer<SortKey>, UnsafeMutablePointer<SortKey>)?
    private var sortCapacity = 0
    private let countsBuffer = UnsafeMutablePointer<Int>.allocate(capacity: 256)

    init() {
        fields = .allocate(capacity: 1)
        fields.initialize(to: Fields(bytes: .allocate(byteCount: 16 << 10, alignment: 8), byteCapacity: 16 << 10,
                                     entries: .allocate(capacity: 1024), entryCapacity: 1024))
    }

    deinit {
        sortBuffers?.0.deallocate()
        sortBuffers?.1.deallocate()
        countsBuffer.deallocate()
        fields.pointee.bytes.deallocate()
        fields.pointee.entries.deallocate()
        fields.deinitialize(count: 1)
        fields.deallocate()
    }

    var isEmpty: Bool { fields.pointee.count == 0 }
    var isFull: Bool { fields.pointee.used >= Self.byteLimit || fields.pointee.count >= Self.entryLimit }

    @inline(__always)
    func append(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        let size = key.count &+ value.count
        if fields.pointee.used &+ size > fields.pointee.byteCapacity { growBytes(fields.pointee.used + size) }
        if fields.pointee.count == fields.pointee.entryCapacity { growEntries() }
        let used = fields.pointee.used
        let at = fields.pointee.bytes + used
        if key.count > 0 { at.copyMemory(from: key.baseAddress!, byteCount: key.count) }
        if value.count > 0 { (at + key.count).copyMemory(from: value.baseAddress!, byteCount: value.count) }
        (fields.pointee.entries + fields.pointee.count).initialize(to: Entry(offset: used, keyLength: key.count, valueLength: value.count))
        fields.pointee.count &+= 1
        fields.pointee.used = used &+ size
        if key.count > fields.pointee.longestKey { fields.pointee.longestKey = key.count }
        if value.count > 0 { fields.pointee.hasValues = true }
    }

    private func growBytes(_ needed: Int) {
        (fields.pointee.bytes, fields.pointee.byteCapacity) = GrowableBytes.grow(
            fields.pointee.bytes, used: fields.pointee.used, capacity: fields.pointee.byteCapacity, needed: needed)
    }

    private func growEntries() {
        let capacity = fields.pointee.entryCapacity * 2
        let entries = UnsafeMutablePointer<Entry>.allocate(capacity: capacity)
        entries.moveInitialize(from: fields.pointee.entries, count: fields.pointee.count)
        fields.pointee.entries.deallocate()
        fields.pointee.entries = entries
        fields.pointee.entryCapacity = capacity
    }

    /// Forgets every entry (the memory is kept for the next ones).
    func removeAll() {
        fields.pointee.count = 0
        fields.pointee.used = 0
        fields.pointee.longestKey = 0
        fields.pointee.hasValues = false
    }

    /// Calls `body` with each entry's key and value in key order; a key held twice comes in the
    /// order it was put. The buffer must not change during the calls. When `body` throws, the
    /// entries it was given so far (the failed one included) are forgotten and the rest kept, so
    /// that applying again resumes after them.
    func forEachSorted(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        let n = fields.pointee.count
        guard n > 0 else { return }
        let bytes = fields.pointee.bytes
        let entries = fields.pointee.entries
        var done = 0
        // The entries not applied yet, in the order they were to come: kept when `body` throws.
        var rest: (Int) -> Int = { $0 }
        defer {
            if done == n {
                removeAll()
            } else {
                let kept = (done..<n).map { entries[rest($0)] }
                for (i, entry) in kept.enumerated() { entries[i] = entry }
                fields.pointee.count = kept.count
            }
        }
        if fields.pointee.longestKey <= 16 {
            // The sorted keys carry the key bytes themselves: the buffer is read again only for
            // values (an index's are empty), not at random for every key.
            let keys = radixSorted()
            rest = { Int(truncatingIfNeeded: keys[$0].tag & 0xFFFF_FFFF) }
            var words: (UInt64, UInt64) = (0, 0)
            for i in 0..<n {
                let key = keys[i]
                let length = Int(truncatingIfNeeded: key.tag >> 32)
                words = (key.high.bigEndian, key.low.bigEndian)
                var value = UnsafeRawBufferPointer(start: nil, count: 0)
                if fields.pointee.hasValues {
                    let entry = entries[Int(truncatingIfNeeded: key.tag & 0xFFFF_FFFF)]
                    value = UnsafeRawBufferPointer(start: bytes + entry.offset + entry.keyLength, count: entry.valueLength)
                }
                done += 1
                try withUnsafeBytes(of: &words) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<length]), value) }
            }
        } else {
            let order = (0..<n).sorted { a, b in
                let x = entries[a], y = entries[b]
                let c = KeyCompare.compare(bytes + x.offset, x.keyLength, bytes + y.offset, y.keyLength)
                return c != 0 ? c < 0 : a < b
            }
            rest = { order[$0] }
            for index in order {
                let entry = entries[index]
                let key = UnsafeRawBufferPointer(start: bytes + entry.offset, count: entry.keyLength)
                let value = UnsafeRawBufferPointer(start: bytes + entry.offset + entry.keyLength, count: entry.valueLength)
                done += 1
                try body(key, value)
            }
        }
    }

    /// One key of at most 16 bytes as two big-endian words, zero-padded, and its length: ordering
    /// these three compares the keys (a shorter key that is a prefix of a longer one pads with
    /// zeros and then loses on length, as `KeyCompare` orders them).
    private struct SortKey {
        var high: UInt64
        var low: UInt64
        /// The key's length in the top 32 bits, the entry's index in the lower ones.
        var tag: UInt64
    }

    /// Least-significant-digit radix sort, one byte a pass, skipping the bytes all keys share
    /// (an index of small integers over sequential ids varies in four or five of the seventeen).
    /// Digits, least significant first: the length, then `low`'s bytes, then `high`'s.
    private func radixSorted() -> UnsafeMutablePointer<SortKey> {
        let n = fields.pointee.count
        let bytes = fields.pointee.bytes
        let entries = fields.pointee.entries
        if sortCapacity < n {
            sortBuffers?.0.deallocate()
            sortBuffers?.1.deallocate()
            sortCapacity = max(n, 1024)
            sortBuffers = (.allocate(capacity: sortCapacity), .allocate(capacity: sortCapacity))
        }
        let (keys, other) = sortBuffers!
        var differHigh: UInt64 = 0, differLow: UInt64 = 0, differLength: UInt64 = 0
        var firstHigh: UInt64 = 0, firstLow: UInt64 = 0, firstLength: UInt64 = 0
        for i in 0..<n {
            let entry = entries[i]
            var padded: (UInt64, UInt64) = (0, 0)
            withUnsafeMutableBytes(of: &padded) { $0.baseAddress!.copyMemory(from: bytes + entry.offset, byteCount: entry.keyLength) }
            let high = UInt64(bigEndian: padded.0), low = UInt64(bigEndian: padded.1), length = UInt64(entry.keyLength)
            if i == 0 { firstHigh = high; firstLow = low; firstLength = length }
            differHigh |= high ^ firstHigh
            differLow |= low ^ firstLow
            differLength |= length ^ firstLength
            (keys + i).initialize(to: SortKey(high: high, low: low, tag: length << 32 | UInt64(i)))
        }
        // A pass over a digit all keys share would move nothing.
        var source = keys, target = other
        let counts = countsBuffer
        func pass(_ digit: (SortKey) -> Int) {
            counts.initialize(repeating: 0, count: 256)
            for i in 0..<n { counts[digit(source[i])] &+= 1 }
            var sum = 0
            for b in 0..<256 { let c = counts[b]; counts[b] = sum; sum &+= c }
            for i in 0..<n {
                let key = source[i]
                let b = digit(key)
                (target + counts[b]).initialize(to: key)
                counts[b] &+= 1
            }
            swap(&source, &target)
        }
        if differLength != 0 { pass { Int(truncatingIfNeeded: $0.tag >> 32) & 0xFF } }
        for b in 0..<8 where (differLow >> UInt64(8 * b)) & 0xFF != 0 {
            let shift = UInt64(8 * b)
            pass { Int(truncatingIfNeeded: $0.low >> shift) & 0xFF }
        }
        for b in 0..<8 where (differHigh >> UInt64(8 * b)) & 0xFF != 0 {
            let shift = UInt64(8 * b)
            pass { Int(truncatingIfNeeded: $0.high >> shift) & 0xFF }
        }
        // The sorted keys are in `source` (one of the two buffers, kept for the next batch).
        return source
    }
}
