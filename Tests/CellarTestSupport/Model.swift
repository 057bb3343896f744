import CellarStorage

/// What a store should hold: trees of keys and values, kept in memory, to compare with the engine.
public struct Model: Equatable, Sendable {
    public var trees: [String: [[UInt8]: [UInt8]]] = [:]

    public init() {}

    /// Reads everything the engine holds into a model (every value is read, so every checksum on
    /// the way is verified).
    public init(reading txn: ReadTransaction) throws {
        for name in try txn.treeNames() {
            let tree = try txn.tree(name)!
            var entries: [[UInt8]: [UInt8]] = [:]
            try txn.cursor(tree).scan { key, value in
                entries[Bytes.copy(key)] = Bytes.copy(value)
                return true
            }
            trees[name] = entries
        }
    }

    /// Equal trees, entry for entry. Written out rather than synthesized: the synthesized one
    /// compares values through the generic `[UInt8] ==`, byte by byte in a debug build (see `Bytes`),
    /// and the crash and corruption tests compare thousands of models of megabytes.
    public static func == (lhs: Model, rhs: Model) -> Bool {
        guard lhs.trees.count == rhs.trees.count else { return false }
        for (name, entries) in lhs.trees {
            guard let others = rhs.trees[name], others.count == entries.count else { return false }
            for (key, value) in entries {
                guard let other = others[key], Bytes.equal(value, other) else { return false }
            }
        }
        return true
    }
}

/// One change in a workload.
public enum Operation: Sendable, Equatable {
    case put(tree: String, key: [UInt8], value: [UInt8])
    case delete(tree: String, key: [UInt8])
    case drop(tree: String)
}

extension Model {
    public mutating func apply(_ operations: [Operation]) {
        for operation in operations {
            switch operation {
            case .put(let tree, let key, let value): trees[tree, default: [:]][key] = value
            case .delete(let tree, let key): trees[tree]?[key] = nil
            case .drop(let tree): trees[tree] = nil
            }
        }
    }
}

/// Applies operations to a write transaction.
public func apply(_ operations: [Operation], to txn: WriteTransaction) throws {
    for operation in operations {
        switch operation {
        case .put(let tree, let key, let value):
            try txn.put(txn.tree(tree)!, key: key, value: value)
        case .delete(let tree, let key):
            if let handle = try txn.tree(tree, create: false) { try txn.delete(handle, key: key) }
        case .drop(let tree):
            try txn.dropTree(tree)
        }
    }
}

/// The deterministic workload of the crash and fault-injection tests: transaction `k` of a seed is
/// always the same few puts and deletes over a few trees, with values from empty to several KiB
/// (some out of line), so that any prefix of commits has a known content.
public enum CrashWorkload {
    /// Where the compacting kill test's child records how many workload transactions it committed.
    public static let progressTree = "~progress"

    /// The number of workload transactions committed into the store in `directory` (0 when the
    /// store or its progress tree does not exist yet).
    public static func progress(in directory: String, options: StorageOptions = StorageOptions(initialMapSize: 1 << 20)) throws -> Int {
        let engine = try StorageEngine(directory: directory, options: options)
        defer { engine.close() }
        return try engine.read { txn in
            guard let tree = try txn.tree(progressTree), let bytes = try txn.get(tree, key: [0]) else { return 0 }
            return Int(bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        }
    }

    public static func transaction(_ k: Int, seed: UInt64) -> [Operation] {
        var rng = SplitMix64(seed: seed &+ UInt64(k) &* 0x9E37_79B9)
        // The first operation is always a put, so that every transaction commits something (a
        // transaction that changes nothing makes no commit).
        var operations: [Operation] = [.put(tree: "t\(rng.next() % 3)", key: bigEndianKey(1000 + UInt64(k % 50)), value: bigEndianKey(UInt64(k)))]
        let count = Int(rng.next() % 6)
        for _ in 0..<count {
            let tree = "t\(rng.next() % 3)"
            let key = bigEndianKey(rng.next() % 200)
            if rng.next() % 4 == 0 {
                operations.append(.delete(tree: tree, key: key))
            } else {
                let size = rng.next() % 8 == 0 ? Int(rng.next() % 6000) : Int(rng.next() % 120)
                let fill = UInt8(truncatingIfNeeded: k)
                operations.append(.put(tree: tree, key: key, value: [UInt8](repeating: fill, count: size) + bigEndianKey(UInt64(k))))
            }
        }
        if rng.next() % 97 == 0 { operations.append(.drop(tree: "t\(rng.next() % 3)")) }
        return operations
    }

    /// Transaction `k` of the large-key workload: trees `k0`, `k1`, `k2`; a tenth of the keys
    /// 1 KiB to 40 KiB long (a key's length follows from its number, so a key is put and deleted
    /// again and again), values from a few bytes to 40 KiB; one transaction in 16 puts or deletes
    /// 100 to 300 keys. Keys far over a node's size are what a branch holds as separators.
    public static func largeTransaction(_ k: Int, seed: UInt64) -> [Operation] {
        var rng = SplitMix64(seed: seed &+ UInt64(k) &* 0x9E37_79B9 &+ 1)
        func key(_ n: UInt64) -> [UInt8] {
            let length = n % 10 == 0 ? 1024 + Int(n &* 7919 % 40_000) : Int(n % 16)
            return bigEndianKey(n &* 0x9E37_79B9_7F4A_7C15) + [UInt8](repeating: UInt8(truncatingIfNeeded: n), count: length)
        }
        var operations: [Operation] = [.put(tree: "k\(rng.next() % 3)", key: key(UInt64(k % 50)), value: bigEndianKey(UInt64(k)))]
        let count = rng.next() % 16 == 0 ? 100 + Int(rng.next() % 200) : Int(rng.next() % 6)
        for _ in 0..<count {
            let tree = "k\(rng.next() % 3)"
            let n = rng.next() % 1500
            if rng.next() % 4 == 0 {
                operations.append(.delete(tree: tree, key: key(n)))
            } else {
                let size = rng.next() % 10 == 0 ? Int(rng.next() % 40_000) : Int(rng.next() % 200)
                operations.append(.put(tree: tree, key: key(n), value: [UInt8](repeating: UInt8(truncatingIfNeeded: k), count: size) + bigEndianKey(UInt64(k))))
            }
        }
        return operations
    }

    /// The model after the first `commits` transactions.
    public static func model(after commits: Int, seed: UInt64) -> Model {
        var model = Model()
        for k in stride(from: 1, through: commits, by: 1) { model.apply(transaction(k, seed: seed)) }
        return model
    }

    public static func apply(_ operations: [Operation], to txn: WriteTransaction) throws {
        try CellarTestSupport.apply(operations, to: txn)
    }
}

/// `value` as 8 big-endian bytes: keys that sort like the numbers.
public func bigEndianKey(_ value: UInt64) -> [UInt8] {
    withUnsafeBytes(of: value.bigEndian) { Array($0) }
}

extension Model: CustomStringConvertible {
    /// A short summary (trees and entry counts), never the bytes: test failures stay readable.
    public var description: String {
        let trees = trees.keys.sorted().map { "\($0): \(self.trees[$0]!.count)" }.joined(separator: ", ")
        return "Model(\(trees))"
    }

    /// The first difference from `other`, in words; nil when equal.
    public func difference(from other: Model) -> String? {
        for name in Set(trees.keys).union(other.trees.keys).sorted() {
            guard let mine = trees[name] else { return "tree \(name) only in the other" }
            guard let theirs = other.trees[name] else { return "tree \(name) only in this one" }
            for key in Set(mine.keys).union(theirs.keys).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                let a = mine[key], b = theirs[key]
                if a != b {
                    return "tree \(name), key \(key): \(a.map { "\($0.count) bytes ending \(Array($0.suffix(9)))" } ?? "absent") vs \(b.map { "\($0.count) bytes ending \(Array($0.suffix(9)))" } ?? "absent")"
                }
            }
        }
        return nil
    }
}

/// The content of `Fixtures/deep-tree.cellar`, a store written by a build whose splits could leave
/// one-child branches: tree `deep` holds `key(i)` → `value(i)` for i in 0 ..< 80, put in that
/// order in one transaction, in 512-byte nodes.
public enum DeepTreeFixture {
    public static let count: UInt64 = 80

    /// Keys of 600 bytes or more (over a node), in an order unlike their numbers'.
    public static func key(_ i: UInt64) -> [UInt8] {
        bigEndianKey(i &* 0x9E37_79B9_7F4A_7C15) + [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: 600 + Int(i % 7))
    }

    public static func value(_ i: UInt64) -> [UInt8] { bigEndianKey(i) }
}
