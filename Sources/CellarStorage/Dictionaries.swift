import CZstd

/// Where a store keeps its zstd dictionaries: a tree of the engine's own, hidden from
/// `treeNames()` and refused to callers (`docs/format.md`, `docs/compression.md`).
///
/// | key | value |
/// |---|---|
/// | `00` | u32 LE: the next dictionary id (ids are never reused in a store's life) |
/// | `01` ‖ u32 BE id | the dictionary, in zstd's format (its bytes 4..<8 hold the same id) |
/// | `02` ‖ tree name | u32 LE: the id of the dictionary that tree's new values are compressed with |
///
/// Compaction trains the dictionaries (`StorageEngine.trainDictionary`) and writes them into the
/// new file with the values they compress; the old file's dictionaries go with it.
enum Dictionaries {
    /// The reserved tree's name. Tree names starting with a zero byte belong to the engine.
    static let treeName = "\u{0}zstd-dictionaries"

    /// Whether `name` is one of the engine's own trees.
    static func isReserved(_ name: String) -> Bool { name.utf8.first == 0 }

    /// Throws `illegalArgument` for the name of one of the engine's own trees.
    static func refuseReserved(_ name: String) throws {
        if isReserved(name) {
            throw StorageError.illegalArgument("tree names starting with a zero byte belong to the storage engine")
        }
    }

    /// A tree needs at least this many values above the threshold for compaction to train a
    /// dictionary for it (zstd's trainer wants a few hundred).
    static let minimumSamples = 256
    /// Compaction samples at most this many values, evenly spread over the tree.
    static let maximumSamples = 4_096
    /// …and at most this many bytes of them.
    static let maximumSampleBytes = 4 << 20
    /// A dictionary is about a tenth of its sample, between these sizes.
    static let minimumCapacity = 2 << 10
    static let maximumCapacity = 64 << 10

    static let nextIdKey: [UInt8] = [0]

    static func dictionaryKey(_ id: UInt32) -> [UInt8] {
        [1] + withUnsafeBytes(of: id.bigEndian) { Array($0) }
    }

    static func treeKey(_ tree: String) -> [UInt8] { [2] + Array(tree.utf8) }

    static func decodeId(_ value: UnsafeRawBufferPointer, key: String) throws -> UInt32 {
        guard value.count == 4 else {
            throw StorageError.fileCorrupt(offset: 0, reason: "dictionary entry \(key) holds \(value.count) bytes, expected 4")
        }
        return value.loadUnaligned(as: UInt32.self).littleEndian
    }
}

extension NodeSource {
    /// The bytes of dictionary `id` as this source sees them; nil when it holds no such dictionary.
    func dictionaryBytes(_ id: UInt32) throws -> UnsafeRawBufferPointer? {
        try dictionaryTreeValue(Dictionaries.dictionaryKey(id))
    }

    /// The next dictionary id this source records; nil when it records none (no dictionary was
    /// ever made).
    func storedNextDictionaryId() throws -> UInt32? {
        try dictionaryTreeValue(Dictionaries.nextIdKey).map { try Dictionaries.decodeId($0, key: "next id") }
    }

    /// The id of the dictionary `tree`'s new values are compressed with; nil when none.
    func currentDictionaryId(of tree: String) throws -> UInt32? {
        try dictionaryTreeValue(Dictionaries.treeKey(tree)).map { try Dictionaries.decodeId($0, key: "for \"\(tree)\"") }
    }

    /// The value under `key` in the dictionaries' tree as this source sees it; nil when absent.
    private func dictionaryTreeValue(_ key: [UInt8]) throws -> UnsafeRawBufferPointer? {
        guard let root = try reservedTreeRoot(Dictionaries.treeName) else { return nil }
        return try key.withUnsafeBytes { try get(root: root, key: $0) }
    }

    /// The root of the engine's tree `name` in the catalog; nil when there is none.
    func catalogTreeRoot(_ name: String) throws -> UInt64? {
        guard let value = try Array(name.utf8).withUnsafeBytes({ try get(root: catalogRootRef, key: $0) }) else { return nil }
        return try CatalogEntry.decode(value, name: name, at: catalogRootRef).root
    }
}

/// What the engine's transactions share for compressed values: the dictionaries readers decoded
/// with (by id; ids are unique in a store's life, so an entry never goes stale, and an entry a
/// compaction made useless is only memory) and a pool of decoding contexts.
final class ValueCodecs: Sendable {
    private let dictionaries = Locked<[UInt32: DecompressionDictionary]>([:])
    /// Decoding contexts (`ZSTD_DCtx`, about 100 KB each), kept between transactions.
    private let contexts = Locked<[UInt]>([])

    /// Dictionary `id`, read through `source` the first time.
    func decompressionDictionary(_ id: UInt32, source: NodeSource, offset: UInt64) throws -> DecompressionDictionary {
        if let found = dictionaries.withLock({ $0[id] }) { return found }
        guard let bytes = try source.dictionaryBytes(id) else {
            throw StorageError.fileCorrupt(offset: offset, reason: "compressed value names dictionary \(id), which the store does not hold")
        }
        guard let dictionary = DecompressionDictionary(id: id, bytes: bytes) else {
            throw StorageError.fileCorrupt(offset: offset, reason: "dictionary \(id) is not a zstd dictionary")
        }
        return dictionaries.withLock { table in
            if let raced = table[id] { return raced }
            table[id] = dictionary
            return dictionary
        }
    }

    /// A decoding context; give it back with `recycle`.
    func takeContext() -> OpaquePointer {
        if let kept = contexts.withLock({ $0.popLast() }) { return OpaquePointer(bitPattern: kept)! }
        return ZSTD_createDCtx()!
    }

    /// Keeps `context` for the next transaction (a few at most; the rest are freed).
    func recycle(_ context: OpaquePointer) {
        let bits = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(context)))
        let kept = contexts.withLock { pool -> Bool in
            guard pool.count < 8 else { return false }
            pool.append(bits)
            return true
        }
        if !kept { ZSTD_freeDCtx(context) }
    }

    deinit {
        for bits in contexts.withLock({ $0 }) { ZSTD_freeDCtx(OpaquePointer(bitPattern: bits)!) }
    }
}
