/// A growable buffer in which a commit's frame is assembled before it is written with `pwrite`.
/// The engine keeps one and reuses it, so a small commit allocates nothing.
final class FrameBuffer {
    private(set) var base: UnsafeMutableRawPointer
    private(set) var capacity: Int
    private(set) var count = 0

    init(capacity: Int = 1 << 16) {
        self.capacity = capacity
        self.base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit { base.deallocate() }

    /// Empties the buffer, giving memory back when a large commit made it big.
    func reset() {
        count = 0
        if capacity > 64 << 20 {
            base.deallocate()
            capacity = 1 << 16
            base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        }
    }

    /// Appends room for a record of `length` bytes; returns where it starts in the buffer.
    func appendRecord(length: Int) -> Int {
        if count + length > capacity {
            var newCapacity = capacity * 2
            while newCapacity < count + length { newCapacity *= 2 }
            let grown = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
            grown.copyMemory(from: base, byteCount: count)
            base.deallocate()
            base = grown
            capacity = newCapacity
        }
        let at = count
        count += length
        return at
    }
}

/// Writing a transaction's frame: every dirty node and pending value reachable from a changed
/// tree, children before parents (so a parent knows its children's offsets), then the catalog,
/// then the commit record.
extension WriteTransaction {
    /// Whether this transaction changed anything.
    var hasChanges: Bool {
        droppedBytes != 0 || catalog.modified || trees.values.contains { $0.modified }
    }

    /// Assembles the frame into `frame`, whose first byte will land at `frameStart`.
    func buildFrame(into frame: FrameBuffer, frameStart: UInt64, salt: UInt64,
                    previousCommit: UInt64, durable: Bool, timeMs: UInt64) throws -> CommitRecord {
        var writer = FrameWriter(txn: self, frame: frame, frameStart: frameStart, salt: salt)
        for tree in trees.values.sorted(by: { $0.name < $1.name }) where tree.modified {
            let root = writer.write(tree.root, of: tree)
            let entry = CatalogEntry.encode(root: root, count: tree.count, bytes: tree.bytes &+ tree.bytesDelta)
            try Array(tree.name.utf8).withUnsafeBytes { name in
                try entry.withUnsafeBytes { try put(state: catalog, key: name, value: $0) }
            }
        }
        let catalogRoot = writer.write(catalog.root, of: catalog)
        // Wrapping: the counts come from the file, and a corrupt one must not trap.
        var live = Int64(truncatingIfNeeded: base.liveBytes) &+ catalog.bytesDelta &- droppedBytes
        for tree in trees.values { live = live &+ tree.bytesDelta }
        let commit = CommitRecord(txnId: base.txnId + 1, catalogRoot: catalogRoot, frameStart: frameStart,
                                  previousCommit: previousCommit, liveBytes: UInt64(max(live, 0)),
                                  timeMs: timeMs, flags: durable ? CommitRecord.durableFlag : 0)
        let at = frame.appendRecord(length: CommitRecord.length)
        commit.write(to: frame.base + at, fileOffset: frameStart + UInt64(at), salt: salt)
        return commit
    }
}

/// Walks dirty nodes bottom-up, writing each as a node record and remembering where it went.
private struct FrameWriter {
    let txn: WriteTransaction
    let frame: FrameBuffer
    let frameStart: UInt64
    let salt: UInt64
    var nodeOffsets: [UInt64]
    var valueOffsets: [UInt64]

    init(txn: WriteTransaction, frame: FrameBuffer, frameStart: UInt64, salt: UInt64) {
        self.txn = txn
        self.frame = frame
        self.frameStart = frameStart
        self.salt = salt
        self.nodeOffsets = []
        self.valueOffsets = []
    }

    /// Writes the dirty subtree at `ref` (nothing when it is committed already); returns its offset.
    mutating func write(_ ref: UInt64, of tree: TreeState) -> UInt64 {
        guard ref & dirtyTag != 0 else { return ref }
        if nodeOffsets.count < txn.dirty.count { nodeOffsets += repeatElement(0, count: txn.dirty.count - nodeOffsets.count) }
        if valueOffsets.count < txn.pending.count { valueOffsets += repeatElement(0, count: txn.pending.count - valueOffsets.count) }
        let node = txn.dirtyNode(ref)
        let view = node.view
        for i in 0..<view.count {
            if !view.isLeaf {
                let child = view.child(i)
                if child & dirtyTag != 0 { nodeOffsets[Int(child & ~dirtyTag)] = write(child, of: tree) }
            } else if case .outOfLine(let valueRef, _) = view.value(i), valueRef & dirtyTag != 0 {
                valueOffsets[Int(valueRef & ~dirtyTag)] = writeValue(valueRef, of: tree)
            }
        }
        let bodyLength = node.encodedSize
        let length = LogRecord.paddedLength(body: bodyLength)
        let at = frame.appendRecord(length: length)
        let record = frame.base + at
        let isLeaf = node.isLeaf
        let nodes = nodeOffsets
        let values = valueOffsets
        node.encode(into: record + LogRecord.headerSize) { ref in
            guard ref & dirtyTag != 0 else { return ref }
            return isLeaf ? values[Int(ref & ~dirtyTag)] : nodes[Int(ref & ~dirtyTag)]
        }
        let offset = frameStart + UInt64(at)
        LogRecord.seal(record, bodyLength: bodyLength, kind: .node, fileOffset: offset, salt: salt)
        tree.bytesDelta += Int64(length)
        return offset
    }

    private mutating func writeValue(_ ref: UInt64, of tree: TreeState) -> UInt64 {
        let bytes = txn.pending[Int(ref & ~dirtyTag)]!.bytes
        let length = LogRecord.paddedLength(body: bytes.count)
        let at = frame.appendRecord(length: length)
        let record = frame.base + at
        if bytes.count > 0 { (record + LogRecord.headerSize).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
        let offset = frameStart + UInt64(at)
        LogRecord.seal(record, bodyLength: bytes.count, kind: .value, fileOffset: offset, salt: salt)
        tree.bytesDelta += Int64(length)
        return offset
    }
}
