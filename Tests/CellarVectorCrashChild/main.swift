// The child of the HNSW kill -9 test (VectorCrashTests): commits the vector workload
// (`VectorWorkload`: inserts, updates and removes of vectors, in batches) into a store with
// durability `.full` and reports each acknowledged commit on standard output, until it is killed.
//
//   CellarVectorCrashChild <directory> <seed> [compact-every]
//
// Before every fourth commit it runs a transaction of other changes that rolls back.
// It prints `opening` before it opens the store, `ready K` once the store is open (K: the
// transactions it holds), then `ack K` after each commit returned. With `compact-every` N > 0, it
// compacts the open store (`Store.compact()`) after every N-th commit, between the lines
// `compacting` and `compacted`.
//
// It is also the writer and the observer of the test of several writing processes
// (SharedWritingStoreProcessTests; SharedStore.swift):
//
//   CellarVectorCrashChild <directory> shared-writer <writer> <seed> [encrypted]
//   CellarVectorCrashChild <directory> shared-observer [encrypted]
//
// It is also the child of the migration kill -9 test (MigrationTests):
//
//   CellarVectorCrashChild <directory> migrate <kill-at>
//
// opens the version-1 store of `MigrationWorkload` with the version-2 model and migration, and
// kills itself with SIGKILL once the migration visited <kill-at> objects: in the middle of the
// open's write transaction (a counted point, not a time). It prints `migrated` if the migration
// ends first.
import Cellar
import CellarTestSupport
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let arguments = CommandLine.arguments
if arguments.count >= 5, arguments[2] == "shared-writer", let writer = Int(arguments[3]), let seed = UInt64(arguments[4]) {
    do {
        try sharedStoreWriter(arguments[1], writer: writer, seed: seed, encrypted: arguments.count > 5 && arguments[5] == "encrypted")
    } catch {
        fputs("child error: \(error)\n", stderr)
        exit(1)
    }
}
if arguments.count >= 3, arguments[2] == "shared-observer" {
    do {
        try sharedStoreObserver(arguments[1], encrypted: arguments.count > 3 && arguments[3] == "encrypted")
    } catch {
        fputs("child error: \(error)\n", stderr)
        exit(1)
    }
}
if arguments.count == 4, arguments[2] == "migrate", let killAt = Int(arguments[3]) {
    do {
        var base = StoreOptions()
        base.transactionMemoryBudget = 1 << 20  // the migration's changes reach the file before the kill
        _ = try Store(directoryPath: arguments[1], model: MigrationWorkload.model(MigrationWorkload.V2.entity),
                      options: MigrationWorkload.options(base) { visited in
                          if visited == killAt { kill(getpid(), SIGKILL) }
                      })
        print("migrated")
        exit(0)
    } catch {
        print("child error: \(error)")
        exit(1)
    }
}
guard arguments.count >= 3, let seed = UInt64(arguments[2]) else {
    fputs("usage: CellarVectorCrashChild <directory> <seed> [compact-every]\n", stderr)
    exit(2)
}
let compactEvery = arguments.count > 3 ? Int(arguments[3]) ?? 0 : 0

func say(_ line: String) {
    print(line)
    fflush(stdout)
}

say("opening")
do {
    let store = try Store(directoryPath: arguments[1], model: VectorWorkload.model(),
                          options: StoreOptions(durability: .full, automaticCompaction: nil))
    let writer = try VectorWorkloadWriter(store: store, seed: seed)
    say("ready \(writer.commits)")
    while true {
        // Every fourth transaction comes after one that changed vectors and rolled back.
        if writer.commits % 4 == 3 { try writer.rollBack() }
        let k = try writer.commitNext()
        // Acknowledged: the commit returned.
        say("ack \(k)")
        if compactEvery > 0 && k % compactEvery == 0 {
            say("compacting")
            try store.compact()
            say("compacted")
        }
    }
} catch {
    // On standard output too: the parent reads it and fails the test.
    say("child error: \(error)")
    exit(1)
}
