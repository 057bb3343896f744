import CZstd

/// Compresses values for the writer: one zstd context, reused, and a buffer the frames are made in.
final class ValueCompressor {
    private let context: OpaquePointer
    private var buffer: UnsafeMutableRawBufferPointer
    let level: Int32

    init(level: Int32) {
        context = ZSTD_createCCtx()!
        self.level = level
        buffer = .allocate(byteCount: 4096, alignment: 8)
        ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level)
        // Each record carries its own checksum already.
        ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 0)
    }

    deinit {
        ZSTD_freeCCtx(context)
        buffer.deallocate()
    }

    /// `value` compressed (valid until the next call), or nil when that would not save at least
    /// an eighth of it, or would expand more than a reader accepts.
    func compress(_ value: UnsafeRawBufferPointer, dictionary: CompressionDictionary?) -> UnsafeRawBufferPointer? {
        let bound = ZSTD_compressBound(value.count)
        if bound > buffer.count {
            buffer.deallocate()
            buffer = .allocate(byteCount: bound, alignment: 8)
        }
        let written: Int
        if let dictionary {
            written = ZSTD_compress_usingCDict(context, buffer.baseAddress, buffer.count, value.baseAddress, value.count, dictionary.pointer)
        } else {
            written = ZSTD_compress2(context, buffer.baseAddress, buffer.count, value.baseAddress, value.count)
        }
        guard ZSTD_isError(written) == 0, written <= value.count - value.count / 8,
              value.count <= written * Zstd.maximumExpansion else { return nil }
        return UnsafeRawBufferPointer(start: buffer.baseAddress, count: written)
    }
}
