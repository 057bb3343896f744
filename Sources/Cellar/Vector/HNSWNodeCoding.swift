// The persisted form of one HNSW node: the value stored under the node's id in the engine's
// B+tree. Vectors are not in it (they live in the object records and are handed to the loader).
//
// Layout, every number an unsigned LEB128 varint (7 bits a byte, low group first, high bit set
// on every byte but the last; at most 10 bytes, no overlong trailing zero group):
//
//     level L                                   (0 … 24)
//     then for each level 0 … L:
//         count n                               (0 … max degree of the level: 2·M, then M)
//         first neighbour id                    (when n > 0)
//         n − 1 gaps: id[i] − id[i−1] ≥ 1       (the ids sorted ascending)
//
// Sorted ids with varint gaps keep the value small: object ids of one entity are dense-ish, so
// neighbours that are near in id take one or two bytes. A node with 40 level-0 neighbours among
// 20,000 ids takes about 80 bytes (5-byte fixed ids would take 200, u64 ids 320). The order of a
// neighbour list carries no meaning in HNSW, so sorting loses nothing.
//
// `decodeNode` checks everything it can see: truncation, overlong or overflowing varints, a
// level above 24, a count above the level's max degree, a zero gap (a duplicate), an id
// overflowing 64 bits, bytes left over. Whether the neighbours exist is checked by the loader.

extension HNSWGraph {
    /// The persisted value of node `id` (see the file header), nil when it is not in the graph.
    @_spi(Testing) public func encodeNode(_ id: UInt64) -> [UInt8]? {
        guard let lists = neighbors(of: id) else { return nil }
        return Self.encodeNode(level: lists.count - 1, neighbors: lists)
    }

    /// The value for a node of `level` with `neighbors[l]` on each level l.
    @_spi(Testing) public static func encodeNode(level: Int, neighbors: [[UInt64]]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(2 + neighbors.reduce(0) { $0 + 1 + 2 * $1.count })
        Varint.append(UInt64(level), to: &bytes)
        for list in neighbors {
            Varint.append(UInt64(list.count), to: &bytes)
            var previous: UInt64 = 0
            for (i, id) in list.sorted().enumerated() {
                Varint.append(i == 0 ? id : id - previous, to: &bytes)
                previous = id
            }
        }
        return bytes
    }

    /// The level and the neighbour lists in a persisted value, for an index with
    /// `neighborsPerNode` M. Throws `.fileCorrupt` for anything malformed (see the file header).
    @_spi(Testing) public static func decodeNode(_ bytes: [UInt8], neighborsPerNode: Int) throws -> (level: Int, neighbors: [[UInt64]]) {
        var flat: [UInt64] = []
        let level = try bytes.withUnsafeBytes { try decodeNode($0, neighborsPerNode: neighborsPerNode, into: &flat) }
        var lists: [[UInt64]] = []
        var at = 0
        for _ in 0...level {
            let count = Int(flat[at])
            lists.append(Array(flat[(at + 1)..<(at + 1 + count)]))
            at += 1 + count
        }
        return (level, lists)
    }

    /// Decodes a persisted value in place, appending to `flat` each level's neighbour count then
    /// its neighbour ids (levels 0 … L); returns the level L. Throws as
    /// ``decodeNode(_:neighborsPerNode:)``; `flat` may then hold a part of the node.
    static func decodeNode(_ bytes: UnsafeRawBufferPointer, neighborsPerNode: Int, into flat: inout [UInt64]) throws -> Int {
        var reader = VarintReader(bytes: bytes)
        let level = try reader.next("level")
        guard level <= UInt64(HNSWLevels.maxLevel) else {
            throw CellarError.fileCorrupt("HNSW node: level \(level) is above the maximum \(HNSWLevels.maxLevel)")
        }
        for l in 0...Int(level) {
            let maximum = l == 0 ? 2 * neighborsPerNode : neighborsPerNode
            let count = try reader.next("neighbour count of level \(l)")
            guard count <= UInt64(maximum) else {
                throw CellarError.fileCorrupt("HNSW node: level \(l) has \(count) neighbours, more than the maximum \(maximum)")
            }
            flat.append(count)
            var previous: UInt64 = 0
            for i in 0..<Int(count) {
                let value = try reader.next("neighbour \(i) of level \(l)")
                if i == 0 {
                    previous = value
                } else {
                    guard value > 0 else { throw CellarError.fileCorrupt("HNSW node: level \(l) names a neighbour twice") }
                    let (sum, overflow) = previous.addingReportingOverflow(value)
                    guard !overflow else { throw CellarError.fileCorrupt("HNSW node: a neighbour id of level \(l) overflows 64 bits") }
                    previous = sum
                }
                flat.append(previous)
            }
        }
        guard reader.offset == bytes.count else {
            throw CellarError.fileCorrupt("HNSW node: \(bytes.count - reader.offset) bytes left over after the last level")
        }
        return Int(level)
    }
}

/// Reads unsigned LEB128 varints, throwing `.fileCorrupt` for a truncated, overlong or
/// overflowing one.
private struct VarintReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    /// The next varint; `what` names it in errors (built only then: it is read per neighbour).
    mutating func next(_ what: @autoclosure () -> String) throws -> UInt64 {
        do {
            return try Varint.read(bytes, at: &offset)
        } catch .truncated {
            throw CellarError.fileCorrupt("HNSW node: truncated at the \(what())")
        } catch .overflows {
            throw CellarError.fileCorrupt("HNSW node: the \(what()) overflows 64 bits")
        } catch .overlong {
            throw CellarError.fileCorrupt("HNSW node: the \(what()) is encoded overlong")
        }
    }
}
