@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// The image of an HNSW graph beside the store (HNSWImage.swift): written when the store closes,
/// read back at the next open instead of rebuilding the graph, equal to the graph the tree gives;
/// ignored (the graph then built from the tree, the answers the same) when it is stale, torn,
/// flipped or out of bounds; never written for an encrypted or a read-only store.
@Suite struct HNSWImageTests {
    static let vectors = VectorSearchTests.clustered(600, seed: 21)
    static let queries = VectorSearchTests.clustered(12, seed: 22)

    static func model(quantized: Bool) throws -> Cellar.Model {
        quantized ? try VectorSearchTests.quantizedModel() : cellarModel()
    }

    /// The index of `Passage.embedding`.
    static var indexId: UInt32 {
        cellarModel().entities.first { $0.name == "Passage" }!.properties.first { $0.name == "embedding" }!.indexId!.id
    }

    /// Each query's 10 nearest (ids and scores), searched wide.
    static func answers(_ store: Store) throws -> [[String]] {
        let box = store.box(for: Passage.self)
        return try queries.map { vector in
            try box.query { Passage.embedding.nearestNeighbors(to: vector, maxCount: 10, searchWidth: 200) }.build()
                .findIdsWithScores().map { "\($0.id.value):\($0.score)" }
        }
    }

    /// The graph the store holds in memory, and the graph its tree gives, are the same: levels,
    /// neighbour lists (as sets of ids), vectors and entry point; and it is sound.
    static func expectSameAsTree(_ store: Store, quantized: Bool) throws {
        let schema = try #require(store.schemas.values.first { $0.name == "Passage" })
        let property = try #require(schema.vectorProperties.first)
        let index = try #require(property.index)
        let fromTree = try store.engine.read { try VectorIndex.load(index, property: property, schema: schema, in: $0) }
        let version = try store.engine.read { $0.transactionId }
        let inMemory = try store.vectorIndexes.entry(index, version: version) { Issue.record("not loaded"); return fromTree }
        try inMemory.reading { graph in
            #expect(graph.firstViolation() == nil)
            #expect(graph.count == fromTree.count)
            #expect(graph.entryPoint == fromTree.entryPoint)
            #expect(graph.stamp != nil && graph.stamp == fromTree.stamp)
            for id in fromTree.allIDs {
                #expect(graph.level(of: id) == fromTree.level(of: id))
                // The tree keeps each list sorted; memory keeps the order the graph made.
                #expect(graph.neighbors(of: id)?.map { $0.sorted() } == fromTree.neighbors(of: id))
                let (a, b) = (try #require(graph.slotOf[id]), try #require(fromTree.slotOf[id]))
                if quantized {
                    #expect(graph.probe(a).scale == fromTree.probe(b).scale)
                    #expect(memcmp(graph.codes + Int(a) * graph.codesPerVector, fromTree.codes + Int(b) * graph.codesPerVector, graph.codesPerVector) == 0)
                } else {
                    #expect(Array(graph.vector(a)) == Array(fromTree.vector(b)))
                }
            }
        }
    }

    /// A store with the vectors, a third of them removed and some put again (so the graph has
    /// free slots and reused ones), closed: its image written.
    static func makeStore(_ path: String, quantized: Bool) throws -> [[String]] {
        let store = try Store(directoryPath: path, model: try model(quantized: quantized))
        defer { store.close() }
        let box = store.box(for: Passage.self)
        try box.put(vectors.enumerated().map { Passage("p\($0.offset)", $0.element) })
        _ = try answers(store)
        try store.runInTransaction {
            for id in stride(from: 3, through: 600, by: 3) { _ = try box.remove(Id(id)) }
        }
        try box.put(vectors.prefix(50).map { Passage("again", $0) })
        return try answers(store)
    }

    @Test(arguments: [false, true])
    func aReopenedStoreReadsItsGraphFromTheImage(quantized: Bool) throws {
        let directory = TestDirectory("hnsw-image-\(quantized)")
        defer { directory.remove() }
        let before = try Self.makeStore(directory.path, quantized: quantized)
        let image = directory.path + "/" + HNSWImage.fileName(Self.indexId)
        #expect(FileManager.default.fileExists(atPath: image))
        // What a write cut short by a crash leaves is deleted at the next close.
        let leftover = image + ".tmp-42"
        #expect(FileManager.default.createFile(atPath: leftover, contents: Data([1, 2, 3])))
        let store = try Store(directoryPath: directory.path, model: try Self.model(quantized: quantized))
        #expect(try Self.answers(store) == before)
        #expect(store.vectorIndexes.imageLoads.withLock { $0 } == 1)
        try Self.expectSameAsTree(store, quantized: quantized)
        // The graph mapped from the image takes changes (new nodes in its free slots, removals),
        // which do not reach the file (the mapping is copy-on-write).
        let box = store.box(for: Passage.self)
        let mapped = try Data(contentsOf: URL(fileURLWithPath: image))
        try box.put(Self.vectors.suffix(100).map { Passage("more", $0) })
        _ = try box.remove(Id(7))
        try Self.expectSameAsTree(store, quantized: quantized)
        #expect(try Data(contentsOf: URL(fileURLWithPath: image)) == mapped)
        // And it grows out of the mapping (150 free slots, then new ones).
        try box.put(Self.vectors.prefix(100).map { Passage("grown", $0) })
        try Self.expectSameAsTree(store, quantized: quantized)
        let after = try Self.answers(store)
        #expect(try RecordCheck.verify(store.engine).indexEntries > 0)
        store.close()
        #expect(!FileManager.default.fileExists(atPath: leftover))
        // Closed again: the changed graph's image is written, and read at the next open.
        let again = try Store(directoryPath: directory.path, model: try Self.model(quantized: quantized))
        defer { again.close() }
        #expect(try Self.answers(again) == after)
        #expect(again.vectorIndexes.imageLoads.withLock { $0 } == 1)
        try Self.expectSameAsTree(again, quantized: quantized)
    }

    /// An image of an older commit (the store changed after it was written, and was not closed
    /// cleanly since) is not read: the graph comes from the tree, with the newer objects.
    @Test func aStaleImageIsIgnored() throws {
        let directory = TestDirectory("hnsw-image-stale")
        defer { directory.remove() }
        _ = try Self.makeStore(directory.path, quantized: false)
        let image = directory.path + "/" + HNSWImage.fileName(Self.indexId)
        let old = try Data(contentsOf: URL(fileURLWithPath: image))
        let store = try Store(directoryPath: directory.path, model: cellarModel())
        let added = try store.box(for: Passage.self).put(Passage("new", Self.queries[0]))
        let expected = try Self.answers(store)
        store.close()
        try old.write(to: URL(fileURLWithPath: image))
        let reopened = try Store(directoryPath: directory.path, model: cellarModel())
        defer { reopened.close() }
        #expect(try Self.answers(reopened) == expected)
        #expect(try Self.answers(reopened)[0].first?.hasPrefix("\(added.value):") == true)
        #expect(reopened.vectorIndexes.imageLoads.withLock { $0 } == 0)
        try Self.expectSameAsTree(reopened, quantized: false)
    }

    /// Every truncation, and a flipped bit in each part of the file (header, ids, levels, lists,
    /// vectors), makes the image unreadable; and so does a neighbour slot out of bounds under
    /// a valid checksum. The answers are the same either way.
    @Test func aDamagedImageIsIgnored() throws {
        let directory = TestDirectory("hnsw-image-damaged")
        defer { directory.remove() }
        let expected = try Self.makeStore(directory.path, quantized: false)
        let path = directory.path + "/" + HNSWImage.fileName(Self.indexId)
        let whole = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let store = try Store(directoryPath: directory.path, model: cellarModel())
        let schema = try #require(store.schemas.values.first { $0.name == "Passage" })
        let parameters = try #require(schema.vectorProperties.first?.index?.hnsw)
        let stamp = try store.engine.read { txn in try txn.get(try #require(try txn.tree(StorageLayout.indexTree(Self.indexId))), key: VectorIndex.stampKey) }!
        store.close()
        #expect(HNSWImage.read(path, stamp: stamp, parameters: parameters) != nil)
        #expect(HNSWImage.read(path, stamp: [UInt8](repeating: 7, count: 16), parameters: parameters) == nil)

        // Slots, free ones included (a removed node's slot is reused, not given back).
        let n = whole.withUnsafeBytes { Int($0.load(fromByteOffset: 32, as: UInt64.self)) }
        #expect(n == 600)
        let upperCount = whole.withUnsafeBytes { Int($0.load(fromByteOffset: 40, as: UInt64.self)) }
        let (sections, length) = HNSWImage.sections(of: HNSWGraph(parameters: parameters), n: n, upperCount: upperCount)
        #expect(length == whole.count)
        // Header fields, the header's checksum, then a byte inside each section (ids, levels,
        // level-0 lists, upper lists, vectors) and the last one.
        let offsets = [0, 20, 40, 90] + sections.filter { $0.count > 0 }.map { $0.offset + $0.count / 2 } + [whole.count - 1]
        for offset in offsets {
            var flipped = whole
            flipped[offset] ^= 0x10
            try Data(flipped).write(to: URL(fileURLWithPath: path))
            #expect(HNSWImage.read(path, stamp: stamp, parameters: parameters) == nil, "a flip at \(offset)")
        }
        for length in [0, 10, HNSWImage.headerSize, HNSWImage.headerSize + 100, whole.count / 2, whole.count - 1] {
            try Data(whole.prefix(length)).write(to: URL(fileURLWithPath: path))
            #expect(HNSWImage.read(path, stamp: stamp, parameters: parameters) == nil, "cut at \(length)")
        }
        // Counts far beyond what the file holds, under a valid header checksum.
        for (field, value) in [(32, UInt64(1) << 62), (40, UInt64(1) << 62), (32, UInt64(n + 1))] {
            var huge = whole
            huge.withUnsafeMutableBytes { raw in
                raw.storeBytes(of: value, toByteOffset: field, as: UInt64.self)
                raw.storeBytes(of: Checksum.xxh64(UnsafeRawBufferPointer(rebasing: raw[..<88])), toByteOffset: 88, as: UInt64.self)
            }
            try Data(huge).write(to: URL(fileURLWithPath: path))
            #expect(HNSWImage.read(path, stamp: stamp, parameters: parameters) == nil, "field \(field) = \(value)")
        }
        // A neighbour slot past the end, with both checksums made valid again.
        try Data(Self.planting([1, Int32(n + 5)], at: sections[2].offset, in: whole, sections: sections)).write(to: URL(fileURLWithPath: path))
        #expect(HNSWImage.read(path, stamp: stamp, parameters: parameters) == nil)
        // The store opens on the bad image and answers from the tree.
        let reopened = try Store(directoryPath: directory.path, model: cellarModel())
        defer { reopened.close() }
        #expect(try Self.answers(reopened) == expected)
        #expect(reopened.vectorIndexes.imageLoads.withLock { $0 } == 0)
    }

    /// `whole` (an image of `sections`) with `values` written at `offset`, and both its
    /// checksums made valid again.
    static func planting(_ values: [Int32], at offset: Int, in whole: [UInt8], sections: [(offset: Int, count: Int)]) -> [UInt8] {
        var bad = whole
        bad.withUnsafeMutableBytes { raw in
            for (i, value) in values.enumerated() { raw.storeBytes(of: value, toByteOffset: offset + 4 * i, as: Int32.self) }
            raw.storeBytes(of: HNSWImage.bodyChecksum(UnsafeRawBufferPointer(raw)), toByteOffset: 80, as: UInt64.self)
            raw.storeBytes(of: Checksum.xxh64(UnsafeRawBufferPointer(rebasing: raw[..<88])), toByteOffset: 88, as: UInt64.self)
        }
        return bad
    }

    /// A graph without free slots has its level-0 lists checked by their slots' range alone:
    /// a neighbour past the end or negative, or a count beyond the stride, in any node's list,
    /// still makes the image unreadable under valid checksums.
    @Test func aListOutOfBoundsIsRefusedWithoutFreeSlots() throws {
        let directory = TestDirectory("hnsw-image-lists")
        defer { directory.remove() }
        let parameters = try HNSWParameters(dimensions: Self.vectors[0].count, distanceType: .euclidean)
        let graph = HNSWGraph(parameters: parameters)
        for (i, vector) in Self.vectors.prefix(300).enumerated() { try graph.insert(id: UInt64(i + 1), vector: vector) }
        #expect(graph.freeSlots.isEmpty)
        let path = directory.path + "/image", stamp = [UInt8](repeating: 3, count: 16)
        try HNSWImage.write(graph, stamp: stamp, to: path)
        let whole = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(HNSWImage.read(path, stamp: stamp, parameters: parameters)?.count == 300)
        let upperCount = whole.withUnsafeBytes { Int($0.load(fromByteOffset: 40, as: UInt64.self)) }
        let (sections, _) = HNSWImage.sections(of: graph, n: 300, upperCount: upperCount)
        let stride = Int32(graph.level0Stride)
        for slot in [0, 150, 299] {
            let list = sections[2].offset + slot * Int(stride) * 4
            for values: [Int32] in [[1, 300], [1, -1], [2, 0, Int32.max], [stride, 0], [-1]] {
                try Data(Self.planting(values, at: list, in: whole, sections: sections)).write(to: URL(fileURLWithPath: path))
                #expect(HNSWImage.read(path, stamp: stamp, parameters: parameters) == nil, "slot \(slot): \(values)")
            }
            // The largest valid list reads.
            try Data(Self.planting([stride - 1] + [Int32](repeating: 299, count: Int(stride) - 1), at: list, in: whole, sections: sections))
                .write(to: URL(fileURLWithPath: path))
            #expect(HNSWImage.read(path, stamp: stamp, parameters: parameters) != nil, "slot \(slot): a full list")
        }
    }

    /// An image of several checksum chunks (summed by several parts at once, each checking the
    /// level-0 lists that start in its chunks): a flipped byte in any chunk, and a list out of
    /// bounds on either side of each chunk boundary or across it, make it unreadable; a full
    /// valid list across a boundary reads.
    @Test func anImageOfSeveralChunksIsCheckedInEachOne() throws {
        let directory = TestDirectory("hnsw-image-chunks")
        defer { directory.remove() }
        let n = 12_000
        let parameters = try HNSWParameters(dimensions: 8, distanceType: .euclidean)
        // Level 0 only, each node linked to the next 20 (a graph made, not searched for).
        let nodes = (0..<n).map { (i: Int) -> HNSWStoredNode in
            let neighbors: [UInt64] = (1...20).map { UInt64((i + $0) % n + 1) }
            let vector: [Float] = (0..<8).map { Float(($0 * 7 + i) % 13) }
            return HNSWStoredNode(id: UInt64(i + 1), level: 0, neighbors: [neighbors], vector: vector)
        }
        let graph = try HNSWGraph.load(parameters: parameters, nodes: nodes, entryPoint: 1)
        let path = directory.path + "/image", stamp = [UInt8](repeating: 5, count: 16)
        try HNSWImage.write(graph, stamp: stamp, to: path)
        let whole = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let chunks = HNSWImage.chunkCount(length: whole.count)
        #expect(chunks >= 3)
        let read = try #require(HNSWImage.read(path, stamp: stamp, parameters: parameters))
        #expect(read.count == n && read.firstViolation() == nil)
        for id in [1, 4_321, 12_000] as [UInt64] { #expect(read.neighbors(of: id) == graph.neighbors(of: id)) }
        for chunk in 0..<chunks {
            var flipped = whole
            flipped[HNSWImage.headerSize + chunk * HNSWImage.checksumChunk + 17] ^= 0x01
            try Data(flipped).write(to: URL(fileURLWithPath: path))
            #expect(HNSWImage.read(path, stamp: stamp, parameters: parameters) == nil, "a flip in chunk \(chunk)")
        }
        let (sections, _) = HNSWImage.sections(of: graph, n: n, upperCount: 0)
        let listBytes: Int = 4 * graph.level0Stride, stride = Int32(graph.level0Stride)
        for boundary in 1..<chunks {
            // The list that starts before the boundary and ends after it (or at it).
            let boundaryAt: Int = HNSWImage.headerSize + boundary * HNSWImage.checksumChunk
            let across: Int = (boundaryAt - sections[2].offset) / listBytes
            guard across < n else { continue }
            for slot: Int in [across - 1, across, across + 1] where slot < n {
                for values: [Int32] in [[1, Int32(n)], [2, 0, -3], [stride]] {
                    try Data(Self.planting(values, at: sections[2].offset + slot * listBytes, in: whole, sections: sections))
                        .write(to: URL(fileURLWithPath: path))
                    #expect(HNSWImage.read(path, stamp: stamp, parameters: parameters) == nil, "slot \(slot) by boundary \(boundary): \(values)")
                }
            }
            // A bad slot as the last entry of the list across the boundary: in the next chunk.
            let acrossAt: Int = sections[2].offset + across * listBytes
            var full: [Int32] = [stride - 1] + [Int32](repeating: 0, count: Int(stride) - 1)
            full[Int(stride) - 1] = Int32(n)
            try Data(Self.planting(full, at: acrossAt, in: whole, sections: sections)).write(to: URL(fileURLWithPath: path))
            #expect(HNSWImage.read(path, stamp: stamp, parameters: parameters) == nil, "the last entry across boundary \(boundary)")
            full[Int(stride) - 1] = Int32(n - 1)
            try Data(Self.planting(full, at: acrossAt, in: whole, sections: sections)).write(to: URL(fileURLWithPath: path))
            #expect(HNSWImage.read(path, stamp: stamp, parameters: parameters) != nil, "a full list across boundary \(boundary)")
        }
    }

    /// An encrypted store keeps no image (it would hold the vectors in the clear), and a store
    /// that becomes encrypted loses its images; a read-only store writes none.
    @Test func noImageForAnEncryptedOrReadOnlyStore() throws {
        let directory = TestDirectory("hnsw-image-encrypted")
        defer { directory.remove() }
        let image = directory.path + "/" + HNSWImage.fileName(Self.indexId)
        let expected = try Self.makeStore(directory.path, quantized: false)
        #expect(FileManager.default.fileExists(atPath: image))
        unlink(image)
        do {
            let store = try Store(directoryPath: directory.path, model: cellarModel(), options: StoreOptions(readOnly: true))
            #expect(try Self.answers(store) == expected)
            store.close()
            #expect(!FileManager.default.fileExists(atPath: image))
        }
        do {
            let store = try Store(directoryPath: directory.path, model: cellarModel())
            #expect(try Self.answers(store) == expected)
            store.close()
            #expect(FileManager.default.fileExists(atPath: image))
        }
        let store = try Store(directoryPath: directory.path, model: cellarModel())
        try store.compact(newKey: TestKeys.encryption)
        #expect(!FileManager.default.fileExists(atPath: image))
        try store.box(for: Passage.self).put(Passage("new", Self.queries[1]))
        _ = try Self.answers(store)
        store.close()
        #expect(!FileManager.default.fileExists(atPath: image))
        let encrypted = try Store(directoryPath: directory.path, model: cellarModel(), options: StoreOptions(encryptionKey: TestKeys.encryption))
        _ = try Self.answers(encrypted)
        encrypted.close()
        #expect(!FileManager.default.fileExists(atPath: image))
    }
}
