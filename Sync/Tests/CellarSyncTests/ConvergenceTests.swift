@_spi(Sync) import Cellar
@testable import CellarSync
import Foundation
import PostgresNIO
import Testing

/// Three stores edit the same objects at random, each going offline now and then, and sync in a
/// random order; at the end every store holds the same objects with the same values, no object
/// is lost or doubled, and no change made by an object's only writer is lost.
@Suite(.serialized, .enabled(if: TestServer.enabled, TestServer.skipped))
struct ConvergenceTests {
    /// A random generator with a seed, printed on failure to replay a run.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test(arguments: [0x5EED_0001, UInt64.random(in: 1...UInt64.max)])
    func threeStoresConverge(seed: UInt64) async throws {
        try await TestServer.freshSchema { connection, schema in
            var random = Generator(state: seed)
            var options = SyncOptions()
            options.changeRetention = .seconds(3_600)
            options.rowsPerStatement = 3  // a push's reads and writes pipelined over many statements
            options.pushObjects = 4       // and pushes and pulls over many batches
            options.pullChanges = 5
            let harness = try SyncHarness(schema: schema, options: options)
            defer { Task { await harness.close() } }
            for _ in 0..<3 { try harness.addStore() }
            var online = [true, true, true]
            // Titles are written only by the store that made the item: the last one it wrote
            // must be the one every store ends with. Keyed by (store, local id).
            var lastTitle: [String: String] = [:]
            var created = 0
            for step in 0..<400 {
                let which = Int.random(in: 0..<3, using: &random)
                let store = harness.stores[which]
                let items = store.box(for: Item.self), people = store.box(for: Person.self)
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<15:
                    let item = Item(title: "s\(which)-\(step)", count: step)
                    try items.put(item)
                    lastTitle["\(which)-\(item.id)"] = item.title
                    created += 1
                case 15..<22:
                    try people.put(Person(name: "p\(which)-\(step)", age: step % 90))
                case 22..<45:
                    // A property any store writes: the last writer wins.
                    guard let item = try items.all().randomElement(using: &random) else { break }
                    item.count = Int.random(in: 0..<1000, using: &random)
                    item.score = Double(step) / 7
                    try items.put(item)
                case 45..<55:
                    // A title, by the item's own store only.
                    guard let item = try items.all().filter({ lastTitle["\(which)-\($0.id)"] != nil }).randomElement(using: &random) else { break }
                    item.title = "s\(which)-\(step)-renamed"
                    try items.put(item)
                    lastTitle["\(which)-\(item.id)"] = item.title
                case 55..<65:
                    guard let item = try items.all().randomElement(using: &random),
                          let person = try people.all().randomElement(using: &random) else { break }
                    item.owner.target = person
                    if Bool.random(using: &random) { item.helpers.append(person) }
                    try items.put(item)
                case 65..<70:
                    guard let item = try items.all().randomElement(using: &random) else { break }
                    try items.remove(item.id)
                case 70..<72:
                    guard let person = try people.all().randomElement(using: &random) else { break }
                    try people.remove(person.id)
                case 72..<78:
                    online[which].toggle()
                case 78..<80:
                    // The offline stores are seen last long ago: an online store prunes what
                    // the others pulled, and the offline ones read the rows when they are back.
                    if online[which] { try await harness.prune(by: which, offline: online, on: connection) }
                default:
                    if online[which] { try await harness.clients[which].sync() }
                }
            }
            try await harness.syncAll()
            let pictures = try harness.stores.map(SyncHarness.picture(of:))
            #expect(pictures[0] == pictures[1], "seed \(seed)")
            #expect(pictures[1] == pictures[2], "seed \(seed)")
            // Every item is on the server once, and each store's last title is everywhere.
            let itemUid = harness.stores[0].model.entity(named: "Item")!.id.uid
            for (which, store) in harness.stores.enumerated() {
                for item in try store.box(for: Item.self).all() {
                    guard let expected = lastTitle["\(which)-\(item.id)"] else { continue }
                    #expect(item.title == expected, "seed \(seed)")
                    let gid = try #require(try store.globalId(entityUid: itemUid, id: item.id))
                    for other in harness.stores {
                        let id = try #require(try other.localId(entityUid: itemUid, globalId: gid), "seed \(seed)")
                        #expect(try other.box(for: Item.self).get(id)?.title == expected, "seed \(seed)")
                    }
                }
            }
            // On the server: each object once, the live ones those every store holds. (An item
            // made and removed between two syncs of its store never reaches the server.)
            let rows = try await connection.rows("""
                SELECT count(*)::text, count(DISTINCT cellar_id)::text, count(*) FILTER (WHERE cellar_removed IS NULL)::text
                FROM \(SQL.quote(schema))."Item"
                """, logger: TestServer.logger)
            let row = try #require(rows.first)
            #expect(row[0] == row[1], "seed \(seed)")
            #expect(row[2] == String(try harness.stores[0].box(for: Item.self).count()), "seed \(seed)")
            #expect(Int(row[0] ?? "") ?? 0 <= created, "seed \(seed)")
        }
    }
}
