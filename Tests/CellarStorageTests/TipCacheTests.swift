@testable import CellarStorage
import CellarTestSupport
import Testing

/// What an engine keeps of the commit it made for the next write transaction (`TipCache`): the
/// catalog entries, from which a write opens a tree instead of the catalog, and the nodes the
/// commit wrote, which a write reads from memory and takes over instead of copying them from the
/// file. Both must be exactly the commit the write starts on, whatever came before: commits,
/// drops, aborts, compactions, and the commits of another writer on the same store.
@Suite("catalog entries and nodes kept between writes")
struct TipCacheTests {
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

    /// What the trees of `nodesRandomized` hold: tree name → key → value.
    typealias ValueModel = [String: [UInt64: [UInt8]]]

    static let valueTrees = ["left", "right"]

    /// Small nodes: trees of a few hundred keys are three or four levels deep, and values over
    /// 64 bytes live in records of their own.
    static func smallNodeOptions() -> StorageOptions {
        var options = options()
        options.nodeSize = 256
        return options
    }

    static func value(_ random: inout SplitMix64) -> [UInt8] {
        let length = [1, 20, 60, 100, 300][Int(random.next() % 5)]
        let byte = UInt8(truncatingIfNeeded: random.next())
        return (0..<length).map { byte &+ UInt8(truncatingIfNeeded: $0) }
    }

    /// Every tree of `model` read in a write transaction (which reads the nodes the engine kept)
    /// and in a read transaction (which reads the file), and the live bytes against the records
    /// reachable in the file.
    static func checkValues(_ engine: StorageEngine, _ model: ValueModel, _ step: Int) throws {
        let txn = try engine.beginWrite()
        defer { txn.abort() }
        let read = try engine.beginRead()
        for name in valueTrees {
            let expected = (model[name] ?? [:]).sorted { $0.key < $1.key }
            var inWrite: [(UInt64, [UInt8])] = []
            if let tree = try txn.tree(name, create: false) {
                try txn.cursor(tree).scan { key, value in
                    inWrite.append((bigEndianValue(key), Array(value)))
                    return true
                }
            }
            var inRead: [(UInt64, [UInt8])] = []
            if let tree = try read.tree(name) {
                try read.cursor(tree).scan { key, value in
                    inRead.append((bigEndianValue(key), Array(value)))
                    return true
                }
            }
            #expect(inWrite.map(\.0) == expected.map(\.key), "step \(step): keys of \(name) in a write")
            #expect(inWrite.map(\.1) == expected.map(\.value), "step \(step): values of \(name) in a write")
            #expect(inRead.map(\.0) == expected.map(\.key), "step \(step): keys of \(name) in a read")
            #expect(inRead.map(\.1) == expected.map(\.value), "step \(step): values of \(name) in a read")
        }
        #expect(try SpillTests.reachableBytes(engine) == engine.liveBytes, "step \(step): live bytes")
    }

    @Test("random puts, updates and deletes in trees of several levels, aborts, large commits and compactions by two engines: every write reads and changes the nodes as committed")
    func nodesRandomized() throws {
        let directory = TestDirectory("tip-cache-nodes")
        defer { directory.remove() }
        let engines = [try StorageEngine(directory: directory.path, options: Self.smallNodeOptions()),
                       try StorageEngine(directory: directory.path, options: Self.smallNodeOptions())]
        var model: ValueModel = [:]
        var random = SplitMix64(seed: 0x7195_CAC4E)
        /// One change in `txn` and `next`, then the key read back in the same transaction.
        func change(_ txn: WriteTransaction, _ next: inout ValueModel, keys: UInt64, step: Int) throws {
            let name = Self.valueTrees[Int(random.next() % 2)]
            let tree = try txn.tree(name)!
            let key = random.next() % keys
            if random.next() % 3 == 0 {
                let found = try txn.delete(tree, key: bigEndianKey(key))
                #expect(found == (next[name]?[key] != nil), "step \(step): delete of \(key) in \(name)")
                next[name, default: [:]][key] = nil
            } else {
                let value = Self.value(&random)
                try txn.put(tree, key: bigEndianKey(key), value: value)
                next[name, default: [:]][key] = value
            }
            #expect(try txn.get(tree, key: bigEndianKey(key)) == next[name]?[key], "step \(step): \(key) read back in \(name)")
        }
        for step in 0..<600 {
            // Mostly one engine, so that its kept nodes serve many writes in a row.
            let engine = engines[random.next() % 8 == 0 ? 1 : 0]
            switch random.next() % 24 {
            case 0:
                _ = try engine.compact()
            case 1, 2:
                // Changes thrown away: the nodes they took over are no longer kept, the others are.
                let txn = try engine.beginWrite()
                var scratch = model
                for _ in 0..<Int(1 + random.next() % 3) { try change(txn, &scratch, keys: 400, step: step) }
                txn.abort()
            case 3:
                // More nodes than are kept: the next write starts on the file.
                var next = model
                try engine.write { txn in
                    for _ in 0..<300 { try change(txn, &next, keys: 400, step: step) }
                }
                model = next
            case 4:
                // Reads only, then nothing to commit.
                try engine.write { txn in
                    for name in Self.valueTrees {
                        guard let tree = try txn.tree(name, create: false) else { continue }
                        let key = random.next() % 400
                        #expect(try txn.get(tree, key: bigEndianKey(key)) == model[name]?[key], "step \(step): read of \(key)")
                    }
                }
            default:
                var next = model
                try engine.write { txn in
                    for _ in 0..<Int(1 + random.next() % 4) { try change(txn, &next, keys: 400, step: step) }
                }
                model = next
            }
            for engine in engines { try Self.checkValues(engine, model, step) }
        }
        for engine in engines { engine.close() }
        let reopened = try StorageEngine(directory: directory.path, options: Self.smallNodeOptions())
        defer { reopened.close() }
        try Self.checkValues(reopened, model, 600)
    }
}
