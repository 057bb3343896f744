import CellarStorage

/// Write transactions larger than their memory budget, for the spill tests: transaction `k` of a
/// seed is always the same `count` operations over three trees (runs of keys added in order, as an
/// import adds them, and puts and deletes at random keys, with values from empty to a few KiB, some
/// out of line), now and then a tree dropped in the middle. `options` gives them a budget of 64 KiB
/// and nodes of 512 bytes, so that a few hundred operations spill.
public enum SpillWorkload {
    /// Small nodes and the smallest budget: transactions of this workload spill several times.
    public static func options(durability: StorageOptions.Durability = .full) -> StorageOptions {
        var options = StorageOptions(durability: durability, initialMapSize: 1 << 20, nodeSize: 512, superblockInterval: 7,
                                     transactionMemoryBudget: 64 << 10)
        // No automatic compaction: a compaction's copy may carry the store's transaction ids past
        // the workload's count (its commits need ids of their own), and the kill -9 test counts
        // the workload's transactions by the store's last id. A store of this workload passes the
        // 64 MiB at which the automatic policy starts after some two hundred transactions.
        options.automaticCompaction = nil
        return options
    }

    public static func transaction(_ k: Int, seed: UInt64, count: Int = 1_500) -> [Operation] {
        var rng = SplitMix64(seed: seed &+ UInt64(k) &* 0xD1B5_4A32_D192_ED03)
        var operations: [Operation] = []
        var next = UInt64(10_000 + k * 10_000)
        while operations.count < count {
            let tree = "s\(rng.next() % 3)"
            switch rng.next() % 100 {
            case 0..<40:
                // A run of keys in order (an import's new objects).
                for _ in 0..<(1 + Int(rng.next() % 64)) {
                    operations.append(.put(tree: tree, key: bigEndianKey(next), value: value(k, &rng)))
                    next += 1
                }
            case 40..<80:
                operations.append(.put(tree: tree, key: bigEndianKey(rng.next() % 4_000), value: value(k, &rng)))
            case 80..<99:
                operations.append(.delete(tree: tree, key: bigEndianKey(rng.next() % 4_000)))
            default:
                if rng.next() % 8 == 0 { operations.append(.drop(tree: tree)) }
            }
        }
        return operations
    }

    /// A value of transaction `k`: mostly short (inline), some longer than a 512-byte node's
    /// inline limit, a few of several KiB.
    private static func value(_ k: Int, _ rng: inout SplitMix64) -> [UInt8] {
        let roll = rng.next() % 100
        let size = roll < 80 ? Int(rng.next() % 100) : roll < 97 ? 128 + Int(rng.next() % 300) : 1_000 + Int(rng.next() % 3_000)
        return [UInt8](repeating: UInt8(truncatingIfNeeded: k &+ size), count: size) + bigEndianKey(UInt64(k))
    }

    /// The model after the first `commits` transactions.
    public static func model(after commits: Int, seed: UInt64, count: Int = 1_500) -> Model {
        var model = Model()
        for k in stride(from: 1, through: commits, by: 1) { model.apply(transaction(k, seed: seed, count: count)) }
        return model
    }
}
