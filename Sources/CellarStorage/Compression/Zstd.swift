/// zstd, the engine's compression codec, behind one seam: everything that calls libzstd is in
/// `Zstd+Library.swift`, built when the package has it (`CZstd`: the `Zstd` trait, on by default,
/// on a platform that has the library: Linux, Android, BSD; `CZstdMacOS`: the `ZstdOnMacOS`
/// trait, on macOS). `Zstd+Missing.swift` is its twin for every other build (iOS, tvOS,
/// watchOS, visionOS, macOS without that trait, and any build with the traits off):
/// the same names, which throw `StorageError.compressionUnavailable`. So a store whose values
/// were compressed with zstd, opened by a build without it, fails with that error at the first
/// compressed value it reads; it never returns other bytes. Options that would compress are
/// refused at open (`StorageOptions.validated`).
///
/// What both twins provide:
/// - `Zstd.isAvailable`;
/// - `Zstd.header(of:offset:)`, the checks of a stored frame's header: its size and dictionary;
/// - `Zstd.trainDictionary(samples:sizes:capacity:id:)`;
/// - `Zstd.DecodingContext` (decodes one frame at a time), `Zstd.Encoder` (makes frames);
/// - `CompressionDictionary` and `DecompressionDictionary`, a dictionary made ready for each.
enum Zstd {
    /// A stored frame may not claim to expand more than this many times (zstd itself can go far
    /// beyond; the writer stores such values uncompressed), so that corrupt bytes cannot make a
    /// reader allocate a gigabyte for a few bytes of input.
    static let maximumExpansion = 1 << 12

    /// The id a zstd dictionary carries (bytes 4..<8, little-endian: RFC 8878 §5); nil when the
    /// bytes are too short to hold one.
    static func dictionaryId(of dictionary: UnsafeRawBufferPointer) -> UInt32? {
        guard dictionary.count >= 8 else { return nil }
        return dictionary.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian
    }

    /// The error of a build without zstd, for `what` it was asked to do.
    static func unavailable(_ what: String) -> StorageError {
        .compressionUnavailable(codec: "zstd", needed: what)
    }
}
