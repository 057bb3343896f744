#if canImport(CZstd) || canImport(CZstdMacOS)
#if canImport(CZstd)
import CZstd
#else
import CZstdMacOS
#endif

/// The zstd calls the engine makes, in one place (see `Zstd`): checking and decoding a stored
/// frame, compressing a value into a reused buffer, training a dictionary. Everything here works
/// on one value at a time; who owns the memory is the caller's business.
extension Zstd {
    static var isAvailable: Bool { true }

    /// How many bytes `frame` decodes to, and the id of the dictionary it was compressed with
    /// (0: none). Throws `fileCorrupt` at `offset` when the frame's header is not one the writer
    /// makes: not a zstd frame, no content size, a size out of range.
    static func header(of frame: UnsafeRawBufferPointer, offset: UInt64) throws -> (size: Int, dictionary: UInt32) {
        guard let base = frame.baseAddress, frame.count >= 6 else {
            throw StorageError.fileCorrupt(offset: offset, reason: "compressed value of \(frame.count) bytes is too short for a zstd frame")
        }
        let size = ZSTD_getFrameContentSize(base, frame.count)
        guard size != ZSTD_CONTENTSIZE_ERROR else {
            throw StorageError.fileCorrupt(offset: offset, reason: "compressed value is not a zstd frame")
        }
        guard size != ZSTD_CONTENTSIZE_UNKNOWN else {
            throw StorageError.fileCorrupt(offset: offset, reason: "compressed value does not record its size")
        }
        guard size <= UInt64(StorageLimits.maxValueSize), size <= UInt64(frame.count) * UInt64(maximumExpansion) else {
            throw StorageError.fileCorrupt(offset: offset, reason: "compressed value of \(frame.count) bytes claims \(size) bytes")
        }
        return (Int(size), ZSTD_getDictID_fromFrame(base, frame.count))
    }

    /// Trains a dictionary of at most `capacity` bytes from `samples` (their bytes one after
    /// another, and each one's length) and gives it the id `id`; nil when zstd finds too little
    /// in common to build one.
    static func trainDictionary(samples: [UInt8], sizes: [Int], capacity: Int, id: UInt32) throws -> [UInt8]? {
        var dictionary = [UInt8](repeating: 0, count: capacity)
        let written = dictionary.withUnsafeMutableBytes { out in
            samples.withUnsafeBytes { input in
                sizes.withUnsafeBufferPointer { sizes in
                    ZDICT_trainFromBuffer(out.baseAddress, capacity, input.baseAddress, sizes.baseAddress, UInt32(sizes.count))
                }
            }
        }
        guard ZDICT_isError(written) == 0, written >= 8 else { return nil }
        dictionary.removeSubrange(written...)
        // A zstd dictionary is magic (4 bytes), then its id (4 bytes, little-endian): RFC 8878 §5.
        // The trainer picks a random id; the store numbers its dictionaries itself.
        withUnsafeBytes(of: id.littleEndian) { dictionary.replaceSubrange(4..<8, with: $0) }
        return dictionary
    }

    /// A decoding context (`ZSTD_DCtx`, about 100 KB), used by one thread at a time.
    final class DecodingContext: @unchecked Sendable {
        private let context: OpaquePointer

        init() throws { context = ZSTD_createDCtx()! }

        deinit { ZSTD_freeDCtx(context) }

        /// Decodes `frame` into `destination`, which holds exactly the size its header claims.
        /// Throws `fileCorrupt` when the bytes do not decode to exactly that.
        func decode(_ frame: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer,
                    dictionary: DecompressionDictionary?, offset: UInt64) throws {
            let written: Int
            if let dictionary {
                written = ZSTD_decompress_usingDDict(context, destination.baseAddress, destination.count,
                                                     frame.baseAddress, frame.count, dictionary.pointer)
            } else {
                written = ZSTD_decompressDCtx(context, destination.baseAddress, destination.count, frame.baseAddress, frame.count)
            }
            if ZSTD_isError(written) != 0 {
                // A failed call can leave the context mid-frame; the next one must start clean.
                ZSTD_DCtx_reset(context, ZSTD_reset_session_only)
                let name = String(cString: ZSTD_getErrorName(written))
                throw StorageError.fileCorrupt(offset: offset, reason: "compressed value does not decode: \(name)")
            }
            guard written == destination.count else {
                throw StorageError.fileCorrupt(offset: offset, reason: "compressed value decodes to \(written) bytes, its header says \(destination.count)")
            }
        }
    }

    /// Makes frames at one level: one compression context, reused, and a buffer the frames are
    /// made in.
    final class Encoder {
        private let context: OpaquePointer
        private var buffer: UnsafeMutableRawBufferPointer

        init(level: Int32) throws {
            context = ZSTD_createCCtx()!
            buffer = .allocate(byteCount: 4096, alignment: 8)
            ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level)
            // Each record carries its own checksum already.
            ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 0)
        }

        deinit {
            ZSTD_freeCCtx(context)
            buffer.deallocate()
        }

        /// `value` as one frame (valid until the next call); nil when zstd fails.
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
            guard ZSTD_isError(written) == 0 else { return nil }
            return UnsafeRawBufferPointer(start: buffer.baseAddress, count: written)
        }
    }
}

/// A dictionary ready to compress with (zstd's digested form), at one level.
final class CompressionDictionary: @unchecked Sendable {
    let id: UInt32
    fileprivate let pointer: OpaquePointer

    /// Nil when `bytes` are not a zstd dictionary.
    init?(id: UInt32, bytes: UnsafeRawBufferPointer, level: Int32) throws {
        guard let pointer = ZSTD_createCDict(bytes.baseAddress, bytes.count, level) else { return nil }
        self.id = id
        self.pointer = pointer
    }

    deinit { ZSTD_freeCDict(pointer) }
}

/// A dictionary ready to decompress with. Immutable; shared by every reader that needs it.
final class DecompressionDictionary: @unchecked Sendable {
    let id: UInt32
    fileprivate let pointer: OpaquePointer

    /// Nil when `bytes` are not a zstd dictionary.
    init?(id: UInt32, bytes: UnsafeRawBufferPointer) throws {
        guard let pointer = ZSTD_createDDict(bytes.baseAddress, bytes.count) else { return nil }
        self.id = id
        self.pointer = pointer
    }

    deinit { ZSTD_freeDDict(pointer) }
}
#endif
