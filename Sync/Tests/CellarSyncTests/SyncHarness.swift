@_spi(Sync) import Cellar
@testable import CellarSync
import Foundation
import PostgresNIO
import Testing

/// Stores that sync with the test server, each in a directory of its own, and a comparable
/// picture of what a store holds.
final class SyncHarness: @unchecked Sendable {
    let schema: String
    let directory: String
    var options: SyncOptions
    /// The server the stores sync with: the tests' server unless a test sets another.
    var server: SyncServer?
    private(set) var stores: [Store] = []
    private(set) var clients: [SyncClient] = []

    init(schema: String, options: SyncOptions = SyncOptions()) throws {
        self.schema = schema
        directory = NSTemporaryDirectory() + "cellar-sync-" + UUID().uuidString
        var options = options
        options.schema = schema
        self.options = options
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// A new store (opened with change history) and its client; `prepare` runs first, with the
    /// store's path (to fill a store before it records history, say).
    @discardableResult
    func addStore(prepare: ((String) throws -> Void)? = nil) throws -> (Store, SyncClient) {
        let path = directory + "/store\(stores.count)"
        try prepare?(path)
        var storeOptions = StoreOptions()
        storeOptions.changeHistory = true
        let store = try Store(directoryPath: path, options: storeOptions)
        let client = SyncClient(store: store, server: try server ?? TestServer.server(), options: options, logger: TestServer.logger)
        stores.append(store)
        clients.append(client)
        return (store, client)
    }

    /// Syncs every store twice, in turn: after that every store has seen every push.
    func syncAll() async throws {
        for _ in 0..<2 {
            for client in clients { try await client.sync() }
        }
    }

    /// Store `which` prunes the server's changes after the stores not `online` are marked as
    /// seen two hours ago (past the tests' one-hour retention): they read the current rows when
    /// they are back.
    func prune(by which: Int, offline online: [Bool], on connection: PostgresConnection) async throws {
        // (Before any store synced, the server has no tables: there is no one to mark.)
        let tables = try await connection.rows("SELECT (to_regclass($1) IS NOT NULL)::text", [SQL.quote(schema) + ".cellar_devices"], logger: TestServer.logger)
        for (other, isOnline) in online.enumerated() where !isOnline && tables.first?.first == "true" {
            try await connection.execute("UPDATE \(SQL.quote(schema)).cellar_devices SET seen = now() - interval '2 hours' WHERE device = $1::uuid",
                                         [UUIDText.text(try stores[other].replicaState().device)], logger: TestServer.logger)
        }
        try await clients[which].pruneServer()
    }

    func close() async {
        for client in clients { await client.close() }
        for store in stores { store.close() }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A flex value as text with its maps' keys in order (a dictionary's own order varies
    /// between equal dictionaries).
    static func canonical(_ value: FlexValue) -> String {
        switch value {
        case .list(let elements): "[" + elements.map(canonical).joined(separator: ", ") + "]"
        case .map(let entries): "[" + entries.sorted { $0.key < $1.key }.map { "\($0.key): \(canonical($0.value))" }.joined(separator: ", ") + "]"
        default: "\(value)"
        }
    }

    /// What `store` holds, object by object, by global id (relations as their targets' global
    /// ids): equal pictures mean equal contents. Objects that never synced have no global id and
    /// are listed by local id.
    static func picture(of store: Store) throws -> [String] {
        let itemUid = store.model.entity(named: "Item")!.id.uid
        let personUid = store.model.entity(named: "Person")!.id.uid
        func gid(_ uid: UInt64, _ id: Id) throws -> String {
            try store.globalId(entityUid: uid, id: id)?.uuidString ?? "local-\(id)"
        }
        var lines: [String] = []
        for person in try store.box(for: Person.self).all() {
            lines.append("Person \(try gid(personUid, person.id)) \(person.name) \(person.age)")
        }
        for item in try store.box(for: Item.self).all() {
            let owner = item.owner.targetId == 0 ? "-" : try gid(personUid, item.owner.targetId)
            let helpers = try item.helpers.map { try gid(personUid, $0.id) }.sorted()
            let extra = item.extra.map(canonical) ?? "nil"
            lines.append("Item \(try gid(itemUid, item.id)) \(item.title) \(item.count) \(item.score) \(item.done) "
                + "\(item.due?.timeIntervalSince1970 ?? -1) \(item.tags) \(item.attributes.sorted { $0.key < $1.key }) \(extra) "
                + "\(item.data?.base64EncodedString() ?? "nil") owner \(owner) helpers \(helpers)")
        }
        return lines.sorted()
    }
}
