/// A position in a tree, moved in key order: `first`, `last`, `next`, `previous`, `seek`.
///
/// The key and value it exposes point into the map (or the write transaction's buffers) and are
/// valid until the cursor moves or the transaction changes or ends; copy them to keep them. A
/// compressed value is decoded: by `value()` into memory of the transaction's, by `scan` into a
/// buffer of the cursor's that the next entry reuses (unless `stableValues`). In a write
/// transaction a cursor survives changes to the tree: it finds its place again by its key.
///
/// ```swift
/// let cursor = try txn.cursor(tree)
/// var more = try cursor.seek(Array("user:".utf8))
/// while more, cursor.key.starts(with: "user:".utf8) { …; more = try cursor.next() }
/// ```
public final class Cursor {
    private struct Level {
        var ref: UInt64
        var below: UInt64
        var node: NodeView
        var index: Int
    }

    /// Mutable state, behind a pointer: the cursor's hot loops then pay no runtime exclusivity
    /// checks (which a class's stored `var`s cost on every access).
    private struct State {
        var depth = 0
        var isValid = false
        var seenMutations = 0
        /// Where `scan` decodes compressed values, reused from entry to entry.
        var scratch: UnsafeMutableRawBufferPointer?
        /// The path from the root to the current leaf: `levels[0 ..< depth]`, room for `capacity`.
        var levels: UnsafeMutablePointer<Level>
        var capacity: Int
    }

    /// Levels a cursor has room for before its path grows. No tree the engine writes is this deep
    /// (a branch below the root has at least two children), but stores written by builds whose
    /// splits could leave one-child branches may hold deeper trees, and must still be readable.
    /// Depth needs no bound for safety: every reference points to a lower offset, so no walk down
    /// a tree can loop.
    private static let initialDepth = 32

    private let source: any NodeSource
    /// Whether the source can change (a write transaction); read cursors skip every check for it.
    private let mutable: Bool
    private let tree: TreeState
    private let state: UnsafeMutablePointer<State>
    /// The current key, kept only in a write transaction, to find the place again after a change.
    private var savedKey: [UInt8] = []

    init(source: any NodeSource, tree: TreeState) {
        self.source = source
        self.mutable = source.isMutable
        self.tree = tree
        state = .allocate(capacity: 1)
        state.initialize(to: State(seenMutations: source.mutationCount, levels: .allocate(capacity: Self.initialDepth),
                                   capacity: Self.initialDepth))
    }

    deinit {
        state.pointee.levels.deallocate()
        state.pointee.scratch?.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Whether the cursor is on an entry.
    public var isValid: Bool { state.pointee.isValid }

    /// The path from the root to the current leaf: `levels[0 ..< state.depth]`.
    @inline(__always)
    private var levels: UnsafeMutablePointer<Level> { state.pointee.levels }

    @inline(__always)
    private var leaf: Level { levels[state.pointee.depth - 1] }

    /// The current key. Only valid while `isValid`.
    public var key: UnsafeRawBufferPointer {
        precondition(isValid, "the cursor is not on an entry")
        if mutable {
            precondition(source.mutationCount == state.pointee.seenMutations,
                         "the transaction changed since the cursor moved: move it (next, previous, seek) before reading its key")
        }
        let level = leaf
        return level.node.keyBuffer(level.index)
    }

    /// The current value. Only valid while `isValid`; a compressed one is decoded into memory
    /// that stays valid until the transaction ends.
    public func value() throws -> UnsafeRawBufferPointer {
        precondition(isValid, "the cursor is not on an entry")
        if mutable { try ensureCurrent() }
        let level = leaf
        return try value(of: level.node, at: level.index, ref: level.ref, stable: true)
    }

    /// Value `index` of `node`, decoded when compressed: into the transaction's memory when
    /// `stable`, else into the cursor's scratch buffer (valid until the next entry's).
    @inline(__always)
    private func value(of node: NodeView, at index: Int, ref: UInt64, stable: Bool) throws -> UnsafeRawBufferPointer {
        // The common case first, with nothing but the entry touched: an inline, plain value.
        if case .inline(let bytes, false) = node.value(index) { return bytes }
        return try storedValue(of: node, at: index, ref: ref, stable: stable)
    }

    /// An out-of-line or compressed value (`value(of:at:ref:stable:)`'s less common cases).
    @inline(never)
    private func storedValue(of node: NodeView, at index: Int, ref: UInt64, stable: Bool) throws -> UnsafeRawBufferPointer {
        let stored = try source.storedValue(of: node, at: index, below: source.childBound(of: ref))
        if !stored.compressed || stable { return try source.keptBytes(stored) }
        return try source.decoder.decode(stored, into: &state.pointee.scratch, source: source)
    }

    /// The current value, valid until the cursor moves (a compressed one is decoded into the
    /// cursor's buffer, which the next entry's reuses): for reading every value of a tree.
    func scanValue() throws -> UnsafeRawBufferPointer {
        precondition(isValid, "the cursor is not on an entry")
        return try currentValue(stable: false)
    }

    /// The current value, as `scan` hands it out.
    private func currentValue(stable: Bool) throws -> UnsafeRawBufferPointer {
        if mutable { try ensureCurrent() }
        let level = leaf
        return try value(of: level.node, at: level.index, ref: level.ref, stable: stable)
    }

    /// Moves to the smallest key; false when the tree is empty.
    @discardableResult
    public func first() throws -> Bool {
        try descend(edge: .first)
        return try settleForward()
    }

    /// Moves to the largest key; false when the tree is empty.
    @discardableResult
    public func last() throws -> Bool {
        try descend(edge: .last)
        return try settleBackward()
    }

    /// Moves to the first key ≥ `key`; false when there is none.
    @discardableResult
    public func seek(_ key: UnsafeRawBufferPointer) throws -> Bool {
        if tree.hasDeferred { try source.applyDeferred(tree) }
        state.pointee.depth = 0
        state.pointee.seenMutations = source.mutationCount
        var ref = tree.root
        guard ref != 0 else { return invalidate() }
        let keyBase = key.nonNullBase
        var below = source.limit
        while true {
            let node = try source.node(ref, below: below)
            if node.isLeaf {
                try push(Level(ref: ref, below: below, node: node, index: node.lowerBound(keyBase, key.count).index))
                return try settleForward()
            }
            let index = node.childIndex(keyBase, key.count)
            try push(Level(ref: ref, below: below, node: node, index: index))
            below = source.childBound(of: ref)
            ref = node.child(index)
        }
    }

    /// Moves to the first key ≥ `key`; false when there is none.
    @discardableResult
    public func seek(_ key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { try seek($0) }
    }

    /// Moves to the first key ≥ `key`, like `seek`, but searches only the current leaf when `key`
    /// lies after the current key and not after the leaf's last one: for a run of seeks to
    /// ascending keys that are near each other, each costs a search in one leaf, not a walk down
    /// from the root. Any other case is an ordinary `seek`.
    @discardableResult
    public func seekForward(_ key: UnsafeRawBufferPointer) throws -> Bool {
        if !mutable, state.pointee.isValid {
            let top = levels + (state.pointee.depth - 1)
            let node = top.pointee.node
            let index = top.pointee.index
            if KeyCompare.compare(key, node.keyBuffer(index)) > 0, KeyCompare.compare(key, node.keyBuffer(node.count - 1)) <= 0 {
                top.pointee.index = node.lowerBound(SearchKey(key.nonNullBase, key.count), from: index + 1, to: node.count).index
                return true
            }
        }
        return try seek(key)
    }

    /// Moves to the first key ≥ `key`, from the current leaf when it can (see the other
    /// `seekForward`).
    @discardableResult
    public func seekForward(_ key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { try seekForward($0) }
    }

    /// Moves to the next key; false (and invalid) past the last.
    @discardableResult
    public func next() throws -> Bool {
        guard isValid else { return false }
        if mutable && source.mutationCount != state.pointee.seenMutations {
            let saved = savedKey
            guard try seek(saved) else { return false }
            if !keyEquals(saved) { return true }  // the old key is gone: we already stand on its successor
        }
        let top = levels + (state.pointee.depth - 1)
        top.pointee.index += 1
        // The common case: the next entry is in the same leaf.
        if !mutable && top.pointee.index < top.pointee.node.count { return true }
        return try settleForward()
    }

    /// Moves to the previous key; false (and invalid) before the first.
    @discardableResult
    public func previous() throws -> Bool {
        guard isValid else { return false }
        if mutable && source.mutationCount != state.pointee.seenMutations {
            let saved = savedKey
            if try !seek(saved) { return try last() }
        }
        let top = levels + (state.pointee.depth - 1)
        top.pointee.index -= 1
        if !mutable && top.pointee.index >= 0 { return true }
        return try settleBackward()
    }

    // MARK: - Internals

    private enum Edge { case first, last }

    /// Doubles the room for the path (only a tree deeper than `initialDepth` needs it).
    private func growLevels() {
        let old = state.pointee.levels
        let capacity = state.pointee.capacity
        let grown = UnsafeMutablePointer<Level>.allocate(capacity: capacity * 2)
        grown.moveInitialize(from: old, count: state.pointee.depth)
        old.deallocate()
        state.pointee.levels = grown
        state.pointee.capacity = capacity * 2
    }

    private func keyEquals(_ bytes: [UInt8]) -> Bool {
        let current = key
        return bytes.withUnsafeBytes { KeyCompare.compare(current, $0) == 0 }
    }

    @inline(__always)
    private func push(_ level: Level) throws {
        let depth = state.pointee.depth
        if depth == state.pointee.capacity { growLevels() }
        (levels + depth).initialize(to: level)
        state.pointee.depth = depth + 1
    }

    /// Replaces the path with the tree's leftmost or rightmost path, after applying the puts the
    /// tree holds back (a write transaction's `putDeferred`; applying them counts as a mutation,
    /// so it comes before the count is taken).
    private func descend(edge: Edge) throws {
        if tree.hasDeferred { try source.applyDeferred(tree) }
        state.pointee.depth = 0
        state.pointee.seenMutations = source.mutationCount
        let root = tree.root
        guard root != 0 else { return }
        try pushEdge(ref: root, below: source.limit, edge: edge)
    }

    private func pushEdge(ref start: UInt64, below start2: UInt64, edge: Edge) throws {
        var ref = start
        var below = start2
        while true {
            let node = try source.node(ref, below: below)
            let index = edge == .first ? 0 : node.count - 1
            try push(Level(ref: ref, below: below, node: node, index: index))
            if node.isLeaf { return }
            below = source.childBound(of: ref)
            ref = node.child(index)
        }
    }

    /// After the leaf index moved forward (or was set): if it ran off its leaf, climbs to the next
    /// subtree and descends to its first leaf. Sets `isValid`.
    private func settleForward() throws -> Bool {
        while state.pointee.depth > 0, leaf.index >= leaf.node.count {
            state.pointee.depth -= 1
            // Climb until a branch has a next child.
            while state.pointee.depth > 0, leaf.index + 1 >= leaf.node.count { state.pointee.depth -= 1 }
            guard state.pointee.depth > 0 else { return invalidate() }
            let top = levels + (state.pointee.depth - 1)
            top.pointee.index += 1
            try pushEdge(ref: top.pointee.node.child(top.pointee.index), below: source.childBound(of: top.pointee.ref), edge: .first)
        }
        return validate()
    }

    /// Like `settleForward`, backwards.
    private func settleBackward() throws -> Bool {
        while state.pointee.depth > 0, leaf.index < 0 {
            state.pointee.depth -= 1
            while state.pointee.depth > 0, leaf.index == 0 { state.pointee.depth -= 1 }
            guard state.pointee.depth > 0 else { return invalidate() }
            let top = levels + (state.pointee.depth - 1)
            top.pointee.index -= 1
            try pushEdge(ref: top.pointee.node.child(top.pointee.index), below: source.childBound(of: top.pointee.ref), edge: .last)
        }
        return validate()
    }

    private func validate() -> Bool {
        guard state.pointee.depth > 0 else { return invalidate() }
        state.pointee.isValid = true
        if mutable { savedKey = Array(key) }
        return true
    }

    private func invalidate() -> Bool {
        state.pointee.isValid = false
        state.pointee.depth = 0
        return false
    }

    private func ensureCurrent() throws {
        if source.mutationCount != state.pointee.seenMutations {
            let saved = savedKey
            guard try seek(saved), keyEquals(saved) else {
                state.pointee.isValid = false
                throw StorageError.illegalArgument("the cursor's entry was removed by a change in this transaction")
            }
        }
    }

    /// Visits the rest of the current leaf from the current entry, in order (read cursors only);
    /// leaves the cursor on the leaf's last entry, or on the entry `body` stopped at. Returns
    /// whether to go on.
    fileprivate func visitLeafForward(_ range: KeyRange, stable: Bool, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws -> Bool {
        let top = levels + (state.pointee.depth - 1)
        let node = top.pointee.node
        let ref = top.pointee.ref
        let checkUpper = range.upper != nil
        var i = top.pointee.index
        while i < node.count {
            let key = node.keyBuffer(i)
            if checkUpper && !range.admitsFromAbove(key) { top.pointee.index = i; return false }
            guard try body(key, value(of: node, at: i, ref: ref, stable: stable)) else { top.pointee.index = i; return false }
            i += 1
        }
        top.pointee.index = node.count - 1
        return true
    }

    /// Like `visitLeafForward`, backwards.
    fileprivate func visitLeafBackward(_ range: KeyRange, stable: Bool, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws -> Bool {
        let top = levels + (state.pointee.depth - 1)
        let node = top.pointee.node
        let ref = top.pointee.ref
        let checkLower = range.lower != nil
        var i = top.pointee.index
        while i >= 0 {
            let key = node.keyBuffer(i)
            if checkLower && !range.admitsFromBelow(key) { top.pointee.index = i; return false }
            guard try body(key, value(of: node, at: i, ref: ref, stable: stable)) else { top.pointee.index = i; return false }
            i -= 1
        }
        top.pointee.index = 0
        return true
    }

    fileprivate var isReadOnly: Bool { !mutable }
}

extension Cursor {
    /// Moves to the first entry of `range`; false when it has none.
    fileprivate func moveToStart(of range: KeyRange) throws -> Bool {
        guard let lower = range.lower else { return try first() }
        let found = try seek(lower)
        return found && !range.admitsFromBelow(key) ? try next() : found
    }

    /// Visits the entries in `range` in key order (or reverse order), until `body` returns false.
    ///
    /// `key` and `value` are valid during the call. Uncompressed values (and, with
    /// `stableValues`, compressed ones too, decoded into the transaction's memory) stay valid
    /// after it, like `value()`; without `stableValues` a compressed value's bytes are reused for
    /// the next entry.
    public func scan(_ range: KeyRange = .all, reverse: Bool = false, stableValues: Bool = false,
                     _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool) throws {
        var more: Bool
        if !reverse {
            more = try moveToStart(of: range)
            while more {
                if isReadOnly {
                    guard try visitLeafForward(range, stable: stableValues, body) else { return }
                } else {
                    guard range.admitsFromAbove(key), try body(key, currentValue(stable: stableValues)) else { return }
                }
                more = try next()
            }
        } else {
            if let upper = range.upper {
                more = try seek(upper)
                if !more { more = try last() }
                while more && !range.admitsFromAbove(key) { more = try previous() }
            } else {
                more = try last()
            }
            while more {
                if isReadOnly {
                    guard try visitLeafBackward(range, stable: stableValues, body) else { return }
                } else {
                    guard range.admitsFromBelow(key), try body(key, currentValue(stable: stableValues)) else { return }
                }
                more = try previous()
            }
        }
    }
}

// MARK: - Key runs

extension Cursor {
    /// The number of keys in `range`. A leaf wholly inside the range is counted from its entry
    /// count, without visiting its keys.
    public func countKeys(_ range: KeyRange = .all) throws -> Int {
        var total = 0
        try forEachRun(range) { _, start, end in total &+= end &- start }
        return total
    }

    /// Appends the last 8 bytes of every key in `range`, read as a big-endian integer (an object
    /// id at the end of an index key), in key order, without reading any value.
    public func appendKeySuffixes(_ range: KeyRange, to output: inout [UInt64]) throws {
        try forEachRun(range) { node, start, end in
            // Gathered on the stack, then appended at once: the array is checked and grown once
            // per chunk, not once per key. Chunks of 128 (1 KiB): a larger temporary allocation
            // may go to the heap (a full leaf holds more keys than that).
            var chunkStart = start
            while chunkStart < end {
                let chunkEnd = Swift.min(end, chunkStart &+ 128)
                let short: Int? = withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 128) { buffer in
                    var out = 0
                    for i in chunkStart..<chunkEnd {
                        let (p, n) = node.key(i)
                        guard n >= 8 else { return n }
                        buffer[out] = UInt64(bigEndian: (p + (n &- 8)).loadUnaligned(as: UInt64.self))
                        out &+= 1
                    }
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<out]))
                    return nil
                }
                if let short {
                    throw StorageError.fileCorrupt(offset: 0, reason: "a key of \(short) bytes in tree \"\(tree.name)\", where every key ends with an 8-byte id")
                }
                chunkStart = chunkEnd
            }
        }
    }

    /// Calls `body` with each leaf's run of entries inside `range` (entry indexes `start..<end`),
    /// in key order. `body` must not change the tree.
    private func forEachRun(_ range: KeyRange, _ body: (NodeView, Int, Int) throws -> Void) throws {
        var more = try moveToStart(of: range)
        while more {
            let top = levels + (state.pointee.depth - 1)
            let node = top.pointee.node
            let start = top.pointee.index
            var end = node.count
            var last = false
            if let upper = range.upper {
                let (p, n) = node.key(node.count &- 1)
                if !range.admitsFromAbove(UnsafeRawBufferPointer(start: p, count: n)) {
                    // The range ends in this leaf: find where.
                    let (index, found) = upper.withUnsafeBytes { node.lowerBound($0.nonNullBase, $0.count) }
                    end = Swift.max(start, range.upperInclusive && found ? index &+ 1 : index)
                    last = true
                }
            }
            if start < end { try body(node, start, end) }
            if last { return }
            top.pointee.index = node.count &- 1
            more = try next()
        }
    }
}
