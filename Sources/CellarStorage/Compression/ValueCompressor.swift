/// Compresses values for the writer, at one zstd level: a value is stored compressed only when
/// that saves at least an eighth of it and a reader would accept the frame.
final class ValueCompressor {
    private let encoder: Zstd.Encoder
    let level: Int32

    /// Throws `compressionUnavailable` in a build without zstd.
    init(level: Int32) throws {
        encoder = try Zstd.Encoder(level: level)
        self.level = level
    }

    /// `value` compressed (valid until the next call), or nil when that would not save at least
    /// an eighth of it, or would expand more than a reader accepts.
    func compress(_ value: UnsafeRawBufferPointer, dictionary: CompressionDictionary?) -> UnsafeRawBufferPointer? {
        guard let frame = encoder.compress(value, dictionary: dictionary), frame.count <= value.count - value.count / 8,
              value.count <= frame.count * Zstd.maximumExpansion else { return nil }
        return frame
    }
}
