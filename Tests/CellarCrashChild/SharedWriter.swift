import CellarStorage
import CellarTestSupport
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `shared-writer <writer> [encrypted]`: one of several processes writing the store
/// (`StorageOptions.sharedWriting`, `.full` durability): increments of `SharedCounterWorkload`,
/// steps going on from the last one this writer committed, each acknowledged with `ack <step>`
/// once its commit returned; now and then (by the seed) a compaction, announced with `compacted`.
/// Runs until killed.
func sharedWriter(_ directory: String, writer: UInt8, seed: UInt64, encrypted: Bool) throws {
    var options = StorageOptions(durability: .full, initialMapSize: 1 << 20, nodeSize: 512, superblockInterval: 7)
    options.sharedWriting = true
    options.automaticCompaction = nil
    if encrypted { options.encryptionKey = TestKeys.encryption }
    let engine = try StorageEngine(directory: directory, options: options)
    var rng = SplitMix64(seed: seed ^ UInt64(writer) << 32 ^ UInt64(getpid()))
    var step = try SharedCounterWorkload.lastStep(engine, writer: writer)
    while true {
        step += 1
        try SharedCounterWorkload.increment(engine, writer: writer, step: step)
        print("ack \(step)")
        fflush(stdout)
        if rng.next() % 64 == 0 {
            try engine.compact()
            print("compacted")
            fflush(stdout)
        }
    }
}
