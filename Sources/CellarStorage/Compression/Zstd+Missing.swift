#if !canImport(CZstd) && !canImport(CZstdMacOS)
/// The build has no zstd (see `Zstd`): every call that would need libzstd throws
/// `StorageError.compressionUnavailable`. Nothing here decodes or guesses.
extension Zstd {
    static var isAvailable: Bool { false }

    static func header(of frame: UnsafeRawBufferPointer, offset: UInt64) throws -> (size: Int, dictionary: UInt32) {
        throw unavailable("a value at offset \(offset) is compressed with zstd")
    }

    static func trainDictionary(samples: [UInt8], sizes: [Int], capacity: Int, id: UInt32) throws -> [UInt8]? {
        throw unavailable("training a compression dictionary")
    }

    /// Never made in this build.
    final class DecodingContext: @unchecked Sendable {
        init() throws { throw unavailable("decoding a compressed value") }

        func decode(_ frame: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer,
                    dictionary: DecompressionDictionary?, offset: UInt64) throws {
            throw unavailable("a value at offset \(offset) is compressed with zstd")
        }
    }

    /// Never made in this build.
    final class Encoder {
        init(level: Int32) throws { throw unavailable("compressing values (zstd level \(level))") }

        func compress(_ value: UnsafeRawBufferPointer, dictionary: CompressionDictionary?) -> UnsafeRawBufferPointer? { nil }
    }
}

/// Never made in this build.
final class CompressionDictionary: @unchecked Sendable {
    let id: UInt32

    init?(id: UInt32, bytes: UnsafeRawBufferPointer, level: Int32) throws {
        throw Zstd.unavailable("compressing with dictionary \(id)")
    }
}

/// Never made in this build.
final class DecompressionDictionary: @unchecked Sendable {
    let id: UInt32

    init?(id: UInt32, bytes: UnsafeRawBufferPointer) throws {
        throw Zstd.unavailable("decoding with dictionary \(id)")
    }
}
#endif
