import CellarStorage
import Foundation

/// What sync packages built on Cellar (`@_spi(Sync)`) read from and write to a store: its
/// changes since the replica last acknowledged them, and the replica's changes, applied without
/// being recorded as the store's own (so they are not sent back). The store must record its
/// change history (``StoreOptions/changeHistory``).
@_spi(Sync)
extension Store {
    /// The replica schema of the store's model.
    public func replicaSchema() throws -> ReplicaSchema { try ReplicaSchema(model: model) }

    /// The store's sync state, made at the first call. That first call also records one history
    /// entry with every stored object whose creation the history does not show (stored before
    /// the history was turned on, or its entries pruned), so that a store holding objects from
    /// before it synced sends them all; objects the history shows being created are sent from
    /// their own entries, once, with their own clocks.
    public func replicaState() throws -> ReplicaState {
        try inReplicaContext(recording: true) { context in
            let write = context.write!
            if let state = try ReplicaState.read(in: write) { return state }
            let state = ReplicaState(device: UUID(), acknowledged: 0, pulled: 0)
            try state.write(in: write)
            // Every other object stored so far, as put now: its changes may predate the history.
            let created = try objectsCreatedInHistory()
            for entity in model.entities where !entity.isEmbedded {
                guard let schema = schemas[entity.id.uid] else { continue }
                guard let cursor = try context.cursor(schema) else { continue }
                let shown = created[entity.id.uid] ?? []
                try cursor.scan { key, _ in
                    let id = try StorageLayout.objectId(key)
                    if !shown.contains(id) { context.history?.notePut(schema, id: id) }
                    return true
                }
                for relation in schema.relations {
                    guard let links = try context.cursor(treeNamed: StorageLayout.relationTree(relation.id.id)) else { continue }
                    var last: Id = 0
                    try links.scan { key, _ in
                        let source = Id(bigEndian: key.loadUnaligned(as: UInt64.self))
                        if source != last, !shown.contains(source) {
                            context.history?.noteRelation(relation.id.id, entity: schema.id.id, source: source)
                        }
                        last = source
                        return true
                    }
                }
            }
            return state
        }
    }

    /// The objects, by entity UID, whose first entry in the history is their creation (a put
    /// naming every property): the history holds all their changes. None when the history's
    /// first entries were pruned.
    private func objectsCreatedInHistory() throws -> [UInt64: Set<Id>] {
        guard let entries = try? history(since: 0) else { return [:] }
        var seen: [UInt64: Set<Id>] = [:], created: [UInt64: Set<Id>] = [:]
        for entry in entries {
            for change in entry.changes where seen[change.entityUid, default: []].insert(change.id).inserted {
                guard change.operation == .put, let schema = schemas[change.entityUid] else { continue }
                // (`historyProperties`: the entity's properties but the id, worked out once.)
                if Set(change.changedPropertyIds).isSuperset(of: schema.historyProperties) {
                    created[change.entityUid, default: []].insert(change.id)
                }
            }
        }
        return created
    }

    /// The changes of the history entries after the acknowledged one (or after `sequence`, at
    /// or past it: the entries a batch not acknowledged yet leaves), at most `limit` entries
    /// holding at most `objects` changes (the first entry goes whatever its size),
    /// merged per object: each object once, with the current values of the properties and
    /// relations those entries changed, or as removed. Objects get their global ids here (stored
    /// in this call's transaction), and so do the targets of their relations. An object put and
    /// removed again later is left out (its removal comes with the later entries).
    public func outgoingChanges(limit: Int, objects: Int? = nil, after sequence: UInt64? = nil) throws -> OutgoingChanges {
        guard limit > 0 else { throw CellarError.illegalArgument("the limit is \(limit); it must be positive") }
        if let objects, objects <= 0 { throw CellarError.illegalArgument("the object limit is \(objects); it must be positive") }
        return try inReplicaContext(recording: false) { context in
            guard let state = try ReplicaState.read(in: context.write!) else {
                throw CellarError.illegalArgument("the store has no sync state yet: call replicaState() first")
            }
            let since = sequence ?? state.acknowledged
            guard since >= state.acknowledged else {
                throw CellarError.illegalArgument("changes after \(since) were requested, but the replica acknowledged up to \(state.acknowledged)")
            }
            let entries = try history(since: since, limit: limit, changes: objects)
            let pending = try PendingChanges(entries, device: state.device, store: self)
            let coding = ReplicaValueCoding(model: model)
            var layouts: [Int: ReplicaLayout] = [:]
            var changes: [ReplicaChange] = []
            for (key, object) in pending.objects {
                guard let schema = schemasById[key.entity] else { continue }
                let globalId = try context.globalId(of: schema, key.id, assign: true)!
                if let removed = object.removed {
                    changes.append(ReplicaChange(entityUid: schema.id.uid, globalId: globalId, removed: removed))
                    continue
                }
                let layout = layouts[schema.index] ?? ReplicaLayout(model.entities[schema.index])
                layouts[schema.index] = layout
                let change = try context.withRecord(schema, key.id) { record -> ReplicaChange? in
                    guard let record else { return nil }
                    let reader = try RecordReader(record)
                    var change = ReplicaChange(entityUid: schema.id.uid, globalId: globalId)
                    change.values.reserveCapacity(object.properties.count)
                    for property in layout.entity.properties where !property.flags.contains(.id) {
                        guard let clock = object.properties[property.id.id] else { continue }
                        let value = try coding.value(of: property, in: reader) { target, id in
                            try context.globalId(of: try targetSchema(of: target, in: layout.entity), id, assign: true)!
                        }
                        change.values.append(ReplicaChange.Value(uid: property.id.uid, value: value, clock: clock))
                    }
                    return change
                }
                guard var change else { continue }
                for relation in layout.entity.relations {
                    guard let clock = object.relations[relation.id.id], let target = schemasById[relation.targetId.id] else { continue }
                    let targets = try context.pairedIds(key.id, in: StorageLayout.relationTree(relation.id.id)).map {
                        try context.globalId(of: target, $0, assign: true)!
                    }
                    change.relations.append(ReplicaChange.Links(uid: relation.id.uid, targets: targets, clock: clock))
                }
                changes.append(change)
            }
            return OutgoingChanges(changes: changes, through: entries.last?.sequence ?? since, entries: entries.count,
                                   throughTimestamp: entries.last?.timestamp)
        }
    }

    /// Whether the store's history entry numbered `sequence` has `timestamp`: false when it
    /// has none of that number, or another one (a store restored from an older copy).
    public func historyEntry(_ sequence: UInt64, hasTimestamp timestamp: HybridTimestamp) throws -> Bool {
        guard sequence > 0, let entry = try? history(since: sequence - 1, limit: 1).first else { return false }
        return entry.sequence == sequence && entry.timestamp == timestamp
    }

    /// Gives the store a new device id, keeping how far it pushed and pulled: for a store
    /// restored from an older copy, whose old id the replica knows with history the store no
    /// longer has. Returns the new id.
    public func renewReplicaDevice() throws -> UUID {
        try inReplicaContext(recording: false) { context in
            guard var state = try ReplicaState.read(in: context.write!) else {
                throw CellarError.illegalArgument("the store has no sync state yet: call replicaState() first")
            }
            state.device = UUID()
            try state.write(in: context.write!)
            return state.device
        }
    }

    /// Notes that the replica holds the history up to `sequence`, and removes here the objects
    /// of `dropping` (global ids, by entity UID: objects only the replica keeps, such as
    /// insert-only ones) without recording their removal. With `pruning`, the history up to
    /// `sequence` is dropped too.
    public func acknowledge(through sequence: UInt64, dropping: [UInt64: [UUID]] = [:], pruning: Bool) throws {
        try inReplicaContext(recording: false) { context in
            let write = context.write!
            guard var state = try ReplicaState.read(in: write) else {
                throw CellarError.illegalArgument("the store has no sync state yet: call replicaState() first")
            }
            guard sequence >= state.acknowledged else { return }
            state.acknowledged = sequence
            try state.write(in: write)
            for (uid, globalIds) in dropping {
                guard let schema = schemas[uid] else { continue }
                for globalId in globalIds {
                    if let id = try context.localId(of: globalId, in: schema, reserve: false) { _ = try context.removeObject(schema, id: id) }
                }
            }
            if pruning { try pruneHistory(before: sequence + 1) }
        }
    }

    /// Applies a replica's changes (objects as the replica holds them) and notes that the
    /// replica's sequence `through` is applied, in one transaction that the history does not
    /// record. Per property and relation, the replica's value replaces the store's unless the
    /// store changed it later (a newer clock) in a history entry not acknowledged yet: that value
    /// is on its way to the replica. A removal removes the object, unless `removalsWin` is false
    /// and the store changed the object after the removal's clock. A put for an object whose
    /// removal is not acknowledged yet is left out. Relation targets that are not here yet get
    /// their local ids now. The store's clock is moved past every timestamp applied, so that its
    /// later changes are newer.
    ///
    /// Then the objects of `leaving` (global ids, by entity UID: objects that no longer match
    /// what the store subscribed to) leave the store without a recorded removal: no delete rule
    /// runs, and other objects' to-many relations keep them as targets not held here. An object
    /// with changes not acknowledged yet stays (a later pull that finds it outside the
    /// subscriptions again takes it).
    @discardableResult
    public func applyIncoming(_ changes: [ReplicaChange], leaving: [UInt64: [UUID]] = [:], through pulled: UInt64,
                              removalsWin: Bool = true) throws -> IncomingReport {
        try inReplicaContext(recording: false) { context in
            let write = context.write!
            guard var state = try ReplicaState.read(in: write) else {
                throw CellarError.illegalArgument("the store has no sync state yet: call replicaState() first")
            }
            let pending = try PendingChanges(try history(since: state.acknowledged), device: state.device, store: self)
            var applier = IncomingApplier(store: self, context: context, pending: pending, removalsWin: removalsWin)
            for change in changes { try applier.apply(change) }
            for (uid, globalIds) in leaving { try applier.leave(globalIds, entityUid: uid) }
            state.pulled = max(state.pulled, pulled)
            try state.write(in: write)
            // The clock runs on from the newest timestamp seen.
            if applier.newest.rawValue > 0, let meta = try write.tree(StorageLayout.metaTree, create: false),
               var history = try HistoryState.read(meta, in: write), history.lastTimestamp < applier.newest {
                history.lastTimestamp = applier.newest
                try history.write(meta, in: write)
            }
            return applier.report
        }
    }

    /// The global id of object `id` of the entity with `entityUid`; nil when it has none (it was
    /// never synced).
    public func globalId(entityUid: UInt64, id: Id) throws -> UUID? {
        try inReplicaContext(recording: false) { context in
            guard let schema = schemas[entityUid] else { return nil }
            return try context.globalId(of: schema, id, assign: false)
        }
    }

    /// The local id of the object with `globalId` of the entity with `entityUid`; nil when the
    /// store has none.
    public func localId(entityUid: UInt64, globalId: UUID) throws -> Id? {
        try inReplicaContext(recording: false) { context in
            guard let schema = schemas[entityUid] else { return nil }
            return try context.localId(of: globalId, in: schema, reserve: false)
        }
    }

    /// The global ids of the objects of the entity with `entityUid` held here that have one
    /// (objects never synced have none), in the order of their local ids.
    public func heldGlobalIds(entityUid: UInt64) throws -> [UUID] {
        try inReplicaContext(recording: false) { context in
            guard let schema = schemas[entityUid], let cursor = try context.cursor(schema),
                  let local = try context.write!.tree(GlobalIds.localTree, create: false) else { return [] }
            var ids: [UUID] = []
            try cursor.scan { key, _ in
                let id = try StorageLayout.objectId(key)
                if let uuid = try context.write!.withValue(local, key: GlobalIds.localKey(schema.id.id, id), { try $0.map(GlobalIds.uuid) }) { ids.append(uuid) }
                return true
            }
            return ids
        }
    }

    /// A sync package's own setting `name` (its subscriptions, say), kept in the store beside
    /// its sync state; nil when never set.
    public func replicaSetting(_ name: String) throws -> [UInt8]? {
        try inReplicaContext(recording: false) { context in
            guard let meta = try context.write!.tree(StorageLayout.metaTree, create: false) else { return nil }
            return try context.write!.get(meta, key: Array(("sync." + name).utf8))
        }
    }

    /// Sets (or with nil, removes) a sync package's own setting `name`, in a transaction of its
    /// own.
    public func setReplicaSetting(_ name: String, to bytes: [UInt8]?) throws {
        try inReplicaContext(recording: false) { context in
            let write = context.write!
            let key = Array(("sync." + name).utf8)
            if let bytes {
                try write.put(try write.tree(StorageLayout.metaTree, create: true)!, key: key, value: bytes)
            } else if let meta = try write.tree(StorageLayout.metaTree, create: false) {
                _ = try write.delete(meta, key: key)
            }
        }
    }

    /// Calls `handler` on `queue` after each commit that changes objects of any entity (bursts
    /// coalesce into one call; one call comes at once), until the observation is cancelled or
    /// released: a sync client's live loop wakes on it to push a local commit without polling.
    public func observeCommits(on queue: DispatchQueue, _ handler: @escaping @Sendable () -> Void) -> ChangeObservation {
        ChangeObservation(store: self, entities: Set(schemasById.keys), queue: queue, handler)
    }

    /// Runs `body` in a write transaction of its own (not inside one of this thread: sync's
    /// writes must commit on their own), its history recorded only with `recording`.
    private func inReplicaContext<T>(recording: Bool, _ body: (TransactionContext) throws -> T) throws -> T {
        guard recordsHistory else {
            throw CellarError.illegalArgument("sync needs the store's change history: open it with StoreOptions.changeHistory set")
        }
        guard ThreadTransactions.current(for: self) == nil else {
            throw CellarError.illegalArgument("sync cannot run inside a transaction")
        }
        return try inWriteContext { context in
            if !recording { context.history = nil }
            return try body(context)
        }
    }

    /// The entity a to-one relation `property` of `entity` points to.
    fileprivate func targetSchema(of property: ModelProperty, in entity: ModelEntity) throws -> EntitySchema {
        guard let name = property.relationTarget, let target = model.entity(named: name), let schema = schemasById[target.id.id] else {
            throw CellarError.schema("the target of \(entity.name).\(property.name) is not in the model")
        }
        return schema
    }
}

/// The history entries not acknowledged yet, merged per object: what the store changed that the
/// replica has not seen, each property and relation with the clock of its last change.
struct PendingChanges {
    struct Key: Hashable {
        var entity: UInt32
        var id: Id
    }

    struct Object {
        var removed: ReplicaClock?
        var properties: [UInt32: ReplicaClock] = [:]
        var relations: [UInt32: ReplicaClock] = [:]
    }

    /// The objects, in the order they first changed.
    private(set) var objects: [(key: Key, object: Object)] = []
    /// Each object's position in `objects`.
    private var positions: [Key: Int] = [:]

    init(_ entries: [HistoryEntry], device: UUID, store: Store) throws {
        let byUid = store.schemas
        positions.reserveCapacity(entries.reduce(0) { $0 + $1.changes.count })
        for entry in entries {
            let clock = ReplicaClock(timestamp: entry.timestamp, device: device)
            for change in entry.changes {
                guard let schema = byUid[change.entityUid] else { continue }
                let key = Key(entity: schema.id.id, id: change.id)
                let position: Int
                if let known = positions[key] {
                    position = known
                } else {
                    position = objects.count
                    positions[key] = position
                    objects.append((key, Object()))
                }
                // Changed in place: a copy of the object taken out and put back would copy its
                // dictionaries at every change.
                switch change.operation {
                case .remove: objects[position].object.removed = clock
                case .put:
                    for property in change.changedPropertyIds { objects[position].object.properties[property] = clock }
                    for relation in change.changedRelationIds { objects[position].object.relations[relation] = clock }
                }
            }
        }
    }

    /// The pending changes of the object with `key`; nil when it has none.
    subscript(key: Key) -> Object? { positions[key].map { objects[$0].object } }
}

/// Applies a replica's changes in one write transaction (see `Store.applyIncoming`).
private struct IncomingApplier {
    let store: Store
    let context: TransactionContext
    let pending: PendingChanges
    let removalsWin: Bool
    let coding: ReplicaValueCoding
    let builder = RecordBuilder(capacity: 1024)
    /// The values a change brings, before they are merged with the stored record.
    let taken = RecordBuilder(capacity: 1024)
    var mappings: [UInt32: ImportMapping] = [:]
    var layouts: [UInt32: ReplicaLayout] = [:]
    let schemasByUid: [UInt64: EntitySchema]
    var report = IncomingReport()
    /// The newest timestamp applied.
    var newest = HybridTimestamp(rawValue: 0)

    init(store: Store, context: TransactionContext, pending: PendingChanges, removalsWin: Bool) {
        self.store = store
        self.context = context
        self.pending = pending
        self.removalsWin = removalsWin
        coding = ReplicaValueCoding(model: store.model)
        schemasByUid = store.schemas
    }

    /// Whether the store's own change of a property or relation, clocked `mine` (nil: none
    /// pending), stands against a pulled value clocked `theirs`: the later clock wins, and a
    /// pulled value without a clock loses to any change of the store's own.
    private static func mineStands(_ mine: ReplicaClock?, against theirs: ReplicaClock?) -> Bool {
        guard let mine else { return false }
        return theirs.map { mine > $0 } ?? true
    }

    /// The local id of the object `globalId` names as the target of `entity`'s to-one relation
    /// `relation`, reserved when the store does not hold it yet.
    private func relationTarget(_ relation: ModelProperty, _ globalId: UUID, of entity: ModelEntity) throws -> Id {
        try context.localId(of: globalId, in: try store.targetSchema(of: relation, in: entity), reserve: true)!
    }

    /// Removes the objects of `globalIds` held here without changes not acknowledged yet (see
    /// `Store.applyIncoming`).
    mutating func leave(_ globalIds: [UUID], entityUid: UInt64) throws {
        guard let schema = schemasByUid[entityUid], !schema.isEmbedded else { return }
        for globalId in globalIds {
            guard let id = try context.localId(of: globalId, in: schema, reserve: false),
                  pending[PendingChanges.Key(entity: schema.id.id, id: id)] == nil else { continue }
            if try context.removeObject(schema, id: id, leaving: true) { report.left += 1 }
        }
    }

    mutating func apply(_ change: ReplicaChange) throws {
        // An entity this store's model does not have (a newer app's): not for this store.
        guard let schema = schemasByUid[change.entityUid], !schema.isEmbedded else { report.unchanged += 1; return }
        let layout = self.layout(schema)
        let entity = layout.entity
        for clock in change.values.compactMap(\.clock) + change.relations.compactMap(\.clock) + [change.removed].compactMap({ $0 }) {
            newest = max(newest, clock.timestamp)
        }
        let local = try context.localId(of: change.globalId, in: schema, reserve: change.removed == nil)
        let mine = local.flatMap { pending[PendingChanges.Key(entity: schema.id.id, id: $0)] }
        if let removal = change.removed {
            guard let id = local else { report.unchanged += 1; return }
            if !removalsWin, let mine, let newestMine = (Array(mine.properties.values) + Array(mine.relations.values)).max(), newestMine > removal {
                report.unchanged += 1
                return
            }
            if try context.removeObject(schema, id: id) { report.applied += 1 } else { report.unchanged += 1 }
            return
        }
        let id = local!
        // Removed here, and the removal is not on the replica yet: it will be.
        if mine?.removed != nil { report.unchanged += 1; return }
        let written = try change.values.contains(where: \.value.isJSON)
            ? writeThroughJSON(change, mine: mine, schema: schema, entity: entity, id: id)
            : write(change, mine: mine, schema: schema, layout: layout, id: id)
        var applied = false
        if written {
            do {
                try context.putIndexed(schema, id: id, record: builder.finished, tree: try context.writeTree(schema), isNew: false)
                try context.withSequence(schema) { $0.noteAssigned(id) }
                context.changeLog?.note(schema, id)
                applied = true
            } catch let error as CellarError where error.code == .uniqueViolation {
                report.refused.append("\(schema.name) \(change.globalId): \(error.message)")
                return
            }
        }
        for links in change.relations {
            guard let relation = entity.relations.first(where: { $0.id.uid == links.uid }),
                  let target = store.schemasById[relation.targetId.id] else { continue }
            if Self.mineStands(mine?.relations[relation.id.id], against: links.clock) { continue }
            let wanted = try links.targets.map { try context.localId(of: $0, in: target, reserve: true)! }
            let current = try context.pairedIds(id, in: StorageLayout.relationTree(relation.id.id))
            let wantedSet = Set(wanted), currentSet = Set(current)
            for gone in current where !wantedSet.contains(gone) {
                try context.setLink(id, gone, link: .relation(relation.id.id), linked: false, targetSchema: target)
                applied = true
            }
            for new in wanted where !currentSet.contains(new) {
                try context.setLink(id, new, link: .relation(relation.id.id), linked: true, targetSchema: target)
                applied = true
            }
        }
        if applied { report.applied += 1 } else { report.unchanged += 1 }
    }

    /// Builds in `builder` the record of object `id` with the values of `change` the store
    /// takes (not those it changed later itself); false when no field changes (compared byte for
    /// byte with the stored record). The fields it does not take are copied from the stored
    /// record as they are.
    private func write(_ change: ReplicaChange, mine: PendingChanges.Object?, schema: EntitySchema, layout: ReplicaLayout,
                       id: Id) throws -> Bool {
        // The values taken, written first into a record of their own (`taken`), in the
        // record's encoding, to be compared with the stored fields.
        let (builder, taken, context) = (self.builder, self.taken, self.context)
        taken.start(slotCount: layout.types.count)
        var takenSlots: [Int] = []
        takenSlots.reserveCapacity(change.values.count)
        for value in change.values {
            guard let index = layout.properties[value.uid] else { continue }
            let propertyId = layout.entity.properties[index].id.id
            if Self.mineStands(mine?.properties[propertyId], against: value.clock) { continue }
            try coding.write(value.value, of: layout.entity.properties[index], into: taken) {
                try relationTarget($0, $1, of: layout.entity)
            }
            takenSlots.append(Int(propertyId) - 1)
        }
        return try context.withRecord(schema, id) { stored in
            let values = try RecordReader(taken.finished)
            let old = try stored.map { try RecordReader($0) }
            if let old {
                let differs = try takenSlots.contains { slot in
                    let type = layout.types[slot]!
                    let (was, now) = (try old.fieldBytes(slot, of: type), try values.fieldBytes(slot, of: type))
                    guard let was, let now else { return (was == nil) != (now == nil) }
                    return was.count != now.count || (was.count > 0 && memcmp(was.baseAddress!, now.baseAddress!, was.count) != 0)
                }
                guard differs else { return false }
            }
            builder.start(slotCount: layout.types.count)
            for (slot, type) in layout.types.enumerated() {
                guard let type, slot != layout.idSlot else { continue }
                if takenSlots.contains(slot) {
                    try builder.copyField(slot, of: type, from: values)
                } else if let old {
                    try builder.copyField(slot, of: type, from: old)
                }
            }
            return true
        }
    }

    /// `write(_:mine:schema:layout:id:)` through the objects' JSON form, for changes with a
    /// `.json` value (collections, flex values, geo points, embedded objects).
    private mutating func writeThroughJSON(_ change: ReplicaChange, mine: PendingChanges.Object?, schema: EntitySchema,
                                           entity: ModelEntity, id: Id) throws -> Bool {
        let mapping = try self.mapping(schema, entity)
        let (store, coding, builder) = (self.store, self.coding, self.builder)
        return try context.withRecord(schema, id) { old in
            var members: [JSONMember]
            if let old {
                members = try ObjectDump.properties(of: RecordReader(old), entity: entity, model: store.model, style: .exact)
            } else {
                members = []
            }
            var changed = old == nil
            for value in change.values {
                guard let property = entity.properties.first(where: { $0.id.uid == value.uid }), !property.flags.contains(.id) else { continue }
                if Self.mineStands(mine?.properties[property.id.id], against: value.clock) { continue }
                let json = try coding.json(value.value, of: property) { try relationTarget($0, $1, of: entity) }
                if let index = members.firstIndex(where: { $0.name == property.name }) {
                    if members[index].value != json { members[index].value = json; changed = true }
                } else {
                    members.append(JSONMember(property.name, json))
                    changed = true
                }
            }
            guard changed else { return false }
            try ObjectRecordEncoder.write(members, mapping, into: builder)
            return true
        }
    }

    private mutating func layout(_ schema: EntitySchema) -> ReplicaLayout {
        if let layout = layouts[schema.id.id] { return layout }
        let layout = ReplicaLayout(store.model.entities[schema.index])
        layouts[schema.id.id] = layout
        return layout
    }

    private mutating func mapping(_ schema: EntitySchema, _ entity: ModelEntity) throws -> ImportMapping {
        if let mapping = mappings[schema.id.id] { return mapping }
        let mapping = try ImportMapping(file: entity, in: store.model, store: entity, in: store.model)
        mappings[schema.id.id] = mapping
        return mapping
    }
}
