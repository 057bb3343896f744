import CZstd

/// The zstd calls the engine makes, in one place: compressing a value into a reused buffer,
/// checking and decoding a stored frame, training a dictionary. Everything here works on one
/// value at a time; who owns the memory is the caller's business.
enum Zstd {
    /// A stored frame may not claim to expand more than this many times (zstd itself can go far
    /// beyond; the writer stores such values uncompressed), so that corrupt bytes cannot make a
    /// reader allocate a gigabyte for a few bytes of input.
    static let maximumExpansion = 1 << 12

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

    /// Decodes `frame` into `destination`, which holds exactly the size its header claims.
    /// Throws `fileCorrupt` when the bytes do not decode to exactly that.
    static func decode(_ frame: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer,
                       context: OpaquePointer, dictionary: DecompressionDictionary?, offset: UInt64) throws {
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

    /// The id a zstd dictionary carries (bytes 4..<8, little-endian: RFC 8878 §5); nil when the
    /// bytes are too short to hold one.
    static func dictionaryId(of dictionary: UnsafeRawBufferPointer) -> UInt32? {
        guard dictionary.count >= 8 else { return nil }
        return dictionary.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian
    }

    /// Trains a dictionary of at most `capacity` bytes from `samples` (their bytes one after
    /// another, and each one's length) and gives it the id `id`; nil when zstd finds too little
    /// in common to build one.
    static func trainDictionary(samples: [UInt8], sizes: [Int], capacity: Int, id: UInt32) -> [UInt8]? {
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
}
