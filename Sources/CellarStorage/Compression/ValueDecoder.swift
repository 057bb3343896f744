/// Decodes the compressed values one transaction reads; made on its first compressed value.
///
/// Three lifetimes, by what the caller needs (see `docs/compression.md`):
/// - `decodeKept`: valid until the transaction ends (`get`, `Cursor.value()`); the bytes go to an
///   arena of the transaction, freed with it.
/// - `decode(_:into:)`: into a buffer the caller reuses (a scan's entry, valid for its callback).
/// - `withDecoded`: into memory that lives for one closure.
final class ValueDecoder {
    private let codecs: ValueCodecs
    private var context: Zstd.DecodingContext?
    /// The dictionary used last: consecutive values of a tree share one, and a hit skips the lock.
    private var lastDictionary: DecompressionDictionary?
    /// The arena of `decodeKept`: chunks never move, so what was handed out stays valid.
    private var chunks: [UnsafeMutableRawBufferPointer] = []
    private var used = 0

    static let chunkSize = 64 << 10

    init(codecs: ValueCodecs) {
        self.codecs = codecs
    }

    deinit {
        if let context { codecs.recycle(context) }
        for chunk in chunks { chunk.deallocate() }
    }

    /// `frame` decoded into memory that stays valid until the transaction ends.
    func decodeKept(_ value: StoredValue, source: NodeSource) throws -> UnsafeRawBufferPointer {
        let (size, dictionary) = try Zstd.header(of: value.bytes, offset: value.offset)
        let destination = allocate(size)
        try decode(value, size: size, dictionary: dictionary, into: destination, source: source)
        return UnsafeRawBufferPointer(destination)
    }

    /// `frame` decoded into `buffer`, which grows when too small (what it held before is gone).
    func decode(_ value: StoredValue, into buffer: inout UnsafeMutableRawBufferPointer?, source: NodeSource) throws -> UnsafeRawBufferPointer {
        let (size, dictionary) = try Zstd.header(of: value.bytes, offset: value.offset)
        if buffer == nil || buffer!.count < size {
            buffer?.deallocate()
            buffer = .allocate(byteCount: max(size, 256), alignment: 8)
        }
        let destination = UnsafeMutableRawBufferPointer(rebasing: buffer![0..<size])
        try decode(value, size: size, dictionary: dictionary, into: destination, source: source)
        return UnsafeRawBufferPointer(destination)
    }

    /// Calls `body` with `frame` decoded, in memory that lives for the call.
    func withDecoded<R>(_ value: StoredValue, source: NodeSource, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        let (size, dictionary) = try Zstd.header(of: value.bytes, offset: value.offset)
        return try withUnsafeTemporaryAllocation(byteCount: max(size, 1), alignment: 8) { memory in
            let destination = UnsafeMutableRawBufferPointer(rebasing: memory[0..<size])
            try decode(value, size: size, dictionary: dictionary, into: destination, source: source)
            return try body(UnsafeRawBufferPointer(destination))
        }
    }

    private func decode(_ value: StoredValue, size: Int, dictionary id: UInt32, into destination: UnsafeMutableRawBufferPointer,
                        source: NodeSource) throws {
        var dictionary: DecompressionDictionary?
        if id != 0 {
            if let last = lastDictionary, last.id == id {
                dictionary = last
            } else {
                dictionary = try codecs.decompressionDictionary(id, source: source, offset: value.offset)
                lastDictionary = dictionary
            }
        }
        if context == nil { context = try codecs.takeContext() }
        try context!.decode(value.bytes, into: destination, dictionary: dictionary, offset: value.offset)
    }

    private func allocate(_ size: Int) -> UnsafeMutableRawBufferPointer {
        let aligned = (size + 7) & ~7
        if let last = chunks.last, last.count - used >= aligned {
            defer { used += aligned }
            return UnsafeMutableRawBufferPointer(rebasing: last[used..<(used + size)])
        }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: max(aligned, Self.chunkSize), alignment: 8)
        chunks.append(chunk)
        used = aligned
        return UnsafeMutableRawBufferPointer(rebasing: chunk[0..<size])
    }
}
