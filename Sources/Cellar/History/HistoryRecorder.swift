import CellarStorage
import Foundation

/// Records, while a write transaction runs, what it does to objects, and writes it as one
/// history entry when the transaction commits (in the commit itself: a transaction that rolls
/// back records nothing, and a crash keeps both or neither). One per write transaction of a
/// store with history on (``StoreOptions/changeHistory``); nil otherwise.
///
/// Recording appends an event per put, remove and link change (a few words; a replaced
/// object's old and new records are compared field by field first); the events are merged per
/// object at commit.
@usableFromInline
final class HistoryRecorder {
    /// One thing the transaction did to an object.
    struct Event {
        var entity: UInt32
        var kind: Kind
        var id: Id
        /// Where the event's property or relation IDs are in `ids`.
        var start: UInt32
        var count: UInt32
    }

    enum Kind: UInt8 {
        /// Stored with every property (new, or not stored before).
        case putAll
        /// Replaced; the properties whose bytes changed are listed.
        case putListed
        case remove
        /// Its links through the relations listed changed.
        case relations
    }

    private(set) var events: [Event] = []
    /// The property and relation IDs of the events.
    private var ids: [UInt32] = []

    init() {}

    // MARK: Recording

    /// Records that `record` is about to be stored as object `id` (`isNew`: an id just handed out,
    /// nothing stored under it). Called before it is written: a replaced object's old record is
    /// still there to compare with.
    @usableFromInline
    func notePut(_ schema: EntitySchema, id: Id, isNew: Bool, record: UnsafeRawBufferPointer,
                 context: TransactionContext) throws {
        if isNew {
            events.append(Event(entity: schema.id.id, kind: .putAll, id: id, start: 0, count: 0))
            return
        }
        let start = ids.count
        let existed = try context.withRecord(schema, id) { old -> Bool in
            guard let old else { return false }
            try Self.changedProperties(of: schema, old: RecordReader(old), new: RecordReader(record), into: &ids)
            return true
        }
        if !existed {
            events.append(Event(entity: schema.id.id, kind: .putAll, id: id, start: 0, count: 0))
        } else if ids.count > start {
            // (A put that stores the same bytes changes nothing: it is not recorded.)
            events.append(Event(entity: schema.id.id, kind: .putListed, id: id, start: UInt32(start), count: UInt32(ids.count - start)))
        }
    }

    /// Records that object `id` of `schema` was removed.
    func noteRemove(_ schema: EntitySchema, id: Id) {
        events.append(Event(entity: schema.id.id, kind: .remove, id: id, start: 0, count: 0))
    }

    /// Records that a link of object `source` through standalone relation `relation` was added or
    /// removed (`entity`: the relation's source entity).
    func noteRelation(_ relation: UInt32, entity: UInt32, source: Id) {
        events.append(Event(entity: entity, kind: .relations, id: source, start: UInt32(ids.count), count: 1))
        ids.append(relation)
    }

    /// Records, before `removeAll` drops them, the removal of every object of `schema` and the
    /// link changes of the objects of other entities that pointed at them.
    func noteRemoveAll(_ schema: EntitySchema, context: TransactionContext) throws {
        if let cursor = try context.cursor(schema) {
            try cursor.scan { key, _ in
                noteRemove(schema, id: try StorageLayout.objectId(key))
                return true
            }
        }
        for relation in schema.incomingRelations {
            guard let source = context.store.relationSources[relation.id.id], source.id.id != schema.id.id,
                  let cursor = try context.cursor(treeNamed: StorageLayout.relationTree(relation.id.id)) else { continue }
            var last: Id = 0
            try cursor.scan { key, _ in
                guard key.count == 16 else { throw CellarError.fileCorrupt("a key of relation tree \(relation.id.id) has \(key.count) bytes, expected 16") }
                let id = Id(bigEndian: key.loadUnaligned(as: UInt64.self))
                if id != last { noteRelation(relation.id.id, entity: source.id.id, source: id) }
                last = id
                return true
            }
        }
    }

    /// Appends to `ids` the IDs of `schema`'s properties (but the id) whose field differs between
    /// `old` and `new`: present in one and not the other, or with other bytes. A field's bytes
    /// run from its offset to the next field's (fields are written back to back), or to the end.
    static func changedProperties(of schema: EntitySchema, old: RecordReader, new: RecordReader, into ids: inout [UInt32]) throws {
        try old.withFieldExtents { oldField in
            try new.withFieldExtents { newField in
                for property in schema.historyProperties {
                    let slot = Int(property) - 1
                    let a = oldField(slot), b = newField(slot)
                    if a == nil && b == nil { continue }
                    if let a, let b, a.count == b.count, a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 { continue }
                    ids.append(property)
                }
            }
        }
    }

    // MARK: Committing

    /// Merges the events per object: what the transaction did to each, in entity UID and id order.
    func merged(schemas: [UInt32: EntitySchema]) throws -> [HistoryEncoding.EntityChanges] {
        var order = Array(events.indices)
        order.sort { a, b in
            let x = events[a], y = events[b]
            if x.entity != y.entity { return x.entity < y.entity }
            if x.id != y.id { return x.id < y.id }
            return a < b
        }
        var result: [HistoryEncoding.EntityChanges] = []
        var position = 0
        while position < order.count {
            let entity = events[order[position]].entity
            guard let schema = schemas[entity] else {
                throw CellarError.schema("the history names entity ID \(entity), which is not in the store's model")
            }
            var changes = HistoryEncoding.EntityChanges(entityUid: schema.id.uid, allProperties: schema.historyProperties, objects: [])
            while position < order.count, events[order[position]].entity == entity {
                let id = events[order[position]].id
                var change = HistoryEncoding.ObjectChange(id: id, remove: false, properties: [], relations: [])
                var touched = false
                while position < order.count, events[order[position]].entity == entity, events[order[position]].id == id {
                    let event = events[order[position]]
                    position += 1
                    let listed = ids[Int(event.start)..<Int(event.start + event.count)]
                    switch event.kind {
                    case .putAll:
                        change = HistoryEncoding.ObjectChange(id: id, remove: false, properties: nil, relations: change.remove ? [] : change.relations)
                        touched = true
                    case .putListed:
                        if change.remove { change = HistoryEncoding.ObjectChange(id: id, remove: false, properties: nil, relations: []) }
                        if change.properties != nil { change.properties = Self.union(change.properties!, listed) }
                        touched = true
                    case .remove:
                        change = HistoryEncoding.ObjectChange(id: id, remove: true, properties: [], relations: [])
                        touched = true
                    case .relations:
                        // Links a removal cleans up leave it a removal.
                        guard !change.remove else { continue }
                        change.relations = Self.union(change.relations, listed)
                        touched = true
                    }
                }
                if touched { changes.objects.append(change) }
            }
            result.append(changes)
        }
        return result.sorted { $0.entityUid < $1.entityUid }
    }

    private static func union(_ a: [UInt32], _ b: ArraySlice<UInt32>) -> [UInt32] {
        if a.isEmpty { return Array(b).sorted() }
        return Array(Set(a).union(b)).sorted()
    }

    /// Writes the entry of this transaction's changes (nothing when it changed no object): the
    /// next sequence number, a timestamp past the last one, into the history tree.
    func write(into write: WriteTransaction, store: Store) throws {
        guard !events.isEmpty else { return }
        let entities = try merged(schemas: store.schemasById)
        guard entities.contains(where: { !$0.objects.isEmpty }) else { return }
        let meta = try write.tree(StorageLayout.metaTree, create: true)!
        var state = try HistoryState.read(meta, in: write) ?? HistoryState()
        state.lastSequence += 1
        state.lastTimestamp = HybridClock.next(after: state.lastTimestamp, wallMilliseconds: store.historyClock())
        let tree = try write.tree(StorageLayout.historyTree, create: true)!
        let value = HistoryEncoding.encode(timestamp: state.lastTimestamp, entities: entities)
        try withUnsafeBytes(of: state.lastSequence.bigEndian) { key in
            try value.withUnsafeBytes { try write.put(tree, key: key, value: $0) }
        }
        try state.write(meta, in: write)
    }
}

extension RecordReader {
    /// Calls `body` with a function that gives the bytes of a slot's field (from its offset to
    /// the next field's, or to the record's end), nil when the slot is absent.
    func withFieldExtents<R>(_ body: ((Int) -> UnsafeRawBufferPointer?) throws -> R) throws -> R {
        try withUnsafeTemporaryAllocation(of: Int.self, capacity: max(slotCount * 2, 1)) { buffer in
            var present = 0
            for slot in 0..<slotCount {
                let at = try offset(slot, size: 0) ?? 0
                buffer[slot] = at
                if at != 0 {
                    buffer[slotCount + present] = at
                    present += 1
                }
            }
            var sorted = UnsafeMutableBufferPointer(rebasing: buffer[slotCount..<slotCount + present])
            sorted.sort()
            let base = self.base, count = self.count, slotCount = self.slotCount
            return try body { slot in
                guard slot < slotCount, buffer[slot] != 0 else { return nil }
                let at = buffer[slot]
                // The first offset past `at`.
                var low = 0, high = sorted.count
                while low < high {
                    let middle = (low + high) / 2
                    if sorted[middle] <= at { low = middle + 1 } else { high = middle }
                }
                let end = low < sorted.count ? sorted[low] : count
                return UnsafeRawBufferPointer(start: base + at, count: end - at)
            }
        }
    }
}
