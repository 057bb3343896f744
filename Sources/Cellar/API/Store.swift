import CellarStorage
import Dispatch
import Foundation

/// A database: a directory holding the data file, opened with the model the code was generated
/// from. Thread-safe; open it once and share it. Get a `Box` per entity type to store objects.
///
/// ```swift
/// let store = try Store(directoryPath: "notes-db", model: cellarModel())
/// let notes = store.box(for: Note.self)
/// try notes.put(Note(title: "Shopping"))
/// ```
///
/// A `directoryPath` starting with `memory:` (`"memory:cache"`) opens a store that lives in
/// memory only: every such ``Store`` is new, empty and private, and is gone when it closes.
public final class Store: @unchecked Sendable {
    // Thread safety: everything is immutable after init except `writeBuilder` and
    // `savedSequences`, which only the thread holding the engine's write transaction uses (until
    // that transaction ends: `savedSequences` is written by the commit's `beforeRelease`).
    // `historyClock` is set only by tests, before they write.
    /// The prefix of `directoryPath` that asks for an in-memory store.
    public static let inMemoryPrefix = "memory:"

    /// The directory the store was opened at (or the in-memory name, starting with
    /// ``inMemoryPrefix``).
    public let directoryPath: String
    /// The model in use: the code's, with the database's history (last IDs, retired UIDs).
    public let model: Model
    /// What opening changed in the database's model (empty when it matched the code's).
    public let modelChanges: [ModelChange]
    @usableFromInline let engine: StorageEngine
    let schemas: [UInt64: EntitySchema]
    /// The entities by ID.
    let schemasById: [UInt32: EntitySchema]
    /// The embedded types by name (they have schemas, but no trees or boxes).
    let embeddedSchemas: [String: EntitySchema]
    /// The number of indexes of all entities (see `IndexSchema.ordinal`).
    let indexCount: Int
    @usableFromInline let writeBuilder = RecordBuilder()
    let entityCount: Int
    /// Each entity's id sequence as of the commit that wrote it, kept between write transactions
    /// so that a small transaction need not look it up again (see `TransactionContext`). Only the
    /// thread holding the engine's write transaction touches it: it is written once the commit's
    /// frame is written (in `.full` durability before its sync) but before the transaction ends
    /// (`WriteTransaction.commit(beforeRelease:)`), and the engine's writer lock orders that
    /// before the next write transaction's reads.
    let savedSequences: UnsafeMutablePointer<(txnId: UInt64, sequence: IdSequence)?>
    /// The store's UUID, made when its file was created and kept for its life (through reopen and
    /// compaction). Every `PersistentIdentifier` of its objects carries it.
    public let uuid: UUID
    /// Who is told about commits (see `Box.changes()`, `Query.changes()`).
    let observers: ChangeObservers
    /// Whether the store records its change history (``StoreOptions/changeHistory``, or because
    /// it did once: see ``history(since:limit:)``).
    public let recordsHistory: Bool
    /// The source entity of each standalone relation, by relation ID (for the history).
    let relationSources: [UInt32: EntitySchema]
    /// The wall clock the history's timestamps start from, in milliseconds since 1970 (tests set
    /// another before writing).
    var historyClock: @Sendable () -> UInt64 = HybridClock.wallMilliseconds
    /// Updates the live queries (`liveQuery`).
    let liveQueries: LiveQueryHub
    /// With several writing processes (``StoreOptions/sharedWriting``): what a write transaction
    /// checks when it starts on another process's commit; nil otherwise.
    let sharedWriters: SharedWriters?
    /// How many undo steps the store keeps (``StoreOptions/undoDepth``).
    let undoDepth: Int
    /// Whether an undoable write keeps a step that names its commits (``CommitStep``) rather
    /// than one with values: not among several writing processes, where another process's
    /// commit may come between a write's base and its own.
    let undoStepsNameCommits: Bool
    /// Where each named write registers an undo action (``registerUndoActions(with:onError:)``).
    let undoRegistration = Locked<UndoRegistration?>(nil)
    /// The in-memory graphs of the HNSW indexes (see `VectorIndex`), with their images in the
    /// store's directory (see HNSWImage.swift).
    let vectorIndexes: VectorIndexes
    /// Bytes the HNSW graphs loaded so far keep in memory for their vectors and neighbour lists
    /// (benchmarks).
    @_spi(Testing) public var vectorIndexResidentBytes: Int { vectorIndexes.residentBytes }
    private let writeQueue = DispatchQueue(label: "cellar.store.write")
    private let readQueue = DispatchQueue(label: "cellar.store.read", attributes: .concurrent)

    /// Opens (or creates) the database in `directoryPath` and syncs its stored model with `model`
    /// (by UID: additions, renames, retirements; see `docs/model.md`). Throws ``CellarError/Code/schema``
    /// when the two cannot be synced, naming what conflicts and what to do.
    public init(directoryPath: String, model: Model, options: StoreOptions = StoreOptions()) throws {
        self.directoryPath = directoryPath
        let inMemory = directoryPath.hasPrefix(Self.inMemoryPrefix)
        guard !directoryPath.isEmpty, !(inMemory && options.readOnly) else {
            throw CellarError.illegalArgument(directoryPath.isEmpty ? "the directory path is empty" : "an in-memory store cannot be read-only: it starts empty")
        }
        let engine = try translatingErrors {
            var storageOptions = Store.storageOptions(options, inMemory: inMemory)
            storageOptions.deferCompactionAtOpen = true  // below, once the rewrites are set
            return try StorageEngine(directory: directoryPath, options: storageOptions)
        }
        let sync: ModelSync.Result
        let stored: Model?
        let versions: VersionPlan
        do {
            stored = try Store.storedModel(engine)
            versions = try Store.versionPlan(engine, hasModel: stored != nil, options: options, path: directoryPath)
            sync = try ModelSync.sync(code: model, stored: stored, migrating: versions.migrating && options.migration != nil)
            // A migration syncs the model in its own transaction, once the store is set up (below).
            if !versions.migrating && (stored != sync.model || versions.write != nil) {
                guard !options.readOnly else {
                    throw CellarError.schema(stored == nil
                        ? "the database at \(directoryPath) has no model yet; open it writable once to create it"
                        : "the database's model differs from the code's (\(sync.changes.first.map { "\($0)" } ?? "IDs or flags")); open it writable once to sync it")
                }
                try translatingErrors {
                    try engine.write { txn in
                        try Store.apply(sync, to: txn)
                        if let version = versions.write { try Store.writeSchemaVersion(version, in: txn) }
                    }
                }
            }
            recordsHistory = try translatingErrors {
                try Store.startHistory(engine, wanted: options.changeHistory, readOnly: options.readOnly)
            }
        } catch {
            engine.close()
            throw error
        }
        self.engine = engine
        vectorIndexes = VectorIndexes(imageFolder: inMemory ? nil : directoryPath, writesImages: !options.readOnly)
        self.model = sync.model
        self.modelChanges = sync.changes
        self.observers = ChangeObservers(model: sync.model)
        liveQueries = LiveQueryHub(observers: observers, entities: Set(sync.model.entities.map(\.id.id)))
        Store.tellObservers(observers, ofOtherProcessesIn: engine)
        self.uuid = engine.uuid.foundationUUID
        let entitySchemas = Store.schemas(of: sync.model)
        schemas = Dictionary(entitySchemas.map { ($0.id.uid, $0) }, uniquingKeysWith: { a, _ in a })
        schemasById = Dictionary(entitySchemas.map { ($0.id.id, $0) }, uniquingKeysWith: { a, _ in a })
        embeddedSchemas = Dictionary(entitySchemas.filter(\.isEmbedded).map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        indexCount = entitySchemas.reduce(0) { $0 + $1.indexed.count + $1.compoundIndexes.count }
        relationSources = Dictionary(entitySchemas.flatMap { schema in schema.relations.map { ($0.id.id, schema) } },
                                     uniquingKeysWith: { a, _ in a })
        entityCount = sync.model.entities.count
        savedSequences = .allocate(capacity: max(entityCount, 1))
        savedSequences.initialize(repeating: nil, count: max(entityCount, 1))
        sharedWriters = options.sharedWriting && !inMemory && !options.readOnly ? SharedWriters() : nil
        undoDepth = options.undoDepth
        undoStepsNameCommits = sharedWriters == nil
        if versions.migrating, let stored, let version = options.schemaVersion {
            try migrate(from: stored, sync: sync, plan: versions, to: version, code: options.migration)
        }
        try reconcileIndexes(readOnly: options.readOnly)
        try sharedWriters?.opened(engine)
        if !options.readOnly {
            // With several writing processes another one may store a newer model, whose
            // properties this one's would take for retired: compaction keeps every field then.
            let retired = sharedWriters == nil ? Self.retiredFieldDropping(sync.model) : nil
            // Undo steps that name their commits get their values before the copy drops those.
            engine.setCompactionRewrites { [weak self] tree in
                tree == UndoLog.tree ? self.map(UndoLog.compactionRewrite) : retired?(tree)
            }
            // A log that is mostly garbage is compacted before the store is handed out (see
            // `AutomaticCompaction.atOpen`).
            engine.compactAtOpenIfDue()
        }
    }

    /// The engine's options for a store opened with `options`.
    static func storageOptions(_ options: StoreOptions, inMemory: Bool = false) -> StorageOptions {
        var storageOptions = StorageOptions(durability: options.durability, readOnly: options.readOnly,
                                            inMemory: inMemory, fileMode: options.fileMode)
        storageOptions.automaticCompaction = options.automaticCompaction
        storageOptions.pastRetention = options.pastRetention
        storageOptions.compression = options.compression
        storageOptions.compressionThreshold = options.compressionThreshold
        storageOptions.lockWaitTimeout = options.lockWaitTimeout
        storageOptions.sharedWriting = options.sharedWriting
        storageOptions.transactionMemoryBudget = options.transactionMemoryBudget
        storageOptions.encryptionKey = options.encryptionKey
        storageOptions.decryptedCacheSize = options.decryptedCacheSize
        return storageOptions
    }

    /// The model stored in the store in `directoryPath` (created, empty, when there is none);
    /// nil when it holds none yet. Opens and closes the engine.
    static func storedModel(at directoryPath: String, options: StoreOptions) throws -> Model? {
        let engine = try translatingErrors { try StorageEngine(directory: directoryPath, options: storageOptions(options)) }
        defer { engine.close() }
        return try storedModel(engine)
    }

    /// How compaction rewrites object records: without the fields of retired properties (their
    /// slots absent from `model`'s entities). Trees of entities without such fields are copied
    /// record by record as they are; the check costs one pass over each record's slot table.
    private static func retiredFieldDropping(_ model: Model) -> CompactionRewrites {
        let types = Dictionary(model.entities.map { (StorageLayout.entityTree($0.id.id), $0.typesBySlot) },
                               uniquingKeysWith: { a, _ in a })
        return { tree in
            guard let slots = types[tree] else { return nil }
            let builder = RecordBuilder()  // one per tree; compaction copies a tree on one thread
            return { record in try RecordReader(record).withoutRetiredFields(slots, into: builder) }
        }
    }

    /// Has `observers` told of the commits other processes make (a store among several writing
    /// processes, or read-only), as of this process's own: each move of the engine's readers to
    /// newer commits is recorded for the live queries before a reader can see it (with the trees
    /// that changed, not the objects: they update from a fresh query), and signalled once they can.
    private static func tellObservers(_ observers: ChangeObservers, ofOtherProcessesIn engine: StorageEngine) {
        engine.watchOtherProcesses { from, to in
            observers.publishing(txnId: to.transactionId)
            guard !observers.isEmpty else { return nil }
            // Unknown (a catalog that does not read): every entity.
            let changed = try? to.changedTrees(since: from)
            observers.record(txnId: to.transactionId, changedTrees: changed, changes: nil)
            return { observers.committed(changedTrees: changed, changes: nil) }
        }
    }

    /// Whether the HNSW graphs' images are read and written: an on-disk store that is not
    /// encrypted (an image holds the vectors in the clear).
    var usesVectorImages: Bool { vectorIndexes.imageFolder != nil && !engine.isEncrypted }

    /// Writes the images of the graphs in memory that changed since they were read or written
    /// (once the store is closed: no write transaction can change a graph any more).
    private func saveVectorImages() {
        guard usesVectorImages else { return }
        vectorIndexes.saveImages()
    }

    deinit {
        engine.close()
        saveVectorImages()
        savedSequences.deinitialize(count: max(entityCount, 1))
        savedSequences.deallocate()
    }

    /// Closes the database: waits for a running write transaction, syncs, releases the lock.
    /// Later calls on it (and its boxes) throw `CellarError.storeClosed`. Idempotent.
    /// Change streams (`changes()`) end; observations (`observe(on:)`) are no longer called.
    public func close() {
        observers.finishAll()
        engine.close()
        saveVectorImages()
    }

    /// The box that stores objects of `type`.
    public func box<E: EntityInspectable>(for type: E.Type = E.self) -> Box<E> {
        let binding = E.entityBinding
        let schema = schemas[binding.entityId.uid]
        let problem: String
        if let schema {
            if schema.id.id == binding.entityId.id && binding.slotCount <= schema.slotCount {
                return Box(store: self, binding: binding, schema: .success(schema))
            }
            problem = schema.id.id != binding.entityId.id
                ? "entity \(binding.entityName) has ID \(binding.entityId.id) in its binding but \(schema.id.id) in the store's model; the bindings and the model come from different generator runs — run the generator again"
                : "the binding of entity \(binding.entityName) writes \(binding.slotCount) slots, but its lastPropertyId in the store's model is \(schema.slotCount); the bindings and the model come from different generator runs — run the generator again"
        } else {
            problem = "entity \(binding.entityName) (UID \(binding.entityId.uid)) is not in the model this store was opened with; pass the model generated with it (run the generator)"
        }
        return Box(store: self, binding: binding, schema: .failure(CellarError.schema(problem)))
    }

    // MARK: Transactions

    /// Runs `body` in a write transaction and commits it when `body` returns; when it throws,
    /// nothing it did is kept and the error is rethrown.
    ///
    /// Box calls inside `body` (on this thread) are part of the transaction. A transaction started
    /// inside another on the same thread joins the outer one; if the inner one throws, the outer
    /// one rolls back as a whole (and rethrows that error) even when its closure catches it.
    /// Inside a read-only transaction this throws `CellarError.cannotWriteWhileReading`.
    @discardableResult
    public func runInTransaction<T>(_ body: () throws -> T) throws -> T {
        try inWriteContext { _ in try body() }
    }

    /// Runs `body` in a read-only transaction: every read inside sees the same snapshot of the
    /// database, unaffected by commits made meanwhile. Inside a write transaction it joins it.
    @discardableResult
    public func runInReadOnlyTransaction<T>(_ body: () throws -> T) throws -> T {
        try inReadContext { _ in try body() }
    }

    /// `runInTransaction` off the caller's task, on a queue of the store.
    public func write<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            writeQueue.async { continuation.resume(with: Result { try self.runInTransaction(body) }) }
        }
    }

    /// `runInReadOnlyTransaction` off the caller's task, on a queue of the store.
    public func read<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            readQueue.async { continuation.resume(with: Result { try self.runInReadOnlyTransaction(body) }) }
        }
    }

    /// Runs `body` in this thread's write transaction of this store, or in a new one.
    @usableFromInline
    func inWriteContext<T>(_ body: (TransactionContext) throws -> T) throws -> T {
        if let context = ThreadTransactions.current(for: self) {
            guard context.isWrite else { throw CellarError.cannotWriteWhileReading }
            do {
                return try body(context)
            } catch {
                let error = CellarError.wrap(error)
                if context.failure == nil { context.failure = error }
                throw error
            }
        }
        let txn = try translatingErrors { try engine.beginWrite() }
        if let sharedWriters {
            do {
                try sharedWriters.check(txn, recordsHistory: recordsHistory)
            } catch {
                txn.abort()
                throw CellarError.wrap(error)
            }
        }
        let context = TransactionContext(store: self, write: txn)
        // Observers that need the changed objects (live queries): recorded as the body writes.
        if observers.wantsIds { context.changeLog = ChangeLog() }
        if recordsHistory { context.history = HistoryRecorder() }
        ThreadTransactions.push(context)
        defer { ThreadTransactions.pop(context) }
        do {
            let result = try body(context)
            if let failure = context.failure { throw failure }
            var changedTrees: Set<String>?
            try translatingErrors {
                try context.prepareCommit()
                // What observers need, collected only when there are any (it ends with the commit).
                if !observers.isEmpty { changedTrees = txn.changedTreeNames }
                // The sequences are saved before the engine lets the next writer begin: it reads
                // them (`loadSequence`), and must see them whole.
                try txn.commit(beforePublish: { txnId in
                    // Live queries learn what the commit changed before a reader can see it (in
                    // `.full` durability possibly on the thread that synced this commit's group,
                    // while this one waits).
                    observers.publishing(txnId: txnId)
                    if changedTrees != nil || !observers.isEmpty {
                        observers.record(txnId: txnId, changedTrees: changedTrees, changes: context.changeLog?.committed)
                    }
                    observers.recordHook?()
                }, beforeRelease: {
                    context.saveSequences()
                    context.committedVectors()
                    sharedWriters?.committed(txn)
                })
            }
            // Looked at again after the commit: an observer that registered meanwhile may have
            // read its first value before this commit was visible.
            if changedTrees != nil || !observers.isEmpty {
                observers.committed(changedTrees: changedTrees, changes: context.changeLog?.committed)
            }
            return result
        } catch {
            txn.abort()
            context.undo()
            throw CellarError.wrap(error)
        }
    }

    /// Runs `body` in this thread's transaction of this store, or in a new read-only one.
    @usableFromInline
    func inReadContext<T>(_ body: (TransactionContext) throws -> T) throws -> T {
        if let context = ThreadTransactions.current(for: self) { return try body(context) }
        let txn = try translatingErrors { try engine.beginRead() }
        let context = TransactionContext(store: self, read: txn)
        ThreadTransactions.push(context)
        defer { ThreadTransactions.pop(context) }
        return try translatingErrors { try body(context) }
    }

    // MARK: Compaction

    /// Compacts the database now: copies its live objects into a new file that replaces the old
    /// one, while other threads go on reading (never blocked) and writing (blocked only for the
    /// last catch-up and the swap; the report says how long). Returns what it did. Everything is
    /// kept: objects and their IDs, ID sequences, indexes, relations, the model, the store's UUID
    /// (identifiers stay valid). A store also compacts itself (``StoreOptions/automaticCompaction``).
    ///
    /// Throws `readOnly` for a read-only store, `illegalArgument` for an in-memory one or inside a
    /// transaction on this thread (compaction would wait for it forever), `storeClosed` when the
    /// store closes meanwhile, and I/O errors (no space, say): the database is then as it was.
    @discardableResult
    public func compact() throws -> CompactionReport {
        guard ThreadTransactions.current(for: self) == nil else {
            throw CellarError.illegalArgument("compact() cannot run inside a transaction: it would wait for that transaction to end")
        }
        return try translatingErrors { try engine.compact() }
    }

    /// Compacts the store (as `compact()`) into a file encrypted with `newKey`, or a plain one
    /// when `newKey` is nil: how the key is changed, and encryption added or removed (see
    /// ``StoreOptions/encryptionKey``). Crash-safe like every compaction: after a crash the store
    /// opens with the old key or the new one, whole. Once it returns, opening the store needs the
    /// new key.
    @discardableResult
    public func compact(newKey: EncryptionKey?) throws -> CompactionReport {
        guard ThreadTransactions.current(for: self) == nil else {
            throw CellarError.illegalArgument("compact(newKey:) cannot run inside a transaction: it would wait for that transaction to end")
        }
        let report = try translatingErrors { try engine.compact(newKey: newKey) }
        if newKey != nil { vectorIndexes.removeImages() }
        return report
    }

    /// `compact()` off the caller's task, on a utility-QoS queue.
    @discardableResult
    public func compact() async throws -> CompactionReport {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .utility).async {
                continuation.resume(with: Result { try self.compact() })
            }
        }
    }

    /// Bytes of the data file in use, and of the records the newest commit reaches (the rest is
    /// what compaction reclaims).
    public var fileSize: (total: UInt64, live: UInt64) { (engine.fileSize, engine.liveBytes) }

    // MARK: The stored model

    private static func storedModel(_ engine: StorageEngine) throws -> Model? {
        try translatingErrors {
            try engine.read { try StorageLayout.storedModel(in: $0) }
        }
    }

    /// The schema of each entity of `model`, in the model's order.
    static func schemas(of model: Model) -> [EntitySchema] {
        var ordinals: [UInt32: Int] = [:]
        for entity in model.entities {
            for property in entity.properties {
                if let index = property.indexId, !index.isZero, !property.flags.contains(.id) {
                    ordinals[index.id] = ordinals.count
                }
            }
            for index in entity.indexes { ordinals[index.id.id] = ordinals.count }
        }
        let relations = model.entities.flatMap(\.relations)
        let deleteActions = DeleteAction.actions(of: model)
        return model.entities.enumerated().map { position, entity in
            EntitySchema(entity, index: position, indexOrdinals: ordinals,
                         incomingRelations: relations.filter { $0.targetId.id == entity.id.id },
                         embeddedIndexes: entity.isEmbedded ? nil : EmbeddedIndexes(entity, model: model, indexOrdinals: ordinals),
                         deleteActions: deleteActions[entity.id.id] ?? [])
        }
    }

    static func apply(_ sync: ModelSync.Result, to txn: WriteTransaction) throws {
        let meta = try txn.tree(StorageLayout.metaTree, create: true)!
        for change in sync.changes {
            guard case .retireEntity(let entity) = change else { continue }
            try txn.dropTree(StorageLayout.entityTree(entity.id.id))
            try txn.delete(meta, key: StorageLayout.sequenceKey(entity.id.id))
        }
        try txn.put(meta, key: StorageLayout.modelKey, value: sync.model.jsonBytes())
    }
}
