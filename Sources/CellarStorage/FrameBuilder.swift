import Dispatch

/// Where a commit's frame is assembled and written: records are built in a buffer of 1 MiB, so a
/// large transaction never holds its whole frame in memory and a small one allocates nothing (the
/// engine keeps one stream and reuses it). 1 MiB, not more: the two buffers then stay in the
/// processor's caches while they are filled and written (4 MiB ones made steps a and d of crud
/// 1.2–1.6× slower, the copies into them missing the cache; docs/performance.md).
///
/// A buffer that fills is written (`pwrite`) on a queue of the stream's while the next one is
/// built in a second buffer: the kernel's copy of a large frame into the page cache, a quarter of
/// a million-object commit, then overlaps with building it. At most one write is in flight; the
/// next fill waits for it, and `flush` (the end of the frame) writes the last buffer after it, so
/// the bytes reach the file in order and all of them before the commit's sync. A failed write
/// throws from the next `appendRecord` that fills a buffer, or from `flush`.
final class FrameStream {
    static let chunk = 1 << 20

    private(set) var base: UnsafeMutableRawPointer
    private(set) var capacity: Int
    /// The other buffer: being written, or free; made by the first frame that fills a buffer.
    private var spare: UnsafeMutableRawPointer?
    private var spareCapacity = 0
    /// Bytes in the buffer, not yet written.
    private(set) var count = 0
    /// Where the frame starts in the file.
    private(set) var frameStart: UInt64 = 0
    /// Bytes of the frame handed to the file (written, or being written).
    private(set) var flushed: UInt64 = 0
    private var file: (any StorageFile)?
    private let writer = DispatchQueue(label: "cellar.frame-writer")
    /// Set while a write is in flight; its outcome is in `inFlight`.
    private let writing = DispatchGroup()
    private var inFlight: PendingWrite?

    /// The outcome of a background write, read once `writing` is done with it.
    private final class PendingWrite: @unchecked Sendable {
        var error: (any Error)?
    }

    init() {
        capacity = Self.chunk
        base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit {
        writing.wait()
        base.deallocate()
        spare?.deallocate()
    }

    /// Starts a frame at `frameStart` of `file`. A write left in flight by a frame that failed
    /// is waited for; its outcome no longer matters (that frame was never committed).
    func begin(file: any StorageFile, at frameStart: UInt64) {
        _ = try? finishWrite()
        if capacity > Self.chunk { replaceBase(capacity: Self.chunk) }
        if spareCapacity > Self.chunk {
            // Made again, at the usual size, when a frame needs it.
            spare?.deallocate()
            spare = nil
            spareCapacity = 0
        }
        self.file = file
        self.frameStart = frameStart
        count = 0
        flushed = 0
    }

    /// The file offset of the next record.
    var end: UInt64 { frameStart + flushed + UInt64(count) }

    /// Reserves a record of `length` bytes; returns where to build it and its file offset. The
    /// records before it are handed to the background write when the buffer is full.
    func appendRecord(length: Int) throws -> (record: UnsafeMutableRawPointer, offset: UInt64) {
        if count + length > capacity {
            try flushInBackground()
            if length > capacity { replaceBase(capacity: (length + Self.chunk - 1) / Self.chunk * Self.chunk) }
        }
        let at = count
        count += length
        return (base + at, frameStart + flushed + UInt64(at))
    }

    /// Writes the buffered records (the whole frame: nothing was flushed before) and makes them
    /// durable.
    func writeDurably() throws {
        guard let file else { return }
        precondition(flushed == 0, "writeDurably needs the whole frame in the buffer")
        try finishWrite()
        try file.writeDurably(UnsafeRawBufferPointer(start: base, count: count), at: frameStart)
        flushed += UInt64(count)
        count = 0
    }

    /// Writes the buffered records, after the one in flight: when it returns, every byte of the
    /// frame so far is in the file.
    func flush() throws {
        try finishWrite()
        guard count > 0, let file else { return }
        try file.write(UnsafeRawBufferPointer(start: base, count: count), at: frameStart + flushed)
        flushed += UInt64(count)
        count = 0
    }

    /// Hands the buffered records to the writer queue and goes on in the other buffer.
    private func flushInBackground() throws {
        try finishWrite()
        guard count > 0, let file else { return }
        let pending = PendingWrite()
        let bytes = UnsafeRawBufferPointer(start: base, count: count)
        let offset = frameStart + flushed
        nonisolated(unsafe) let buffer = bytes
        inFlight = pending
        writer.async(group: writing) {
            do { try file.write(buffer, at: offset) } catch { pending.error = error }
        }
        flushed += UInt64(count)
        count = 0
        let next = spare ?? UnsafeMutableRawPointer.allocate(byteCount: Self.chunk, alignment: 16)
        let nextCapacity = spare == nil ? Self.chunk : spareCapacity
        (spare, spareCapacity) = (base, capacity)
        (base, capacity) = (next, nextCapacity)
    }

    /// Replaces the current buffer, which holds nothing, with one of `newCapacity` bytes.
    private func replaceBase(capacity newCapacity: Int) {
        base.deallocate()
        capacity = newCapacity
        base = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
    }

    /// Waits for the write in flight, if any, and throws its error.
    private func finishWrite() throws {
        guard let pending = inFlight else { return }
        writing.wait()
        inFlight = nil
        if let error = pending.error { throw error }
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

    /// Writes every record of the frame but the commit record through `frame`; returns the
    /// catalog's root and the live bytes the commit record will carry.
    func writeFrame(to frame: FrameStream, salt: UInt64) throws -> (catalogRoot: UInt64, liveBytes: UInt64) {
        var writer = FrameWriter(txn: self, frame: frame, salt: salt)
        for tree in trees.values.sorted(by: { $0.name < $1.name }) where tree.modified {
            let root = try writer.write(tree.root, of: tree)
            let entry = CatalogEntry.encode(root: root, count: tree.count, bytes: tree.bytes &+ tree.bytesDelta)
            try Array(tree.name.utf8).withUnsafeBytes { name in
                try entry.withUnsafeBytes { try put(state: catalog, key: name, value: $0) }
            }
        }
        let catalogRoot = try writer.write(catalog.root, of: catalog)
        // Wrapping: the counts come from the file, and a corrupt one must not trap.
        var live = Int64(truncatingIfNeeded: base.liveBytes) &+ catalog.bytesDelta &- droppedBytes
        for tree in trees.values { live = live &+ tree.bytesDelta }
        return (catalogRoot, UInt64(max(live, 0)))
    }
}

/// Walks dirty nodes bottom-up, writing each as a node record and remembering where it went.
private struct FrameWriter {
    let txn: WriteTransaction
    let frame: FrameStream
    let salt: UInt64
    var nodeOffsets: [UInt64]
    var valueOffsets: [UInt64]

    init(txn: WriteTransaction, frame: FrameStream, salt: UInt64) {
        self.txn = txn
        self.frame = frame
        self.salt = salt
        self.nodeOffsets = []
        self.valueOffsets = []
    }

    /// Writes the dirty subtree at `ref` (nothing when it is committed already); returns its offset.
    mutating func write(_ ref: UInt64, of tree: TreeState) throws -> UInt64 {
        guard ref & dirtyTag != 0 else { return ref }
        if nodeOffsets.count < txn.dirty.count { nodeOffsets += repeatElement(0, count: txn.dirty.count - nodeOffsets.count) }
        if valueOffsets.count < txn.pending.value.count { valueOffsets += repeatElement(0, count: txn.pending.value.count - valueOffsets.count) }
        let node = txn.dirtyNode(ref)
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
        let length = LogRecord.paddedLength(body: bodyLength)
        let (record, offset) = try frame.appendRecord(length: length)
        let isLeaf = node.isLeaf
        let nodes = nodeOffsets
        let values = valueOffsets
        node.encode(into: record + LogRecord.headerSize) { ref in
            guard ref & dirtyTag != 0 else { return ref }
            return isLeaf ? values[Int(ref & ~dirtyTag)] : nodes[Int(ref & ~dirtyTag)]
        }
        LogRecord.seal(record, bodyLength: bodyLength, kind: .node, fileOffset: offset, salt: salt)
        txn.writtenRecords.append(offset)
        tree.bytesDelta += Int64(length)
        return offset
    }

    private mutating func writeValue(_ ref: UInt64, of tree: TreeState) throws -> UInt64 {
        let bytes = txn.pending.value[Int(ref & ~dirtyTag)]!.bytes
        let length = LogRecord.paddedLength(body: bytes.count)
        let (record, offset) = try frame.appendRecord(length: length)
        if bytes.count > 0 { (record + LogRecord.headerSize).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
        LogRecord.seal(record, bodyLength: bytes.count, kind: .value, fileOffset: offset, salt: salt)
        txn.writtenRecords.append(offset)
        tree.bytesDelta += Int64(length)
        return offset
    }
}
