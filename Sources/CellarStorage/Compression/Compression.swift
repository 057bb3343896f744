/// How a store compresses the values it writes (`StorageOptions.compression`).
///
/// A value of at least `StorageOptions.compressionThreshold` bytes is compressed with zstd (one
/// frame per value) when that saves at least an eighth of it; smaller values, and values that do
/// not shrink enough, are stored as they are and read in place, without a copy. Compressed values
/// are flagged in their leaf entry (`docs/format.md`) and decoded when read.
///
/// Every store reads compressed values whatever its option says: the option decides only how new
/// values are written, and compaction rewrites every value the way the option says (so compacting
/// with `.none` decompresses a store).
public enum Compression: Sendable, Hashable {
    /// Values are stored as they are.
    case none
    /// zstd at `level` (1 fastest … 19 smallest; negative levels are faster still), no dictionary.
    case zstd(level: Int = 3)
    /// zstd at `level` with a dictionary per tree: each compaction trains one from a sample of
    /// the tree's values (at least `Dictionaries.minimumSamples` of them above the threshold),
    /// stores it in the new file and compresses the tree's values with it; commits after it use it
    /// too. Small records that share fields and text (an entity's objects) shrink far more than
    /// alone. Until the first compaction, values are compressed without a dictionary.
    case zstdDictionary(level: Int = 3)

    /// Whether this build can write values this way: `.none` always; zstd only where the package
    /// was built with libzstd (the `Zstd` trait, on by default, on Linux; the `ZstdOnMacOS` trait
    /// on macOS; never on iOS, tvOS, watchOS or visionOS). A store opened with an option that is
    /// not available throws `StorageError.compressionUnavailable`.
    public var isAvailable: Bool {
        switch self {
        case .none: return true
        case .zstd, .zstdDictionary: return Zstd.isAvailable
        }
    }

    /// The zstd level, nil for `.none`.
    var level: Int32? {
        switch self {
        case .none: return nil
        case .zstd(let level), .zstdDictionary(let level): return Int32(clamping: level)
        }
    }

    /// Whether compaction trains dictionaries.
    var trainsDictionaries: Bool {
        if case .zstdDictionary = self { return true }
        return false
    }
}
