@testable import CellarStorage
import CellarTestSupport
import Testing

/// The catalog entries an engine keeps from one write transaction to the next (`CatalogCache`):
/// a write opens a tree from them instead of the catalog, so they must be exactly the catalog of
/// the commit the write starts on, whatever came before: commits, drops, aborts, compactions, and
/// the commits of another writer on the same store.
@Suite("catalog entries kept between writes")
struct CatalogCacheTests {
    /// What the trees hold: tree name → key → value.
    typealias Model = [String: [UInt64: UInt8]]

    static let names = ["alpha", "beta", "gamma", "delta"]

    static func options() -> StorageOptions {
        var options = StorageOptions(durability: .none, initialMapSize: 1 << 20, superblockInterval: 7)
        options.sharedWriting = true
        options.automaticCompaction = nil
        return options
    }

    /// Checks every tree against `model` from a write transaction (which opens trees from the
    /// kept entries) and from a read transaction (which reads the catalog): counts, and every
    /// key and value in order.
    static func check(_ engine: StorageEngine, _ model: Model, _ step: Int) throws {
        let txn = try engine.beginWrite()
        defer { txn.abort() }
        let read = try engine.beginRead()
        for name in names {
            let expected = model[name]
            let written = try txn.tree(name, create: false)
            let readTree = try read.tree(name)
            #expect((written != nil) == (expected != nil), "step \(step): tree \(name) in the write")
            #expect((readTree != nil) == (expected != nil), "step \(step): tree \(name) in the read")
            guard let expected, let written, let readTree else { continue }
            #expect(try txn.count(written) == expected.count, "step \(step): count of \(name) in the write")
            #expect(try read.count(readTree) == expected.count, "step \(step): count of \(name) in the read")
            var seen: [(UInt64, UInt8)] = []
            try txn.cursor(written).scan { key, value in
                seen.append((bigEndianValue(key), value.first ?? 0))
                return true
            }
            let sorted = expected.sorted { $0.key < $1.key }
            #expect(seen.map(\.0) == sorted.map(\.key), "step \(step): keys of \(name)")
            #expect(seen.map(\.1) == sorted.map(\.value), "step \(step): values of \(name)")
        }
    }

    static func bigEndianValue(_ key: UnsafeRawBufferPointer) -> UInt64 {
        key.reduce(0) { $0 << 8 | UInt64($1) }
    }

    @Test("random writes, drops, aborts and compactions by two engines taking turns: every write opens the trees as committed")
    func randomized() throws {
        let directory = TestDirectory("catalog-cache")
        defer { directory.remove() }
        let engines = [try StorageEngine(directory: directory.path, options: Self.options()),
                       try StorageEngine(directory: directory.path, options: Self.options())]
        defer { for engine in engines { engine.close() } }
        var model: Model = [:]
        var random = SplitMix64(seed: 0xCA7A_106)
        for step in 0..<400 {
            // Mostly one engine: its kept entries are used many times in a row; now and then the
            // other writes, and the first must not open a tree from entries of an older commit.
            let engine = engines[random.next() % 8 == 0 ? 1 : 0]
            switch random.next() % 20 {
            case 0:
                _ = try engine.compact()
            case 1:
                // Changes that are thrown away leave the kept entries as they were.
                let txn = try engine.beginWrite()
                let name = Self.names[Int(random.next() % 4)]
                let tree = try txn.tree(name)!
                try txn.put(tree, key: bigEndianKey(random.next() % 64), value: [0xEE])
                txn.abort()
            case 2:
                let name = Self.names[Int(random.next() % 4)]
                let dropped = try engine.write { try $0.dropTree(name) }
                #expect(dropped == (model[name] != nil))
                model[name] = nil
            default:
                var next = model
                try engine.write { txn in
                    for _ in 0..<Int(1 + random.next() % 4) {
                        let name = Self.names[Int(random.next() % 4)]
                        let tree = try txn.tree(name)!
                        let key = random.next() % 64
                        if random.next() % 4 == 0 {
                            let found = try txn.delete(tree, key: bigEndianKey(key))
                            #expect(found == (next[name]?[key] != nil))
                            next[name, default: [:]][key] = nil
                        } else {
                            let value = UInt8(truncatingIfNeeded: random.next())
                            try txn.put(tree, key: bigEndianKey(key), value: [value])
                            next[name, default: [:]][key] = value
                        }
                        if random.next() % 16 == 0 {
                            // Dropped and made again in the same transaction.
                            try txn.dropTree(name)
                            _ = try txn.tree(name)!
                            next[name] = [:]
                        }
                    }
                }
                model = next
            }
            for engine in engines { try Self.check(engine, model, step) }
        }
    }
}
