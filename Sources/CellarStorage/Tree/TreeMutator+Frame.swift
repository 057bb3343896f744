/// Writing a transaction's frame: every dirty node and pending value reachable from a changed
/// tree, children before parents (so a parent knows its children's offsets), then the catalog,
/// then the commit record.
extension TreeMutator {
    /// Whether this transaction changed anything.
    var hasChanges: Bool {
        droppedBytes != 0 || catalog.modified || trees.values.contains { $0.modified }
    }

    /// Writes every record of the frame but the commit record through `frame`; returns the
    /// catalog's root and the live bytes the commit record will carry.
    func writeFrame(to frame: FrameStream, sealing: RecordSealing) throws -> (catalogRoot: UInt64, liveBytes: UInt64) {
        frameWritten = true
        var writer = FrameWriter(mutator: self, frame: frame, sealing: sealing)
        // A transaction that spilled wrote part of its nodes earlier, and released them.
        writer.keepsNodes = spillState == nil
        // Every dirty node and pending value is written at most once, the catalog's path too.
        writtenRecords.reserveCapacity(writtenRecords.count + dirty.count + pending.value.count + 8)
        func write(_ tree: TreeState) throws {
            let root = try writer.write(tree.root, of: tree)
            let entry = CatalogEntry(root: root, count: tree.count, bytes: tree.bytes &+ tree.bytesDelta)
            know(entry, of: tree.name)
            var name = tree.name
            try name.withUTF8 { name in
                try entry.withEncoded { try put(state: catalog, key: UnsafeRawBufferPointer(name), value: $0) }
            }
        }
        // In name order (a commit's records are laid out the same whatever the dictionary's
        // order); one tree, the common write, needs no sorted copy.
        if trees.count == 1 {
            if let tree = trees.values.first, tree.modified { try write(tree) }
        } else {
            for tree in trees.values.sorted(by: { $0.name < $1.name }) where tree.modified { try write(tree) }
        }
        let catalogRoot = try writer.write(catalog.root, of: catalog)
        // Wrapping: the counts come from the file, and a corrupt one must not trap.
        var live = Int64(truncatingIfNeeded: base.liveBytes) &+ catalog.bytesDelta &- droppedBytes
        for tree in trees.values { live = live &+ tree.bytesDelta }
        return (catalogRoot, UInt64(max(live, 0)))
    }
}

/// Walks dirty nodes bottom-up, writing each as a node record and remembering where it went.
struct FrameWriter {
    let mutator: TreeMutator
    let frame: FrameStream
    let sealing: RecordSealing
    var nodeOffsets: [UInt64]
    var valueOffsets: [UInt64]
    /// Whether the nodes written go to `mutator.written`, for the engine to keep (a commit's
    /// frame; not a spill).
    var keepsNodes = false

    init(mutator: TreeMutator, frame: FrameStream, sealing: RecordSealing) {
        self.mutator = mutator
        self.frame = frame
        self.sealing = sealing
        // Sized once for the nodes and values there are now (`write` grows them for any added
        // later, such as the catalog's path).
        self.nodeOffsets = [UInt64](repeating: 0, count: mutator.dirty.count &+ 8)
        self.valueOffsets = [UInt64](repeating: 0, count: mutator.pending.value.count)
    }

    /// Writes the dirty subtree at `ref` (nothing when it is committed already); returns its offset.
    mutating func write(_ ref: UInt64, of tree: TreeState) throws -> UInt64 {
        guard ref & dirtyTag != 0 else { return ref }
        if nodeOffsets.count < mutator.dirty.count { nodeOffsets += repeatElement(0, count: mutator.dirty.count - nodeOffsets.count) }
        if valueOffsets.count < mutator.pending.value.count { valueOffsets += repeatElement(0, count: mutator.pending.value.count - valueOffsets.count) }
        let node = mutator.dirtyNode(ref)
        let view = node.view
        for i in 0..<view.count {
            if !view.isLeaf {
                let child = view.child(i)
                if child & dirtyTag != 0 { nodeOffsets[Int(child & ~dirtyTag)] = try write(child, of: tree) }
            } else if case .outOfLine(let valueRef, _, _) = view.value(i), valueRef & dirtyTag != 0 {
                valueOffsets[Int(valueRef & ~dirtyTag)] = try writeValue(valueRef, of: tree)
            }
        }
        let bodyLength = node.encodedSize
        let length = sealing.recordLength(body: bodyLength)
        let (record, offset) = try frame.appendRecord(length: length)
        let isLeaf = node.isLeaf
        let nodes = nodeOffsets
        let values = valueOffsets
        node.encode(into: record + LogRecord.headerSize) { ref in
            guard ref & dirtyTag != 0 else { return ref }
            return isLeaf ? values[Int(ref & ~dirtyTag)] : nodes[Int(ref & ~dirtyTag)]
        }
        LogRecord.seal(record, bodyLength: bodyLength, kind: .node, fileOffset: offset, sealing: sealing)
        if keepsNodes { mutator.written.keep(node, at: offset, recordLength: length) }
        mutator.writtenRecords.append(offset)
        tree.bytesDelta += Int64(length)
        return offset
    }

    private mutating func writeValue(_ ref: UInt64, of tree: TreeState) throws -> UInt64 {
        let bytes = mutator.pending.value[Int(ref & ~dirtyTag)]!.bytes
        let length = sealing.recordLength(body: bytes.count)
        let (record, offset) = try frame.appendRecord(length: length)
        if bytes.count > 0 { (record + LogRecord.headerSize).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
        LogRecord.seal(record, bodyLength: bytes.count, kind: .value, fileOffset: offset, sealing: sealing)
        mutator.writtenRecords.append(offset)
        tree.bytesDelta += Int64(length)
        return offset
    }
}
