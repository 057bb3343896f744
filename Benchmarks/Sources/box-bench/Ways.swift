@_spi(CellarGenerated) import BenchNote
import BenchSupport
@_spi(CellarGenerated) import Cellar
import CellarStorage
import Foundation

/// One way of storing the notes. Each step runs its own timer around exactly the work it
/// measures and returns the seconds; what it read or wrote is checked after the timer, and a wrong
/// result throws `BenchError`.
protocol Way: AnyObject {
    /// put: N new objects in one write transaction (commit included).
    func put(_ w: NoteWorkload) throws -> Double
    /// get: every object by id in random order, in one read transaction, decoding whole objects.
    func getAll(_ w: NoteWorkload) throws -> Double
    /// get1: the same, each get in its own read transaction.
    func getEach(_ w: NoteWorkload) throws -> Double
    /// scan: every object in id order, decoded.
    func scan(_ w: NoteWorkload) throws -> Double
    /// update: all N objects replaced in one write transaction.
    func update(_ w: NoteWorkload) throws -> Double
    /// Untimed, before put1: close (which syncs) and open the store again, so that put1's commits
    /// do not pay for syncing what the bulk steps wrote (`.none` still syncs every 256 commits).
    func reopen() throws
    /// put1: one write transaction putting object `i` (1...w.singles).
    func putOne(_ i: Int, _ w: NoteWorkload) throws -> Double
    /// Untimed: every object reads back as `w.final(id)`, and there are exactly N.
    func verify(_ w: NoteWorkload) throws
    /// remove: every object by id in one write transaction.
    func remove(_ w: NoteWorkload) throws -> Double
    func close()

    /// "box" or "raw", in the checks' messages.
    var name: String { get }
    /// How many objects are stored.
    func storedCount() throws -> Int

    // The timed work of get, get1, scan and remove, one function each (never inlined) so that a
    // profiler can collect exactly it (see docs/performance.md, "Box vs raw engine"). Around it,
    // the two ways do the same (the extension below).

    /// The objects `ids` (those found), in that order, appended to `got`, in one read transaction.
    func timedGet(_ ids: [Id], into got: inout [Note]) throws
    /// The same, each get in its own read transaction.
    func timedGetEach(_ ids: [Id], into got: inout [Note]) throws
    /// Every object, in id order.
    func timedScan() throws -> [Note]
    /// Removes the objects `ids` in one write transaction; how many were there.
    func timedRemove(_ ids: [Id]) throws -> Int
}

/// The steps whose untimed parts (setup and checks) are the same for both ways.
extension Way {
    func getAll(_ w: NoteWorkload) throws -> Double { try gets("get", w, timedGet) }

    func getEach(_ w: NoteWorkload) throws -> Double { try gets("get1", w, timedGetEach) }

    /// get or get1: every object in `w.permutation`'s order, read by `timed`.
    private func gets(_ step: String, _ w: NoteWorkload, _ timed: ([Id], inout [Note]) throws -> Void) throws -> Double {
        var got: [Note] = []
        got.reserveCapacity(w.n)
        let start = now()
        try timed(w.permutation, &got)
        let seconds = now() - start
        try checkObjects(name, step, got, order: w.permutation, expected: w.afterPut)
        return seconds
    }

    func scan(_ w: NoteWorkload) throws -> Double {
        let start = now()
        let got = try timedScan()
        let seconds = now() - start
        try checkScan(name, got, w)
        return seconds
    }

    func remove(_ w: NoteWorkload) throws -> Double {
        let start = now()
        let removed = try timedRemove(w.ids)
        let seconds = now() - start
        try checkCount(name, "remove (removed)", removed, w.n)
        try checkCount(name, "remove", try storedCount(), 0)
        return seconds
    }
}

// MARK: - Checks shared by both ways

/// `got[k]` must be object `order[k]` as `expected` gives it.
func checkObjects(_ way: String, _ step: String, _ got: [Note], order: [Id], expected: (Id) -> Note) throws {
    guard got.count == order.count else {
        throw BenchError("\(way) \(step): \(got.count) objects, expected \(order.count)")
    }
    for k in got.indices where got[k] != expected(order[k]) {
        throw BenchError("\(way) \(step): object \(order[k]) reads as \(got[k]), expected \(expected(order[k]))")
    }
}

func checkScan(_ way: String, _ got: [Note], _ w: NoteWorkload) throws {
    try checkObjects(way, "scan", got, order: w.ids, expected: w.afterPut)
    let sum = got.reduce(Int64(0)) { $0 &+ NoteWorkload.milliseconds($1.creationDate) }
    guard sum == w.creationSum else { throw BenchError("\(way) scan: Σ creationDate \(sum), expected \(w.creationSum)") }
}

func checkCount(_ way: String, _ step: String, _ count: Int, _ expected: Int) throws {
    guard count == expected else { throw BenchError("\(way) \(step): \(count) objects stored, expected \(expected)") }
}

// MARK: - Box

/// Through the object layer: `Store` and `Box<Note>`, the calls an app makes.
final class BoxWay: Way {
    let name = "box"
    let directory: String
    private(set) var store: Store
    private(set) var box: Box<Note>

    init(directory: String) throws {
        self.directory = directory
        store = try Self.open(directory)
        box = store.box(for: Note.self)
    }

    static func open(_ directory: String) throws -> Store {
        try Store(directoryPath: directory, model: Note.model, options: StoreOptions(durability: .none))
    }

    func reopen() throws {
        store.close()
        store = try Self.open(directory)
        box = store.box(for: Note.self)
    }

    func put(_ w: NoteWorkload) throws -> Double {
        var objects = w.fresh
        objects.withUnsafeMutableBufferPointer { _ in }  // the copy the put writes ids into, made before the timer
        let start = now()
        let ids = try timedPut(&objects)
        let seconds = now() - start
        for (k, id) in ids.enumerated() where id.value != Id(k + 1) || objects[k].id != Id(k + 1) {
            throw BenchError("box put: object \(k + 1) got id \(id) (object says \(objects[k].id)), expected \(k + 1)")
        }
        try checkCount("box", "put", ids.count, w.n)
        try checkCount("box", "put", try box.count(), w.n)
        return seconds
    }

    func update(_ w: NoteWorkload) throws -> Double {
        let start = now()
        let ids = try timedUpdate(w.updated)
        let seconds = now() - start
        try checkCount("box", "update", ids.count, w.n)
        try checkCount("box", "update", try box.count(), w.n)
        return seconds
    }

    func putOne(_ i: Int, _ w: NoteWorkload) throws -> Double {
        let note = w.single[i - 1]
        let start = now()
        let id = try timedPutOne(note)
        let seconds = now() - start
        guard id.value == Id(i) else { throw BenchError("box put1: object \(i) stored as \(id)") }
        return seconds
    }

    func verify(_ w: NoteWorkload) throws {
        let got = try box.get(w.ids)
        try checkObjects("box", "verify", got, order: w.ids, expected: w.final)
        try checkCount("box", "verify", try box.count(), w.n)
    }

    func storedCount() throws -> Int { try box.count() }

    func close() { store.close() }

    // The timed work of each step, one function each (never inlined) so that a profiler can
    // collect exactly it (see docs/performance.md, "Box vs raw engine").

    @inline(never)
    func timedPut(_ objects: inout [Note]) throws -> [EntityId<Note>] { try box.put(&objects) }

    @inline(never)
    func timedGet(_ ids: [Id], into got: inout [Note]) throws {
        let box = self.box
        try store.runInReadOnlyTransaction {
            for id in ids {
                if let note = try box.get(id) { got.append(note) }
            }
        }
    }

    @inline(never)
    func timedGetEach(_ ids: [Id], into got: inout [Note]) throws {
        let box = self.box
        for id in ids {
            if let note = try box.get(id) { got.append(note) }
        }
    }

    @inline(never)
    func timedScan() throws -> [Note] { try box.all() }

    @inline(never)
    func timedUpdate(_ objects: [Note]) throws -> [EntityId<Note>] { try box.put(objects) }

    @inline(never)
    func timedPutOne(_ note: Note) throws -> EntityId<Note> { try box.put(note) }

    @inline(never)
    func timedRemove(_ ids: [Id]) throws -> Int { try box.remove(ids) }
}

// MARK: - Raw engine

/// The storage engine directly, on its own directory with the same options: the same record bytes
/// (built by the same `RecordBuilder` calls as the binding's), under the same keys in a tree of
/// the same name, decoded by the same `RecordReader` calls. No ids to hand out, no transaction
/// context, no binding dispatch.
final class RawWay: Way {
    static let treeName = "e\(Note.modelEntity.id.id)"
    let name = "raw"
    let directory: String
    private(set) var engine: StorageEngine
    let builder = RecordBuilder()

    init(directory: String) throws {
        self.directory = directory
        engine = try Self.open(directory)
    }

    /// What `Store` passes the engine for StoreOptions(durability: .none).
    static func open(_ directory: String) throws -> StorageEngine {
        try StorageEngine(directory: directory, options: StorageOptions(durability: .none))
    }

    func reopen() throws {
        engine.close()
        engine = try Self.open(directory)
    }

    @inline(__always)
    private func put(_ note: Note, id: Id, txn: WriteTransaction, tree: Tree) throws {
        builder.begin(slotCount: NoteBinding.slots)
        try NoteBinding.encode(note, to: builder)
        try withUnsafeBytes(of: id.bigEndian) { try txn.put(tree, key: $0, value: builder.bytes) }
    }

    @inline(__always)
    private func get(_ id: Id, txn: ReadTransaction, tree: Tree) throws -> Note? {
        guard let bytes = try withUnsafeBytes(of: id.bigEndian, { try txn.get(tree, key: $0) }) else { return nil }
        return try NoteBinding.decode(id: id, from: try RecordReader(bytes))
    }

    func storedCount() throws -> Int {
        try engine.read { txn in try txn.tree(Self.treeName).map { try txn.count($0) } ?? 0 }
    }

    func put(_ w: NoteWorkload) throws -> Double { try write("put", w.fresh, timedPut, w) }

    func update(_ w: NoteWorkload) throws -> Double { try write("update", w.updated, timedUpdate, w) }

    /// put or update: `objects` written by `timed`, after which N objects must be stored.
    private func write(_ step: String, _ objects: [Note], _ timed: ([Note]) throws -> Void, _ w: NoteWorkload) throws -> Double {
        let start = now()
        try timed(objects)
        let seconds = now() - start
        try checkCount("raw", step, try storedCount(), w.n)
        return seconds
    }

    func putOne(_ i: Int, _ w: NoteWorkload) throws -> Double {
        let note = w.single[i - 1]
        let start = now()
        try timedPutOne(note)
        return now() - start
    }

    func verify(_ w: NoteWorkload) throws {
        let got = try engine.read { txn -> [Note] in
            guard let tree = try txn.tree(Self.treeName) else { return [] }
            return try w.ids.compactMap { try get($0, txn: txn, tree: tree) }
        }
        try checkObjects("raw", "verify", got, order: w.ids, expected: w.final)
        try checkCount("raw", "verify", try storedCount(), w.n)
    }

    func close() { engine.close() }

    // The timed work of each step (see BoxWay).

    @inline(never)
    func timedPut(_ objects: [Note]) throws {
        try engine.write { txn in
            let tree = try txn.tree(Self.treeName, create: true)!
            for k in objects.indices { try put(objects[k], id: Id(k + 1), txn: txn, tree: tree) }
        }
    }

    @inline(never)
    func timedGet(_ ids: [Id], into got: inout [Note]) throws {
        try engine.read { txn in
            guard let tree = try txn.tree(Self.treeName) else { return }
            for id in ids {
                if let note = try get(id, txn: txn, tree: tree) { got.append(note) }
            }
        }
    }

    @inline(never)
    func timedGetEach(_ ids: [Id], into got: inout [Note]) throws {
        let engine = self.engine
        for id in ids {
            // A tree handle belongs to its transaction: each one looks the tree up again.
            let note = try engine.read { txn in try txn.tree(Self.treeName).flatMap { try get(id, txn: txn, tree: $0) } }
            if let note { got.append(note) }
        }
    }

    @inline(never)
    func timedScan() throws -> [Note] {
        try engine.read { txn -> [Note] in
            guard let tree = try txn.tree(Self.treeName) else { return [] }
            var objects: [Note] = []
            objects.reserveCapacity(try txn.count(tree))
            try txn.cursor(tree).scan { key, value in
                guard key.count == 8 else { throw BenchError("raw scan: a key of \(key.count) bytes") }
                objects.append(try NoteBinding.decode(id: Id(bigEndian: key.loadUnaligned(as: UInt64.self)), from: try RecordReader(value)))
                return true
            }
            return objects
        }
    }

    @inline(never)
    func timedUpdate(_ objects: [Note]) throws {
        try engine.write { txn in
            let tree = try txn.tree(Self.treeName, create: true)!
            for note in objects { try put(note, id: note.id, txn: txn, tree: tree) }
        }
    }

    @inline(never)
    func timedPutOne(_ note: Note) throws {
        try engine.write { txn in
            let tree = try txn.tree(Self.treeName, create: true)!
            try put(note, id: note.id, txn: txn, tree: tree)
        }
    }

    @inline(never)
    func timedRemove(_ ids: [Id]) throws -> Int {
        try engine.write { txn -> Int in
            guard let tree = try txn.tree(Self.treeName, create: false) else { return 0 }
            var removed = 0
            for id in ids where try withUnsafeBytes(of: id.bigEndian, { try txn.delete(tree, key: $0) }) { removed += 1 }
            return removed
        }
    }
}
