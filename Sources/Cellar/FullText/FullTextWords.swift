#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The words of one text, for a full-text index: each distinct word with how often it occurs, in
/// byte order, and how many words there are in all. The words' bytes are kept in one buffer
/// (`arena`), so that tokenizing a text allocates a few arrays, not one per word.
struct FullTextWords {
    /// Where a distinct word's bytes are in `arena`, and its count.
    struct Word {
        var start: Int32
        var length: Int32
        var count: UInt32
        /// The word's first 8 bytes, big-endian, zero-padded: most comparisons end on it (a word
        /// holds no zero byte, so a shorter word's padding sorts it before a longer one).
        var head: UInt64
    }

    var arena: [UInt8] = []
    /// The distinct words, in byte order.
    var words: [Word] = []
    var total = 0

    static let none = FullTextWords()

    /// Texts of up to this many words are sorted by insertion (stable, like the larger sort).
    static let insertionSortLimit = 48

    init() {}

    /// The words of `text` (UTF-8).
    init(_ text: UnsafeRawBufferPointer) {
        var occurrences: [Word] = []
        FullTextTokenizer.forEachToken(in: text) { token in
            var head: UInt64 = 0
            for k in 0..<Swift.min(8, token.count) { head |= UInt64(token[token.startIndex + k]) << (56 - 8 * k) }
            occurrences.append(Word(start: Int32(arena.count), length: Int32(token.count), count: 1, head: head))
            arena.append(contentsOf: token)
        }
        total = occurrences.count
        guard !occurrences.isEmpty else { return }
        arena.withUnsafeBytes { bytes in
            if occurrences.count <= Self.insertionSortLimit {
                // A short text (most are): an insertion sort with the comparison inlined, where
                // the standard library's sort calls a closure per comparison.
                occurrences.withUnsafeMutableBufferPointer { words in
                    for i in 1..<words.count {
                        let word = words[i]
                        var j = i
                        while j > 0 && Self.compare(bytes, word, words[j - 1]) < 0 {
                            words[j] = words[j - 1]
                            j -= 1
                        }
                        words[j] = word
                    }
                }
            } else {
                occurrences.sort { Self.compare(bytes, $0, $1) < 0 }
            }
            for occurrence in occurrences {
                if let last = words.last, Self.compare(bytes, last, occurrence) == 0 {
                    words[words.count - 1].count += 1
                } else {
                    words.append(occurrence)
                }
            }
        }
    }

    var isEmpty: Bool { words.isEmpty }

    /// What this text adds to the statistics.
    var stats: FullTextIndex.Stats { words.isEmpty ? FullTextIndex.Stats() : FullTextIndex.Stats(documents: 1, words: Int64(total)) }

    /// The bytes of `word` in `arena`'s bytes.
    @inline(__always)
    static func bytes(_ arena: UnsafeRawBufferPointer, _ word: Word) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: arena[Int(word.start)..<Int(word.start + word.length)])
    }

    /// Byte order of two words of one arena (a prefix first).
    @inline(__always)
    static func compare(_ arena: UnsafeRawBufferPointer, _ a: Word, _ b: Word) -> Int {
        if a.head != b.head { return a.head < b.head ? -1 : 1 }
        // The same first 8 bytes (and so, both shorter, the same word).
        if a.length <= 8 && b.length <= 8 { return 0 }
        return compare(bytes(arena, a), bytes(arena, b))
    }

    /// Byte order of two byte strings (a prefix first).
    @inline(__always)
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = Swift.min(a.count, b.count)
        if common > 0 {
            let order = memcmp(a.baseAddress!, b.baseAddress!, common)
            if order != 0 { return order < 0 ? -1 : 1 }
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// Each distinct word as an array, with its count (for checks, not hot paths).
    var counts: [(word: [UInt8], count: UInt32)] {
        arena.withUnsafeBytes { arena in words.map { (Array(Self.bytes(arena, $0)), $0.count) } }
    }
}

/// Numbers words (byte strings) as they are first seen, in an open-addressing hash table over one
/// buffer of their bytes: a write transaction's changes to a full-text index are collected per
/// word number, without an array per word occurrence or hashing byte by byte through `Hasher`.
struct FullTextWordTable {
    private(set) var arena: [UInt8] = []
    /// Where word number `n`'s bytes are in `arena`.
    private(set) var spans: [(start: Int, length: Int)] = []
    /// Word number + 1 per slot (0: empty); the count is a power of two.
    private var slots: [Int32] = Array(repeating: 0, count: 1024)

    var count: Int { spans.count }

    /// The number of `word`, given to it now when it is new.
    mutating func number(of word: UnsafeRawBufferPointer) -> Int {
        if spans.count * 2 >= slots.count { grow() }
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: Self.hash(word)) & mask
        while true {
            let stored = Int(slots[slot])
            if stored == 0 {
                let number = spans.count
                spans.append((arena.count, word.count))
                arena.append(contentsOf: word)
                slots[slot] = Int32(number + 1)
                return number
            }
            let span = spans[stored - 1]
            if span.length == word.count {
                let same = arena.withUnsafeBytes { arena in
                    word.count == 0 || memcmp(arena.baseAddress! + span.start, word.baseAddress!, word.count) == 0
                }
                if same { return stored - 1 }
            }
            slot = (slot + 1) & mask
        }
    }

    /// The bytes of word number `n`.
    func word(_ n: Int) -> [UInt8] {
        Array(arena[spans[n].start..<spans[n].start + spans[n].length])
    }

    private mutating func grow() {
        slots = Array(repeating: 0, count: slots.count * 2)
        let mask = slots.count - 1
        arena.withUnsafeBytes { arena in
            for (number, span) in spans.enumerated() {
                var slot = Int(truncatingIfNeeded: Self.hash(UnsafeRawBufferPointer(rebasing: arena[span.start..<span.start + span.length]))) & mask
                while slots[slot] != 0 { slot = (slot + 1) & mask }
                slots[slot] = Int32(number + 1)
            }
        }
    }

    /// FNV-1a over the bytes, mixed at the end so that the low bits (the slot) depend on all of them.
    @inline(__always)
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        return hash ^ (hash >> 33)
    }
}
