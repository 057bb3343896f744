import CellarStorage
import Foundation

/// HNSW vector indexes (`// cellar: hnsw = {…}` on a `[Float]` property): the graph in the
/// index's tree, and in memory.
///
/// **In the tree** (`i<index ID>`), written in the object's own write transaction:
/// - a **node** per indexed object: key = the object id (8 bytes, big-endian), value = the node's
///   level and its neighbours per level (`HNSWGraph.encodeNode`). The vector is not repeated: it
///   is in the object's record;
/// - the **entry point** under the key `[0]` (one byte, so never a node's key): its id, 8 bytes
///   big-endian; absent when the graph is empty;
/// - the **stamp** under the key `[1]`: 16 random bytes made anew by every transaction that
///   changes the graph, which tells whether an image of the graph (HNSWImage.swift) is the
///   index of a snapshot.
///
/// **In memory** (`VectorIndexes`): the graph with every vector (`HNSWGraph`), loaded from the
/// tree and the records the first time a query or a commit needs it, then kept up to date by each
/// commit. A search reads the graph under a shared lock; a commit changes it under an exclusive
/// one, just before the commit is written, and writes the nodes it changed into the tree.
enum VectorIndex {
    static let entryPointKey: [UInt8] = [0]
    static let stampKey: [UInt8] = [1]

    static func nodeKey(_ id: Id) -> [UInt8] { QueryPlan.bigEndian(id) }

    /// The vector of `property` in `record` (nil: absent or empty, which both mean "no vector").
    static func vector(of property: PropertySchema, in record: RecordReader) throws -> [Float]? {
        guard let vector = try record.list(Float.self, slot: property.slot), !vector.isEmpty else { return nil }
        return vector
    }

    /// Throws `illegalArgument` unless `vector` can be indexed with `parameters`: the right number
    /// of components, every one finite. `what` names the property (or the query).
    static func check(_ vector: [Float], _ parameters: HNSWParameters, what: @autoclosure () -> String) throws {
        guard vector.count == parameters.dimensions else {
            throw CellarError.illegalArgument("\(what()) has \(vector.count) dimensions; its HNSW index expects \(parameters.dimensions)")
        }
        if let bad = vector.firstIndex(where: { !$0.isFinite }) {
            throw CellarError.illegalArgument("\(what()) has \(vector[bad]) at component \(bad); a vector's components are finite numbers")
        }
    }

    /// Loads the graph of `index` on `property` of `schema` from a transaction's view: the nodes
    /// and entry point from the index's tree, then the vectors from one pass over the records
    /// (in id order, like the nodes: a scan rather than a lookup per node).
    static func load(_ index: IndexSchema, property: PropertySchema, schema: EntitySchema, in txn: ReadTransaction) throws -> HNSWGraph {
        let parameters = index.hnsw!
        guard let tree = try txn.tree(index.treeName) else { return HNSWGraph(parameters: parameters) }
        var loader = HNSWGraphLoader(parameters: parameters, expectedCount: try txn.cursor(tree).countKeys())
        var entryPoint: Id?
        var stamp: [UInt8]?
        do {
            try txn.cursor(tree).scan { key, value in
                if key.elementsEqual(entryPointKey) {
                    guard value.count == 8 else { throw corrupt(index, "an entry point of \(value.count) bytes") }
                    entryPoint = Id(bigEndian: value.loadUnaligned(as: UInt64.self))
                    return true
                }
                if key.elementsEqual(stampKey) {
                    guard value.count == 16 else { throw corrupt(index, "a stamp of \(value.count) bytes") }
                    stamp = Array(value)
                    return true
                }
                guard key.count == 8 else { throw corrupt(index, "a key of \(key.count) bytes") }
                try loader.addNode(id: Id(bigEndian: key.loadUnaligned(as: UInt64.self)), encoded: value)
                return true
            }
            if loader.count > 0, let records = try txn.tree(schema.treeName) {
                try txn.cursor(records).scan { key, record in
                    let id = try StorageLayout.objectId(key)
                    guard loader.contains(id), let bytes = try RecordReader(record).bytes(slot: property.slot) else { return true }
                    try loader.setVector(id: id, littleEndian: bytes)
                    return true
                }
            }
            let graph = try loader.finish(entryPoint: entryPoint)
            graph.stamp = stamp
            return graph
        } catch let error as CellarError where error.code == .fileCorrupt && error.message.hasPrefix("HNSW index: ") {
            throw corrupt(index, String(error.message.dropFirst("HNSW index: ".count)))
        }
    }

    static func corrupt(_ index: IndexSchema, _ what: String) -> CellarError {
        CellarError.fileCorrupt("the HNSW index \(index.id) (tree \(index.treeName)) has \(what)")
    }

    /// Writes what `changes` says changed in `graph` into the index's tree.
    static func write(_ changes: HNSWChanges, of graph: HNSWGraph, to tree: Tree, in write: WriteTransaction) throws {
        for id in changes.removed.sorted() { _ = try write.delete(tree, key: nodeKey(id)) }
        for id in changes.written.sorted() {
            guard let node = graph.encodeNode(id) else { continue }
            try write.put(tree, key: nodeKey(id), value: node)
        }
        if changes.entryPointChanged || !changes.written.isEmpty || !changes.removed.isEmpty {
            if let entry = graph.entryPoint {
                try write.put(tree, key: entryPointKey, value: nodeKey(entry))
            } else {
                _ = try write.delete(tree, key: entryPointKey)
            }
            let stamp = HNSWImage.newStamp()
            try write.put(tree, key: stampKey, value: stamp)
            graph.stamp = stamp
        }
    }
}

/// The in-memory graphs of a store's HNSW indexes, by index ID, each with the commit it reflects.
final class VectorIndexes: Sendable {
    final class Entry: Sendable {
        /// The graph: many searches, or one commit changing it.
        private let graph: ReadWriteLocked<HNSWGraph>
        /// The transaction id of the newest commit the graph reflects.
        var version: UInt64 { versions.withLock { $0.newest } }
        /// The commits the graph reflects: `oldest` (the commit it was loaded at, or the last
        /// one that changed it) through `newest` (commits between changed other things).
        private let versions: Locked<(oldest: UInt64, newest: UInt64)>

        /// The stamp of the graph's image on disk, as far as this store knows (written by it, or
        /// the graph read from it).
        let imageStamp: Locked<[UInt8]?>

        init(graph: HNSWGraph, version: UInt64) {
            self.graph = ReadWriteLocked(graph)
            versions = Locked((version, version))
            imageStamp = Locked(nil)
        }

        /// Whether the graph is exactly the index as of commit `version`.
        func reflects(_ version: UInt64) -> Bool {
            versions.withLock { $0.oldest <= version && version <= $0.newest }
        }

        func reading<R>(_ body: (HNSWGraph) throws -> R) rethrows -> R {
            try graph.reading(body)
        }

        func writing<R>(_ body: (HNSWGraph) throws -> R) rethrows -> R {
            try graph.writing { try body($0) }
        }

        /// A write transaction that will commit as `version` is changing the graph: until it
        /// commits, the graph reflects no commit (a reader checks each object it finds).
        func changing(toward version: UInt64) {
            versions.withLock { $0.oldest = version }
        }

        /// Commit `version` changed the index (`changed`), or changed other things only. A
        /// graph the commit changed (`changing(toward:)`) now reflects it; a graph of the commit
        /// before that it did not change reflects it too; any other graph (say one a reader
        /// loaded while the commit rebuilt the index's tree) is left as it is, to be loaded
        /// again by the commit's readers.
        fileprivate func committed(_ version: UInt64, changed: Bool) {
            versions.withLock { versions in
                if changed ? versions.oldest == version : versions.oldest <= versions.newest && versions.newest == version &- 1 {
                    versions.newest = version
                }
            }
        }
    }

    private let entries = Locked<[UInt32: Entry]>([:])
    /// How many graphs were loaded so far, from their trees or their images (tests).
    let loads = Locked(0)
    /// How many of those came from images (tests).
    let imageLoads = Locked(0)
    /// The folder the graphs' images are kept in (see HNSWImage.swift); nil: none are.
    let imageFolder: String?
    /// Whether images are written (not by a read-only store).
    let writesImages: Bool

    /// Graphs with their images in `imageFolder` (nil: without images), written when
    /// `writesImages`.
    init(imageFolder: String? = nil, writesImages: Bool = false) {
        self.imageFolder = imageFolder
        self.writesImages = writesImages && imageFolder != nil
    }

    /// The path of index `indexId`'s image, nil without an image folder.
    func imagePath(_ indexId: UInt32) -> String? {
        imageFolder.map { $0 + "/" + HNSWImage.fileName(indexId) }
    }

    /// The graph of `index` as of `txn`'s snapshot: from its image when one carries the stamp
    /// of the snapshot's tree (and `useImage`), else from the tree and the records.
    func load(_ index: IndexSchema, property: PropertySchema, schema: EntitySchema, in txn: ReadTransaction,
              useImage: Bool) throws -> HNSWGraph {
        if useImage, let path = imagePath(index.id), let tree = try txn.tree(index.treeName),
           let stamp = try txn.get(tree, key: VectorIndex.stampKey), stamp.count == 16,
           let graph = HNSWImage.read(path, stamp: stamp, parameters: index.hnsw!) {
            graph.stamp = stamp
            graph.readFromImage = true
            imageLoads.withLock { $0 += 1 }
            return graph
        }
        return try VectorIndex.load(index, property: property, schema: schema, in: txn)
    }

    /// Writes the image of every graph in memory whose image on disk (as far as this store
    /// knows) is not of its content; errors (a full disk, a folder gone) are ignored: images
    /// are a cache. The caller checks that images may be written (not encrypted).
    func saveImages() {
        guard writesImages else { return }
        // The temporary files of writes a crash cut short.
        removeImageFiles { $0.contains(".graph.tmp-") }
        for (id, entry) in entries.withLock({ Array($0) }) {
            guard let path = imagePath(id) else { continue }
            entry.reading { graph in
                guard let stamp = graph.stamp, entry.imageStamp.withLock({ $0 }) != stamp else { return }
                if (try? HNSWImage.write(graph, stamp: stamp, to: path)) != nil {
                    entry.imageStamp.withLock { $0 = stamp }
                }
            }
        }
    }

    /// Deletes every image (the store is now encrypted), or index `indexId`'s (it was dropped).
    func removeImages(of indexId: UInt32? = nil) {
        if let indexId {
            removeImageFiles { $0 == HNSWImage.fileName(indexId) }
        } else {
            removeImageFiles { $0.hasSuffix(".graph") }
        }
    }

    /// Deletes the files in the image folder whose name starts with `hnsw-` and `matches`.
    private func removeImageFiles(_ matches: (String) -> Bool) {
        guard writesImages, let folder = imageFolder else { return }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where name.hasPrefix("hnsw-") && matches(name) {
            unlink(folder + "/" + name)
        }
    }

    /// The graph of `index` for a reader of the snapshot of commit `version` (`view` loads it
    /// when there is none as recent). A graph newer than the reader's snapshot is used as it is:
    /// the reader then checks that each object found is in its snapshot.
    func entry(_ index: IndexSchema, version: UInt64, load: () throws -> HNSWGraph) throws -> Entry {
        if let entry = entries.withLock({ $0[index.id] }), entry.version >= version { return entry }
        let graph = try load()
        let entry = Entry(graph: graph, version: version)
        if graph.readFromImage { entry.imageStamp.withLock { $0 = graph.stamp } }
        loads.withLock { $0 += 1 }
        return entries.withLock { entries in
            if let current = entries[index.id], current.version >= version { return current }
            entries[index.id] = entry
            return entry
        }
    }

    /// Bytes the graphs in memory keep for their vectors and neighbour lists.
    var residentBytes: Int {
        entries.withLock { Array($0.values) }.reduce(0) { total, entry in
            total + entry.reading { $0.residentVectorBytes + $0.residentListBytes }
        }
    }

    /// Forgets the graph of `index` (its tree was dropped, or a transaction that changed it did
    /// not commit): the next use loads it again.
    func invalidate(_ indexId: UInt32) {
        entries.withLock { $0[indexId] = nil }
    }

    /// Notes that commit `version` (made by this store, on top of commit `version - 1`) changed
    /// the graphs `changed`, which now reflect it, and no other: a graph that reflected commit
    /// `version - 1` reflects `version` too, so a reader of the new commit keeps it instead of
    /// loading it again. (A graph as of an older commit is left as it is: a commit between may
    /// have changed its index, and whoever reads it next loads it again.)
    func committed(changed: Set<UInt32>, version: UInt64) {
        entries.withLock { entries in
            for (id, entry) in entries { entry.committed(version, changed: changed.contains(id)) }
        }
    }
}
