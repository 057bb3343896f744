import BenchSupport

/// The data every engine is given: N keys (8-byte big-endian i = 1...N), a 200-byte value per key,
/// the replacement values of step f, and the random order of step b. All built before any timer.
final class Workload {
    static let valueSize = 200

    let n: Int
    /// How many single-key durable commits step f makes: keys 1...commits.
    let commits: Int
    /// `n` values of `valueSize` bytes, value of key i at `(i - 1) * valueSize`.
    let values: UnsafeMutableRawPointer
    /// `commits` replacement values for step f.
    let updated: UnsafeMutableRawPointer
    /// The keys 1...n in the CRUD workload's random order (SplitMix64 Fisher–Yates seeded with 42).
    let permutation: [UInt64]
    /// The sum of the last byte of every value, which step b must find.
    let lastByteSum: UInt64

    init(n: Int, commits: Int) {
        self.n = n
        self.commits = commits
        values = .allocate(byteCount: n * Self.valueSize, alignment: 16)
        precondition(n >= 1 && commits >= 1 && commits <= n)
        updated = .allocate(byteCount: commits * Self.valueSize, alignment: 16)
        var sum: UInt64 = 0
        for i in 1...n {
            Self.fill(values + (i - 1) * Self.valueSize, key: i, generation: 0)
            sum &+= UInt64(values.load(fromByteOffset: i * Self.valueSize - 1, as: UInt8.self))
        }
        lastByteSum = sum
        for i in 1...commits {
            Self.fill(updated + (i - 1) * Self.valueSize, key: i, generation: 1)
        }
        permutation = randomOrder(n)
    }

    deinit {
        values.deallocate()
        updated.deallocate()
    }

    /// The value stored under key `i` by step a.
    @inline(__always)
    func value(_ i: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: values + (i - 1) * Self.valueSize, count: Self.valueSize)
    }

    /// The value stored under key `i` (i ≤ commits) by step f.
    @inline(__always)
    func updatedValue(_ i: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: updated + (i - 1) * Self.valueSize, count: Self.valueSize)
    }

    /// What key `i` must hold once every step ran.
    func finalValue(_ i: Int) -> UnsafeRawBufferPointer {
        i <= commits ? updatedValue(i) : value(i)
    }

    /// A value: the key's 8 big-endian bytes, then bytes that depend on the key and the generation.
    private static func fill(_ p: UnsafeMutableRawPointer, key: Int, generation: Int) {
        p.storeBytes(of: UInt64(key).bigEndian, toByteOffset: 0, as: UInt64.self)
        for j in 8..<valueSize {
            p.storeBytes(of: UInt8(truncatingIfNeeded: key &* 31 &+ j &+ generation &* 101), toByteOffset: j, as: UInt8.self)
        }
    }
}
