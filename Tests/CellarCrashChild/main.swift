// The child of the kill -9 test: commits a deterministic sequence of transactions into a store and
// reports each acknowledged commit on standard output, until it is killed.
//
//   CellarCrashChild <directory> <seed> <full|none> [max-commits]
//
// Transaction k (1-based) is `CrashWorkload.transaction(k, seed)`; the parent replays the same
// sequence in memory to know what the store must hold after any number of commits.
import CellarStorage
import CellarTestSupport
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let arguments = CommandLine.arguments
guard arguments.count >= 4, let seed = UInt64(arguments[2]) else {
    fputs("usage: CellarCrashChild <directory> <seed> <full|none> [max-commits]\n", stderr)
    exit(2)
}
let durability: StorageOptions.Durability = arguments[3] == "none" ? .none : .full
let maxCommits = arguments.count > 4 ? Int(arguments[4]) ?? Int.max : Int.max

do {
    let engine = try StorageEngine(directory: arguments[1],
                                   options: StorageOptions(durability: durability, initialMapSize: 1 << 20, nodeSize: 512, superblockInterval: 7))
    var k = Int(engine.lastTransactionId)
    while k < maxCommits {
        k += 1
        try engine.write { txn in
            try CrashWorkload.apply(CrashWorkload.transaction(k, seed: seed), to: txn)
        }
        // Acknowledged: the commit returned.
        print("ack \(k)")
        fflush(stdout)
    }
    engine.close()
} catch {
    fputs("child error: \(error)\n", stderr)
    exit(1)
}
