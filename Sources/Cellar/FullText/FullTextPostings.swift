/// The posting blocks of a full-text index: for each word, the ids of the objects whose text has
/// it, with how often, in blocks of at most `maxEntries`.
///
/// A block's key is the word's folded UTF-8, a zero byte, then the block's first object id
/// (8 bytes, big-endian): a word's blocks are contiguous and in id order, the blocks of every word
/// starting with `data` lie under the prefix `data`, and the block holding an id is the last one
/// whose key is not above `word ‖ 0 ‖ id`. Blocks of one word never overlap.
///
/// A block's value: the number of entries (varint), then per entry, in id order, the gap from the
/// previous id (the first from the block's first id, so 0) shifted left by one, with the low bit
/// set when the word occurs more than once, as a varint — then, only when that bit is set, the
/// count minus 2 as a varint. Most words occur once in a text, so an entry is mostly the gap
/// alone: one or two bytes.
enum FullTextPostings {
    /// The most entries in a block: a change rewrites one block, a read decodes whole blocks.
    static let maxEntries = 128

    /// One object with the word, and how often the word occurs in its text.
    struct Entry: Equatable {
        var id: Id
        var count: UInt32
    }

    /// The key prefix of every block of `word`.
    static func wordPrefix(_ word: [UInt8]) -> [UInt8] { word + [0] }

    /// The key of `word`'s block that starts at `firstId`.
    static func key(_ word: [UInt8], firstId: Id) -> [UInt8] {
        var key = wordPrefix(word)
        IndexKey.appendBigEndian(firstId, to: &key)
        return key
    }

    /// The word and first id of a block's key; `fileCorrupt` for a key that is not one.
    static func split(key: UnsafeRawBufferPointer, index: IndexSchema) throws -> (word: UnsafeRawBufferPointer, firstId: Id) {
        guard key.count >= 10, key[key.count - 9] == 0 else {
            throw CellarError.fileCorrupt("full-text index \(index.id) has a key of \(key.count) bytes that is not a word, a zero and an id")
        }
        let firstId = Id(bigEndian: key.loadUnaligned(fromByteOffset: key.count - 8, as: UInt64.self))
        return (UnsafeRawBufferPointer(rebasing: key[..<(key.count - 9)]), firstId)
    }

    // MARK: Encoding

    static func encode(_ entries: ArraySlice<Entry>) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entries.count * 2 + 2)
        Varint.append(UInt64(entries.count), to: &bytes)
        var previous = entries.first?.id ?? 0
        for entry in entries {
            let gap = entry.id - previous
            previous = entry.id
            Varint.append(gap << 1 | (entry.count > 1 ? 1 : 0), to: &bytes)
            if entry.count > 1 { Varint.append(UInt64(entry.count - 2), to: &bytes) }
        }
        return bytes
    }

    /// Calls `body` with each entry of the block at `firstId`, in id order; `fileCorrupt` for a
    /// block that does not decode (a count over `maxEntries`, ids out of order, bytes left over).
    @inline(__always)
    static func forEachEntry(_ block: UnsafeRawBufferPointer, firstId: Id, index: IndexSchema, _ body: (Entry) throws -> Void) throws {
        var reader = VarintReader(bytes: block)
        guard let count = reader.next(), count >= 1, count <= UInt64(maxEntries) else {
            throw corrupt(index, "a block with a count out of 1…\(maxEntries)")
        }
        var id = firstId
        for position in 0..<Int(count) {
            guard let coded = reader.next() else { throw corrupt(index, "a block shorter than its count") }
            let gap = coded >> 1
            if position == 0 ? gap != 0 : gap == 0 { throw corrupt(index, "a block whose ids are not in order from its key") }
            let (next, overflow) = id.addingReportingOverflow(gap)
            if overflow { throw corrupt(index, "a block whose ids overflow") }
            id = next
            var occurrences: UInt32 = 1
            if coded & 1 == 1 {
                guard let extra = reader.next(), extra < UInt64(UInt32.max - 2) else { throw corrupt(index, "a block with a bad word count") }
                occurrences = UInt32(extra) + 2
            }
            try body(Entry(id: id, count: occurrences))
        }
        guard reader.isAtEnd else { throw corrupt(index, "a block with bytes after its entries") }
    }

    /// The number of entries of a block (its first varint), without decoding them.
    static func count(_ block: UnsafeRawBufferPointer, index: IndexSchema) throws -> Int {
        var reader = VarintReader(bytes: block)
        guard let count = reader.next(), count >= 1, count <= UInt64(maxEntries) else {
            throw corrupt(index, "a block with a count out of 1…\(maxEntries)")
        }
        return Int(count)
    }

    static func decode(_ block: UnsafeRawBufferPointer, firstId: Id, index: IndexSchema) throws -> [Entry] {
        var entries: [Entry] = []
        try forEachEntry(block, firstId: firstId, index: index) { entries.append($0) }
        return entries
    }

    static func corrupt(_ index: IndexSchema, _ what: String) -> CellarError {
        CellarError.fileCorrupt("full-text index \(index.id) has \(what)")
    }

    /// Reads LEB128 varints from bytes; nil at the end or for a malformed one (overlong, or
    /// above 64 bits): each value has one encoding, so a block decodes and encodes back alike.
    struct VarintReader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }

        @inline(__always)
        mutating func next() -> UInt64? {
            try? Varint.read(bytes, at: &offset)
        }
    }
}
