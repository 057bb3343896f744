@_spi(Sync) import Cellar
@testable import CellarSync
import Foundation
import PostgresNIO
import Testing

/// The texts the sync engine writes and reads without Foundation's parsers or the JSON parser
/// (UUIDs, clocks, clock arrays, binary `text[]` parameters), against those parsers and the real
/// server; and the live loop waking on a commit instead of polling.
struct FastPathTests {
    @Test func uuidTextRoundTripsAndRefusesWhatIsNotAUUID() throws {
        for uuid in (0..<200).map({ _ in UUID() }) + [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))] {
            let text = UUIDText.text(uuid)
            #expect(text == uuid.uuidString.lowercased())
            #expect(UUIDText.uuid(text) == uuid)
            #expect(UUIDText.uuid(uuid.uuidString) == uuid)  // upper case too
        }
        let good = "0123abcd-4567-89ef-ABCD-0123456789ef"
        #expect(UUIDText.uuid(good) == UUID(uuidString: good))
        for bad in ["", String(good.dropLast()), good + "0", good.replacingOccurrences(of: "-", with: "x"),
                    "0123abcd-4567-89ef-abcd-0123456789eg", "0123abcd44567-89ef-abcd-0123456789ef", "{0123abc-4567-89ef-abcd-0123456789ef}"] {
            #expect(UUIDText.uuid(bad) == nil, "\(bad)")
        }
        let clock = ReplicaClock(timestamp: HybridTimestamp(rawValue: 0xab), device: try #require(UUID(uuidString: good)))
        #expect(ReplicaClock(text: clock.text) == clock)
        for bad in ["", "00000000000000ab-" + good, String(clock.text.dropLast()), clock.text + "-", String(clock.text.dropLast()) + "+"] {
            #expect(ReplicaClock(text: bad) == nil, "\(bad)")
        }
    }

    /// Global ids are time-ordered UUIDs (version 7): their first 48 bits are the time they
    /// were handed out, in milliseconds, so that new ids land next to each other in the
    /// store's tree and the server's index.
    @Test func globalIdsAreTimeOrdered() throws {
        let directory = NSTemporaryDirectory() + "cellar-sync-ids-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = StoreOptions()
        options.changeHistory = true
        let store = try Store(directoryPath: directory, options: options)
        defer { store.close() }
        let before = UInt64(Date().timeIntervalSince1970 * 1_000)
        let items = (0..<50).map { Item(title: "item \($0)") }
        try store.box(for: Item.self).put(items)
        _ = try store.replicaState()
        _ = try store.outgoingChanges(limit: 100)  // hands out the global ids
        let after = UInt64(Date().timeIntervalSince1970 * 1_000)
        let uid = try #require(store.model.entity(named: "Item")).id.uid
        var seen: Set<UUID> = []
        for item in items {
            let id = try #require(try store.globalId(entityUid: uid, id: item.id))
            #expect(seen.insert(id).inserted)
            let bytes = withUnsafeBytes(of: id.uuid) { Array($0) }
            #expect(bytes[6] >> 4 == 7, "version")
            #expect(bytes[8] >> 6 == 2, "variant")
            let milliseconds = bytes[0..<6].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            #expect(milliseconds >= before && milliseconds <= after)
        }
    }

    /// A row's clocks written as a `text[]` literal (`ServerRow.clockArray`) come back from the
    /// server each in its column's slot, whatever they hold (quotes, backslashes, commas,
    /// braces, spaces, the text NULL, the empty text, multi-byte characters); the slots of
    /// columns the model lacks, and those of columns without a clock, are NULL.
    @Test(.enabled(if: TestServer.enabled, TestServer.skipped))
    func clockArraysComeBackSlotBySlot() async throws {
        let table = try Self.itemTable()
        #expect(table.slotted.contains(nil), "the table has slots of columns the model lacks")
        let clock = ReplicaClock(timestamp: HybridTimestamp(rawValue: 0x1234_5678), device: UUID()).text
        let texts = [clock, "", "NULL", "null", "a,b", "{x}", "\"q\"", "back\\slash", "\\\"", " spaced ", "Füße ✓", clock]
        var random = SystemRandomNumberGenerator()
        try await TestServer.freshSchema { connection, _ in
            let reads = (1...table.slotted.count).map { "($1::text[])[\($0)]" }.joined(separator: ", ")
            for round in 0..<30 {
                var row = ServerRow(id: UUID(), in: table)
                for position in row.clocks.indices where round == 1 || (round > 1 && Bool.random(using: &random)) {
                    row.clocks[position] = texts.randomElement(using: &random)!
                }
                let literal = row.clockArray(in: table)
                var expected = [String?](repeating: nil, count: table.slotted.count)
                for (position, slot) in table.slots.enumerated() { expected[slot - 1] = row.clocks[position] }
                let read = try await connection.rows("SELECT " + reads, [literal], logger: TestServer.logger)
                #expect(read == [expected], "\(literal)")
            }
        }
    }

    /// A pull has the server pick each column's clock out of its slot of `cellar_clocks` and
    /// reads the rows' cells as bytes: the changes it makes of random rows (removed or not;
    /// clocks in slots of columns the table lacks, texts that are no clock, quotes; every column
    /// type, NULLs) equal those made of the same rows' values as a push reads them and their
    /// clocks as written here: a text in a column's slot is its clock (one that is no clock a
    /// clock that does not parse), NULL or no element means no clock. A removed row's clocks
    /// are not read.
    @Test(.enabled(if: TestServer.enabled, TestServer.skipped))
    func pulledRowsMatchTheRowsAsAPushReadsThem() async throws {
        let table = try Self.itemTable()
        let entity = table.entity
        #expect(Set(table.types.map(\.rawValue)).count >= 8, "the entity covers most column types")
        let pull = Pull(schema: ServerSchema(namespace: "n", tables: [entity.uid: table]), options: SyncOptions(), device: UUID(),
                        logger: TestServer.logger)
        var random = SystemRandomNumberGenerator()
        func clock() -> String { ReplicaClock(timestamp: HybridTimestamp(rawValue: .random(in: 0...UInt64.max, using: &random)), device: UUID()).text }
        func text(_ type: ReplicaSchema.ColumnType) -> String? {
            if Int.random(in: 0..<6, using: &random) == 0 { return nil }
            switch type {
            case .boolean: return ["true", "false", "t", "f"].randomElement(using: &random)!
            case .bigint: return String(Int64.random(in: .min ... .max, using: &random))
            case .numeric: return String(UInt64.random(in: 0 ... .max, using: &random))
            case .decimal: return ["0", "-12.5", "123456789012345678901234567890.5"].randomElement(using: &random)!
            case .real: return ["1.5", "-0", "Infinity", "-Infinity", "0.1"].randomElement(using: &random)!
            case .doublePrecision: return ["1.5", "-0", "Infinity", "-Infinity", "1e-300"].randomElement(using: &random)!
            case .text: return ["", "plain", "a\"b\\c", "Füße ✓"].randomElement(using: &random)!
            case .bytea: return ["", "00ff", "DEADbeef"].randomElement(using: &random)!
            case .uuid: return UUIDText.text(UUID())
            case .jsonb: return ["[\"a\"]", "{\"k\": 1}", "null"].randomElement(using: &random)!
            case .uuidArray: return ["{}", "{\(UUIDText.text(UUID()))}", "{\(UUIDText.text(UUID())),\(UUIDText.text(UUID()))}"].randomElement(using: &random)!
            }
        }
        /// A row's clocks by slot (nil: NULL), up to a slot after the table's last: clocks in some
        /// of its columns' slots and in those of columns it lacks, other texts, or none.
        func clocks() -> [String?] {
            (0...table.slotted.count).map { _ in
                Bool.random(using: &random) ? nil : [clock(), clock(), clock(), "x", "", "a\"b", "NULL"].randomElement(using: &random)!
            }
        }
        /// The changes the rows a push reads make, with their `clocks` by slot.
        func reference(_ rows: [ServerRow], clocks: [UUID: [String?]]) throws -> [ReplicaChange] {
            try rows.map { row in
                if let removed = row.removed {
                    guard let clock = ReplicaClock(text: removed) else { throw SyncError(.schema, "a malformed removal clock") }
                    return ReplicaChange(entityUid: entity.uid, globalId: row.id, removed: clock)
                }
                let slots = try #require(clocks[row.id])
                /// Nil: no clock; else the clock (nil: one that does not parse).
                func clock(_ position: Int) -> ReplicaClock?? {
                    slots[table.slots[position] - 1].map { ReplicaClock(text: $0) }
                }
                var change = ReplicaChange(entityUid: entity.uid, globalId: row.id)
                for (index, property) in entity.properties.enumerated() {
                    guard let clock = clock(index) else { continue }
                    change.values.append(ReplicaChange.Value(uid: property.uid, value: try ColumnText.value(row.values[index], of: property),
                                                             clock: clock))
                }
                for (index, relation) in entity.relations.enumerated() {
                    guard let clock = clock(entity.properties.count + index) else { continue }
                    change.relations.append(ReplicaChange.Links(uid: relation.uid, targets: try ColumnText.uuids(row.values[entity.properties.count + index]),
                                                                clock: clock))
                }
                return change
            }
        }
        try await TestServer.freshSchema { connection, _ in
            let logger = TestServer.logger
            let columns = zip(table.valueColumns, table.types).map { ", \($0) \($1.rawValue)" }.joined()
            try await connection.execute("CREATE TABLE t (cellar_id uuid PRIMARY KEY, cellar_removed text, cellar_clocks text[] NOT NULL DEFAULT '{}'\(columns))",
                                         logger: logger)
            let values = ["$1::uuid", "$2", "$3::text[]"] + table.types.enumerated().map { ColumnText.cast("$\($0.offset + 4)", $0.element) }
            let insert = "INSERT INTO t (\(table.rowColumns.joined(separator: ", "))) VALUES (\(values.joined(separator: ", ")))"
            for _ in 0..<10 {
                try await connection.execute("TRUNCATE t", logger: logger)
                var ids: [UUID] = [], written: [UUID: [String?]] = [:]
                for _ in 0..<30 {
                    let id = UUID()
                    ids.append(id)
                    let removed = Int.random(in: 0..<5, using: &random) == 0 ? clock() : nil
                    written[id] = clocks()
                    let literal = "{" + written[id]!.map { $0.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\\\"") + "\"" } ?? "NULL" }
                        .joined(separator: ",") + "}"
                    try await connection.execute(insert, [UUIDText.text(id), removed, literal] + table.types.map(text), logger: logger)
                }
                let pulled = try pull.changes(of: await ServerRow.read(after: nil, limit: 100, in: table, filter: nil, on: connection, logger: logger),
                                              in: table)
                let rows = try await ServerRow.read(ids, of: table, locking: false, on: connection, logger: logger)
                let expected = try reference(rows.values.sorted { UUIDText.text($0.id) < UUIDText.text($1.id) }, clocks: written)
                #expect(pulled == expected)
                #expect(pulled.contains { !$0.values.isEmpty })
            }
        }
    }

    /// A column of texts carried as one binary `text[]` parameter comes back from `unnest`
    /// element by element: quotes, backslashes, commas, braces, spaces, NULL and the text "NULL",
    /// multi-byte characters; and an empty column.
    @Test(.enabled(if: TestServer.enabled, TestServer.skipped))
    func textArraysComeBackFromUnnestExactly() async throws {
        let texts: [String?] = ["plain", "", nil, "NULL", "null", "a,b", "{x}", "\"quoted\"", "back\\slash", "\\\"", " spaced ",
                                "new\nline", "tab\t", "Füße ✓", String(repeating: "long ", count: 300), nil, "end"]
        try await TestServer.freshSchema { connection, _ in
            let rows = try await connection.rows("SELECT u.t, u.n::text FROM unnest($1::text[]) WITH ORDINALITY AS u(t, n) ORDER BY u.n",
                                                 binds: SQL.binds(one: TextArray(texts)), logger: TestServer.logger)
            #expect(rows.map { $0[0] } == texts)
            let empty = try await connection.rows("SELECT count(*)::text FROM unnest($1::text[])", binds: SQL.binds(one: TextArray([])), logger: TestServer.logger)
            #expect(empty == [["0"]])
        }
    }

    /// The live loop pushes a local commit when it happens: with the poll and pull intervals an
    /// hour long, the commit still reaches the other store (the server's announcement wakes
    /// that one).
    @Test(.enabled(if: TestServer.enabled, TestServer.skipped))
    func aCommitWakesTheLiveLoop() async throws {
        try await TestServer.freshSchema { _, schema in
            var options = SyncOptions()
            options.pollInterval = .seconds(3600)
            options.pullInterval = .seconds(3600)
            let harness = try SyncHarness(schema: schema, options: options)
            defer { Task { await harness.close() } }
            let (a, clientA) = try harness.addStore()
            let (b, clientB) = try harness.addStore()
            try await clientA.sync()
            try await clientB.sync()
            let liveA = Task { await clientA.run() }, liveB = Task { await clientB.run() }
            defer { liveA.cancel(); liveB.cancel() }
            // Once both loops listen, each commit must travel without a poll.
            let listening = try await Self.eventually {
                let (startedA, startedB) = (await clientA.listenersStarted, await clientB.listenersStarted)
                return startedA > 0 && startedB > 0
            }
            #expect(listening)
            for round in 0..<3 {
                try a.box(for: Person.self).put(Person(name: "round \(round)", age: round))
                let arrived = try await Self.eventually { try b.box(for: Person.self).count() == round + 1 }
                #expect(arrived, "round \(round) did not reach the other store")
            }
            liveA.cancel(); liveB.cancel()
            await liveA.value; await liveB.value
        }
    }

    /// The test model's Item entity as a server table (columns named `c<uid>`, in odd slots), from a store
    /// opened for it and closed again.
    static func itemTable() throws -> ServerSchema.Table {
        let directory = NSTemporaryDirectory() + "cellar-sync-item-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = StoreOptions()
        options.changeHistory = true
        let store = try Store(directoryPath: directory, options: options)
        defer { store.close() }
        let entity = try #require(try store.replicaSchema().entities.first { $0.name == "Item" })
        let uids = entity.properties.map(\.uid) + entity.relations.map(\.uid)
        // Every other slot, from the second, is one of a column the model lacks.
        return ServerSchema.Table(entity: entity, qualified: "t", asymmetric: false,
                                  columns: Dictionary(uniqueKeysWithValues: uids.map { ($0, "c\($0)") }),
                                  slots: Dictionary(uniqueKeysWithValues: uids.enumerated().map { ($0.element, 2 * $0.offset + 1) }))
    }

    /// Whether `condition` holds within a minute, looking every 10 ms (the minute is far beyond
    /// what the test waits for; the poll interval it guards against is an hour).
    static func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}
