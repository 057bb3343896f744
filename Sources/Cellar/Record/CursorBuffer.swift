import CellarStorage

/// Bytes written through a cursor: a block that doubles (`GrowableBytes`, as a record builder's)
/// when a writer asks for more room than it has. The change history's entry and the undo log's
/// capture are written this way, once an object, where appending to an array byte by byte cost
/// about 120 instructions an object (counted).
///
/// A writer asks for room for the most its part can take (`room(_:)`), writes through the
/// pointer it gets back (`put`, `Varint.put`), and says where it stopped (`end(at:)`). Writing
/// through a local pointer, with `count` set once at the end, keeps the compiler from reloading
/// and storing the owner's fields around each store: a store through the buffer's pointer could
/// alias them (29 instructions an entry more, counted).
///
/// Not copyable: one owner frees the block.
struct CursorBuffer: ~Copyable {
    /// Where the bytes begin; moves when the block grows.
    private(set) var start: UnsafeMutableRawPointer
    /// The bytes the block holds.
    private(set) var capacity: Int
    /// The bytes written.
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        start = .allocate(byteCount: self.capacity, alignment: 8)
    }

    deinit { start.deallocate() }

    /// The bytes written; valid until the buffer next grows.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: start, count: count) }

    /// A cursor past the bytes written, with room for `more` bytes after it.
    @inline(__always)
    mutating func room(_ more: Int) -> UnsafeMutableRawPointer {
        if count + more > capacity { grow(to: count + more) }
        return start + count
    }

    /// The cursor `out`, from a `room` call since which the bytes up to it were written, with room
    /// for `more` bytes after it: the same place, in the block grown when needed (which keeps the
    /// bytes up to `out`).
    @inline(__always)
    mutating func room(_ more: Int, at out: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
        let written = out - start
        if written + more > capacity {
            count = written
            grow(to: written + more)
        }
        return start + written
    }

    /// Notes that the bytes up to the cursor `out` are written.
    @inline(__always)
    mutating func end(at out: UnsafeMutableRawPointer) {
        count = out - start
        assert(count <= capacity, "a writer wrote past the room it asked for")
    }

    /// Appends `raw` as it is.
    @inline(__always)
    mutating func append(_ raw: UnsafeRawBufferPointer) {
        let out = room(raw.count)
        if raw.count > 0 { out.copyMemory(from: raw.baseAddress!, byteCount: raw.count) }
        count += raw.count
    }

    /// Stores `value` at `out` in little-endian order; returns the cursor past it.
    @inline(__always)
    static func put<T: FixedWidthInteger>(_ value: T, at out: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
        out.storeBytes(of: value.littleEndian, as: T.self)
        return out + MemoryLayout<T>.size
    }

    /// Doubles the block until it holds `needed` bytes, keeping the first `count`. (Out of line:
    /// the writers' paths stay short.)
    @inline(never)
    private mutating func grow(to needed: Int) {
        (start, capacity) = GrowableBytes.grow(start, used: count, capacity: capacity, needed: needed)
    }
}
