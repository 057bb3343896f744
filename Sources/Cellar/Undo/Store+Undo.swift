import CellarStorage
import Foundation

/// Undo and redo (`docs/undo.md`): a write the app names is kept as an undo step, in the same
/// commit, and ``Store/undo()`` and ``Store/redo()`` apply it backwards or forwards as new commits.
///
/// The steps live in the store (they survive closing it), in the tree `ud` by step number
/// (8 bytes, big-endian), with the log's state under `undo` in the meta tree: three
/// little-endian `u64`, the oldest step kept, the step ``Store/undo()`` undoes next (0: none),
/// and the last step ``Store/redo()`` can reach.
enum UndoLog {
    static let tree = "ud"
    static let stateKey: [UInt8] = Array("undo".utf8)

    struct State {
        var first: UInt64 = 1
        var top: UInt64 = 0
        var end: UInt64 = 0

        static func read(_ write: WriteTransaction) throws -> State {
            guard let meta = try write.tree(StorageLayout.metaTree, create: false) else { return State() }
            return try write.withValue(meta, key: stateKey) { try decode($0) }
        }

        static func read(_ read: ReadTransaction) throws -> State {
            guard let meta = try read.tree(StorageLayout.metaTree) else { return State() }
            return try read.withValue(meta, key: stateKey) { try decode($0) }
        }

        /// The state as stored; nil bytes: none kept yet.
        private static func decode(_ bytes: UnsafeRawBufferPointer?) throws -> State {
            guard let bytes else { return State() }
            guard bytes.count == 24 else { throw CellarError.fileCorrupt("the undo log's state has \(bytes.count) bytes, expected 24") }
            return State(first: bytes.loadLE(UInt64.self, at: 0), top: bytes.loadLE(UInt64.self, at: 8), end: bytes.loadLE(UInt64.self, at: 16))
        }

        func write(_ write: WriteTransaction) throws {
            var bytes: [UInt8] = []
            for value in [first, top, end] { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
            try write.put(try write.tree(StorageLayout.metaTree, create: true)!, key: stateKey, value: bytes)
        }
    }

    static func key(_ step: UInt64) -> [UInt8] { withUnsafeBytes(of: step.bigEndian) { Array($0) } }

    /// Step `number`, with its values: a step that names its commits (``CommitStep``) is made
    /// from them and kept so, in `context`'s write, so that undoing and redoing it again needs
    /// them no more.
    static func step(_ number: UInt64, in context: TransactionContext) throws -> UndoStep? {
        guard number > 0, let write = context.write, let tree = try write.tree(tree, create: false),
              var bytes = try write.get(tree, key: key(number)) else { return nil }
        if bytes.first == CommitStep.format {
            do {
                bytes = try bytes.withUnsafeBytes { try CommitStep.values(of: $0, store: context.store) }
            } catch let gone as CommitStep.CommitsGone {
                throw CellarError.illegalArgument(gone.message)
            }
            try write.put(tree, key: key(number), value: bytes)
        }
        return try UndoStep(bytes: bytes, schemas: context.store.schemas, schemasById: context.store.schemasById)
    }

    /// How a compaction or a copy rewrites the steps' tree (`StorageEngine.setCompactionRewrites`):
    /// a step that names its commits gets its values, made from `store`'s file, which still holds
    /// those commits, since the copy will not. One whose commits that file lost already (see
    /// ``CommitStep/values(of:store:)``) is copied as it is.
    static func compactionRewrite(_ store: Store) -> ValueRewrite {
        { [weak store] bytes in
            guard bytes.first == CommitStep.format, let store else { return nil }
            do {
                return try CommitStep.values(of: bytes, store: store)
            } catch is CommitStep.CommitsGone {
                return nil
            }
        }
    }

    /// The name of step `number` (read from its head alone); nil when there is none.
    static func name(_ number: UInt64, in read: ReadTransaction) throws -> String? {
        guard number > 0, let tree = try read.tree(tree) else { return nil }
        return try read.withValue(tree, key: key(number)) { bytes in try bytes.map { try UndoStep.head(of: $0).name } }
    }

    /// Keeps `step` as the newest undo step: the steps that could be redone are dropped (a new
    /// write starts a new branch), and the oldest beyond `depth`.
    static func push(_ step: UnsafeRawBufferPointer, depth: Int, in write: WriteTransaction) throws {
        var state = try State.read(write)
        let steps = try write.tree(tree, create: true)!
        if state.end > state.top {
            for number in (state.top + 1)...state.end { _ = try write.delete(steps, key: key(number)) }
        }
        state.top += 1
        state.end = state.top
        try key(state.top).withUnsafeBytes { try write.put(steps, key: $0, value: step) }
        while state.first + UInt64(max(depth, 0)) <= state.top {
            _ = try write.delete(steps, key: key(state.first))
            state.first += 1
        }
        try state.write(write)
    }
}

/// An ``Store/undoGroup(actionName:_:)`` running on this task or thread: the snapshot it began
/// on, and the objects its writes touched.
final class UndoGroup: @unchecked Sendable {
    // Unchecked: used by the thread (task) that runs the group only.
    @TaskLocal static var current: UndoGroup?

    let store: Store
    let base: ReadTransaction
    /// By entity ID and id: the standalone relations whose links of the object changed.
    private(set) var touched: [UndoStep.ObjectKey: Set<UInt32>] = [:]

    init(store: Store, base: ReadTransaction) {
        self.store = store
        self.base = base
    }

    /// Notes the objects a write's history recorded.
    func note(_ history: HistoryRecorder) {
        for event in history.events {
            let key = UndoStep.ObjectKey(entity: event.entity, id: event.id)
            touched[key, default: []].formUnion(event.kind == .relations ? history.listed(event) : [])
        }
    }
}

extension Store {
    /// Runs `body` in a write transaction, as ``runInTransaction(_:)`` does, and keeps what it
    /// changes as an undo step named `actionName` (in the same commit): ``undo()`` undoes it.
    /// A new undoable write drops the steps ``redo()`` could have redone. The store keeps the
    /// last ``StoreOptions/undoDepth`` steps.
    ///
    /// What a step holds: per object the write changed, the values of the properties it changed
    /// before and after it (all of them for an object it created or removed), and the links of
    /// its standalone relations before and after. Embedded objects, collections and flexible
    /// values are property values; indexes (full-text, geo, vectors, unique) follow the objects.
    /// A write that changed each object once keeps only the commit it began on and which objects
    /// it changed: the values are read from the log when the step is first undone, or before a
    /// compaction or a copy drops those commits (`docs/undo.md`).
    ///
    /// - Throws: ``CellarError/Code/illegalArgument`` inside another transaction (the step would
    ///   not know where the write began), or when the store does not record its change history
    ///   (``StoreOptions/changeHistory``: undo learns from it what a write changed); `body`'s
    ///   errors, after which nothing is kept.
    @discardableResult
    public func write<T>(actionName: String, _ body: () throws -> T) throws -> T {
        guard ThreadTransactions.current(for: self) == nil else {
            throw CellarError.illegalArgument("write(actionName: \"\(actionName)\"): an undoable write cannot run inside another transaction")
        }
        guard recordsHistory else {
            throw CellarError.illegalArgument("write(actionName: \"\(actionName)\"): undo needs the store's change history; open it with StoreOptions.changeHistory set")
        }
        let depth = undoDepth
        if let group = UndoGroup.current, group.store === self {
            // Inside `undoGroup`: the objects are noted for the group's step.
            return try inWriteContext { context in
                let result = try body()
                if context.failure == nil, let history = context.history { group.note(history) }
                return result
            }
        }
        var kept = false
        let namesCommits = undoStepsNameCommits
        let result = try inWriteContext { context in
            if !namesCommits { context.history?.undo = UndoCapture(name: actionName) }
            let result = try body()
            guard context.failure == nil else { return result }
            if namesCommits, let step = CommitStep.make(actionName, in: context) {
                if !step.isEmpty {
                    try step.withUnsafeBytes { try UndoLog.push($0, depth: depth, in: context.write!) }
                    kept = true
                }
                return result
            }
            try UndoStep.capture(actionName, in: context) {
                try UndoLog.push($0, depth: depth, in: context.write!)
                kept = true
            }
            return result
        }
        if kept { registerUndoAction(named: actionName) }
        return result
    }

    /// Runs `body`, whose undoable writes (``write(actionName:_:)`` on this store, on this
    /// thread) become one undo step named `actionName`: what a gesture that writes many times
    /// undoes at once. The step is kept in a commit of its own when `body` returns (or throws,
    /// for what it committed before), and holds, for every object those writes touched, what
    /// changed between the group's start and its end; the names the writes give are not kept.
    /// A write of another thread, or a write without an action name, that changes the same
    /// objects meanwhile is part of that difference. Groups do not nest.
    ///
    /// - Throws: ``CellarError/Code/illegalArgument`` inside a transaction or another group, or
    ///   without the store's change history; `body`'s errors.
    @discardableResult
    public func undoGroup<T>(actionName: String, _ body: () throws -> T) throws -> T {
        guard ThreadTransactions.current(for: self) == nil, UndoGroup.current == nil else {
            throw CellarError.illegalArgument("undoGroup(actionName: \"\(actionName)\"): a group cannot begin inside a transaction or another group")
        }
        guard recordsHistory else {
            throw CellarError.illegalArgument("undoGroup(actionName: \"\(actionName)\"): undo needs the store's change history; open it with StoreOptions.changeHistory set")
        }
        let group = UndoGroup(store: self, base: try translatingErrors { try engine.beginRead() })
        let result: Result<T, any Error> = UndoGroup.$current.withValue(group) { Result { try body() } }
        let depth = undoDepth
        var kept = false
        if !group.touched.isEmpty {
            try inWriteContext { context in
                let base = TransactionContext(store: self, read: group.base)
                try UndoStep.capture(actionName, objects: group.touched, from: base, in: context) {
                    try UndoLog.push($0, depth: depth, in: context.write!)
                    kept = true
                }
            }
        }
        if kept { registerUndoAction(named: actionName) }
        return try result.get()
    }

    /// Undoes the last undoable write not undone yet, as a new commit (an ordinary change: the
    /// change history records it, sync sends it). Per property, the value the write left is
    /// replaced by the one before it, when the object still holds it; a property changed since
    /// (by a later write, another writer, another device) keeps its newer value. An object the
    /// write created is removed; one it removed comes back with its values and links. Returns the
    /// action's name, or nil when there is nothing to undo.
    @discardableResult
    public func undo() throws -> String? {
        try moveInUndoLog(forward: false)
    }

    /// Does the last undone write again, as a new commit, by the same rule as ``undo()``.
    /// Returns the action's name, or nil when there is nothing to redo.
    @discardableResult
    public func redo() throws -> String? {
        try moveInUndoLog(forward: true)
    }

    /// The name of the write ``undo()`` would undo; nil when there is none.
    public func undoActionName() throws -> String? {
        try undoLogName(forward: false)
    }

    /// The name of the write ``redo()`` would do again; nil when there is none.
    public func redoActionName() throws -> String? {
        try undoLogName(forward: true)
    }

    /// Forgets every undo and redo step (the objects stay as they are).
    public func clearUndoLog() throws {
        try inUndoContext { context in
            let write = context.write!
            var state = try UndoLog.State.read(write)
            if let steps = try write.tree(UndoLog.tree, create: false), state.end >= state.first {
                for number in state.first...state.end { _ = try write.delete(steps, key: UndoLog.key(number)) }
            }
            state = UndoLog.State(first: state.end + 1, top: state.end, end: state.end)
            try state.write(write)
        }
    }

    /// The name of the step ``redo()`` (`forward`) or ``undo()`` would apply next, read in a
    /// snapshot of its own, from the step's head alone.
    private func undoLogName(forward: Bool) throws -> String? {
        try refuseOuterTransaction()
        return try inReadContext { context in
            let read = context.read!
            let state = try UndoLog.State.read(read)
            let number = forward ? state.top + 1 : state.top
            guard number >= state.first, number <= state.end else { return nil }
            return try UndoLog.name(number, in: read)
        }
    }

    private func moveInUndoLog(forward: Bool) throws -> String? {
        try inUndoContext { context in
            let write = context.write!
            var state = try UndoLog.State.read(write)
            let number = forward ? state.top + 1 : state.top
            guard number >= state.first, number <= state.end, let step = try UndoLog.step(number, in: context) else { return nil }
            _ = try step.apply(reverse: !forward, in: context)
            state.top = forward ? number : number - 1
            try state.write(write)
            return step.name
        }
    }

    private func inUndoContext<T>(_ body: (TransactionContext) throws -> T) throws -> T {
        try refuseOuterTransaction()
        return try inWriteContext(body)
    }

    private func refuseOuterTransaction() throws {
        guard ThreadTransactions.current(for: self) == nil else {
            throw CellarError.illegalArgument("undo and redo cannot run inside a transaction")
        }
    }
}
