@_spi(CellarGenerated) import Cellar
import CellarStorage
import Foundation

/// Two versions of an app's `Person` entity, as a user's two app releases would have them, and
/// the migration from the first to the second: the migration tests and the child process that
/// is killed during a migration share them.
///
/// - version 1: `name` ("First Last"), `age` (Long), `email` (String, not unique);
/// - version 2: `name` split into `firstName` and `lastName` (new UIDs; `name` retired), `age`
///   a String (same UID: its type changed), `email` unique (duplicates removed, the lowest id kept).
public enum MigrationWorkload {
    static let entityUid: UInt64 = 5_000

    public enum V1: RowSchema {
        public static let entity = MigrationWorkload.entity(last: 4, [
            ModelProperty(name: "id", id: IdUid(id: 1, uid: 5_001), type: .long, flags: [.id]),
            ModelProperty(name: "name", id: IdUid(id: 2, uid: 5_002), type: .string),
            ModelProperty(name: "age", id: IdUid(id: 3, uid: 5_003), type: .long),
            ModelProperty(name: "email", id: IdUid(id: 4, uid: 5_004), type: .string),
        ])
    }

    public enum V2: RowSchema {
        public static let entity = MigrationWorkload.entity(last: 6, [
            ModelProperty(name: "id", id: IdUid(id: 1, uid: 5_001), type: .long, flags: [.id]),
            ModelProperty(name: "age", id: IdUid(id: 3, uid: 5_003), type: .string),
            ModelProperty(name: "email", id: IdUid(id: 4, uid: 5_004), type: .string, flags: [.indexed, .unique],
                          indexId: IdUid(id: 1, uid: 5_101)),
            ModelProperty(name: "firstName", id: IdUid(id: 5, uid: 5_005), type: .string),
            ModelProperty(name: "lastName", id: IdUid(id: 6, uid: 5_006), type: .string),
        ])
    }

    /// Entity `Person` with `properties`, the one with ID `last` the last.
    public static func entity(last: UInt32, _ properties: [ModelProperty]) -> ModelEntity {
        ModelEntity(name: "Person", id: IdUid(id: 1, uid: entityUid),
                    lastPropertyId: properties.first { $0.id.id == last }!.id, properties: properties)
    }

    public static func model(_ entity: ModelEntity) -> Cellar.Model {
        let index = entity.properties.compactMap(\.indexId).max { $0.id < $1.id } ?? .zero
        return Cellar.Model(entities: [entity], lastEntityId: entity.id, lastIndexId: index)
    }

    /// Person `k` (1-based) of version 1: every tenth shares its email with the one before.
    public static func person(_ k: Int) -> Row<V1> {
        let email = k % 10 == 0 ? "p\(k - 1)@example.com" : "p\(k)@example.com"
        return Row(["name": .string("First\(k) Last\(k)"), "age": .long(Int64(20 + k % 50)), "email": .string(email)])
    }

    /// Stores persons 1 ... `count` of version 1 in `path` (batches of 10,000 per transaction).
    public static func populate(_ path: String, count: Int, options: StoreOptions = StoreOptions(durability: .none)) throws {
        var options = options
        options.schemaVersion = 1
        let store = try Store(directoryPath: path, model: model(V1.entity), options: options)
        defer { store.close() }
        let box = store.box(for: Row<V1>.self)
        var k = 1
        while k <= count {
            let batch = (k...min(count, k + 9_999)).map(person)
            try box.put(batch)
            k += batch.count
        }
    }

    /// Options that open a version-1 store with the version-2 model and migrate it; `visited` is
    /// called with the number of objects visited so far, after each.
    public static func options(_ base: StoreOptions = StoreOptions(),
                               visited: @escaping @Sendable (Int) throws -> Void = { _ in }) -> StoreOptions {
        var options = base
        options.schemaVersion = 2
        options.migration = { migration in
            var seen: Set<String> = []
            var count = 0
            try migration.enumerateObjects(ofType: "Person") { old, new in
                guard let new else { return }
                let email = try old["email"].stringValue ?? ""
                if !seen.insert(email).inserted {
                    try migration.delete(new)
                } else {
                    let parts = (try old["name"].stringValue ?? "").split(separator: " ", maxSplits: 1)
                    try new.set("firstName", to: .string(parts.first.map(String.init) ?? ""))
                    try new.set("lastName", to: .string(parts.count > 1 ? String(parts[1]) : ""))
                    try new.set("age", to: .string(String(try old["age"].intValue ?? 0)))
                }
                count += 1
                try visited(count)
            }
        }
        return options
    }

    /// What person `k` of version 1 becomes in version 2 (nil: removed as a duplicate).
    public static func migrated(_ k: Int) -> [String: RowValue]? {
        if k % 10 == 0 { return nil }
        return ["firstName": .string("First\(k)"), "lastName": .string("Last\(k)"), "age": .string(String(20 + k % 50)),
                "email": .string("p\(k)@example.com")]
    }
}
