import CellarStorage

/// Stores and reads the objects of one entity type. Get it from ``Store/box(for:)``; cheap to keep
/// or to get again, `Sendable`, usable from any thread.
///
/// Each call runs in the transaction open on the calling thread (see ``Store/runInTransaction(_:)``), or
/// in a transaction of its own: a put of many objects is one transaction.
public struct Box<E: EntityInspectable>: Sendable {
    /// The store the box reads from and writes to.
    public let store: Store
    @usableFromInline let binding: E.EntityBindingType
    /// The entity in the store's model, or why the store cannot serve it.
    @usableFromInline let schema: Result<EntitySchema, CellarError>

    init(store: Store, binding: E.EntityBindingType, schema: Result<EntitySchema, CellarError>) {
        self.store = store
        self.binding = binding
        self.schema = schema
    }

    // MARK: Put

    /// Stores `entity` and returns its id. An id of 0 inserts a new object and writes the id it
    /// got into `entity` (into a class instance; use `put(_:mode:)` with `inout` for a struct).
    /// If the transaction later rolls back, the id written into a class instance goes back to 0.
    ///
    /// - `.put`: insert or replace; a non-zero id that `put` never handed out is refused unless
    ///   the entity's ids are assignable (`// cellar: id = { "assignable": true }`).
    /// - `.insert`: throws ``CellarError/Code/idAlreadyExists`` when the id is stored already.
    /// - `.update`: throws ``CellarError/Code/notFound`` when it is not.
    @discardableResult
    @inlinable
    public func put(_ entity: E, mode: PutMode = .put) throws -> EntityId<E> {
        let schema = try self.schema.get()
        return try store.inWriteContext { context in
            var entity = entity
            return EntityId(try put(reading: &entity, mode: mode, into: PutTarget(schema, context)))
        }
    }

    /// Stores `entity` and sets its id (for structs as well as classes).
    @discardableResult
    @inlinable
    public func put(_ entity: inout E, mode: PutMode = .put) throws -> EntityId<E> {
        let schema = try self.schema.get()
        return try store.inWriteContext { context in
            EntityId(try put(&entity, mode: mode, into: PutTarget(schema, context)))
        }
    }

    /// Stores all of `entities` in one transaction (all or none) and returns their ids in order.
    @discardableResult
    @inlinable
    public func put(_ entities: [E], mode: PutMode = .put) throws -> [EntityId<E>] {
        let schema = try self.schema.get()
        return try store.inWriteContext { context in
            let target = try PutTarget(schema, context)
            var ids: [EntityId<E>] = []
            ids.reserveCapacity(entities.count)
            // Each element is read through an inout access to it in place: the compiler then
            // knows nothing else changes it during the put and borrows its fields, where a plain
            // read copies the object (retaining and releasing each of its strings, a cache miss
            // each on a large batch). Nothing is written through it: this overload sets no ids
            // into structs (see `put(reading:)`).
            try entities.withUnsafeBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                let elements = UnsafeMutablePointer(mutating: base)
                for index in 0..<buffer.count {
                    ids.append(EntityId(try put(reading: &elements[index], mode: mode, into: target)))
                }
            }
            return ids
        }
    }

    /// Stores all of `entities` in one transaction and sets their ids (structs as well as classes).
    @discardableResult
    @inlinable
    public func put(_ entities: inout [E], mode: PutMode = .put) throws -> [EntityId<E>] {
        let schema = try self.schema.get()
        return try store.inWriteContext { context in
            let target = try PutTarget(schema, context)
            var ids: [EntityId<E>] = []
            ids.reserveCapacity(entities.count)
            for index in entities.indices {
                ids.append(EntityId(try put(&entities[index], mode: mode, into: target)))
            }
            return ids
        }
    }

    /// Puts `entity` and sets its id when it got one.
    @inlinable
    func put(_ entity: inout E, mode: PutMode, into target: PutTarget) throws -> Id {
        let (id, isNew) = try write(entity, mode: mode, into: target)
        if isNew { assign(id, to: &entity, context: target.context) }
        return id
    }

    /// Puts `entity`, which it only reads: it is `inout` so that its fields are borrowed where
    /// they are, not copied. A new id goes into it only when it is a class instance (a struct
    /// passed by value keeps its id 0: its caller holds another copy).
    @inlinable
    func put(reading entity: inout E, mode: PutMode, into target: PutTarget) throws -> Id {
        let (id, isNew) = try write(entity, mode: mode, into: target)
        if isNew && E.self is AnyClass {
            var object = entity
            assign(id, to: &object, context: target.context)
        }
        return id
    }

    /// Writes `entity`'s record under its id, or under the next id when it has none.
    @inlinable
    func write(_ entity: E, mode: PutMode, into target: PutTarget) throws -> (id: Id, isNew: Bool) {
        let (schema, context) = (target.schema, target.context)
        if let primaryKey = schema.primaryKey { return try writeKeyed(entity, mode: mode, primaryKey: primaryKey, into: target) }
        var id = binding.id(of: entity)
        let isNew = id == 0
        if isNew {
            guard mode != .update else { throw CellarError.notFound(entity: schema.name, id: 0) }
            id = try context.withSequence(schema) { try $0.take() }
        } else {
            if mode != .put {
                let exists = try context.contains(schema, id)
                if mode == .insert && exists { throw CellarError.idAlreadyExists(entity: schema.name, id: id) }
                if mode == .update && !exists { throw CellarError.notFound(entity: schema.name, id: id) }
            }
            try context.noteGivenId(id, of: schema)
        }
        let record = target.record
        record.start(slotCount: binding.slotCount)
        try binding.write(entity, to: record)
        try store(entity, id: id, isNew: isNew, into: target)
        return (id, isNew)
    }

    /// Stores the record `target.record` holds for `entity` as object `id` (`isNew`: an id just
    /// handed out, with no record to replace), with its index entries and relations.
    @inlinable
    func store(_ entity: E, id: Id, isNew: Bool, into target: PutTarget, uniqueChecked: UInt32? = nil,
               indexesUnchanged: Bool = false) throws {
        let (schema, context, record) = (target.schema, target.context, target.record)
        context.changeLog?.note(schema, id)
        if schema.hasIndexes && !indexesUnchanged {
            // (It records the put in the change history, from the old record it looks up.)
            try context.putIndexed(schema, id: id, record: record.finished, tree: target.tree, isNew: isNew, uniqueChecked: uniqueChecked)
        } else {
            try context.historyUnretained?._withUnsafeGuaranteedRef {
                try $0.notePut(schema, id: id, isNew: isNew, record: record.finished, context: context)
            }
            try StorageLayout.withObjectKey(id) { try target.txn.put(target.tree, key: $0, value: record.finished) }
        }
        if binding.hasRelations {
            try binding.writeRelations(of: entity, id: id, in: RelationWriter(context: context))
            binding.attach(entity, id: id, store: store)
        }
    }

    /// Sets a new id into `entity`; a class instance gets 0 back if the transaction rolls back.
    @inlinable
    func assign(_ id: Id, to entity: inout E, context: TransactionContext) {
        binding.setId(id, of: &entity)
        if E.self is AnyClass {
            let binding = self.binding
            var object = entity
            context.undoIds.append { binding.setId(0, of: &object) }
        }
    }

    // MARK: Get

    /// The object with this id; nil when there is none.
    @inlinable
    public func get(_ id: Id) throws -> E? {
        let schema = try self.schema.get()
        if let context = ThreadTransactions.current(for: store) {
            return try translatingErrors { try get(id, schema: schema, context: context) }
        }
        // Outside a transaction: one snapshot for this read, without a transaction context.
        return try translatingErrors {
            let txn = try store.engine.beginRead()
            guard let tree = try txn.tree(schema.treeName) else { return nil }
            return try StorageLayout.withObjectKey(id) { key in
                try txn.withValue(tree, key: key) { bytes in try bytes.map { try object(id: id, record: $0) } }
            }
        }
    }

    /// Reads the object stored under `id` in place, without building it: `body` gets an
    /// `ObjectView` of its stored record (single properties, as `Query.visit` hands them out) and
    /// its result is returned; nil when there is no such object. The view is valid only inside
    /// `body`. ObjectBox's C API reads objects this way (`obx_box_get` hands out the stored bytes).
    ///
    /// ```swift
    /// let titleBytes = try box.visit(id: 42) { note in try note.utf8Count(Note.title) }
    /// ```
    @inlinable
    public func visit<R>(id: Id, _ body: (ObjectView<E>) throws -> R) throws -> R? {
        let schema = try self.schema.get()
        var view = ObjectView<E>(store: store)
        return try translatingErrors {
            try store.inReadContext { context in
                try context.withRecord(schema, id) { bytes in
                    guard let bytes else { return nil }
                    try view.move(to: id, bytes: bytes)
                    return try body(view)
                }
            }
        }
    }

    /// `visit(id:_:)` with a typed id.
    @_disfavoredOverload
    @inlinable
    public func visit<R>(id: EntityId<E>, _ body: (ObjectView<E>) throws -> R) throws -> R? {
        try visit(id: id.value, body)
    }

    /// Builds the object stored under `id` from its record bytes.
    @inlinable
    func object(id: Id, record bytes: UnsafeRawBufferPointer) throws -> E {
        let object = try binding.read(id: id, from: RecordReader(bytes, depth: 0))
        if binding.hasRelations { binding.attach(object, id: id, store: store) }
        return object
    }

    /// The object with this id; nil when there is none.
    @_disfavoredOverload
    @inlinable
    public func get(_ id: EntityId<E>) throws -> E? { try get(id.value) }

    /// The objects with these ids that exist, in the order of `ids`, read in one transaction.
    @inlinable
    public func get(_ ids: [Id]) throws -> [E] {
        let schema = try self.schema.get()
        return try store.inReadContext { context in
            var objects: [E] = []
            objects.reserveCapacity(ids.count)
            try context.forEachRecord(schema, ids: ids, stable: false) { id, record in
                objects.append(try object(id: id, record: record))
                return true
            }
            return objects
        }
    }

    /// The objects with these ids that exist, in the order of `ids`, read in one transaction.
    @_disfavoredOverload
    @inlinable
    public func get(_ ids: [EntityId<E>]) throws -> [E] { try get(ids.map(\.value)) }

    /// Every object, in id order.
    @inlinable
    public func all() throws -> [E] {
        let schema = try self.schema.get()
        return try store.inReadContext { context in
            guard let cursor = try context.cursor(schema) else { return [] }
            var objects: [E] = []
            objects.reserveCapacity(try context.count(schema))
            try cursor.scan { key, value in
                objects.append(try object(id: try StorageLayout.objectId(key), record: value))
                return true
            }
            return objects
        }
    }

    @inlinable
    func get(_ id: Id, schema: EntitySchema, context: TransactionContext) throws -> E? {
        try context.withRecord(schema, id) { bytes in try bytes.map { try object(id: id, record: $0) } }
    }

    // MARK: Count and contains

    /// The number of objects.
    @inlinable
    public func count() throws -> Int {
        let schema = try self.schema.get()
        return try store.inReadContext { try $0.count(schema) }
    }

    /// Whether there are no objects.
    @inlinable
    public func isEmpty() throws -> Bool { try count() == 0 }

    /// Whether an object with this id is stored.
    @inlinable
    public func contains(_ id: Id) throws -> Bool {
        let schema = try self.schema.get()
        return try store.inReadContext { try $0.contains(schema, id) }
    }

    /// Whether an object with this typed id is stored; the same as ``contains(_:)-(Id)``.
    @_disfavoredOverload
    @inlinable
    public func contains(_ id: EntityId<E>) throws -> Bool { try contains(id.value) }

    /// Whether objects with all these ids are stored (checked in one transaction).
    @inlinable
    public func contains(_ ids: [Id]) throws -> Bool {
        let schema = try self.schema.get()
        return try store.inReadContext { context in try ids.allSatisfy { try context.contains(schema, $0) } }
    }

    // MARK: Remove

    /// Removes the object with this id; false when there was none. Its id is never handed out again.
    @discardableResult
    @inlinable
    public func remove(_ id: Id) throws -> Bool {
        let schema = try self.schema.get()
        return try store.inWriteContext { context in try remove(id, schema: schema, context: context) }
    }

    /// Removes the object with this typed id; false when there was none.
    @_disfavoredOverload
    @discardableResult
    @inlinable
    public func remove(_ id: EntityId<E>) throws -> Bool { try remove(id.value) }

    /// Removes `entity` (by its id); false when it was not stored.
    @discardableResult
    @inlinable
    public func remove(_ entity: E) throws -> Bool { try remove(binding.id(of: entity)) }

    /// Removes the objects with these ids in one transaction; returns how many there were.
    @discardableResult
    @inlinable
    public func remove(_ ids: [Id]) throws -> Int {
        let schema = try self.schema.get()
        return try store.inWriteContext { context in
            try ids.reduce(0) { $0 + (try remove($1, schema: schema, context: context) ? 1 : 0) }
        }
    }

    /// Removes the objects with these typed ids in one transaction; returns how many there were.
    @_disfavoredOverload
    @discardableResult
    @inlinable
    public func remove(_ ids: [EntityId<E>]) throws -> Int { try remove(ids.map(\.value)) }

    /// Removes these objects (by their ids) in one transaction; returns how many were stored.
    @discardableResult
    @inlinable
    public func remove(_ entities: [E]) throws -> Int { try remove(entities.map { binding.id(of: $0) }) }

    /// Removes every object; returns how many there were. Their ids are never handed out again.
    @discardableResult
    @inlinable
    public func removeAll() throws -> Int {
        let schema = try self.schema.get()
        return try store.inWriteContext { try $0.removeAll(schema) }
    }

    @inlinable
    func remove(_ id: Id, schema: EntitySchema, context: TransactionContext) throws -> Bool {
        try context.removeObject(schema, id: id)
    }
}

/// What the puts of one Box call write into, looked up once per call.
@usableFromInline
struct PutTarget {
    @usableFromInline let schema: EntitySchema
    @usableFromInline let context: TransactionContext
    @usableFromInline let txn: WriteTransaction
    @usableFromInline let tree: Tree
    @usableFromInline let record: RecordBuilder

    @inlinable
    init(_ schema: EntitySchema, _ context: TransactionContext) throws {
        self.schema = schema
        self.context = context
        txn = context.write!
        tree = try context.writeTree(schema)
        record = context.store.writeBuilder
    }
}
