/// A write transaction in bounded memory: once the nodes and values it holds in memory pass half
/// of `StorageOptions.transactionMemoryBudget`, it writes them into the log (a *spill*) and goes
/// on from there.
///
/// A spill writes every dirty subtree of every tree it changed, children before parents, as
/// node and value records: the start of the frame its commit will end (the log's frame stream
/// is begun at the first spill and continued by the commit). The trees' roots then refer to
/// those records by their file offsets, past the base commit's end, and a later change copies
/// the nodes it reaches from there like any committed node (the copied record becomes garbage,
/// counted in the live bytes as usual). Reads of spilled records go through a mapping of the
/// file of this transaction's own (`SpillState.generation`), verified on first read like any
/// record.
///
/// Nothing about it is visible before the commit record: recovery takes no record that a
/// commit does not follow, so a crash or an abort leaves a tail of records past the newest
/// commit, which the next frame overwrites (and which a writable open after a crash overwrites
/// with zeros).
///
/// Pointers into dirty nodes that a caller holds (the bytes `WriteTransaction.get` returned,
/// valid until the next change) stay valid across the spill: the nodes it wrote are released
/// only at the next spill or when the transaction ends (`SpillState.retired`). That is why a
/// spill starts at half the budget.
///
/// A transaction whose changes fall all over a large tree (random keys in an index) touches
/// many nodes between two spills; each spill writes them, and the next change to one of them
/// copies it again. Such a transaction writes more than one that commits in memory, the price of
/// its bounded memory; one that adds keys in order (new objects, their ids ascending) writes
/// nearly every node once.
extension TreeMutator {
    /// What a transaction's spills hold: the frame they began, the mapping that reads it, and
    /// the nodes and values the last spill wrote.
    final class SpillState {
        /// The log's frame stream, begun at the first spill; the commit continues it.
        let frame: FrameStream
        /// A mapping of the data file that reaches `end`: the transaction's own, so that the
        /// records it verifies are never marked verified in a mapping readers share before the
        /// commit (an aborted frame's offsets are reused by the next).
        var generation: MapGeneration
        /// In an encrypted store, where the spilled records are read decrypted: the
        /// transaction's own too (never a view readers share, for the same reason).
        var view: DecryptedView?
        /// `generation.records` (through `view`), held as a struct.
        var records: MappedRecords
        /// The end of the records spilled so far (all of them written to the file).
        var end: UInt64
        /// The nodes the last spill wrote and the values it wrote, still allocated (see the
        /// extension's comment); released by the next spill.
        var retiredNodes: [Unmanaged<DirtyNode>?] = []
        var retiredValues: [PendingValue?] = []
        /// Spills so far.
        var count = 0

        init(frame: FrameStream, generation: MapGeneration, end: UInt64) {
            self.frame = frame
            self.generation = generation
            self.records = generation.records
            self.end = end
        }

        /// Reads the spilled records through `generation` from now on.
        func read(through generation: MapGeneration) throws {
            self.generation = generation
            view = try generation.cipher.map { try DecryptedView(cipher: $0, length: generation.region.length) }
            records = generation.records.decrypting(through: view)
        }

        func releaseRetired() {
            DirtyNodes.release(retired: retiredNodes)
            retiredNodes = []
            retiredValues = []
        }
    }

    /// What the budget counts for one dirty node: its starting buffer and the object around it.
    var dirtyNodeCost: Int { dirtyCapacity &+ 128 }

    /// The memory this transaction's changes hold, as the budget counts it: the dirty nodes and
    /// the out-of-line values' bytes.
    var dirtyMemory: Int { dirty.liveCount &* dirtyNodeCost &+ pendingBytes.value }

    /// Spills when the changes held in memory pass the threshold. Called after each change that
    /// can add to them, never inside one (a change holds pointers into the nodes it changes).
    @inline(__always)
    func spillIfOverBudget() throws {
        if dirtyMemory >= spillThreshold { try spill() }
    }

    /// Writes every dirty node and pending value into the log, ahead of the commit record (see
    /// the extension's comment). A failure leaves the transaction unable to commit
    /// (`spillFailure`): its trees may refer to records that never reached the file.
    @inline(never)
    func spill() throws {
        guard let log = spillLog else { return }
        if let spillFailure { throw spillFailure }
        do {
            try log.checkAccepting()
            let state = try spillState ?? SpillState(frame: log.beginFrame(), generation: base.generation, end: baseLength)
            spillState = state
            var writer = FrameWriter(mutator: self, frame: state.frame, sealing: log.sealing)
            for tree in trees.values.sorted(by: { $0.name < $1.name }) where tree.root & dirtyTag != 0 {
                tree.root = try writer.write(tree.root, of: tree)
            }
            if catalog.root & dirtyTag != 0 { catalog.root = try writer.write(catalog.root, of: catalog) }
            try state.frame.flush()
            let end = state.frame.end
            // The disk starts on what this spill wrote now: a transaction of gigabytes would
            // otherwise pile dirty pages up until the kernel throttles its writes, and leave all of
            // them to the commit's sync. A hint: durability still comes from that sync.
            log.startWriteback(from: state.end, to: end)
            if state.generation === base.generation || end > UInt64(state.generation.region.length) {
                try state.read(through: log.map(reaching: end))
            }
            state.end = end
            readLimit.value = end
            // What the transaction read back of earlier spills (the paths it changed again)
            // leaves its resident set: over ten million objects that adds up to tens of MiB.
            state.generation.region.dropResidentPages(state.frame.frameStart..<end)
            for tree in trees.values { tree.finger.pointee.forget() }
            catalog.finger.pointee.forget()
            // What the previous spill wrote is released now; what this one wrote, at the next.
            state.releaseRetired()
            state.retiredNodes = dirty.takeAll()
            state.retiredValues = pending.value
            pending.value = []
            pendingBytes.value = 0
            state.count += 1
            noteMutation()
        } catch {
            spillFailure = error
            throw error
        }
    }

    /// For an abort: the records the spills wrote read as zeros from now on (`LogWriter.discardSpilled`).
    func discardSpilled() {
        guard let spillLog, let spillState else { return }
        spillLog.discardSpilled(through: spillState.end)
    }

    /// The spilled node record at `ref` (at or past the base commit's end).
    func spilledNode(_ ref: UInt64, below: UInt64) throws -> NodeView {
        guard let spillState else {
            throw StorageError.fileCorrupt(offset: ref, reason: "node reference past the newest commit (referenced below \(below))")
        }
        return try spillState.records.node(at: ref, below: below, limit: spillState.end)
    }

    /// The spilled value record at `ref`, holding `length` bytes.
    func spilledValue(_ ref: UInt64, length: Int, below: UInt64) throws -> UnsafeRawBufferPointer {
        guard let spillState else {
            throw StorageError.fileCorrupt(offset: ref, reason: "value reference past the newest commit (referenced below \(below))")
        }
        return try spillState.records.value(at: ref, length: length, below: below, limit: spillState.end)
    }

    /// How many times this transaction spilled (for tests and diagnostics).
    var spillCount: Int { spillState?.count ?? 0 }

    /// `dirtyMemory` and what the last spill keeps allocated, counted the same way.
    var heldMemory: Int {
        guard let spillState else { return dirtyMemory }
        let nodes = spillState.retiredNodes.reduce(0) { $0 + ($1 == nil ? 0 : 1) }
        let values = spillState.retiredValues.reduce(0) { $0 + ($1?.bytes.count ?? 0) }
        return dirtyMemory + nodes * dirtyNodeCost + values
    }
}
