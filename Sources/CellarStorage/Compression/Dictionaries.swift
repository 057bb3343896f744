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
