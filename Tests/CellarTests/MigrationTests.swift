@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

private typealias V1 = MigrationWorkload.V1
private typealias V2 = MigrationWorkload.V2

/// Version 3 of `Person`: `name` renamed to `fullName` without keeping its UID (a new property).
private enum V3: RowSchema {
    static let entity = MigrationWorkload.entity(last: 7, [
        ModelProperty(name: "id", id: IdUid(id: 1, uid: 5_001), type: .long, flags: [.id]),
        ModelProperty(name: "age", id: IdUid(id: 3, uid: 5_003), type: .long),
        ModelProperty(name: "email", id: IdUid(id: 4, uid: 5_004), type: .string),
        ModelProperty(name: "fullName", id: IdUid(id: 7, uid: 5_007), type: .string),
    ])
}

/// Version 2 without the unique flag on `email`.
private enum V2NotUnique: RowSchema {
    static let entity = MigrationWorkload.entity(last: 6, V2.entity.properties.map { property in
        var property = property
        if property.name == "email" { property.flags = []; property.indexId = nil }
        return property
    })
}

/// Version 1 and 2 with an index on `email` (the same index: no new UID).
private enum V1Indexed: RowSchema {
    static let entity = MigrationWorkload.entity(last: 4, V1.entity.properties.map { property in
        var property = property
        if property.name == "email" { property.flags = [.indexed]; property.indexId = IdUid(id: 1, uid: 5_101) }
        return property
    })
}

/// Expects `body` to throw a `code` error whose message contains every one of `parts`.
private func expectError(_ code: CellarError.Code, _ parts: [String], sourceLocation: SourceLocation = #_sourceLocation,
                         _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected a \(code) error containing \(parts)", sourceLocation: sourceLocation)
    } catch let error as CellarError where error.code == code {
        for part in parts where !error.message.contains(part) {
            Issue.record("the error lacks \"\(part)\": \(error.message)", sourceLocation: sourceLocation)
        }
    } catch {
        Issue.record("expected a \(code) error, got \(error)", sourceLocation: sourceLocation)
    }
}

private struct Thrown: Error {}

/// Migrations (`StoreOptions.schemaVersion`, `StoreOptions.migration`): run once, all or nothing,
/// on stores written with the previous version's model.
@Suite struct MigrationTests {
    static func versionOne(_ count: Int) -> StoreOptions {
        var options = StoreOptions(durability: .none)
        options.schemaVersion = 1
        return options
    }

    /// The store in `path` holds persons 1 ... `count` of version 1, at version 1.
    static func expectVersionOne(_ path: String, count: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let store = try Store(directoryPath: path, model: MigrationWorkload.model(V1.entity), options: versionOne(count))
        defer { store.close() }
        #expect(store.modelChanges.isEmpty, sourceLocation: sourceLocation)
        let rows = try store.box(for: Row<V1>.self).all()
        #expect(rows.count == count, sourceLocation: sourceLocation)
        for row in rows where row.values != MigrationWorkload.person(Int(row.id)).values {
            Issue.record("person \(row.id) is \(row.values)", sourceLocation: sourceLocation)
            break
        }
    }

    /// The store in `path` holds persons 1 ... `count` migrated to version 2.
    static func expectVersionTwo(_ store: Store, count: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let rows = try store.box(for: Row<V2>.self).all()
        #expect(rows.map(\.id) == (1...Id(count)).filter { $0 % 10 != 0 }, sourceLocation: sourceLocation)
        for row in rows where row.values != MigrationWorkload.migrated(Int(row.id)) {
            Issue.record("person \(row.id) is \(row.values)", sourceLocation: sourceLocation)
            break
        }
    }

    @Test func splitsAPropertyChangesATypeAndDeduplicatesBeforeAUniqueIndex() throws {
        let dir = TestDirectory("migration-shapes")
        defer { dir.remove() }
        let path = dir.sub("db")
        try MigrationWorkload.populate(path, count: 1_000)
        do {
            let store = try Store(directoryPath: path, model: MigrationWorkload.model(V2.entity), options: MigrationWorkload.options())
            defer { store.close() }
            #expect(store.modelChanges.contains(.changePropertyType(entity: "Person", property: "age")))
            #expect(store.modelChanges.contains(.retireProperty(entity: "Person", property: "name")))
            try Self.expectVersionTwo(store, count: 1_000)
            // The unique index was built over the migrated objects, and holds.
            let box = store.box(for: Row<V2>.self)
            expectError(.uniqueViolation, []) { try box.put(Row(["email": .string("p1@example.com")])) }
            try box.put(Row(["email": .string("p10@example.com")]))  // freed by the deduplication
            // A new object gets an id above every removed one.
            #expect(try box.put(Row(["email": .string("new@example.com")])) == 1_002)
        }
        // Indexes and records agree.
        let summary = try ExportImportTests.verify(path)
        #expect(summary.objects == 902)
        // Opening again runs nothing: the store is at version 2.
        let ran = Locked(false)
        var options = StoreOptions()
        options.schemaVersion = 2
        options.migration = { _ in ran.withLock { $0 = true } }
        _ = try Store(directoryPath: path, model: MigrationWorkload.model(V2.entity), options: options)
        #expect(!ran.current)
        // An app of version 1 is refused: a newer one wrote the store.
        expectError(.schema, ["holds schema version 2, newer than this app's 1"]) {
            _ = try Store(directoryPath: path, model: MigrationWorkload.model(V1.entity), options: Self.versionOne(0))
        }
    }

    @Test func aThrowingMigrationLeavesTheStoreAsItWas() throws {
        let dir = TestDirectory("migration-throw")
        defer { dir.remove() }
        let path = dir.sub("db")
        try MigrationWorkload.populate(path, count: 500)
        // The app's own error comes back as it was thrown, after half the objects were rewritten.
        #expect(throws: Thrown.self) {
            _ = try Store(directoryPath: path, model: MigrationWorkload.model(V2.entity),
                          options: MigrationWorkload.options { if $0 == 250 { throw Thrown() } })
        }
        try Self.expectVersionOne(path, count: 500)
        // A migration that forgets to remove duplicates: the unique index names them, nothing is kept.
        var options = MigrationWorkload.options()
        options.migration = { migration in
            try migration.enumerateObjects(ofType: "Person") { old, new in
                try new?.set("age", to: .string(String(try old["age"].intValue ?? 0)))
            }
        }
        expectError(.schema, ["from schema version 1 to 2 failed", "left at version 1", "Person.email", "objects 109 and 110 both hold \"p109@example.com\""]) {
            _ = try Store(directoryPath: path, model: MigrationWorkload.model(V2.entity), options: options)
        }
        try Self.expectVersionOne(path, count: 500)
        // A bad value names the property and the object, and keeps nothing.
        options.migration = { migration in
            try migration.enumerateObjects(ofType: "Person") { _, new in try new?.set("age", to: .integer(3)) }
        }
        expectError(.illegalArgument, ["Person.age of object 1", "expected a String"]) {
            _ = try Store(directoryPath: path, model: MigrationWorkload.model(V2.entity), options: options)
        }
        try Self.expectVersionOne(path, count: 500)
    }

    @Test func aTypeChangeNeedsAMigrationThatVisitsItsObjects() throws {
        let dir = TestDirectory("migration-type")
        defer { dir.remove() }
        let path = dir.sub("db")
        try MigrationWorkload.populate(path, count: 10)
        let v2 = MigrationWorkload.model(V2NotUnique.entity)
        // No migration code, with or without a raised version.
        for version in [nil, 2] as [UInt64?] {
            var options = StoreOptions()
            options.schemaVersion = version
            expectError(.schema, ["Person.age changed its type from Long to String", "Convert them in a migration"]) {
                _ = try Store(directoryPath: path, model: v2, options: options)
            }
        }
        // A migration that does not look at Person.
        var options = StoreOptions()
        options.schemaVersion = 2
        options.migration = { _ in }
        expectError(.schema, ["Person.age changed its type", "did not visit Person", "enumerateObjects(ofType: \"Person\")"]) {
            _ = try Store(directoryPath: path, model: v2, options: options)
        }
        try Self.expectVersionOne(path, count: 10)
        // One that visits without converting: the old values are gone (absent), not misread.
        options.migration = { try $0.enumerateObjects(ofType: "Person") { _, _ in } }
        let store = try Store(directoryPath: path, model: v2, options: options)
        defer { store.close() }
        #expect(try store.box(for: Row<V2NotUnique>.self).all().allSatisfy { $0.values["age"] == nil && $0.values["email"] != nil })
    }

    @Test func renamesAPropertyThatLostItsUID() throws {
        let dir = TestDirectory("migration-rename")
        defer { dir.remove() }
        let path = dir.sub("db")
        try MigrationWorkload.populate(path, count: 100)
        var options = StoreOptions()
        options.schemaVersion = 3
        options.migration = { try $0.renameProperty(onType: "Person", from: "name", to: "fullName") }
        let store = try Store(directoryPath: path, model: MigrationWorkload.model(V3.entity), options: options)
        defer { store.close() }
        let rows = try store.box(for: Row<V3>.self).all()
        #expect(rows.count == 100)
        for row in rows {
            let before = MigrationWorkload.person(Int(row.id)).values
            #expect(row.values == ["fullName": before["name"]!, "age": before["age"]!, "email": before["email"]!])
        }
    }

    @Test func anIndexOverValuesTheMigrationChangedIsBuiltAgain() throws {
        let dir = TestDirectory("migration-index")
        defer { dir.remove() }
        let path = dir.sub("db")
        do {
            let store = try Store(directoryPath: path, model: MigrationWorkload.model(V1Indexed.entity), options: Self.versionOne(0))
            try store.box(for: Row<V1Indexed>.self).put((1...200).map { Row<V1Indexed>(MigrationWorkload.person($0).values) })
            store.close()
        }
        var options = StoreOptions()
        options.schemaVersion = 2
        options.migration = { migration in
            try migration.enumerateObjects(ofType: "Person") { old, new in
                try new?.set("email", to: .string("moved-" + (try old["email"].stringValue ?? "")))
            }
        }
        _ = try Store(directoryPath: path, model: MigrationWorkload.model(V1Indexed.entity), options: options)
        // The index holds the new values, and only them.
        #expect(try ExportImportTests.verify(path).indexEntries == 200)
    }

    @Test func misuseIsNamed() throws {
        let dir = TestDirectory("migration-misuse")
        defer { dir.remove() }
        let path = dir.sub("db")
        try MigrationWorkload.populate(path, count: 3)
        let v2 = MigrationWorkload.model(V2NotUnique.entity)
        func migrate(_ body: @escaping @Sendable (Migration) throws -> Void) throws {
            var options = StoreOptions()
            options.schemaVersion = 2
            options.migration = body
            _ = try Store(directoryPath: path, model: v2, options: options)
        }
        expectError(.illegalArgument, ["neither model has an entity Nope"]) {
            try migrate { try $0.enumerateObjects(ofType: "Nope") { _, _ in } }
        }
        expectError(.illegalArgument, ["the old model's Person has no property firstName"]) {
            try migrate { try $0.enumerateObjects(ofType: "Person") { old, _ in _ = try old["firstName"] } }
        }
        expectError(.illegalArgument, ["the old Person object is read-only"]) {
            try migrate { try $0.enumerateObjects(ofType: "Person") { old, _ in try old.set("age", to: 1) } }
        }
        expectError(.illegalArgument, ["ran once already"]) {
            try migrate { migration in
                for _ in 0..<2 { try migration.enumerateObjects(ofType: "Person") { _, _ in } }
            }
        }
        expectError(.illegalArgument, ["delete(_:) takes the `new` object"]) {
            try migrate { migration in try migration.enumerateObjects(ofType: "Person") { old, _ in try migration.delete(old) } }
        }
        try Self.expectVersionOne(path, count: 3)
    }

    @Test("every property type reads and writes back unchanged, and every index kind is built again")
    func identityMigrationOfEveryTypeKeepsTheStore() throws {
        let dir = TestDirectory("migration-identity")
        defer { dir.remove() }
        let path = dir.sub("db")
        try ExportImportTests.fill(path, seed: 7)
        let before = try ExportImportTests.exported(path)
        var options = StoreOptions()
        options.schemaVersion = 1
        options.migration = { migration in
            for entity in migration.newModel.entities where !entity.isEmbedded {
                try migration.enumerateObjects(ofType: entity.name) { old, new in
                    for property in entity.properties where !property.flags.contains(.id) {
                        try new!.set(property.name, to: try old[property.name])
                    }
                }
            }
        }
        _ = try Store(directoryPath: path, model: cellarModel(), options: options)
        let after = try ExportImportTests.exported(path)
        #expect(after.count == before.count)
        #expect(after.dropFirst().elementsEqual(before.dropFirst()))
        #expect(try ExportImportTests.portableHeader(after[0]) == ExportImportTests.portableHeader(before[0]))
        _ = try ExportImportTests.verify(path)
    }

    @Test("kill -9 in the middle of a migration leaves the old version, and the migration runs again whole")
    func killDuringAMigration() throws {
        let dir = TestDirectory("migration-kill")
        defer { dir.remove() }
        let count = 30_000
        var random = SplitMix64(seed: 48)
        for round in 0..<3 {
            let path = dir.sub("db\(round)")
            try MigrationWorkload.populate(path, count: count)
            // A counted point: after this many objects of the pass (which writes ahead of its
            // commit past its 1 MiB budget).
            let killAt = 1 + Int(random.next() % UInt64(count - count / 10 - 1))
            let child = try ChildProcess.spawn(VectorCrashTests.childPath, [path, "migrate", String(killAt)])
            var output: [UInt8] = []
            var status: Int32 = 0
            // Read until the child's output closes (it killed itself, or ended), then reap it.
            _ = ChildProcess.wait(for: { _ in false }, on: child.output, into: &output)
            waitpid(child.pid, &status, 0)
            close(child.output)
            let text = String(decoding: output, as: UTF8.self)
            #expect(status & 0x7f == SIGKILL, "round \(round): the child was not killed: \(text)")
            try Self.expectVersionOne(path, count: count)
            var base = StoreOptions()
            base.transactionMemoryBudget = 1 << 20
            let store = try Store(directoryPath: path, model: MigrationWorkload.model(V2.entity), options: MigrationWorkload.options(base))
            try Self.expectVersionTwo(store, count: count)
            store.close()
            _ = try ExportImportTests.verify(path)
        }
    }
}
