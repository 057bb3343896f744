import CellarStorage

/// An undo step that names its commits instead of holding values: the commit its write began on
/// and, per object the write changed, the object and the relations whose links changed. The
/// values before and after are in the log already (that commit, and the write's own, the first
/// after it), so an undoable write keeps only this, and the step's values are made from those two
/// commits when they are needed (``values(of:store:)``, as ``Store/undoGroup(actionName:_:)``
/// makes a step from two snapshots):
/// - the first time the step is undone or redone (it is then kept with its values);
/// - when a compaction or a copy drops those commits: the object layer's rewrite of the undo
///   log's tree (`UndoLog.compactionRewrite`) makes each such step from the file being
///   compacted, which is still open, in the copy and in every catch-up round.
///
/// Stored as:
///
/// ```
/// u8 format (4), name (u32 length, UTF-8), u64 the commit the write began on, u32 object count,
/// then per object, in entity ID and id order: varint entity ID, varint id (minus the object's
/// before when of the same entity), varint count of relation IDs, then each (varint).
/// ```
enum CommitStep {
    /// Why a step that names its commits cannot get its values: the store's file no longer holds
    /// them. Its own type, so that a compaction, which copies such a step as it is, tells it from
    /// any other failure.
    struct CommitsGone: Error {
        /// Which step, which commit, and what the file holds.
        let message: String
    }

    static let format: UInt8 = 4

    /// The step of the write running in `context`, named `name`; nil when its change history
    /// holds more than one event for an object (made and removed, replaced twice, linked and
    /// replaced: only a look at the store before and after tells what they came to, and the
    /// caller keeps a step with values). Empty when the write changed nothing.
    static func make(_ name: String, in context: TransactionContext) -> [UInt8]? {
        guard let history = context.history, let write = context.write else { return nil }
        history.sortEvents()
        let events = history.events
        guard !events.isEmpty else { return [] }
        // One event an object (they are in entity and id order), and the room the entries take at
        // most: three varints, and a relation ID in at most 5 bytes.
        var most = 0
        let single = events.withUnsafeBufferPointer { events in
            for index in events.indices {
                if index > 0, !events[index - 1].precedes(events[index]) { return false }
                most &+= 3 * Varint.maxBytes + (events[index].kind == .relations ? 5 * Int(events[index].count) : 0)
            }
            return true
        }
        guard single else { return nil }
        // The head of a step with values, its count replaced by the commit and the count.
        var head = UndoStep.head(name)
        head.removeLast(4)
        head[0] = format
        withUnsafeBytes(of: (write.transactionId - 1).littleEndian) { head.append(contentsOf: $0) }
        UndoStep.append(UInt32(events.count), to: &head)
        // Written through a cursor into that room: a step of 100,000 objects is made on every commit.
        return [UInt8](unsafeUninitializedCapacity: head.count + most) { buffer, count in
            let start = UnsafeMutableRawPointer(buffer.baseAddress!)
            head.withUnsafeBytes { start.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            var out = start + head.count
            var previous: HistoryRecorder.Event?
            for event in events {
                out = Varint.put(UInt64(event.entity), at: out)
                out = Varint.put(previous?.entity == event.entity ? event.id &- previous!.id : event.id, at: out)
                previous = event
                guard event.kind == .relations else {
                    out = Varint.put(0, at: out)
                    continue
                }
                let relations = history.listed(event)
                out = Varint.put(UInt64(relations.count), at: out)
                for relation in relations { out = Varint.put(UInt64(relation), at: out) }
            }
            count = out - start
            assert(count <= buffer.count, "an undo step naming its commits outgrew its room")
        }
    }

    /// The step with values (format 3) that the step `step` (of this format) names: the objects
    /// it lists, looked up in the commit it names and in the first one after it, as stored. A step
    /// whose objects came out as they were holds none.
    ///
    /// - Throws: ``CommitsGone`` when the store's file no longer holds those commits (it was
    ///   compacted or copied without the object layer, as `cellar compact` of a closed store
    ///   does): the step cannot be undone; `fileCorrupt` for a step that does not read.
    static func values(of step: UnsafeRawBufferPointer, store: Store) throws -> [UInt8] {
        let (format, name, end) = try UndoStep.head(of: step)
        guard format == Self.format else { throw CellarError.fileCorrupt("an undo step of format \(format) read as one that names its commits") }
        var at = end
        func corrupt() -> CellarError { CellarError.fileCorrupt("the undo step \"\(name)\" (naming its commits) does not read") }
        guard step.count - at >= 12 else { throw corrupt() }
        let base = step.loadLE(UInt64.self, at: at)
        let count = Int(step.loadLE(UInt32.self, at: at + 8))
        at += 12
        func varint() throws -> UInt64 {
            do { return try Varint.read(step, at: &at) } catch { throw corrupt() }
        }
        var objects: [UndoStep.ObjectKey: Set<UInt32>] = [:]
        var previous: (entity: UInt32, id: Id)?
        for _ in 0..<count {
            guard case let entity = try varint(), entity <= UInt32.max else { throw corrupt() }
            let delta = try varint()
            var id = delta
            if let previous, previous.entity == UInt32(entity) {
                guard delta > 0, delta <= Id.max - previous.id else { throw corrupt() }
                id = previous.id + delta
            }
            previous = (UInt32(entity), id)
            let relationCount = try varint()
            guard relationCount <= UInt64(step.count - at) else { throw corrupt() }
            var relations = Set<UInt32>()
            for _ in 0..<relationCount {
                guard case let relation = try varint(), relation <= UInt32.max else { throw corrupt() }
                relations.insert(UInt32(relation))
            }
            objects[UndoStep.ObjectKey(entity: UInt32(entity), id: id), default: []].formUnion(relations)
        }
        guard at == step.count else { throw corrupt() }
        // The commit the step names and the write's own, the first after it: one walk back.
        let reads: (commit: ReadTransaction, after: ReadTransaction)
        do {
            reads = try store.engine.beginRead(commitAndTheOneAfter: base)
        } catch StorageError.illegalArgument(let why) {
            throw CommitsGone(message: "the undo step \"\(name)\" names commit \(base), which the store's file no longer holds (it was compacted or copied without the object layer, as `cellar compact` of a closed store does): it cannot be undone or redone; clearUndoLog() forgets it (\(why))")
        } catch {
            throw CellarError.wrap(error)
        }
        let before = TransactionContext(store: store, read: reads.commit), after = TransactionContext(store: store, read: reads.after)
        before.readsThePast = true
        after.readsThePast = true
        var out = UndoStep.head(name)
        try UndoStep.capture(name, objects: objects, from: before, in: after) { out = Array($0) }
        return out
    }
}

extension Store {
    /// How many undo steps in the store `read` reads name their commits (``CommitStep``): what a
    /// compaction by the engine alone, without a `Store` (`cellar compact` of a closed store),
    /// leaves unable to undo, since it drops those commits.
    @_spi(Tools) public static func undoStepsNamingCommits(in read: ReadTransaction) throws -> Int {
        let state = try UndoLog.State.read(read)
        guard let tree = try read.tree(UndoLog.tree), state.end >= state.first else { return 0 }
        var count = 0
        for number in state.first...state.end {
            if try read.withValue(tree, key: UndoLog.key(number), { $0?.first == CommitStep.format }) { count += 1 }
        }
        return count
    }
}
