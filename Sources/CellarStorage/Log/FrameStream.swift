import Dispatch

/// Where a commit's frame is assembled and written: records are built in a buffer of 1 MiB, so a
/// large transaction never holds its whole frame in memory and a small one allocates nothing (the
/// engine keeps one stream and reuses it). 1 MiB, not more: the two buffers then stay in the
/// processor's caches while they are filled and written (4 MiB ones made steps a and d of crud
/// 1.2–1.6× slower, the copies into them missing the cache; docs/performance-log.md).
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
    /// How the frame's records are sealed: in an encrypted file, each buffer's records are
    /// encrypted (`LogRecord.sealEncrypted`) just before it is written, on the writer queue for a
    /// buffer that filled, so that the encryption overlaps with building the next one.
    private var sealing = RecordSealing(salt: 0)
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
    func begin(file: any StorageFile, at frameStart: UInt64, sealing: RecordSealing) {
        _ = try? finishWrite()
        if capacity > Self.chunk { replaceBase(capacity: Self.chunk) }
        if spareCapacity > Self.chunk {
            // Made again, at the usual size, when a frame needs it.
            spare?.deallocate()
            spare = nil
            spareCapacity = 0
        }
        self.file = file
        self.sealing = sealing
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

    /// Writes the buffered records, after the one in flight: when it returns, every byte of the
    /// frame so far is in the file.
    func flush() throws {
        try finishWrite()
        guard count > 0, let file else { return }
        try LogRecord.sealEncrypted(base, count: count, fileOffset: frameStart + flushed, sealing: sealing)
        try file.write(UnsafeRawBufferPointer(start: base, count: count), at: frameStart + flushed)
        flushed += UInt64(count)
        count = 0
    }

    /// Hands the buffered records to the writer queue and goes on in the other buffer.
    private func flushInBackground() throws {
        try finishWrite()
        guard count > 0, let file else { return }
        let pending = PendingWrite()
        let bytes = UnsafeMutableRawBufferPointer(start: base, count: count)
        let offset = frameStart + flushed
        nonisolated(unsafe) let buffer = bytes
        let sealing = sealing
        inFlight = pending
        writer.async(group: writing) {
            do {
                try LogRecord.sealEncrypted(buffer.baseAddress!, count: buffer.count, fileOffset: offset, sealing: sealing)
                try file.write(UnsafeRawBufferPointer(buffer), at: offset)
            } catch {
                pending.error = error
            }
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
