import CellarStorage

/// The workload of the group commit tests and of the crash child's `threads` mode: thread `t` of
/// run `run` commits transactions `i` = 1, 2, …, each putting one key (`key(run:thread:index:)`)
/// with its value (`value(run:thread:index:)`) into both `objects` and `twins`. A commit is
/// whole when a key is in both trees with its value, or in neither.
public enum GroupCommitWorkload {
    public static let objects = "objects"
    public static let twins = "twins"

    public static func key(run: UInt64, thread: Int, index: Int) -> [UInt8] {
        bigEndianKey(run) + bigEndianKey(UInt64(thread)) + bigEndianKey(UInt64(index))
    }

    /// 48 bytes that depend on the key (and so on all three of its parts).
    public static func value(run: UInt64, thread: Int, index: Int) -> [UInt8] {
        var rng = SplitMix64(seed: run &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(thread) << 40 ^ UInt64(index))
        var bytes: [UInt8] = []
        for _ in 0..<6 { bytes += bigEndianKey(rng.next()) }
        return bytes
    }

    /// The key's parts, or nil for a key this workload did not make.
    public static func parts(of key: [UInt8]) -> (run: UInt64, thread: Int, index: Int)? {
        guard key.count == 24 else { return nil }
        func word(_ at: Int) -> UInt64 { key[at..<at + 8].reduce(0) { $0 << 8 | UInt64($1) } }
        return (word(0), Int(word(8)), Int(word(16)))
    }

    /// Commits transaction `index` of `thread` in `run`.
    public static func commit(_ engine: StorageEngine, run: UInt64, thread: Int, index: Int) throws {
        try engine.write { txn in
            let key = key(run: run, thread: thread, index: index)
            let value = value(run: run, thread: thread, index: index)
            try txn.put(txn.tree(objects)!, key: key, value: value)
            try txn.put(txn.tree(twins)!, key: key, value: value)
        }
    }

    /// Every key of `objects` and `twins` as of `txn`, after checking that each commit in it is
    /// whole (each key in both trees, with its value); a description of the first problem otherwise.
    public static func wholeCommits(_ txn: ReadTransaction) throws -> Result<Set<[UInt8]>, Problem> {
        var found: [String: [[UInt8]: [UInt8]]] = [:]
        for name in [objects, twins] {
            var entries: [[UInt8]: [UInt8]] = [:]
            if let tree = try txn.tree(name) {
                try txn.cursor(tree).scan { key, value in
                    entries[Array(key)] = Array(value)
                    return true
                }
            }
            found[name] = entries
        }
        let one = found[objects]!, other = found[twins]!
        guard one.count == other.count else {
            return .failure(Problem("\(one.count) keys in \(objects) but \(other.count) in \(twins)"))
        }
        for (key, value) in one {
            guard let parts = parts(of: key) else { return .failure(Problem("a key of \(key.count) bytes")) }
            guard value == Self.value(run: parts.run, thread: parts.thread, index: parts.index) else {
                return .failure(Problem("run \(parts.run) thread \(parts.thread) commit \(parts.index): wrong value"))
            }
            guard other[key] == value else {
                return .failure(Problem("run \(parts.run) thread \(parts.thread) commit \(parts.index): only half of it"))
            }
        }
        return .success(Set(one.keys))
    }

    public struct Problem: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}
