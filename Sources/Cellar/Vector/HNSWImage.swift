import CellarStorage
import Foundation

// A graph's image: the in-memory HNSW graph written as it is, in one file beside the data file
// (`hnsw-<index ID>.graph` in the store's directory), so that a store opened again maps its
// graph instead of rebuilding it from the index's tree and the records (decoding every node,
// resolving every neighbour id, reading every vector from its record).
//
// Mapped: the graph's level-0 lists and vectors (or codes) point into a private mapping of the
// file (`HNSWImageMapping`), so nothing is copied or zeroed; a page the graph changes becomes the
// process's own copy (copy-on-write), and the first growth of the graph moves its buffers out of
// the mapping. The ids, levels and upper lists are copied (they are small). The file is never
// written in place (a new image is renamed over it), so the pages under a mapping do not change.
//
// It is a cache, never the truth: the index's tree is. The tree holds a **stamp** (16 random
// bytes under the key `[1]`, see `VectorIndex`), made anew by every transaction that changes
// the graph, and the graph in memory carries the stamp of the commit its content is. An image is
// written with its graph's stamp, and read only when it carries the stamp the reader's snapshot
// holds: then it is exactly the index of that snapshot. Anything else (no image, another stamp,
// another layout, a short or damaged file, a checksum that does not match, a neighbour out of
// bounds) makes the reader load the graph from the tree as before; a bad image never fails a
// query.
//
// When: written when the store closes (``Store/close()`` or its release), for each graph in
// memory whose image is not already on disk; read the first time a query or a commit needs the
// graph. Not for in-memory stores, nor for encrypted ones (the image would hold the vectors in
// the clear), and never written by a read-only store. Written to a temporary file then renamed,
// without a sync: a torn image fails its checksum.
//
// Layout (native byte order, little-endian on every platform Cellar runs on; a header field
// says which), a header of `headerSize` bytes then the sections in this order, each starting at
// a multiple of 64 bytes (zeros between):
//
//   0  magic "CHNSWIM1"        8  format version (u32)   12 byte-order mark 0x01020304 (u32)
//  16  stamp (16 bytes)       32  slot count n (u64)     40 upper-level Int32s u (u64)
//  48  dimensions (u32)       52  floatsPerVector (u32)  56 codesPerVector (u32)
//  60  level0Stride (u32)     64  upperStride (u32)      68 entry slot (i32)
//  72  top level (i32)        76  zero (u32)             80 body checksum (u64)
//  88  header checksum (u64, XXH64 of bytes 0..<88)
//  ids n × u64 · levels n × i32 (-1: a free slot) · level-0 lists n × level0Stride × i32 ·
//  upper-level lists u × i32 (each node of level L ≥ 1 in slot order: L × upperStride) ·
//  then floats n × floatsPerVector × f32, or codes n × codesPerVector × i8 and factors n × 2 × f32.
// The body checksum: the body (every byte after the header, the zeros between sections included)
// cut into chunks of `checksumChunk` bytes (the last one shorter), each summed by XXH64 seeded with
// its index, then XXH64 over those sums (u64s, in order). The chunks are summed on several threads
// when the image is read.

enum HNSWImage {
    static let magic = Array("CHNSWIM1".utf8)
    static let formatVersion: UInt32 = 3
    static let byteOrderMark: UInt32 = 0x0102_0304
    static let headerSize = 128
    /// Bytes per chunk of the body checksum (see the layout).
    static let checksumChunk = 1 << 20

    /// How many chunks the body of an image of `length` bytes has.
    static func chunkCount(length: Int) -> Int { (length - headerSize + checksumChunk - 1) / checksumChunk }

    /// The sum of chunk `chunk` of the image of `length` bytes at `base`.
    static func chunkSum(_ base: UnsafeRawPointer, length: Int, chunk: Int) -> UInt64 {
        let start = headerSize + chunk * checksumChunk
        return Checksum.xxh64(UnsafeRawBufferPointer(start: base + start, count: min(checksumChunk, length - start)), seed: UInt64(chunk))
    }

    /// The body checksum made of the chunks' sums, in order.
    static func bodyChecksum(sums: UnsafeBufferPointer<UInt64>) -> UInt64 { Checksum.xxh64(UnsafeRawBufferPointer(sums)) }

    /// The body checksum of `image` (a whole image, header first), on one thread.
    static func bodyChecksum(_ image: UnsafeRawBufferPointer) -> UInt64 {
        let sums = (0..<chunkCount(length: image.count)).map { chunkSum(image.baseAddress!, length: image.count, chunk: $0) }
        return sums.withUnsafeBufferPointer { bodyChecksum(sums: $0) }
    }

    /// The file name of index `indexId`'s image.
    static func fileName(_ indexId: UInt32) -> String { "hnsw-\(indexId).graph" }

    /// A fresh stamp.
    static func newStamp() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// Where each section of an image of `n` slots and `upperCount` upper-level Int32s lies
    /// (file offsets and byte counts, in the layout's order), and the file's length.
    static func sections(of graph: HNSWGraph, n: Int, upperCount: Int) -> (sections: [(offset: Int, count: Int)], length: Int) {
        var sizes = [8 * n, 4 * n, 4 * graph.level0Stride * n, 4 * upperCount]
        sizes += graph.isQuantized ? [graph.codesPerVector * n, 8 * n] : [4 * graph.floatsPerVector * n]
        var offset = headerSize
        var sections: [(offset: Int, count: Int)] = []
        for size in sizes {
            offset = (offset + 63) / 64 * 64
            sections.append((offset, size))
            offset += size
        }
        return (sections, offset)
    }

    /// Writes `graph` (with its stamp) to `path`, through a temporary file renamed over it.
    /// The caller holds the graph's lock (shared). Throws on an I/O error.
    static func write(_ graph: HNSWGraph, stamp: [UInt8], to path: String) throws {
        let n = graph.levels.count
        var upper: [Int32] = []
        for slot in 0..<n where graph.levels[slot] > 0 { upper.append(contentsOf: graph.upper[slot]) }
        let (sections, length) = self.sections(of: graph, n: n, upperCount: upper.count)
        let temporary = path + ".tmp-\(UInt32.random(in: 0...UInt32.max))"
        let file = try PosixFile(path: temporary, create: true, readOnly: false)
        do {
            // The body first, then its checksum (summed over the file written) into the header.
            var next = 0
            func emit(_ bytes: UnsafeRawBufferPointer) throws {
                try file.write(bytes, at: UInt64(sections[next].offset))
                next += 1
            }
            func emit<T>(_ pointer: UnsafePointer<T>, _ count: Int) throws {
                try emit(UnsafeRawBufferPointer(start: pointer, count: count * MemoryLayout<T>.stride))
            }
            try graph.ids.withUnsafeBytes { try emit(UnsafeRawBufferPointer(rebasing: $0[..<(8 * n)])) }
            try graph.levels.withUnsafeBytes { try emit(UnsafeRawBufferPointer(rebasing: $0[..<(4 * n)])) }
            try emit(graph.level0, n * graph.level0Stride)
            try upper.withUnsafeBytes { try emit($0) }
            if graph.isQuantized {
                try emit(graph.codes, n * graph.codesPerVector)
                try emit(graph.codeFactors, n * 2)
            } else {
                try emit(graph.vectors, n * graph.floatsPerVector)
            }
            try file.truncate(to: UInt64(length))
            let mapped = try file.mapPrivate(length: length)
            let checksum = bodyChecksum(UnsafeRawBufferPointer(start: mapped, count: length))
            munmap(mapped, length)
            var header = [UInt8](repeating: 0, count: headerSize)
            header.withUnsafeMutableBytes { raw in
                for (i, byte) in magic.enumerated() { raw[i] = byte }
                raw.storeBytes(of: formatVersion, toByteOffset: 8, as: UInt32.self)
                raw.storeBytes(of: byteOrderMark, toByteOffset: 12, as: UInt32.self)
                for (i, byte) in stamp.enumerated() { raw[16 + i] = byte }
                raw.storeBytes(of: UInt64(n), toByteOffset: 32, as: UInt64.self)
                raw.storeBytes(of: UInt64(upper.count), toByteOffset: 40, as: UInt64.self)
                for (i, value) in graph.layout.enumerated() { raw.storeBytes(of: UInt32(value), toByteOffset: 48 + 4 * i, as: UInt32.self) }
                raw.storeBytes(of: graph.entrySlot, toByteOffset: 68, as: Int32.self)
                raw.storeBytes(of: Int32(graph.topLevel), toByteOffset: 72, as: Int32.self)
                raw.storeBytes(of: checksum, toByteOffset: 80, as: UInt64.self)
                raw.storeBytes(of: Checksum.xxh64(UnsafeRawBufferPointer(rebasing: raw[..<88])), toByteOffset: 88, as: UInt64.self)
            }
            try header.withUnsafeBytes { try file.write($0, at: 0) }
            file.close()
            try Syscall.rename(temporary, to: path)
        } catch {
            file.close()
            unlink(temporary)
            throw error
        }
    }

    /// The graph in the image at `path` when it carries `stamp` and `parameters`' layout, is
    /// whole, and its lists are within bounds; nil otherwise (no image, another stamp or
    /// layout, a damaged file). The change log starts empty, the reverse lists unbuilt.
    static func read(_ path: String, stamp: [UInt8], parameters: HNSWParameters) -> HNSWGraph? {
        guard let file = try? PosixFile(path: path, create: false, readOnly: true) else { return nil }
        defer { file.close() }
        guard let size = try? file.size(), size >= UInt64(headerSize), size < UInt64(Int.max) else { return nil }
        var header = [UInt8](repeating: 0, count: headerSize)
        guard (try? header.withUnsafeMutableBytes({ try file.read(into: $0, at: 0) })) == headerSize else { return nil }
        // The image's slot count decides whether the graph keeps codes (a bound that changed since
        // may make it another layout, checked below).
        let slots = Int(clamping: header.withUnsafeBytes { $0.load(fromByteOffset: 32, as: UInt64.self) })
        let graph = HNSWGraph(parameters: parameters, expectedCount: slots)
        let fields = header.withUnsafeBytes { raw -> (n: Int, u: Int, entry: Int32, top: Int32, checksum: UInt64)? in
            guard raw[..<8].elementsEqual(magic), raw.load(fromByteOffset: 8, as: UInt32.self) == formatVersion,
                  raw.load(fromByteOffset: 12, as: UInt32.self) == byteOrderMark, raw[16..<32].elementsEqual(stamp),
                  raw.load(fromByteOffset: 88, as: UInt64.self) == Checksum.xxh64(UnsafeRawBufferPointer(rebasing: raw[..<88])),
                  graph.layout.enumerated().allSatisfy({ raw.load(fromByteOffset: 48 + 4 * $0.offset, as: UInt32.self) == UInt32($0.element) })
            else { return nil }
            let n = raw.load(fromByteOffset: 32, as: UInt64.self), u = raw.load(fromByteOffset: 40, as: UInt64.self)
            // Counts the file's size can hold, so that no size computed from them overflows
            // (where `Int` has 32 bits too).
            let perSlot = UInt64(HNSWImage.sections(of: graph, n: 1, upperCount: 0).sections.reduce(0) { $0 + $1.count })
            guard n <= size / perSlot, u <= size / 4 else { return nil }
            return (Int(n), Int(u), raw.load(fromByteOffset: 68, as: Int32.self), raw.load(fromByteOffset: 72, as: Int32.self),
                    raw.load(fromByteOffset: 80, as: UInt64.self))
        }
        guard let fields else { return nil }
        let n = fields.n
        let (sections, length) = self.sections(of: graph, n: n, upperCount: fields.u)
        guard size == UInt64(length), let mapping = HNSWImageMapping(file, length: length) else { return nil }
        // The checksum's chunks (with the level-0 lists' bounds) and the graph's adoption run
        // side by side; all only read the mapping, and adopting checks every other bound itself,
        // so a damaged image is safe to adopt. The graph is kept when all pass.
        let load = Load(graph: graph, mapping: mapping, sections: sections, n: n, entry: fields.entry, top: Int(fields.top))
        DispatchQueue.concurrentPerform(iterations: load.parts) { load.run(part: $0) }
        guard load.passed(checksum: fields.checksum) else { return nil }
        return graph
    }
}

extension HNSWImage {
    /// Reading an image's sections in parts, which `read` runs on as many threads as there are
    /// (each takes the next part when it is done): part 0 makes the graph of the sections, each
    /// other part sums a run of the body's chunks and checks the level-0 lists that start in
    /// them against the strides and the slot count (while the chunk is in the cache).
    /// Unchecked: the parts share nothing but the mapping, which all only read, and buffers
    /// where each writes its own elements; `read` looks at the results after all ended.
    private final class Load: @unchecked Sendable {
        let graph: HNSWGraph
        let mapping: HNSWImageMapping
        let sections: [(offset: Int, count: Int)]
        let n: Int, entry: Int32, top: Int
        /// The body's chunks, and the runs of them the parts after the first take.
        let chunks: Int, runs: Int
        /// The most runs: more parts than cores, so that a thread done early takes another one
        /// (the adoption is one part and may be the longest).
        static let maxRuns = 8
        /// Per chunk, its sum.
        private let sums: UnsafeMutableBufferPointer<UInt64>
        /// Per run, whether its level-0 lists are within bounds.
        private let listsInBounds: UnsafeMutableBufferPointer<Bool>
        private var adopted = false

        init(graph: HNSWGraph, mapping: HNSWImageMapping, sections: [(offset: Int, count: Int)], n: Int, entry: Int32, top: Int) {
            (self.graph, self.mapping, self.sections, self.n, self.entry, self.top) = (graph, mapping, sections, n, entry, top)
            chunks = HNSWImage.chunkCount(length: mapping.length)
            runs = min(chunks, Self.maxRuns)
            sums = .allocate(capacity: chunks)
            sums.initialize(repeating: 0)
            listsInBounds = .allocate(capacity: runs)
            listsInBounds.initialize(repeating: false)
        }

        deinit {
            sums.deallocate()
            listsInBounds.deallocate()
        }

        /// How many parts `run` has.
        var parts: Int { 1 + runs }

        /// Whether every part passed and the sums make `checksum`.
        func passed(checksum: UInt64) -> Bool {
            adopted && listsInBounds.allSatisfy { $0 } && HNSWImage.bodyChecksum(sums: UnsafeBufferPointer(sums)) == checksum
        }

        /// Section `i` as `T`s.
        private func section<T>(_ i: Int, as type: T.Type) -> UnsafeMutableBufferPointer<T> {
            UnsafeMutableBufferPointer(start: (mapping.base + sections[i].offset).assumingMemoryBound(to: T.self),
                                       count: sections[i].count / MemoryLayout<T>.stride)
        }

        func run(part: Int) {
            guard part == 0 else { return sum(run: part - 1) }
            graph.ids = Array(section(0, as: UInt64.self))
            graph.levels = Array(section(1, as: Int32.self))
            let upper = Array(section(3, as: Int32.self))
            if graph.isQuantized {
                graph.useMapped(mapping, level0: section(2, as: Int32.self).baseAddress, codes: section(4, as: Int8.self).baseAddress,
                                codeFactors: section(5, as: Float.self).baseAddress, vectors: nil, capacity: n)
            } else {
                graph.useMapped(mapping, level0: section(2, as: Int32.self).baseAddress, codes: nil, codeFactors: nil,
                                vectors: section(4, as: Float.self).baseAddress, capacity: n)
            }
            adopted = graph.adopt(upper: upper, entrySlot: entry, topLevel: top)
        }

        /// Sums the chunks of run `run` and checks the level-0 lists starting in each.
        private func sum(run: Int) {
            let lists = UnsafePointer(section(2, as: Int32.self).baseAddress!)
            let listsAt = sections[2].offset, listBytes = 4 * graph.level0Stride
            /// The first slot whose list starts at or after file offset `offset`.
            func firstSlot(from offset: Int) -> Int {
                offset <= listsAt ? 0 : min(n, (offset - listsAt + listBytes - 1) / listBytes)
            }
            var inBounds = true
            for chunk in (run * chunks / runs)..<((run + 1) * chunks / runs) {
                sums[chunk] = HNSWImage.chunkSum(mapping.base, length: mapping.length, chunk: chunk)
                let start = HNSWImage.headerSize + chunk * HNSWImage.checksumChunk
                let slots = firstSlot(from: start)..<firstSlot(from: start + HNSWImage.checksumChunk)
                inBounds = inBounds && HNSWImage.level0InBounds(lists, stride: graph.level0Stride, slots: slots, n: n)
            }
            listsInBounds[run] = inBounds
        }
    }

    /// Whether the level-0 lists of the slots in `range` (each `stride` Int32s from `lists`: a
    /// count, then that many slots) have a count below the stride and name slots in `0..<n`
    /// only. That is all a search needs of them when the graph has no free slots (every slot
    /// then has a level); `HNSWGraph.adopt` looks at the neighbours' levels when it has some.
    static func level0InBounds(_ lists: UnsafePointer<Int32>, stride: Int, slots range: Range<Int>, n: Int) -> Bool {
        let bound = UInt32(n)
        for slot in range {
            let list = lists + slot * stride
            let count = Int(list[0])
            guard count >= 0, count < stride else { return false }
            // The largest as unsigned: a negative slot counts as too large.
            var largest: UInt32 = 0
            for i in 1..<(count + 1) { largest = max(largest, UInt32(bitPattern: list[i])) }
            guard largest < bound else { return false }
        }
        return true
    }
}

/// A private, writable mapping of a graph's image (copy-on-write: the file never changes), kept
/// by the graph whose buffers point into it; unmapped with it.
final class HNSWImageMapping: @unchecked Sendable {
    let base: UnsafeMutableRawPointer
    let length: Int

    /// Maps the first `length` bytes of `file` (nil: an empty length, or the system refused).
    init?(_ file: PosixFile, length: Int) {
        guard length > 0, let pointer = try? file.mapPrivate(length: length) else { return nil }
        base = pointer
        self.length = length
    }

    deinit { munmap(base, length) }

    /// Whether `pointer` points into the mapping.
    func contains(_ pointer: UnsafeRawPointer) -> Bool {
        pointer >= UnsafeRawPointer(base) && pointer < UnsafeRawPointer(base + length)
    }
}

extension HNSWGraph {
    /// The numbers an image's layout depends on: dimensions, floats and codes per vector, and
    /// the two list strides.
    var layout: [Int] { [parameters.dimensions, floatsPerVector, codesPerVector, level0Stride, upperStride] }

    /// Completes a graph whose ids, levels, level-0 lists and vectors were read from an image:
    /// splits `upper` into the nodes' upper lists, sets the entry point, and rebuilds the id
    /// map and the free slots. False when something is out of bounds (a level, a count, a
    /// neighbour slot, the entry point), which a search would trip on, or an id is given twice.
    /// The level-0 lists' counts and slots are the caller's to check (`HNSWImage.level0InBounds`,
    /// on other threads); where the graph has free slots, their neighbours' levels are checked here.
    func adopt(upper flat: [Int32], entrySlot: Int32, topLevel: Int) -> Bool {
        // Locals: the loops read them without the class properties' access checks.
        let levels = self.levels, n = levels.count
        var upper = [[Int32]](repeating: [], count: n)
        var freeSlots: [Int32] = []
        var at = 0
        var highest: Int32 = -1
        /// Whether `count` (at `list`) fits its stride and names slots of level ≥ l only.
        func valid(_ list: UnsafePointer<Int32>, stride: Int, _ l: Int) -> Bool {
            let count = Int(list[0])
            guard count >= 0, count < stride else { return false }
            for i in 0..<count {
                let neighbor = list[1 + i]
                guard neighbor >= 0, Int(neighbor) < n, levels[Int(neighbor)] >= l else { return false }
            }
            return true
        }
        for slot in 0..<n {
            let level = levels[slot]
            guard level >= -1, level <= Int32(HNSWLevels.maxLevel) else { return false }
            guard level >= 0 else {
                freeSlots.append(Int32(slot))
                continue
            }
            highest = max(highest, level)
            if level > 0 {
                let count = Int(level) * upperStride
                guard at + count <= flat.count else { return false }
                upper[slot] = Array(flat[at..<(at + count)])
                at += count
                for l in 1...Int(level) {
                    guard upper[slot].withUnsafeBufferPointer({ valid($0.baseAddress! + (l - 1) * upperStride, stride: upperStride, l) }) else { return false }
                }
            }
        }
        guard at == flat.count else { return false }
        // Level 0: with free slots, a neighbour must also be a node (a free slot has level -1).
        if !freeSlots.isEmpty {
            for slot in 0..<n where levels[slot] >= 0 {
                guard valid(level0 + slot * level0Stride, stride: level0Stride, 0) else { return false }
            }
        }
        let map = ids.withUnsafeBufferPointer { ids in levels.withUnsafeBufferPointer { HNSWIdMap.building(ids: ids, levels: $0) } }
        guard let map else { return false }
        if map.isEmpty {
            guard entrySlot == -1, topLevel == -1 else { return false }
        } else {
            guard entrySlot >= 0, Int(entrySlot) < n, levels[Int(entrySlot)] == highest, topLevel == Int(highest) else { return false }
        }
        self.upper = upper
        self.slotOf = map
        self.freeSlots = freeSlots.reversed()
        self.entrySlot = entrySlot
        self.topLevel = topLevel
        return true
    }
}
