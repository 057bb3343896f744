// Micro-benchmarks of the storage engine's hot paths (package-benchmark).
//
//   swift package --package-path Benchmarks benchmark --target EngineMicro
//   swift package --package-path Benchmarks benchmark --target EngineMicro --filter 'KeyCompare.*'
//
// Names are shell-safe (thresholds files are named after them). Only the engine benchmarks' malloc
// counts have committed thresholds (Benchmarks/Thresholds): time thresholds fail on the noisy 2-core
// machines, and the key compares allocate nothing. CELLAR_MICRO_MAX_SECONDS shortens the engine
// benchmarks' runs (CI). See docs/performance.md, "Micro-benchmarks".
import Benchmark
import CellarStorage
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The longest an engine benchmark runs: 2 s, or CELLAR_MICRO_MAX_SECONDS (CI's threshold check).
let engineMaxDuration: Duration = {
    if let text = getenv("CELLAR_MICRO_MAX_SECONDS").map({ String(cString: $0) }), let seconds = Double(text), seconds > 0 {
        return .milliseconds(Int(seconds * 1000))
    }
    return .seconds(2)
}()

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration.timeUnits = .nanoseconds
    keyCompareBenchmarks()
    engineBenchmarks()
}

// MARK: - KeyCompare.simd vs KeyCompare.bytes

/// 256 key pairs of one length, back to back, so that the compiler cannot hoist a comparison out
/// of the loop and the loads are not always the same cache line.
final class KeyPairs: @unchecked Sendable {
    static let pairs = 256
    let length: Int
    let a: UnsafeMutableRawPointer
    let b: UnsafeMutableRawPointer

    /// `differ`: the pair differs in its last byte only (in either direction); else the keys are equal.
    init(length: Int, differ: Bool) {
        self.length = length
        a = .allocate(byteCount: Self.pairs * length, alignment: 16)
        b = .allocate(byteCount: Self.pairs * length, alignment: 16)
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        for i in 0..<(Self.pairs * length) {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            a.storeBytes(of: UInt8(truncatingIfNeeded: state >> 56), toByteOffset: i, as: UInt8.self)
        }
        b.copyMemory(from: a, byteCount: Self.pairs * length)
        if differ {
            for k in 0..<Self.pairs {
                let last = k * length + length - 1
                b.storeBytes(of: a.load(fromByteOffset: last, as: UInt8.self) ^ 1, toByteOffset: last, as: UInt8.self)
            }
        }
    }
}

func keyCompareBenchmarks() {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput],
        timeUnits: .nanoseconds,
        scalingFactor: .mega,
        maxDuration: .seconds(1),
        maxIterations: 1000
    )
    for length in [8, 16, 24, 64] {
        for differ in [true, false] {
            let keys = KeyPairs(length: length, differ: differ)
            for k in 0..<KeyPairs.pairs {  // all three agree on every pair
                let a = keys.a + k * length, b = keys.b + k * length
                let expected = KeyCompare.bytes(a, length, b, length)
                precondition(KeyCompare.simd(a, length, b, length) == expected
                             && (expected != 0) == differ)
            }
            let shape = "\(length)B_" + (differ ? "diff_last" : "equal")
            // One compare per scaled iteration: the reported wall clock (*) is ns per compare.
            Benchmark("KeyCompare_simd_\(shape)", configuration: configuration) { benchmark in
                let a = keys.a, b = keys.b, n = keys.length
                var acc = 0
                for i in benchmark.scaledIterations {
                    let offset = (i & (KeyPairs.pairs - 1)) &* n
                    acc &+= KeyCompare.simd(a + offset, n, b + offset, n)
                }
                blackHole(acc)
            }
            Benchmark("KeyCompare_bytes_\(shape)", configuration: configuration) { benchmark in
                let a = keys.a, b = keys.b, n = keys.length
                var acc = 0
                for i in benchmark.scaledIterations {
                    let offset = (i & (KeyPairs.pairs - 1)) &* n
                    acc &+= KeyCompare.bytes(a + offset, n, b + offset, n)
                }
                blackHole(acc)
            }
        }
    }
}


// MARK: - Engine: put in a write transaction, get in a read transaction

/// A store of `count` keys (8-byte big-endian 1...count, 200-byte values) in a temporary folder.
final class EngineFixture: @unchecked Sendable {
    static let count = 100_000
    static let treeName = "bench"
    nonisolated(unsafe) static var shared: EngineFixture?

    let folder: String
    let engine: StorageEngine
    let value: UnsafeMutableRawBufferPointer
    /// The keys in a fixed random order.
    let order: [UInt64]

    init() throws {
        var template = Array("/tmp/engine-micro-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw StorageError.illegalArgument("mkdtemp failed")
        }
        folder = String(cString: made)
        engine = try StorageEngine(directory: folder + "/store")
        value = .allocate(byteCount: 200, alignment: 16)
        for j in 0..<200 { value[j] = UInt8(truncatingIfNeeded: j &* 7) }
        let value = UnsafeRawBufferPointer(value)
        try engine.write { txn in
            let tree = try txn.tree(Self.treeName)!
            for i in 1...Self.count {
                var key = UInt64(i).bigEndian
                try withUnsafeBytes(of: &key) { try txn.put(tree, key: $0, value: value) }
            }
        }
        var rng = SystemRandomNumberGenerator()
        order = (1...UInt64(Self.count)).shuffled(using: &rng)
    }

    static func setUp() throws {
        if shared == nil { shared = try EngineFixture() }
    }

    static func tearDown() {
        guard let fixture = shared else { return }
        shared = nil
        fixture.engine.close()
        for file in [StorageEngine.dataFileName, StorageEngine.lockFileName] { unlink(fixture.folder + "/store/" + file) }
        rmdir(fixture.folder + "/store")
        rmdir(fixture.folder)
        fixture.value.deallocate()
    }
}

func engineBenchmarks() {
    // 1,000 operations per iteration; the transaction's begin and abort are outside the measurement.
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
        timeUnits: .nanoseconds,
        scalingFactor: .kilo,
        maxDuration: engineMaxDuration,
        maxIterations: 2000,
        // The committed malloc-count thresholds' tolerance: p90 of a sample (1,000 operations) may
        // differ by at most 100 mallocs either way; one more malloc per operation (+1,000) fails.
        thresholds: [.mallocCountTotal: BenchmarkThresholds(absolute: [.p90: 100])],
        setup: { try EngineFixture.setUp() },
        teardown: { EngineFixture.tearDown() }
    )

    // Replaces existing keys in random order: a first touch of most leaves in the transaction.
    Benchmark("Engine_put_update_random_in_txn", configuration: configuration) { benchmark in
        let fixture = EngineFixture.shared!
        let value = UnsafeRawBufferPointer(fixture.value)
        let start = (benchmark.currentIteration &* 1000) % EngineFixture.count
        do {
            let txn = try fixture.engine.beginWrite()
            let tree = try txn.tree(EngineFixture.treeName)!
            try fixture.order.withUnsafeBufferPointer { order in
                benchmark.startMeasurement()
                for i in benchmark.scaledIterations {
                    var key = order[(start &+ i) % order.count].bigEndian
                    try withUnsafeBytes(of: &key) { try txn.put(tree, key: $0, value: value) }
                }
                benchmark.stopMeasurement()
            }
            txn.abort()
        } catch {
            benchmark.error("\(error)")
        }
    }

    // Inserts new keys above the largest: the rightmost leaf, like a bulk load.
    Benchmark("Engine_put_append_in_txn", configuration: configuration) { benchmark in
        let fixture = EngineFixture.shared!
        let value = UnsafeRawBufferPointer(fixture.value)
        do {
            let txn = try fixture.engine.beginWrite()
            let tree = try txn.tree(EngineFixture.treeName)!
            benchmark.startMeasurement()
            for i in benchmark.scaledIterations {
                var key = UInt64(EngineFixture.count + 1 + i).bigEndian
                try withUnsafeBytes(of: &key) { try txn.put(tree, key: $0, value: value) }
            }
            benchmark.stopMeasurement()
            txn.abort()
        } catch {
            benchmark.error("\(error)")
        }
    }

    // Point reads in random order on a committed snapshot, touching the value.
    Benchmark("Engine_get_random", configuration: configuration) { benchmark in
        let fixture = EngineFixture.shared!
        let start = (benchmark.currentIteration &* 1000) % EngineFixture.count
        do {
            let txn = try fixture.engine.beginRead()
            let tree = try txn.tree(EngineFixture.treeName)!
            var sum = 0
            try fixture.order.withUnsafeBufferPointer { order in
                benchmark.startMeasurement()
                for i in benchmark.scaledIterations {
                    var key = order[(start &+ i) % order.count].bigEndian
                    guard let v = try withUnsafeBytes(of: &key, { try txn.get(tree, key: $0) }) else {
                        benchmark.error("a key is missing")
                        return
                    }
                    sum &+= Int(v[0]) &+ Int(v[v.count - 1])
                }
                benchmark.stopMeasurement()
            }
            blackHole(sum)
        } catch {
            benchmark.error("\(error)")
        }
    }
}
