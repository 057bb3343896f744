import Cellar
import CellarTestSupport
import Dispatch
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `shared-writer <writer> <seed> [encrypted]`: one of several processes writing the database
/// through `Store` (`SharedStoreWorkload`), steps going on from its progress, each acknowledged
/// with `ack <k>` once its transaction returned (`shared <k>` too when it took the shared email);
/// now and then a compaction (`compacted`). Runs until killed.
func sharedStoreWriter(_ directory: String, writer: Int, seed: UInt64, encrypted: Bool) throws {
    let store = try Store(directoryPath: directory, model: SharedStoreWorkload.model,
                          options: SharedStoreWorkload.options(encrypted: encrypted))
    var rng = SplitMix64(seed: seed ^ UInt64(writer) << 40 ^ UInt64(getpid()))
    var k = try SharedStoreWorkload.progress(store, writer: writer)
    while true {
        k += 1
        let shared = try SharedStoreWorkload.step(store, writer: writer, step: k)
        print(shared ? "ack \(k)\nshared \(k)" : "ack \(k)")
        fflush(stdout)
        if rng.next() % 40 == 0 {
            try store.compact()
            print("compacted")
            fflush(stdout)
        }
    }
}

/// `shared-observer [encrypted]`: a live query of the writers' persons, in a store that shares the
/// database but never writes; prints `live <count> <digest>` at each update it publishes. Runs
/// until killed.
func sharedStoreObserver(_ directory: String, encrypted: Bool) throws {
    let store = try Store(directoryPath: directory, model: SharedStoreWorkload.model,
                          options: SharedStoreWorkload.options(encrypted: encrypted))
    let queue = DispatchQueue(label: "shared-observer")
    let live = try store.liveQuery(SharedStoreWorkload.writersQuery(store), queue: queue)
    print("observing")
    fflush(stdout)
    // Each publication, printed once (looked for every few milliseconds on the delivery queue).
    var printed = 0
    while true {
        if let line = queue.sync(execute: { () -> String? in
            guard live.updateCount != printed else { return nil }
            printed = live.updateCount
            return "live \(SharedStoreWorkload.digest(live.results))"
        }) {
            print(line)
            fflush(stdout)
        }
        usleep(5_000)
    }
}
