/// Checks that tools and fuzzers can run on raw bytes, without a store.
public enum Diagnostics {
    /// What `checkNode` read.
    public struct NodeSummary: Equatable, Sendable {
        /// Whether the node is a leaf (its entries are keys and values) rather than a branch.
        public var isLeaf: Bool
        /// The number of entries in the node.
        public var entries: Int
        /// Key bytes plus inline value bytes.
        public var payloadBytes: Int
    }

    /// Decodes `body` as a B+tree node body (the bytes after a node record's 16-byte header):
    /// validates it, then reads every key, every inline value and every child or out-of-line
    /// reference. Throws `fileCorrupt` (offset within `body`: 0) when it is malformed. Never traps,
    /// whatever the bytes: this is the check every node read from disk passes before it is used.
    public static func checkNode(_ body: UnsafeRawBufferPointer) throws -> NodeSummary {
        guard let base = body.baseAddress else {
            throw StorageError.fileCorrupt(offset: 0, reason: "node shorter than its header")
        }
        if let problem = NodeView.validate(base, length: body.count) {
            throw StorageError.fileCorrupt(offset: 0, reason: problem)
        }
        let node = NodeView(body: base)
        var payload = 0
        for i in 0..<node.count {
            payload += node.keyBuffer(i).count
            if node.isLeaf, case .inline(let bytes, _) = node.value(i) { payload += bytes.count }
        }
        return NodeSummary(isLeaf: node.isLeaf, entries: node.count, payloadBytes: payload)
    }

    /// What a write does to a committed node it changes, on `body` (a node body `checkNode`
    /// accepts; else this throws as it does): copies it as a write transaction copies a node on
    /// its path, and encodes the copy as a commit writes it, twice: at once (the copy unchanged)
    /// and entry by entry (after an entry added past the last and removed again). Returns both
    /// encodings and the node's entries as `body` holds them, in order: each encoding must hold
    /// exactly those entries, back to back after its slots, whatever the layout of `body`.
    public static func nodeCopies(_ body: UnsafeRawBufferPointer) throws
        -> (atOnce: [UInt8], entryByEntry: [UInt8], entries: [[UInt8]]) {
        _ = try checkNode(body)
        let node = NodeView(body: body.baseAddress!)
        let entries = (0..<node.count).map { Array(UnsafeRawBufferPointer(start: node.entry($0), count: node.entrySize($0))) }
        let copy = DirtyNode(copying: node, capacity: 64)
        func encoded() -> [UInt8] {
            [UInt8](unsafeUninitializedCapacity: copy.encodedSize) { buffer, count in
                copy.encode(into: UnsafeMutableRawPointer(buffer.baseAddress!)) { $0 }
                count = copy.encodedSize
            }
        }
        let atOnce = encoded()
        let key: [UInt8] = [0xFF]
        key.withUnsafeBytes { key in
            if copy.isLeaf {
                copy.insertLeaf(at: copy.count, key: key, value: key)
            } else {
                copy.insertBranch(at: copy.count, key: key, child: 1)
            }
        }
        copy.remove(at: copy.count - 1)
        return (atOnce, encoded(), entries)
    }
}

extension Diagnostics {
    /// Decoding contexts kept between calls (a fuzzer makes millions).
    private static let decodingCodecs = ValueCodecs()

    /// Decodes `frame` as a stored compressed value is decoded on every read: the same header
    /// checks (a zstd frame that records its size, within the value limit and the expansion
    /// bound), the same dictionary lookup (a frame naming a dictionary decodes only with
    /// `dictionary`, and only when that dictionary carries the id the frame names), the same
    /// exact-size check. Throws `fileCorrupt` (offset 0) for anything else; never traps. In a
    /// build without zstd, throws `compressionUnavailable`.
    public static func decodeCompressedValue(_ frame: UnsafeRawBufferPointer, dictionary: UnsafeRawBufferPointer?) throws -> [UInt8] {
        let (size, id) = try Zstd.header(of: frame, offset: 0)
        var decompression: DecompressionDictionary?
        if id != 0 {
            guard let dictionary, Zstd.dictionaryId(of: dictionary) == id,
                  let made = try DecompressionDictionary(id: id, bytes: dictionary) else {
                throw StorageError.fileCorrupt(offset: 0, reason: "compressed value names dictionary \(id), which the store does not hold")
            }
            decompression = made
        }
        let context = try decodingCodecs.takeContext()
        defer { decodingCodecs.recycle(context) }
        var output = [UInt8](repeating: 0, count: size)
        try output.withUnsafeMutableBytes { try context.decode(frame, into: $0, dictionary: decompression, offset: 0) }
        return output
    }

    /// `value` compressed as a store with `.zstd(level:)` would store it (with `dictionary`, a
    /// zstd dictionary, when given); nil when the store would keep it as it is. For building
    /// fuzz corpora and tests. Throws `compressionUnavailable` in a build without zstd.
    public static func compressValue(_ value: UnsafeRawBufferPointer, level: Int = 3, dictionary: UnsafeRawBufferPointer? = nil) throws -> [UInt8]? {
        let compressor = try ValueCompressor(level: Int32(clamping: level))
        let made = try dictionary.flatMap { bytes in
            try Zstd.dictionaryId(of: bytes).flatMap { try CompressionDictionary(id: $0, bytes: bytes, level: Int32(clamping: level)) }
        }
        return compressor.compress(value, dictionary: made).map(Array.init)
    }

    /// A zstd dictionary with id `id`, trained on `samples` as compaction trains one; nil when
    /// zstd finds too little in common. Throws `compressionUnavailable` in a build without zstd.
    public static func trainDictionary(_ samples: [[UInt8]], capacity: Int = 16 << 10, id: UInt32 = 1) throws -> [UInt8]? {
        try Zstd.trainDictionary(samples: samples.flatMap { $0 }, sizes: samples.map(\.count), capacity: capacity, id: id)
    }
}
