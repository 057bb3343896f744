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

        /// Whether this event's object comes before `other`'s in (entity, id) order, the order
        /// the events are kept in (``sortEvents()``).
        @inline(__always)
        func precedes(_ other: Event) -> Bool {
            entity < other.entity || (entity == other.entity && id < other.id)
        }
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

    // Unchecked: one write transaction (one thread) owns the recorder, and the dynamic
    // exclusivity check of a class's stored property cost as much as the rest of recording an
    // update (two accesses an object).
    @exclusivity(unchecked) private(set) var events: [Event] = []
    /// The property and relation IDs of the events.
    @exclusivity(unchecked) private var ids: [UInt32] = []
    /// In an undoable write: what each replace changed, kept as the undo step will hold it.
    var undo: UndoCapture? {
        didSet { undoUnretained = undo.map { Unmanaged.passUnretained($0) } }
    }
    /// `undo` without a reference count: the recorder holds it, and the call made for each
    /// replaced object then neither retains nor releases it.
    @exclusivity(unchecked) private var undoUnretained: Unmanaged<UndoCapture>?

    init() {}

    // MARK: Recording

    /// Records that object `id` of `schema` is stored with every property: new, or not stored before.
    @inline(__always)
    func notePut(_ schema: EntitySchema, id: Id) {
        events.append(Event(entity: schema.id.id, kind: .putAll, id: id, start: 0, count: 0))
    }

    /// Records that object `id` of `schema`, stored as `old`, is replaced by `new`: the properties
    /// whose fields differ. A put that stores the same bytes changes nothing and is not recorded.
    func noteReplace(_ schema: EntitySchema, id: Id, old: RecordReader, new: RecordReader) throws {
        let start = ids.count
        let slots = try Self.changedProperties(of: schema, old: old, new: new, into: &ids)
        guard ids.count > start else { return }
        events.append(Event(entity: schema.id.id, kind: .putListed, id: id, start: UInt32(start), count: UInt32(ids.count - start)))
        guard let undo = undoUnretained else { return }
        if let slots {
            try undo._withUnsafeGuaranteedRef { try $0.keep(schema, id: id, slots: slots, idsStart: start, old: old, new: new) }
        } else {
            let changed = Array(ids[start...])
            try changed.withUnsafeBufferPointer { changed in
                try undo._withUnsafeGuaranteedRef { try $0.keepFields(schema, id: id, changed: changed, idsStart: start, old: old, new: new) }
            }
        }
    }

    /// Records that `record` is about to be stored as object `id` (`isNew`: an id just handed out,
    /// nothing stored under it), looking up the old record when there may be one. Called before
    /// it is written, by the paths that do not go through `putIndexed` (which records the put
    /// itself, from the old record it looks up anyway).
    @usableFromInline
    func notePut(_ schema: EntitySchema, id: Id, isNew: Bool, record: UnsafeRawBufferPointer,
                 context: TransactionContext) throws {
        if isNew { return notePut(schema, id: id) }
        let existed = try context.withRecord(schema, id) { old -> Bool in
            guard let old else { return false }
            try noteReplace(schema, id: id, old: RecordReader(old), new: RecordReader(record))
            return true
        }
        if !existed { notePut(schema, id: id) }
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
    /// Returns those properties as a mask of slots (bit `ID − 1`), nil when one of them is beyond
    /// slot 63.
    @discardableResult
    static func changedProperties(of schema: EntitySchema, old: RecordReader, new: RecordReader, into ids: inout [UInt32]) throws -> UInt64? {
        if let slots = schema.historySlots, let differing = changedSlots(old, new) {
            let found = differing & slots
            var changed = found
            while changed != 0 {
                ids.append(UInt32(changed.trailingZeroBitCount + 1))
                changed &= changed - 1
            }
            return found
        }
        var found: UInt64? = 0
        try old.withFieldExtents { oldField in
            try new.withFieldExtents { newField in
                for property in schema.historyProperties {
                    let slot = Int(property) - 1
                    let a = oldField(slot), b = newField(slot)
                    if a == nil && b == nil { continue }
                    if let a, let b, a.count == b.count, a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 { continue }
                    ids.append(property)
                    found = property >= 1 && property <= 64 ? found.map { $0 | 1 << UInt64(property - 1) } : nil
                }
            }
        }
        return found
    }

    /// The slots (below 64) whose fields differ between `old` and `new`, a bit each, in one
    /// pass over both slot tables from the last slot down, with nothing allocated and nothing
    /// thrown: nil when either record has more than 64 slots, fields out of slot order, or an
    /// offset outside its record (`withFieldExtents` handles those, and throws for the last).
    @inline(__always)
    private static func changedSlots(_ old: RecordReader, _ new: RecordReader) -> UInt64? {
        let slotCount = max(old.slotCount, new.slotCount)
        guard slotCount <= 64 else { return nil }
        // The common case, both slot tables of u16 and as long: each offset one load, no checks
        // of the slot against either table's length.
        if old.narrow, new.narrow, old.slotCount == new.slotCount {
            return changedSlots(old, new, slotCount) { record, slot in
                Int(UInt16(littleEndian: record.base.loadUnaligned(fromByteOffset: RecordLayout.headerSize &+ slot &* 2, as: UInt16.self)))
            }
        }
        return changedSlots(old, new, slotCount) { record, slot in record.storedOffset(slot) }
    }

    /// `changedSlots` over the first `slotCount` slots, `offset` reading a slot's offset in a
    /// record (0: absent).
    @inline(__always)
    private static func changedSlots(_ old: RecordReader, _ new: RecordReader, _ slotCount: Int,
                                     offset: (RecordReader, Int) -> Int) -> UInt64? {
        let oldStart = old.fieldsStart, newStart = new.fieldsStart
        var changed: UInt64 = 0
        var oldEnd = old.count, newEnd = new.count
        var slot = slotCount &- 1
        while slot >= 0 {
            let a = offset(old, slot), b = offset(new, slot)
            if a != 0 {
                guard a >= oldStart, a <= oldEnd else { return nil }
            }
            if b != 0 {
                guard b >= newStart, b <= newEnd else { return nil }
            }
            if a == 0 || b == 0 {
                if a != b { changed |= 1 &<< UInt64(slot) }
            } else if !sameBytes(old.base + a, oldEnd &- a, new.base + b, newEnd &- b) {
                changed |= 1 &<< UInt64(slot)
            }
            if a != 0 { oldEnd = a }
            if b != 0 { newEnd = b }
            slot &-= 1
        }
        return changed
    }

    /// Whether two fields hold the same bytes: those of 16 bytes or fewer (numbers, dates, short
    /// strings) compared as words, longer ones with `memcmp`.
    @inline(__always)
    private static func sameBytes(_ a: UnsafeRawPointer, _ aCount: Int, _ b: UnsafeRawPointer, _ bCount: Int) -> Bool {
        guard aCount == bCount else { return false }
        switch aCount {
        case 0: return true
        case 1...3:
            for k in 0..<aCount where a.load(fromByteOffset: k, as: UInt8.self) != b.load(fromByteOffset: k, as: UInt8.self) { return false }
            return true
        case 4...8:
            // Two words that overlap when the field is shorter than 8 bytes.
            return a.loadUnaligned(as: UInt32.self) == b.loadUnaligned(as: UInt32.self)
                && a.loadUnaligned(fromByteOffset: aCount - 4, as: UInt32.self) == b.loadUnaligned(fromByteOffset: aCount - 4, as: UInt32.self)
        case 9...16:
            return a.loadUnaligned(as: UInt64.self) == b.loadUnaligned(as: UInt64.self)
                && a.loadUnaligned(fromByteOffset: aCount - 8, as: UInt64.self) == b.loadUnaligned(fromByteOffset: aCount - 8, as: UInt64.self)
        default: return memcmp(a, b, aCount) == 0
        }
    }

    /// The property or relation IDs `event` lists.
    func listed(_ event: Event) -> ArraySlice<UInt32> { ids[Int(event.start)..<Int(event.start + event.count)] }

    // MARK: Committing

    /// Writes the entry of this transaction's changes (nothing when it changed no object): the
    /// next sequence number, a timestamp past the last one, into the history tree. The events are
    /// merged per object (in entity UID and id order) as they are encoded.
    func write(into write: WriteTransaction, store: Store) throws {
        guard !events.isEmpty else { return }
        sortEvents()
        let events = self.events
        // The entities' runs of events, in UID order, with the number of objects in each.
        var runs: [(schema: EntitySchema, range: Range<Int>, objects: Int)] = []
        var position = 0
        while position < events.count {
            let entity = events[position].entity
            guard let schema = store.schemasById[entity] else {
                throw CellarError.schema("the history names entity ID \(entity), which is not in the store's model")
            }
            let first = position
            var objects = 0
            var lastId: Id?
            while position < events.count, events[position].entity == entity {
                let id = events[position].id
                if id != lastId { objects += 1 }
                lastId = id
                position += 1
            }
            runs.append((schema, first..<position, objects))
        }
        runs.sort { $0.schema.id.uid < $1.schema.id.uid }

        let meta = try write.tree(StorageLayout.metaTree, create: true)!
        var state = try HistoryState.read(meta, in: write) ?? HistoryState()
        state.lastSequence += 1
        state.lastTimestamp = HybridClock.next(after: state.lastTimestamp, wallMilliseconds: store.historyClock())
        // An update of one property takes 5 bytes an object: the id's delta, the kind, the count,
        // the ID and the count of relations, a byte each.
        let writer = HistoryEncoding.Writer(timestamp: state.lastTimestamp, entityCount: runs.count,
                                            capacity: 32 + events.count * 5 + ids.count)
        var properties: [UInt32] = [], relations: [UInt32] = []
        // Read through buffer pointers: slicing the arrays retained them once an object.
        self.ids.withUnsafeBufferPointer { ids in
            events.withUnsafeBufferPointer { events in
                for run in runs {
                    writer.beginEntity(uid: run.schema.id.uid, allProperties: run.schema.historyProperties, objectCount: run.objects)
                    position = run.range.lowerBound
                    while position < run.range.upperBound {
                        let id = events[position].id
                        if position + 1 == run.range.upperBound || events[position + 1].id != id {
                            // One event for the object (a bulk put, an update of each object once): as it is.
                            let event = events[position]
                            position += 1
                            let listed = UnsafeBufferPointer(rebasing: ids[Int(event.start)..<Int(event.start + event.count)])
                            let none = UnsafeBufferPointer<UInt32>(start: nil, count: 0)
                            switch event.kind {
                            case .putAll: writer.object(id: id, remove: false, properties: nil as UnsafeBufferPointer<UInt32>?, relations: none)
                            case .putListed: writer.object(id: id, remove: false, properties: listed, relations: none)
                            case .remove: writer.object(id: id, remove: true, properties: none, relations: none)
                            case .relations: writer.object(id: id, remove: false, properties: none, relations: listed)
                            }
                            continue
                        }
                        // What the object's events come to, in the order they happened.
                        var remove = false, all = false
                        properties.removeAll(keepingCapacity: true)
                        relations.removeAll(keepingCapacity: true)
                        while position < run.range.upperBound, events[position].id == id {
                            let event = events[position]
                            position += 1
                            let listed = UnsafeBufferPointer(rebasing: ids[Int(event.start)..<Int(event.start + event.count)])
                            switch event.kind {
                            case .putAll:
                                if remove { relations.removeAll() }
                                remove = false
                                all = true
                                properties.removeAll()
                            case .putListed:
                                if remove {
                                    // (Cannot happen: a listed put replaced a stored object.) As a new one.
                                    remove = false
                                    all = true
                                }
                                if !all { Self.merge(listed, into: &properties) }
                            case .remove:
                                remove = true
                                all = false
                                properties.removeAll()
                                relations.removeAll()
                            case .relations:
                                // Links a removal cleans up leave it a removal.
                                if !remove { Self.merge(listed, into: &relations) }
                            }
                        }
                        writer.object(id: id, remove: remove, properties: all ? nil : properties, relations: relations)
                    }
                }
            }
        }
        let tree = try write.tree(StorageLayout.historyTree, create: true)!
        try withUnsafeBytes(of: state.lastSequence.bigEndian) { key in
            try write.put(tree, key: key, value: writer.bytes)
        }
        try state.write(meta, in: write)
    }

    /// Orders the events by entity ID, then object id, then when they happened. They mostly come
    /// so (a bulk put, an update of every object in id order), and are then left as they are.
    func sortEvents() {
        let inOrder = events.withUnsafeBufferPointer { events in
            for index in events.indices.dropFirst() {
                if events[index].precedes(events[index - 1]) { return false }
            }
            return true
        }
        if inOrder { return }
        var order = (0..<UInt32(events.count)).map { $0 }
        events.withUnsafeBufferPointer { events in
            order.sort { a, b in
                let x = events[Int(a)], y = events[Int(b)]
                if x.entity != y.entity { return x.entity < y.entity }
                if x.id != y.id { return x.id < y.id }
                return a < b
            }
        }
        events = order.map { events[Int($0)] }
    }

    /// Adds the ascending IDs `listed` to the ascending `ids`, keeping them ascending and distinct.
    private static func merge(_ listed: UnsafeBufferPointer<UInt32>, into ids: inout [UInt32]) {
        if ids.isEmpty {
            ids.append(contentsOf: listed)
            return
        }
        for id in listed where !ids.contains(id) { ids.append(id) }
        ids.sort()
    }
}

extension RecordReader {
    /// Calls `body` with a function that gives the bytes of a slot's field (from its offset to
    /// the next field's, or to the record's end), nil when the slot is absent.
    func withFieldExtents<R>(_ body: ((Int) -> UnsafeRawBufferPointer?) throws -> R) throws -> R {
        try withUnsafeTemporaryAllocation(of: Int.self, capacity: max(slotCount * 2, 1)) { buffer in
            // buffer[slot]: the field's offset (0: absent); buffer[slotCount + slot]: its end.
            var ascending = true
            var last = 0
            for slot in 0..<slotCount {
                let at = try offset(slot, size: 0) ?? 0
                buffer[slot] = at
                if at != 0 {
                    if at < last { ascending = false }
                    last = at
                }
            }
            if ascending {
                // Fields written in slot order (what the bindings do): each ends where the next begins.
                var end = count
                for slot in stride(from: slotCount - 1, through: 0, by: -1) where buffer[slot] != 0 {
                    buffer[slotCount + slot] = end
                    end = buffer[slot]
                }
            } else {
                var sorted = (0..<slotCount).map { buffer[$0] }.filter { $0 != 0 }
                sorted.sort()
                for slot in 0..<slotCount where buffer[slot] != 0 {
                    let next = sorted.first { $0 > buffer[slot] }
                    buffer[slotCount + slot] = next ?? count
                }
            }
            let base = self.base, slotCount = self.slotCount
            return try body { slot in
                guard slot < slotCount, buffer[slot] != 0 else { return nil }
                return UnsafeRawBufferPointer(start: base + buffer[slot], count: buffer[slotCount + slot] - buffer[slot])
            }
        }
    }
}
