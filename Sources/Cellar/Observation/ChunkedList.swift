// A list kept in chunks of a few hundred elements, so that a new version with a few elements
// inserted, removed or replaced shares every untouched chunk with the old one: making it costs the
// touched chunks plus one entry per chunk, not the whole list. Live results keep their objects in
// one: an update that changes k objects of n costs O(k · chunk + n / chunk) instead of copying
// n objects (for a struct entity, a retain per reference it holds).

/// An immutable list in shared chunks (see above). Indexing finds the chunk by binary search.
struct ChunkedList<Element>: RandomAccessCollection {
    /// The chunks, none empty.
    private(set) var chunks: [[Element]]
    /// `starts[c]`: the index of the first element of `chunks[c]`.
    private var starts: [Int]
    let endIndex: Int

    /// The size chunks are cut to; a touched chunk is cut again once it holds twice as many,
    /// and joins its neighbour once it holds less than a quarter.
    static var chunkSize: Int { 256 }

    init() {
        self.init(chunks: [])
    }

    init(_ elements: [Element]) {
        var chunks: [[Element]] = []
        chunks.reserveCapacity(elements.count / Self.chunkSize + 1)
        var start = 0
        while start < elements.count {
            let end = Swift.min(elements.count, start + Self.chunkSize)
            chunks.append(Array(elements[start..<end]))
            start = end
        }
        self.init(chunks: chunks)
    }

    private init(chunks: [[Element]]) {
        self.chunks = chunks
        var starts: [Int] = []
        starts.reserveCapacity(chunks.count)
        var total = 0
        for chunk in chunks {
            starts.append(total)
            total += chunk.count
        }
        self.starts = starts
        endIndex = total
    }

    var startIndex: Int { 0 }

    subscript(position: Int) -> Element {
        precondition(position >= 0 && position < endIndex, "index \(position) out of range 0..<\(endIndex)")
        let c = chunk(containing: position)
        return chunks[c][position - starts[c]]
    }

    /// The chunk holding index `position` (the last chunk whose start is at most it).
    private func chunk(containing position: Int) -> Int {
        var (low, high) = (0, starts.count)
        while high - low > 1 {
            let mid = (low + high) / 2
            if starts[mid] <= position { low = mid } else { high = mid }
        }
        return low
    }

    /// Walks the chunks rather than searching each index.
    struct Iterator: IteratorProtocol {
        let chunks: [[Element]]
        var c = 0, i = 0

        mutating func next() -> Element? {
            while c < chunks.count {
                if i < chunks[c].count {
                    defer { i += 1 }
                    return chunks[c][i]
                }
                (c, i) = (c + 1, 0)
            }
            return nil
        }
    }

    func makeIterator() -> Iterator { Iterator(chunks: chunks) }

    /// The elements as one array.
    var array: [Element] {
        var result: [Element] = []
        result.reserveCapacity(endIndex)
        for chunk in chunks { result.append(contentsOf: chunk) }
        return result
    }

    /// One change at a position of the list it is applied to.
    struct Edit {
        enum Kind {
            /// A new element before the one at `position` (at the end when that is `count`).
            case insert(Element)
            case remove
            case replace(Element)
        }

        let position: Int
        let kind: Kind
    }

    /// This list with `edits` applied: sorted by position, every position in `0...count` (an
    /// insert) or `0..<count`, and at one position any inserts first, then at most one remove or
    /// replace. Untouched chunks are shared with this list.
    func applying(_ edits: [Edit]) -> ChunkedList {
        guard !edits.isEmpty else { return self }
        let sources = chunks.isEmpty ? [[]] : chunks
        var result: [[Element]] = []
        result.reserveCapacity(sources.count + 1)
        var e = 0
        var start = 0
        for (c, chunk) in sources.enumerated() {
            let end = start + chunk.count
            let isLast = c == sources.count - 1
            var stop = e
            while stop < edits.count && (edits[stop].position < end || (isLast && edits[stop].position == end)) {
                stop += 1
            }
            defer { start = end }
            if stop == e {
                result.append(chunk)
                continue
            }
            var rebuilt: [Element] = []
            rebuilt.reserveCapacity(chunk.count + stop - e)
            var k = start
            for edit in edits[e..<stop] {
                precondition(edit.position >= k, "edits out of order")
                rebuilt.append(contentsOf: chunk[(k - start)..<(edit.position - start)])
                k = edit.position
                switch edit.kind {
                case .insert(let element):
                    rebuilt.append(element)
                case .remove:
                    k += 1
                case .replace(let element):
                    rebuilt.append(element)
                    k += 1
                }
            }
            rebuilt.append(contentsOf: chunk[(k - start)...])
            e = stop
            Self.place(rebuilt, into: &result)
        }
        precondition(e == edits.count, "an edit beyond the end of the list")
        return ChunkedList(chunks: result)
    }

    /// Appends a rebuilt chunk to `chunks`: dropped when empty, joined to the previous chunk when
    /// small, cut in pieces when large.
    private static func place(_ rebuilt: [Element], into chunks: inout [[Element]]) {
        if rebuilt.isEmpty { return }
        if rebuilt.count < chunkSize / 4, let last = chunks.last, last.count + rebuilt.count <= 2 * chunkSize {
            chunks[chunks.count - 1] = last + rebuilt
            return
        }
        if rebuilt.count <= 2 * chunkSize {
            chunks.append(rebuilt)
            return
        }
        var start = 0
        while start < rebuilt.count {
            let end = Swift.min(rebuilt.count, start + chunkSize)
            chunks.append(Array(rebuilt[start..<end]))
            start = end
        }
    }
}

extension ChunkedList: Sendable where Element: Sendable {}

/// One object of live results, held by reference: copying a chunk of them (when an update
/// rebuilds it) then costs one retain per object, whatever the entity holds.
final class ObjectCell<Value> {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Live results' objects: chunks of cells.
typealias LiveObjects<E> = ChunkedList<ObjectCell<E>>
