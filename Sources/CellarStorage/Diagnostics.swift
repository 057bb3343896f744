/// Checks that tools and fuzzers can run on raw bytes, without a store.
public enum Diagnostics {
    /// What `checkNode` read.
    public struct NodeSummary: Equatable, Sendable {
        public var isLeaf: Bool
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
}
