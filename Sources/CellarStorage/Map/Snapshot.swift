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

    /// The same commit, read through a mapping that knows it maps the file `identity` (same region,
    /// records verified again as they are read): for a compacted copy adopted by one of several
    /// writing processes, whose copy engine did not know which file it wrote, while the engine's
    /// follower and catch-up compare the file of `current` with their own. Itself when `identity`
    /// is nil or already known.
    func mapped(onFile identity: FileIdentity?) -> Snapshot {
        guard let identity, generation.fileIdentity != identity else { return self }
        let mapping = MapGeneration(region: generation.region, salt: generation.records.salt,
                                    cipher: generation.cipher, fileIdentity: identity)
        return Snapshot(txnId: txnId, catalogRoot: catalogRoot, committedLength: committedLength,
                        commitOffset: commitOffset, liveBytes: liveBytes, generation: mapping)
    }
}
