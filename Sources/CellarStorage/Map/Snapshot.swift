import Atomics

/// What a reader sees: one committed state of the store. Published by the writer with one atomic
/// store and taken by readers with one atomic load; immutable.
package final class Snapshot: AtomicReference, @unchecked Sendable {
    let txnId: UInt64
    /// Offset of the catalog tree's root node, 0 when the store has no trees.
    let catalogRoot: UInt64
    /// Everything below this offset is committed and readable.
    let committedLength: UInt64
    let commitOffset: UInt64
    let liveBytes: UInt64
    let generation: MapGeneration

    init(txnId: UInt64, catalogRoot: UInt64, committedLength: UInt64, commitOffset: UInt64,
         liveBytes: UInt64, generation: MapGeneration) {
        self.txnId = txnId
        self.catalogRoot = catalogRoot
        self.committedLength = committedLength
        self.commitOffset = commitOffset
        self.liveBytes = liveBytes
        self.generation = generation
    }
}
