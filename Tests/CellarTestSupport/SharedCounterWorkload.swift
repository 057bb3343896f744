import CellarStorage

/// The workload of the tests where several engines (or processes) write one store
/// (`StorageOptions.sharedWriting`): each write increments one counter and records who made it,
/// so that an increment built on a stale state shows (the counter falls behind the records), and
/// every acknowledged write can be looked for.
///
/// Tree "t": key [0] the counter (8 bytes); key [1, writer, step (4 bytes, big-endian)] one record
/// per increment; key [2, writer] the writer's last step (4 bytes).
public enum SharedCounterWorkload {
    public static func recordKey(writer: UInt8, step: UInt32) -> [UInt8] {
        [1, writer] + withUnsafeBytes(of: step.bigEndian) { Array($0) }
    }

    /// One increment by `writer`, its step `step`.
    public static func increment(_ engine: StorageEngine, writer: UInt8, step: UInt32) throws {
        try engine.write { txn in
            let tree = try txn.tree("t")!
            let counter = try txn.get(tree, key: [0]).map { $0.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } } ?? 0
            try txn.put(tree, key: [0], value: withUnsafeBytes(of: counter + 1) { Array($0) })
            try txn.put(tree, key: recordKey(writer: writer, step: step), value: [writer])
            try txn.put(tree, key: [2, writer], value: withUnsafeBytes(of: step.bigEndian) { Array($0) })
        }
    }

    /// The counter and the number of records.
    public static func records(_ engine: StorageEngine) throws -> (counter: UInt64, records: Int) {
        try engine.read { txn in
            guard let tree = try txn.tree("t") else { return (0, 0) }
            let counter = try txn.get(tree, key: [0]).map { $0.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } } ?? 0
            var records = 0
            let cursor = try txn.cursor(tree)
            var valid = try cursor.seek([1])
            while valid, cursor.key.first == 1 {
                records += 1
                valid = try cursor.next()
            }
            return (counter, records)
        }
    }

    /// The last step `writer` committed (0 before its first).
    public static func lastStep(_ engine: StorageEngine, writer: UInt8) throws -> UInt32 {
        try engine.read { txn in
            guard let tree = try txn.tree("t"), let bytes = try txn.get(tree, key: [2, writer]) else { return 0 }
            return bytes.withUnsafeBytes { UInt32(bigEndian: $0.loadUnaligned(as: UInt32.self)) }
        }
    }

    /// Whether the record of `writer`'s step `step` is in the store.
    public static func contains(_ engine: StorageEngine, writer: UInt8, step: UInt32) throws -> Bool {
        try engine.read { txn in
            guard let tree = try txn.tree("t") else { return false }
            return try txn.get(tree, key: recordKey(writer: writer, step: step)) != nil
        }
    }
}
