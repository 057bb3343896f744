/// A node a write transaction is changing, in the same layout as `NodeView` reads, inside a buffer
/// it owns: slots grow up from the header, entries grow down from the end, and a removed entry
/// leaves garbage that is squeezed out when room runs short. At commit it is written compactly,
/// entries in key order, with dirty child references replaced by the offsets of their records.
final class DirtyNode {
    /// The mutable fields, behind a pointer: a class's stored `var`s cost a runtime exclusivity
    /// check on every access, and these are touched on every put.
    struct Fields {
        var buffer: UnsafeMutableRawPointer
        var capacity: Int
        var count: Int
        var heapTop: Int
        var garbage: Int
        /// Where the last entry was inserted (-2: none since the node was made or last removed
        /// from), and whether that insert came right after the one before it (see `splitIndex`).
        var lastInsert = -2
        var sequential = false
        /// The entries lie back to back in key order from `heapTop` to the end of the buffer, with
        /// no garbage: true for a copy of a committed node until an entry is inserted or removed
        /// (writing over a value or a reference in place keeps it). `encode` then copies them at
        /// once.
        var ordered = false
    }

    /// Stable for the node's life: the write transaction keeps it in a table so that reading a
    /// dirty node costs neither a retain nor a hop through the object.
    let fields: UnsafeMutablePointer<Fields>
    let isLeaf: Bool

    private(set) var buffer: UnsafeMutableRawPointer {
        get { fields.pointee.buffer }
        set { fields.pointee.buffer = newValue }
    }
    private(set) var capacity: Int {
        get { fields.pointee.capacity }
        set { fields.pointee.capacity = newValue }
    }
    private(set) var count: Int {
        get { fields.pointee.count }
        set { fields.pointee.count = newValue }
    }
    private var heapTop: Int {
        get { fields.pointee.heapTop }
        set { fields.pointee.heapTop = newValue }
    }
    private var garbage: Int {
        get { fields.pointee.garbage }
        set { fields.pointee.garbage = newValue }
    }

    init(isLeaf: Bool, capacity: Int) {
        self.isLeaf = isLeaf
        let capacity = max(capacity, 64)
        fields = .allocate(capacity: 1)
        fields.initialize(to: Fields(buffer: .allocate(byteCount: capacity, alignment: 16), capacity: capacity,
                                     count: 0, heapTop: capacity, garbage: 0))
        writeHeader()
    }

    /// A dirty copy of a committed node: entries go to the end of the buffer in key order and the
    /// slots point at them. A node whose entries follow its slots back to back in key order (as
    /// every node the engine writes) is copied at once; any other layout entry by entry.
    convenience init(copying node: NodeView, capacity: Int) {
        let n = node.count
        let slotsEnd = 8 &+ 4 &* n
        var size = slotsEnd
        var contiguous = true
        for i in 0..<n {
            if contiguous && Int(node.body.loadLE(UInt32.self, at: 8 &+ 4 &* i)) != size { contiguous = false }
            size &+= node.entrySize(i)
        }
        self.init(isLeaf: node.isLeaf, capacity: max(capacity, size + capacity / 4))
        var at = self.capacity - (size - slotsEnd)
        heapTop = at
        if contiguous {
            if size > slotsEnd { (buffer + at).copyMemory(from: node.body + slotsEnd, byteCount: size - slotsEnd) }
            let shift = at &- slotsEnd
            for i in 0..<n {
                buffer.storeLE(UInt32(Int(node.body.loadLE(UInt32.self, at: 8 &+ 4 &* i)) &+ shift), at: 8 &+ 4 &* i)
            }
        } else {
            for i in 0..<n {
                let entrySize = node.entrySize(i)
                (buffer + at).copyMemory(from: node.entry(i), byteCount: entrySize)
                buffer.storeLE(UInt32(at), at: 8 + 4 * i)
                at += entrySize
            }
        }
        count = n
        buffer.storeLE(UInt32(n), at: 4)
        fields.pointee.ordered = true
    }

    deinit {
        buffer.deallocate()
        fields.deinitialize(count: 1)
        fields.deallocate()
    }

    @inline(__always)
    var view: NodeView { NodeView(body: UnsafeRawPointer(buffer)) }

    /// The size of this node's body when written: header, slots and live entries.
    var encodedSize: Int { 8 + 4 * count + (capacity - heapTop - garbage) }

    private func writeHeader() {
        buffer.storeLE(UInt32(isLeaf ? NodeView.leafKind : NodeView.branchKind), at: 0)
        buffer.storeLE(UInt32(count), at: 4)
    }

    @inline(__always)
    private func slot(_ i: Int) -> Int { Int(buffer.loadLE(UInt32.self, at: 8 &+ 4 &* i)) }

    /// Makes room for one more slot and an entry of `size` bytes; returns where the entry goes.
    private func reserve(_ size: Int) -> Int {
        fields.pointee.ordered = false
        if heapTop - (8 + 4 * (count + 1)) < size {
            rebuild(capacity: max(capacity, encodedSize + 4 + size + capacity / 2))
        }
        heapTop -= size
        return heapTop
    }

    /// Rewrites the buffer compactly (dropping garbage), possibly larger.
    private func rebuild(capacity newCapacity: Int) {
        let old = buffer
        let oldView = view
        let newBuffer = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        var top = newCapacity
        for i in 0..<count {
            let size = oldView.entrySize(i)
            top -= size
            (newBuffer + top).copyMemory(from: oldView.entry(i), byteCount: size)
            newBuffer.storeLE(UInt32(top), at: 8 + 4 * i)
        }
        newBuffer.copyMemory(from: old, byteCount: 8)
        old.deallocate()
        buffer = newBuffer
        capacity = newCapacity
        heapTop = top
        garbage = 0
    }

    /// Opens a slot at `index` pointing at `entryOffset`.
    private func insertSlot(at index: Int, entryOffset: Int) {
        let slots = buffer + 8
        if index < count {
            (slots + 4 * (index + 1)).copyMemory(from: slots + 4 * index, byteCount: 4 * (count - index))
        }
        slots.storeLE(UInt32(entryOffset), at: 4 * index)
        fields.pointee.sequential = index == fields.pointee.lastInsert &+ 1
        fields.pointee.lastInsert = index
        count += 1
        buffer.storeLE(UInt32(count), at: 4)
    }

    /// Inserts a leaf entry with an inline value; `flags` go into its value word.
    func insertLeaf(at index: Int, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt32 = 0) {
        let at = reserve(8 + key.count + value.count)
        let e = buffer + at
        e.storeLE(UInt32(key.count), at: 0)
        e.storeLE(UInt32(value.count) | flags, at: 4)
        if key.count > 0 { (e + 8).copyMemory(from: key.baseAddress!, byteCount: key.count) }
        if value.count > 0 { (e + 8 + key.count).copyMemory(from: value.baseAddress!, byteCount: value.count) }
        insertSlot(at: index, entryOffset: at)
    }

    /// Inserts a leaf entry whose value lives in a record of its own.
    func insertLeaf(at index: Int, key: UnsafeRawBufferPointer, outOfLine ref: UInt64, length: Int, flags: UInt32 = 0) {
        let at = reserve(16 + key.count)
        let e = buffer + at
        e.storeLE(UInt32(key.count), at: 0)
        e.storeLE(UInt32(length) | NodeView.outOfLineBit | flags, at: 4)
        if key.count > 0 { (e + 8).copyMemory(from: key.baseAddress!, byteCount: key.count) }
        (e + 8 + key.count).storeLE(ref, at: 0)
        insertSlot(at: index, entryOffset: at)
    }

    /// Inserts a branch entry.
    func insertBranch(at index: Int, key: UnsafeRawBufferPointer, child: UInt64) {
        let at = reserve(12 + key.count)
        let e = buffer + at
        e.storeLE(child, at: 0)
        e.storeLE(UInt32(key.count), at: 8)
        if key.count > 0 { (e + 12).copyMemory(from: key.baseAddress!, byteCount: key.count) }
        insertSlot(at: index, entryOffset: at)
    }

    /// Points branch entry `index` at another child.
    func setChild(_ index: Int, _ child: UInt64) {
        (buffer + slot(index)).storeLE(child, at: 0)
    }

    /// Points branch entry `index` of the dirty node whose body `view` reads at another child
    /// (the same as `setChild`, for a caller that holds the view and not the node).
    static func setChild(_ index: Int, _ child: UInt64, in view: NodeView) {
        UnsafeMutableRawPointer(mutating: view.entry(index)).storeLE(child, at: 0)
    }

    /// Points out-of-line leaf value `index` at another record (same length).
    func setOutOfLineRef(_ index: Int, _ ref: UInt64) {
        let e = buffer + slot(index)
        let keyLength = Int(e.loadLE(UInt32.self, at: 0))
        (e + 8 + keyLength).storeLE(ref, at: 0)
    }

    func remove(at index: Int) {
        fields.pointee.ordered = false
        garbage += view.entrySize(index)
        let slots = buffer + 8
        if index < count - 1 {
            (slots + 4 * index).copyMemory(from: slots + 4 * (index + 1), byteCount: 4 * (count - index - 1))
        }
        count -= 1
        buffer.storeLE(UInt32(count), at: 4)
        fields.pointee.lastInsert = -2
        if count == 0 { heapTop = capacity; garbage = 0 }
    }

    /// Appends entries `from..<to` of `node` (which must be of the same kind and sort after ours).
    func appendEntries(of node: NodeView, from: Int, to: Int) {
        for i in from..<to {
            let size = node.entrySize(i)
            let at = reserve(size)
            (buffer + at).copyMemory(from: node.entry(i), byteCount: size)
            insertSlot(at: count, entryOffset: at)
        }
    }

    /// Moves entries `from..<count` into a new node and returns it.
    func splitOff(from index: Int, capacity newCapacity: Int) -> DirtyNode {
        let right = DirtyNode(isLeaf: isLeaf, capacity: newCapacity)
        right.appendEntries(of: view, from: index, to: count)
        let v = view
        for i in index..<count { garbage += v.entrySize(i) }
        fields.pointee.ordered = false
        count = index
        buffer.storeLE(UInt32(count), at: 4)
        return right
    }

    /// Where to split an overfull node: about half its bytes on each side, but when `inserted`
    /// (the entry just added) is the last one, keep everything else on the left so that keys
    /// added in order fill nodes instead of leaving them half empty. Likewise when it came right
    /// after the entry inserted before it (keys added in order in the middle of a node, as a
    /// sorted batch of index keys continues each value's run): split just after it, so that the
    /// next keys append to a left node that fills up, instead of halving it again and again.
    /// `limit` is the node size: the left node must not exceed it.
    func splitIndex(inserted: Int, limit: Int) -> Int {
        if inserted == count - 1 && count >= 2 { return count - 1 }
        if fields.pointee.sequential && inserted == fields.pointee.lastInsert && inserted >= 1 && inserted + 1 < count {
            let v = view
            var rightBytes = 0
            for i in (inserted + 1)..<count { rightBytes += 4 + v.entrySize(i) }
            if encodedSize - rightBytes <= limit { return inserted + 1 }
        }
        let v = view
        let half = (encodedSize - 8) / 2
        var bytes = 0
        for i in 0..<count {
            bytes += 4 + v.entrySize(i)
            if bytes >= half { return min(max(i + 1, 1), count - 1) }
        }
        return count - 1
    }

    /// Writes this node's body compactly at `destination` (which has `encodedSize` bytes), with
    /// each child or out-of-line reference passed through `resolve` (dirty references become the
    /// offsets their records were written at). The node's own references are resolved too, so
    /// that it reads as its record does: the engine keeps the nodes of the last commit for the
    /// next write (`WrittenNodes`).
    func encode(into destination: UnsafeMutableRawPointer, resolve: (UInt64) -> UInt64) {
        if fields.pointee.ordered { return encodeOrdered(into: destination, resolve: resolve) }
        let v = view
        destination.copyMemory(from: buffer, byteCount: 8)
        var at = 8 + 4 * count
        for i in 0..<count {
            let size = v.entrySize(i)
            let source = UnsafeMutableRawPointer(mutating: v.entry(i))
            if !isLeaf {
                let child = source.loadLE(UInt64.self, at: 0)
                if child & dirtyTag != 0 { source.storeLE(resolve(child), at: 0) }
            } else if source.loadLE(UInt32.self, at: 4) & NodeView.outOfLineBit != 0 {
                let ref = source + 8 + Int(source.loadLE(UInt32.self, at: 0))
                let value = ref.loadLE(UInt64.self, at: 0)
                if value & dirtyTag != 0 { ref.storeLE(resolve(value), at: 0) }
            }
            (destination + at).copyMemory(from: source, byteCount: size)
            destination.storeLE(UInt32(at), at: 8 + 4 * i)
            at += size
        }
    }

    /// `encode` for an `ordered` node: the entries copied at once, the slots shifted by as much,
    /// and only the dirty references passed through `resolve` (a committed one stays as it is),
    /// in the node and in its copy.
    private func encodeOrdered(into destination: UnsafeMutableRawPointer, resolve: (UInt64) -> UInt64) {
        let n = count
        let slotsEnd = 8 &+ 4 &* n
        destination.copyMemory(from: buffer, byteCount: 8)
        let heap = capacity &- heapTop
        if heap > 0 { (destination + slotsEnd).copyMemory(from: buffer + heapTop, byteCount: heap) }
        let shift = slotsEnd &- heapTop
        for i in 0..<n {
            let from = Int(buffer.loadLE(UInt32.self, at: 8 &+ 4 &* i))
            destination.storeLE(UInt32(from &+ shift), at: 8 &+ 4 &* i)
            let e = buffer + from
            if !isLeaf {
                let child = e.loadLE(UInt64.self, at: 0)
                if child & dirtyTag != 0 {
                    let resolved = resolve(child)
                    e.storeLE(resolved, at: 0)
                    (destination + (from &+ shift)).storeLE(resolved, at: 0)
                }
            } else if e.loadLE(UInt32.self, at: 4) & NodeView.outOfLineBit != 0 {
                let at = 8 + Int(e.loadLE(UInt32.self, at: 0))
                let value = e.loadLE(UInt64.self, at: at)
                if value & dirtyTag != 0 {
                    let resolved = resolve(value)
                    e.storeLE(resolved, at: at)
                    (destination + (from &+ shift)).storeLE(resolved, at: at)
                }
            }
        }
    }

    /// Forgets where entries were last inserted (see `splitIndex`): a node the engine kept from
    /// the last commit then splits as a fresh copy of its record would.
    func forgetInsertHistory() {
        fields.pointee.lastInsert = -2
        fields.pointee.sequential = false
    }
}
