@_spi(Sync) import Cellar
@testable import CellarSync
import Foundation
import PostgresNIO
import Testing

/// A push's writes without a read (merged in SQL by `MergingWrite`, or inserted unless there)
/// against the merge in Swift (`Push.merge`), on the real server: the same random rows on the
/// server (missing, removed, clocks newer and older, empty, absent, in slots of columns the
/// model lacks) and the same random changes (values with and without clocks, relations, removals,
/// nothing at all) leave the same rows, the same change rows and the same count of rows
/// written, under either rule for removals.
struct MergingWriteTests {
    @Test(.enabled(if: TestServer.enabled, TestServer.skipped), arguments: [0x5EED_0002, UInt64.random(in: 1...UInt64.max)])
    func theMergeInSQLDecidesAsTheMergeInSwift(seed: UInt64) async throws {
        try await Self.withTable { connection, server, table, outgoing in
            var random = ConvergenceTests.Generator(state: seed)
            var options = server.options
            var inSQL = 0, unread = 0, inSwift = 0
            for round in 0..<16 {
                // In one round of four, only objects the server lacks (the push learns to insert
                // those first); in the round after it, changes that carry nothing. In one round
                // of eight, a push that starts by inserting first meets rows already there.
                var world = World(table: table, missing: round % 4 == 2 ? 1 : 0.25, random: &random)
                if round % 4 == 3 { world.changes = world.changes.map { ReplicaChange(entityUid: $0.entityUid, globalId: $0.globalId) } }
                var outgoing = outgoing
                outgoing.changes = world.changes
                options.removals = Bool.random(using: &random) ? .win : .lastWriterWins
                var results: [Outcome] = []
                for mergesInSQL in [true, false] {
                    options.mergesInSQL = mergesInSQL
                    try await world.seed(table, namespace: options.schema, on: connection)
                    let push = Push(schema: server.schema, options: options, device: world.device, logger: TestServer.logger)
                    if round % 8 == 1 { push.way.set(table, insertsFirst: true) }
                    let result = try await push.run(outgoing, on: connection)
                    #expect(!result.alreadyTaken)
                    if mergesInSQL {
                        if round % 4 == 2 {
                            #expect(result.mergedInSQL <= 2 * options.rowsPerStatement,
                                    "rows the server lacks were still merged in SQL after statements that inserted most of theirs")
                        }
                        inSQL += result.mergedInSQL
                        unread += result.insertedUnread
                        inSwift += result.written - result.mergedInSQL - result.insertedUnread
                    } else {
                        #expect(result.mergedInSQL == 0 && result.insertedUnread == 0)
                    }
                    results.append(try await Outcome(result.written, table: table, namespace: options.schema, on: connection))
                }
                #expect(results[0] == results[1], "the merge in SQL against the merge in Swift (removals: \(options.removals))")
            }
            // Every way ran: no comparison above is empty.
            #expect(inSQL > 100 && unread > 20 && inSwift > 10, "\(inSQL) rows merged in SQL, \(unread) inserted unread, \(inSwift) in Swift")
        }
    }

    /// A push of new objects goes on by inserting them unread; a statement that finds most of
    /// its rows there (edits) makes the next ones merge in SQL again.
    @Test(.enabled(if: TestServer.enabled, TestServer.skipped))
    func aPushInsertsFirstWhileItsRowsAreNew() async throws {
        try await Self.withTable { connection, server, table, outgoing in
            var random = ConvergenceTests.Generator(state: 0x5EED_0003)
            let world = World(table: table, missing: 1, random: &random)
            try await world.seed(table, namespace: server.options.schema, on: connection)
            let push = Push(schema: server.schema, options: server.options, device: world.device, logger: TestServer.logger)
            var outgoing = outgoing
            let creations = world.changes.filter { $0.removed == nil }
            outgoing.changes = creations
            let created = try await push.run(outgoing, on: connection)
            // The first two statements merge in SQL (the second was sent before the first's outcome came).
            let size = server.options.rowsPerStatement
            #expect(created.written == creations.count && created.mergedInSQL == 2 * size
                    && created.insertedUnread == creations.count - 2 * size)
            // Learnt for this table only.
            let other = try #require(server.schema.tables.values.first { $0.entity.uid != table.entity.uid })
            #expect(push.way.insertsFirst(table) && !push.way.insertsFirst(other))
            // Edits of them all, with clocks newer than any above: the first two statements insert
            // nothing and leave their rows to the read, the rest merge in SQL.
            var edits = creations.map { ReplicaChange(entityUid: $0.entityUid, globalId: $0.globalId) }
            let title = try #require(table.entity.properties.first { $0.name == "title" })
            for round in 1...2 {
                for index in edits.indices {
                    edits[index].values = [ReplicaChange.Value(uid: title.uid, value: .string("edit \(round)"),
                                                               clock: ReplicaClock(timestamp: HybridTimestamp(rawValue: 100 + UInt64(round)), device: world.device))]
                }
                outgoing.changes = edits
                outgoing.through += 1
                let edited = try await push.run(outgoing, on: connection)
                #expect(edited.written == edits.count && edited.insertedUnread == 0)
                #expect(edited.mergedInSQL == (round == 1 ? edits.count - 2 * size : edits.count), "round \(round)")
            }
            let titles = try await connection.rows("SELECT DISTINCT \(table.columns[title.uid]!) FROM \(table.qualified)", logger: TestServer.logger)
            #expect(titles.map { $0[0] } == ["edit 2"])
        }
    }

    /// Rows written by statements that send each clock array once (rows sharing a few of
    /// them, in runs and apart) or each row's own (every row's its own) come back with each
    /// row's own clocks, when inserted and when updated.
    @Test(.enabled(if: TestServer.enabled, TestServer.skipped))
    func rowsSharingClockArraysGetTheirOwn() async throws {
        try await Self.withTable { connection, server, table, outgoing in
            var options = server.options
            options.mergesInSQL = false  // read, merged in Swift, then inserted or updated by `Write`
            let device = UUID()
            let push = Push(schema: server.schema, options: options, device: device, logger: TestServer.logger)
            let ids = (0..<40).map { _ in UUID() }
            var expected: [UUID: ServerRow] = [:]
            var outgoing = outgoing
            // Clocks shared by rows 0, 3, 6, … (and by 1, 4, … and by 2, 5, …); then two arrays
            // in runs of 4 rows, differing in one property's clock; then a clock of each row's own.
            var random = ConvergenceTests.Generator(state: 0x5EED_0004)
            let stamps: [(_ index: Int, _ position: Int) -> UInt64] = [
                { index, _ in 10 + UInt64(index % 3) },
                { index, position in position == 0 && index / 4 % 2 == 1 ? 21 : 20 },
                { index, _ in 30 + UInt64(index) },
            ]
            for (round, stamp) in stamps.enumerated() {
                outgoing.changes = []
                for (index, id) in ids.enumerated() {
                    var change = ReplicaChange(entityUid: table.entity.uid, globalId: id)
                    for (position, property) in table.entity.properties.enumerated() {
                        change.values.append(ReplicaChange.Value(uid: property.uid, value: World.value(of: property, random: &random),
                                                                 clock: ReplicaClock(timestamp: HybridTimestamp(rawValue: stamp(index, position)), device: device)))
                    }
                    outgoing.changes.append(change)
                }
                outgoing.through += 1
                let result = try await push.run(outgoing, on: connection)
                #expect(result.written == ids.count, "round \(round)")
                var clockTexts = ClockTexts()
                for change in outgoing.changes {
                    expected[change.globalId] = push.merge(change, into: expected[change.globalId], table: table, clockTexts: &clockTexts)
                }
                let rows = try await ServerRow.read(ids, of: table, locking: false, on: connection, logger: TestServer.logger)
                for id in ids {
                    // (The values as the server prints them differ from the merge's texts: "1" for "1.0".)
                    #expect(rows[id] != nil && rows[id]?.clocks == expected[id]?.clocks, "round \(round), object \(id)")
                }
            }
        }
    }

    /// The server's tables for the tests' model in a schema of their own, with chunks of 7
    /// rows (each with rows merged in SQL and rows left to Swift), and the outgoing changes of
    /// a store with one history entry (whose changes a test replaces).
    private static func withTable(
        _ body: (PostgresConnection, (schema: ServerSchema, options: SyncOptions), ServerSchema.Table, OutgoingChanges) async throws -> Void
    ) async throws {
        let directory = NSTemporaryDirectory() + "cellar-sync-merging-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var storeOptions = StoreOptions()
        storeOptions.changeHistory = true
        let store = try Store(directoryPath: directory, options: storeOptions)
        defer { store.close() }
        try store.box(for: Item.self).put(Item(title: "one entry in the history"))
        _ = try store.replicaState()
        let outgoing = try store.outgoingChanges(limit: 10)
        let entity = try #require(try store.replicaSchema().entities.first { $0.name == "Item" })
        try await TestServer.freshSchema { connection, schema in
            var options = SyncOptions()
            options.schema = schema
            options.rowsPerStatement = 7
            let server = try await ServerSchema.migrate(try store.replicaSchema(), options: options, on: connection,
                                                        logger: TestServer.logger)
            try await body(connection, (server, options), try #require(server.tables[entity.uid]), outgoing)
        }
    }

    /// What a push left on the server: the rows (their clocks as a reader reads them, and every
    /// slot of `cellar_clocks`, also those of columns the model lacks) and which rows got a
    /// change row.
    private struct Outcome: Equatable {
        var written: Int
        var rows: [String]
        var changed: [String]

        init(_ written: Int, table: ServerSchema.Table, namespace: String, on connection: PostgresConnection) async throws {
            self.written = written
            let ids = try await connection.rows("SELECT cellar_id::text FROM \(table.qualified)", logger: TestServer.logger).map { UUIDText.uuid($0[0]!)! }
            rows = try await ServerRow.read(ids, of: table, locking: false, on: connection, logger: TestServer.logger).values
                .sorted { UUIDText.text($0.id) < UUIDText.text($1.id) }
                .map { "\($0.id) removed \($0.removed ?? "-") clocks \($0.clocks) newest \($0.newestRead ?? "-") values \($0.values)" }
            rows += try await connection.rows("""
                SELECT cellar_id::text || ' ' || ARRAY(SELECT cellar_clocks[slot] FROM generate_series(1, \(World.otherSlot(of: table))) AS slot)::text
                FROM \(table.qualified) ORDER BY 1
                """, logger: TestServer.logger).map { $0[0] ?? "" }
            changed = try await connection.rows("SELECT cellar_id::text FROM \(SQL.quote(namespace)).cellar_changes ORDER BY 1",
                                                logger: TestServer.logger).map { $0[0] ?? "" }
        }
    }

    /// Random rows on the server and random changes to them (and to objects it lacks).
    private struct World {
        let device = UUID()
        /// Each object's row: nil when the server lacks it.
        var rows: [(id: UUID, row: Row?)] = []
        var changes: [ReplicaChange] = []

        struct Row {
            var removed: String?
            /// `cellar_clocks`' elements by slot (nil: NULL).
            var clocks: [String?]
            var texts: [String?]
        }

        /// `missing`: the share of objects the server lacks.
        init(table: ServerSchema.Table, missing: Double, random: inout ConvergenceTests.Generator) {
            let devices = [UUID(), UUID(), device]
            func clock() -> ReplicaClock {
                ReplicaClock(timestamp: HybridTimestamp(rawValue: UInt64.random(in: 1...4, using: &random)),
                             device: devices.randomElement(using: &random)!)
            }
            let properties = table.entity.properties
            for _ in 0..<40 {
                let id = UUID()
                var row: Row?
                if Double.random(in: 0..<1, using: &random) >= missing {
                    var clocks = [String?](repeating: nil, count: Self.otherSlot(of: table))
                    for slot in table.slots where Int.random(in: 0..<3, using: &random) > 0 {
                        // (One in ten a value pushed without a clock.)
                        clocks[slot - 1] = Int.random(in: 0..<10, using: &random) == 0 ? "" : clock().text
                    }
                    // The slot of a column this model lacks.
                    if Bool.random(using: &random) { clocks[Self.otherSlot(of: table) - 1] = clock().text }
                    let texts = properties.map { Self.text(of: $0, random: &random) }
                        + table.entity.relations.map { _ in Self.targets(random: &random) }
                    row = Row(removed: Int.random(in: 0..<5, using: &random) == 0 ? clock().text : nil, clocks: clocks, texts: texts)
                }
                rows.append((id, row))
                var change = ReplicaChange(entityUid: table.entity.uid, globalId: id)
                switch Int.random(in: 0..<14, using: &random) {
                case 0, 1:
                    change.removed = clock()
                case 2:
                    break  // a change that carries nothing
                default:
                    for property in properties where Bool.random(using: &random) {
                        change.values.append(ReplicaChange.Value(uid: property.uid, value: Self.value(of: property, random: &random),
                                                                 clock: Int.random(in: 0..<8, using: &random) == 0 ? nil : clock()))
                    }
                    for relation in table.entity.relations where Bool.random(using: &random) {
                        change.relations.append(ReplicaChange.Links(uid: relation.uid, targets: (0..<Int.random(in: 0...2, using: &random)).map { _ in UUID() },
                                                                    clock: clock()))
                    }
                }
                changes.append(change)
            }
        }

        /// A slot of `cellar_clocks` after the table's columns': one of a column this model lacks.
        static func otherSlot(of table: ServerSchema.Table) -> Int { table.slotted.count + 2 }

        static func value(of property: ReplicaSchema.Property, random: inout ConvergenceTests.Generator) -> ReplicaValue {
            if Int.random(in: 0..<6, using: &random) == 0 { return .null }
            let number = Int64.random(in: -3...3, using: &random)
            switch property.column {
            case .boolean: return .bool(number > 0)
            case .bigint: return .integer(number)
            case .numeric: return .unsigned(UInt64(number + 3))
            case .decimal: return .decimal(Decimal(number) / 4)
            case .real: return .float(Float(number) / 3)
            case .doublePrecision: return .double(Double(number) / 3)
            case .text: return .string(["a", "b", "é \"q\"", ""][Int(number + 3) % 4])
            case .bytea: return .bytes([UInt8(number + 3), 0xff])
            case .uuid: return property.targetUid == nil ? .uuid(UUID()) : .reference(UUID())
            case .jsonb: return .json("[\"x\", \(number)]")
            case .uuidArray: return .null
            }
        }

        static func text(of property: ReplicaSchema.Property, random: inout ConvergenceTests.Generator) -> String? {
            ColumnText.text(value(of: property, random: &random))
        }

        static func targets(random: inout ConvergenceTests.Generator) -> String? {
            Bool.random(using: &random) ? nil : ColumnText.uuidArray((0..<Int.random(in: 0...2, using: &random)).map { _ in UUID() })
        }

        /// Empties the table, its change rows and the devices, then writes `rows`.
        func seed(_ table: ServerSchema.Table, namespace: String, on connection: PostgresConnection) async throws {
            let ns = SQL.quote(namespace)
            try await connection.execute("TRUNCATE \(table.qualified), \(ns).cellar_changes, \(ns).cellar_devices", logger: TestServer.logger)
            let values = ["$1::uuid", "$2", "$3::text[]"] + table.types.enumerated().map { ColumnText.cast("$\($0.offset + 4)", $0.element) }
            let insert = "INSERT INTO \(table.qualified) (\(table.rowColumns.joined(separator: ", "))) VALUES (\(values.joined(separator: ", ")))"
            for (id, row) in rows {
                guard let row else { continue }
                let clocks = "{" + row.clocks.map { $0.map { "\"\($0)\"" } ?? "NULL" }.joined(separator: ",") + "}"
                try await connection.execute(insert, [UUIDText.text(id), row.removed, clocks] + row.texts, logger: TestServer.logger)
            }
        }
    }
}
