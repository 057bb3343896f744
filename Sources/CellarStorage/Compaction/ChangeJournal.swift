/// What write transactions changed while a compaction copies a snapshot: per tree, the keys put
/// or deleted, and whether the tree was created or dropped. The compaction's catch-up reads each
/// journaled key's value in a newer snapshot and writes it (or its absence) into the copy; the
/// journal says *which* keys, never what they hold, so a key recorded twice or by a transaction
/// that was then aborted costs a lookup and changes nothing.
///
/// Touched only under the engine's writer lock: by the write transaction that records, and by the
/// compaction that takes what was recorded. So it needs no lock of its own.
final class ChangeJournal {
    /// The changes of one tree.
    struct TreeChanges {
        /// Keys, each as a 4-byte little-endian length and its bytes, in the order recorded.
        var keyBytes: [UInt8] = []
        var keyCount = 0
        /// The tree was dropped (and maybe created again): the copy's tree is replaced whole.
        var whole = false

        /// The recorded keys, sorted, each once.
        func sortedKeys() -> [[UInt8]] {
            var keys: [[UInt8]] = []
            keys.reserveCapacity(keyCount)
            keyBytes.withUnsafeBytes { bytes in
                var at = 0
                while at < bytes.count {
                    let length = Int(bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self).littleEndian)
                    keys.append(Array(bytes[(at + 4)..<(at + 4 + length)]))
                    at += 4 + length
                }
            }
            keys.sort { $0.lexicographicallyPrecedes($1) }
            var unique: [[UInt8]] = []
            unique.reserveCapacity(keys.count)
            for key in keys where unique.last != key { unique.append(key) }
            return unique
        }
    }

    private(set) var trees: [String: TreeChanges] = [:]
    /// Keys recorded since the last `take`, counting repeats.
    private(set) var keyCount = 0

    /// Records that `key` of `tree` was put or deleted.
    func record(tree: String, key: UnsafeRawBufferPointer) {
        keyCount += 1
        Self.append(key, to: &trees[tree, default: TreeChanges()])
    }

    private static func append(_ key: UnsafeRawBufferPointer, to changes: inout TreeChanges) {
        var length = UInt32(key.count).littleEndian
        withUnsafeBytes(of: &length) { changes.keyBytes.append(contentsOf: $0) }
        changes.keyBytes.append(contentsOf: key)
        changes.keyCount += 1
    }

    /// Records that `tree` was created (it exists in the copy after catch-up, even when empty).
    func recordCreated(tree: String) {
        if trees[tree] == nil { trees[tree] = TreeChanges() }
    }

    /// Records that `tree` was dropped: its keys recorded so far no longer say enough.
    func recordDropped(tree: String) {
        trees[tree] = TreeChanges(whole: true)
    }

    /// What was recorded since the last call; the journal starts empty again.
    func take() -> [String: TreeChanges] {
        defer {
            trees = [:]
            keyCount = 0
        }
        return trees
    }
}
