import BenchSupport
import Foundation

/// The documents a workload runs on, with the reference index over them: whatever their source,
/// the workload draws its queries and computes their answers from this.
///
/// Every text is lowercase ASCII letters and digits in words joined by single spaces, so that both
/// engines' tokenizers split it into exactly the words the reference index holds. Words are
/// numbered by rank: rank 0 is the most frequent.
struct Corpus {
    /// Where the documents come from (`--corpus`).
    enum Source: String {
        case synthetic
        case man
    }

    let source: Source
    /// What the documents are, for the table's title: `documents of 40–80 words, …`.
    let title: String
    /// The words by rank.
    let vocabulary: [String]
    /// Document i's text at index i − 1.
    let texts: [String]
    /// Each rank's document ids, ascending: the reference index.
    let postings: [[Int32]]
    /// Words in all documents (with repeats).
    let totalWords: Int
    /// The ranks words are drawn from: those below `drawable` (the synthetic vocabulary's every
    /// word; the real corpus's words in at least two documents).
    let drawable: Int

    var n: Int { texts.count }

    /// A synthetic document's words: from `minWords` to `maxWords` (uniform).
    static let minWords = 40
    static let maxWords = 80

    /// The synthetic documents: the word list's lowercase words (`loadWordList`) by rank;
    /// document i (id and rowid i, 1...N) has `minWords` to `maxWords` words, each drawn
    /// Zipf-distributed (s = 1) over the ranks with SplitMix64 seeded with 2026, joined by single
    /// spaces. Every rank can be drawn as a query word, found or not.
    static func synthetic(n: Int) throws -> Corpus {
        let vocabulary = try loadWordList()
        let v = vocabulary.count
        let bytes = vocabulary.map { Array($0.utf8) }

        // Zipf (s = 1): P(rank r) proportional to 1 / (r + 1); drawn by binary search in the CDF.
        var cdf = [Double](repeating: 0, count: v)
        var sum = 0.0
        for r in 0..<v {
            sum += 1 / Double(r + 1)
            cdf[r] = sum
        }
        var rng = SplitMix64(state: 2026)
        func zipf() -> Int {
            let u = Double(rng.next() >> 11) * 0x1p-53 * sum
            var lo = 0, hi = v - 1
            while lo < hi {
                let mid = (lo + hi) / 2
                if cdf[mid] < u { lo = mid + 1 } else { hi = mid }
            }
            return lo
        }

        // The documents, and the reference index: each rank's ids in id order.
        var postings = [[Int32]](repeating: [], count: v)
        var lastId = [Int32](repeating: 0, count: v)
        var texts: [String] = []
        texts.reserveCapacity(n)
        var total = 0
        var buffer: [UInt8] = []
        for i in 1...n {
            let count = minWords + Int(rng.next() % UInt64(maxWords - minWords + 1))
            total += count
            buffer.removeAll(keepingCapacity: true)
            for k in 0..<count {
                let r = zipf()
                if k > 0 { buffer.append(UInt8(ascii: " ")) }
                buffer.append(contentsOf: bytes[r])
                if lastId[r] != Int32(i) {
                    lastId[r] = Int32(i)
                    postings[r].append(Int32(i))
                }
            }
            texts.append(String(decoding: buffer, as: UTF8.self))
        }
        let title = String(format: "documents of %d–%d words (%.1f on average), Zipf (s = 1) over %@ words",
                           minWords, maxWords, Double(total) / Double(n), grouped(v))
        return Corpus(source: .synthetic, title: title, vocabulary: vocabulary, texts: texts, postings: postings,
                      totalWords: total, drawable: v)
    }

    static let wordList = "/usr/share/dict/words"

    /// The word list's words of lowercase ASCII letters, shuffled (SplitMix64, seed 1): the word at
    /// position r has rank r, so that frequent words are not all short or all early in the alphabet.
    static func loadWordList() throws -> [String] {
        guard let data = FileManager.default.contents(atPath: wordList) else {
            throw BenchError("cannot read \(wordList): install Debian's wamerican (scripts/ensure-deps.sh --bench)")
        }
        var words: [String] = []
        for line in data.split(separator: UInt8(ascii: "\n")) where !line.isEmpty && line.allSatisfy({ $0 >= 0x61 && $0 <= 0x7A }) {
            words.append(String(decoding: line, as: UTF8.self))
        }
        words = Array(Set(words)).sorted()
        guard words.count >= 10_000 else { throw BenchError("\(wordList) has only \(words.count) lowercase words") }
        var rng = SplitMix64(state: 1)
        var k = words.count - 1
        while k >= 1 {
            words.swapAt(k, Int(rng.next() % UInt64(k + 1)))
            k -= 1
        }
        return words
    }

    /// The real text: the first `n` documents of the English man pages (`ManPages`: one paragraph
    /// each, normalised), all of them if there are fewer. Words are ranked by the number of
    /// documents having them, most first (ties in byte order); the words of one document only are
    /// never drawn for a query.
    static func manPages(n: Int, cacheFolder: String) throws -> Corpus {
        let rendered = try ManPages.load(cacheFolder: cacheFolder)
        let texts = Array(rendered.documents.prefix(n))
        try check("man pages: at least one document", !texts.isEmpty)
        if texts.count < n {
            log("fts-bench: the man pages have \(grouped(texts.count)) documents, fewer than --n \(grouped(n)): all of them are used")
        } else {
            log("fts-bench: the first \(grouped(n)) of the man pages' \(grouped(rendered.documents.count)) documents")
        }

        // Words numbered as they come, each word's ids in id order.
        var number: [Substring: Int] = [:]
        var words: [Substring] = []
        var postings: [[Int32]] = []
        var total = 0, shortest = Int.max, longest = 0
        for (k, text) in texts.enumerated() {
            let id = Int32(k + 1)
            var count = 0
            for word in text.split(separator: " ") {
                count += 1
                let w: Int
                if let known = number[word] {
                    w = known
                } else {
                    w = words.count
                    number[word] = w
                    words.append(word)
                    postings.append([])
                }
                if postings[w].last != id { postings[w].append(id) }
            }
            total += count
            shortest = min(shortest, count)
            longest = max(longest, count)
        }
        let order = words.indices.sorted { a, b in
            postings[a].count != postings[b].count ? postings[a].count > postings[b].count
                : words[a].utf8.lexicographicallyPrecedes(words[b].utf8)
        }
        let byRank = order.map { postings[$0] }
        let drawable = byRank.firstIndex { $0.count < 2 } ?? byRank.count
        let which = texts.count < rendered.documents.count ? "the first" : "all"
        let title = String(format: "paragraphs of the English man pages (%@ of %@ in %@ pages), %d–%d words (%.1f on average), %@ distinct words",
                           which, grouped(rendered.documents.count), grouped(rendered.pages), shortest, longest,
                           Double(total) / Double(texts.count), grouped(words.count))
        return Corpus(source: .man, title: title, vocabulary: order.map { String(words[$0]) }, texts: texts, postings: byRank,
                      totalWords: total, drawable: drawable)
    }
}
