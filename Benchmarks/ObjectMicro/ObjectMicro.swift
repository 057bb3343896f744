// Micro-benchmarks of the object layer's hot paths (package-benchmark), on the CRUD workload's `Note`
// (BenchNote: the hand-written binding, as the generator writes one).
//
//   swift package --package-path Benchmarks benchmark --target ObjectMicro
//   swift package --package-path Benchmarks benchmark --target ObjectMicro --filter 'Box_.*'
//
// Every benchmark does 1,000 operations per sample (scalingFactor .kilo): the wall clock with `*`
// is ns per operation, and a malloc count of 1,000 per sample is one malloc per operation. Only
// the loop is measured (startMeasurement/stopMeasurement); fixtures live in temporary folders that
// teardown removes. Names are shell-safe: the thresholds files (Benchmarks/Thresholds) are named
// after them. Only malloc-count thresholds are committed; CELLAR_MICRO_MAX_SECONDS shortens the
// runs (CI). See docs/performance.md, "Micro-benchmarks".
@_spi(CellarGenerated) import BenchNote
import Benchmark
@_spi(CellarGenerated) import Cellar
import CellarStorage
import Foundation

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration.timeUnits = .nanoseconds
    recordBenchmarks()
    nodeSearchBenchmarks()
    boxBenchmarks()
    queryBenchmarks()
}

/// The tolerance of the committed malloc-count thresholds: p90 of a sample (1,000 operations) may
/// differ from the threshold by at most this many mallocs either way, a tenth of one malloc per
/// operation. One more malloc per operation (+1,000) fails the check.
var mallocTolerance: [BenchmarkMetric: BenchmarkThresholds] {
    [.mallocCountTotal: BenchmarkThresholds(absolute: [.p90: 100])]
}

/// The longest a benchmark runs: 2 s, or CELLAR_MICRO_MAX_SECONDS (CI's threshold check).
let maxDuration: Duration = {
    if let text = ProcessInfo.processInfo.environment["CELLAR_MICRO_MAX_SECONDS"], let seconds = Double(text), seconds > 0 {
        return .milliseconds(Int(seconds * 1000))
    }
    return .seconds(2)
}()

func configuration(setup: Benchmark.BenchmarkSetupHook? = nil, teardown: Benchmark.BenchmarkTeardownHook? = nil) -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        timeUnits: .nanoseconds,
        scalingFactor: .kilo,
        maxDuration: maxDuration,
        maxIterations: 2000,
        thresholds: mallocTolerance,
        setup: setup,
        teardown: teardown
    )
}

/// A fresh temporary folder under /tmp.
func makeTemporaryFolder(_ prefix: String) throws -> String {
    var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        throw StorageError.illegalArgument("mkdtemp failed")
    }
    return String(cString: made)
}

/// A deterministic shuffle (the same order in every run: the malloc counts of random access then
/// depend on the code only).
func shuffled<T>(_ values: [T], seed: UInt64) -> [T] {
    var values = values
    var state = seed
    for i in stride(from: values.count - 1, to: 0, by: -1) {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        values.swapAt(i, Int((state >> 33) % UInt64(i + 1)))
    }
    return values
}

// MARK: - Record encode / decode

/// 256 of the CRUD workload's notes and their records, encoded once.
final class RecordFixture: @unchecked Sendable {
    static let count = 256
    static let shared = RecordFixture()

    let notes: [Note]
    /// The records back to back; record k at `offsets[k] ..< offsets[k + 1]`.
    let records: [UInt8]
    let offsets: [Int]

    init() {
        notes = Note.fresh(Self.count)
        let builder = RecordBuilder()
        var records: [UInt8] = []
        var offsets = [0]
        for note in notes {
            builder.begin(slotCount: NoteBinding.slots)
            try! Note.entityBinding.write(note, to: builder)
            records.append(contentsOf: builder.bytes)
            offsets.append(records.count)
        }
        self.records = records
        self.offsets = offsets
        // The decoder gives back what was encoded.
        records.withUnsafeBytes { bytes in
            for k in 0..<Self.count {
                let record = UnsafeRawBufferPointer(rebasing: bytes[offsets[k] ..< offsets[k + 1]])
                var expected = notes[k]
                expected.id = Id(k + 1)
                precondition(try! Note.entityBinding.read(id: Id(k + 1), from: RecordReader(record)) == expected)
            }
        }
    }
}

func recordBenchmarks() {
    // What Box.put does to an object before the engine sees it: `begin` on the reused builder,
    // then the binding's `write` (5 `add` calls: 2 strings, 2 dates, 1 integer).
    Benchmark("Record_encode_Note", configuration: configuration()) { benchmark in
        let fixture = RecordFixture.shared
        let builder = RecordBuilder()
        let binding = Note.entityBinding
        var length = 0
        do {
            try fixture.notes.withUnsafeBufferPointer { notes in
                benchmark.startMeasurement()
                for i in benchmark.scaledIterations {
                    builder.begin(slotCount: NoteBinding.slots)
                    try binding.write(notes[i & (RecordFixture.count - 1)], to: builder)
                    length &+= builder.bytes.count
                }
                benchmark.stopMeasurement()
            }
        } catch {
            benchmark.error("\(error)")
        }
        blackHole(length)
    }

    // What Box.get does with the record bytes the engine returns: a `RecordReader` over them and
    // the binding's `read` (builds a Note: two Strings of 20 and 100 bytes, two Dates, an integer).
    Benchmark("Record_decode_Note", configuration: configuration()) { benchmark in
        let fixture = RecordFixture.shared
        let binding = Note.entityBinding
        var sum: UInt64 = 0
        do {
            try fixture.records.withUnsafeBytes { bytes in
                try fixture.offsets.withUnsafeBufferPointer { offsets in
                    benchmark.startMeasurement()
                    for i in benchmark.scaledIterations {
                        let k = i & (RecordFixture.count - 1)
                        let record = UnsafeRawBufferPointer(rebasing: bytes[offsets[k] ..< offsets[k + 1]])
                        let note = try binding.read(id: Id(k + 1), from: RecordReader(record))
                        sum &+= note.author &+ UInt64(note.title.utf8.count)
                    }
                    benchmark.stopMeasurement()
                }
            }
        } catch {
            benchmark.error("\(error)")
        }
        blackHole(sum)
    }
}

// MARK: - Node search (through a cursor: the in-node search itself is internal to CellarStorage)

/// A storage engine of `count` keys (8-byte big-endian 1...count, 64-byte values), the shape of an
/// object tree's keys, in a temporary folder.
final class NodeSearchFixture: @unchecked Sendable {
    static let count = 100_000
    static let treeName = "search"
    nonisolated(unsafe) static var shared: NodeSearchFixture?

    let folder: String
    let engine: StorageEngine
    /// The keys in a fixed shuffled order.
    let order: [UInt64]

    init() throws {
        folder = try makeTemporaryFolder("object-micro-search")
        engine = try StorageEngine(directory: folder + "/store")
        let value = [UInt8](repeating: 0x5A, count: 64)
        try engine.write { txn in
            let tree = try txn.tree(Self.treeName)!
            try value.withUnsafeBytes { value in
                for i in 1...Self.count {
                    var key = UInt64(i).bigEndian
                    try withUnsafeBytes(of: &key) { try txn.put(tree, key: $0, value: value) }
                }
            }
        }
        order = shuffled(Array(1...UInt64(Self.count)), seed: 0x9E37_79B9_7F4A_7C15)
    }

    static func setUp() throws {
        if shared == nil { shared = try NodeSearchFixture() }
    }

    static func tearDown() {
        guard let fixture = shared else { return }
        shared = nil
        fixture.engine.close()
        try? FileManager.default.removeItem(atPath: fixture.folder)
    }
}

func nodeSearchBenchmarks() {
    // `Cursor.seek` to a random existing key on a committed snapshot: from the root down to the
    // leaf (3 levels at 100,000 keys), a binary search of the keys in each node (NodeView's
    // childIndex/lowerBound with KeyCompare), then the cursor settles on the leaf entry. The
    // in-node search alone is not public API, so this is the closest public measure of it.
    Benchmark("Engine_cursor_seek_random",
              configuration: configuration(setup: { try NodeSearchFixture.setUp() }, teardown: { NodeSearchFixture.tearDown() })) { benchmark in
        let fixture = NodeSearchFixture.shared!
        let start = (benchmark.currentIteration &* 1000) % NodeSearchFixture.count
        do {
            let txn = try fixture.engine.beginRead()
            let tree = try txn.tree(NodeSearchFixture.treeName)!
            let cursor = try txn.cursor(tree)
            var found = 0
            try fixture.order.withUnsafeBufferPointer { order in
                benchmark.startMeasurement()
                for i in benchmark.scaledIterations {
                    var key = order[(start &+ i) % order.count].bigEndian
                    if try withUnsafeBytes(of: &key, { try cursor.seek($0) }) { found &+= 1 }
                }
                benchmark.stopMeasurement()
            }
            if found != 1000 { benchmark.error("seek found \(found) of 1000 keys") }
        } catch {
            benchmark.error("\(error)")
        }
    }
}

// MARK: - Box put / get and a query, on a store of the CRUD workload's notes

/// A store (the `author` index of `Note.indexedModel`, default options) holding the CRUD workload's
/// notes 1...count, in a temporary folder.
final class StoreFixture: @unchecked Sendable {
    static let count = 100_000
    nonisolated(unsafe) static var shared: StoreFixture?

    let folder: String
    let store: Store
    let box: Box<Note>
    /// Notes 1...1000 as new objects (id 0), for inserts.
    let fresh: [Note]
    /// Stored notes with their ids, in a fixed shuffled order, for updates.
    let updates: [Note]
    /// The ids in a fixed shuffled order, for gets.
    let order: [Id]
    /// `Note.author == 42`, built once.
    let query: Query<Note>

    init() throws {
        folder = try makeTemporaryFolder("object-micro-store")
        store = try Store(directoryPath: folder + "/cellar", model: Note.indexedModel)
        box = store.box(for: Note.self)
        var notes = Note.fresh(Self.count)
        let ids = try box.put(&notes)
        precondition(ids.count == Self.count && ids.last?.value == Id(Self.count))
        fresh = Note.fresh(1000)
        updates = shuffled(notes, seed: 0xD1B5_4A32_D192_ED03)
        order = updates.map(\.id)
        query = try box.query { Note.author == 42 }.build()
    }

    static func setUp() throws {
        if shared == nil { shared = try StoreFixture() }
    }

    static func tearDown() {
        guard let fixture = shared else { return }
        shared = nil
        fixture.store.close()
        try? FileManager.default.removeItem(atPath: fixture.folder)
    }
}

/// Thrown to roll back a benchmark's write transaction (nothing is committed: every sample starts
/// from the same store).
struct RollBack: Error {}

/// Runs `body` in a write transaction of the fixture's store and rolls it back.
func inRolledBackTransaction(_ benchmark: Benchmark, _ body: (StoreFixture) throws -> Void) {
    let fixture = StoreFixture.shared!
    do {
        try fixture.store.runInTransaction {
            try body(fixture)
            throw RollBack()
        }
    } catch is RollBack {
    } catch {
        benchmark.error("\(error)")
    }
}

func boxBenchmarks() {
    let storeConfiguration = configuration(setup: { try StoreFixture.setUp() }, teardown: { StoreFixture.tearDown() })

    // `box.put(note)` of new objects (id 0) inside one write transaction: an id from the
    // sequence, the record, the tree put (appending: ids grow), the author index entry. The
    // transaction's begin and rollback are outside the measurement.
    Benchmark("Box_put_insert_in_txn", configuration: storeConfiguration) { benchmark in
        inRolledBackTransaction(benchmark) { fixture in
            let box = fixture.box
            try fixture.fresh.withUnsafeBufferPointer { notes in
                benchmark.startMeasurement()
                for i in benchmark.scaledIterations {
                    try box.put(notes[i])
                }
                benchmark.stopMeasurement()
            }
        }
    }

    // `box.put(note)` replacing stored objects in random order (same values): the old record is
    // read to compare the indexed author (unchanged, so no index write), the record replaced.
    // Most puts are a first touch of their leaf in the transaction.
    Benchmark("Box_put_update_random_in_txn", configuration: storeConfiguration) { benchmark in
        let start = (benchmark.currentIteration &* 1000) % StoreFixture.count
        inRolledBackTransaction(benchmark) { fixture in
            let box = fixture.box
            try fixture.updates.withUnsafeBufferPointer { notes in
                benchmark.startMeasurement()
                for i in benchmark.scaledIterations {
                    try box.put(notes[(start &+ i) % notes.count])
                }
                benchmark.stopMeasurement()
            }
        }
    }

    // `box.get(id)` of random stored ids inside one read transaction: the object tree lookup and
    // the decode into a Note.
    Benchmark("Box_get_random_in_txn", configuration: storeConfiguration) { benchmark in
        let fixture = StoreFixture.shared!
        let box = fixture.box
        let start = (benchmark.currentIteration &* 1000) % StoreFixture.count
        var sum: UInt64 = 0
        do {
            try fixture.store.runInReadOnlyTransaction {
                try fixture.order.withUnsafeBufferPointer { order in
                    benchmark.startMeasurement()
                    for i in benchmark.scaledIterations {
                        guard let note = try box.get(order[(start &+ i) % order.count]) else {
                            benchmark.error("an object is missing")
                            return
                        }
                        sum &+= note.author
                    }
                    benchmark.stopMeasurement()
                }
            }
        } catch {
            benchmark.error("\(error)")
        }
        blackHole(sum)
    }
}

func queryBenchmarks() {
    let storeConfiguration = configuration(setup: { try StoreFixture.setUp() }, teardown: { StoreFixture.tearDown() })
    let hits = StoreFixture.count / 100

    // `query.count()` of `Note.author == 42` (built once; 1,000 hits of 100,000 through the
    // author index), each call in its own implicit read transaction as an app calls it.
    Benchmark("Query_count_author_eq", configuration: storeConfiguration) { benchmark in
        let query = StoreFixture.shared!.query
        var total = 0
        do {
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                total &+= try query.count()
            }
            benchmark.stopMeasurement()
        } catch {
            benchmark.error("\(error)")
        }
        if total != 1000 * hits { benchmark.error("count: \(total / 1000), expected \(hits)") }
    }

    // `query.findIds()` of the same query: the 1,000 ids in an array.
    Benchmark("Query_findIds_author_eq", configuration: storeConfiguration) { benchmark in
        let query = StoreFixture.shared!.query
        var total = 0
        do {
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                total &+= try query.findIds().count
            }
            benchmark.stopMeasurement()
        } catch {
            benchmark.error("\(error)")
        }
        if total != 1000 * hits { benchmark.error("findIds: \(total / 1000) ids, expected \(hits)") }
    }
}
