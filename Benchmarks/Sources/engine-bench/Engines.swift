import BenchSupport
import CellarStorage
import BenchLMDB
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One engine under test. Each step runs its own timer around exactly the work it measures and
/// returns the seconds; every step checks what it read and throws `BenchError` when it is wrong.
protocol EngineUnderTest: AnyObject {
    /// a. put N keys in one write transaction (commit included).
    func put(_ w: Workload) throws -> Double
    /// b. get every key in random order in one read transaction, touching each value.
    func randomGets(_ w: Workload) throws -> Double
    /// c. visit every entry in key order with a cursor, summing from each value.
    func scan(_ w: Workload) throws -> Double
    /// f. One write transaction putting key `i`'s new value, committed durably (i = 1...w.commits).
    func durableCommit(_ i: Int, _ w: Workload) throws -> Double
    /// Untimed: every key holds exactly its final value, and nothing else is stored.
    func verify(_ w: Workload) throws
    /// Bytes of the data file.
    func fileBytes() -> UInt64
    func close()
}

func fileSize(_ path: String) -> UInt64 {
    var st = stat()
    return stat(path, &st) == 0 ? UInt64(st.st_size) : 0
}

/// Checks of the timed read steps, shared by both engines so that they do the same work per entry.
@inline(__always)
func touch(_ v: UnsafeRawBufferPointer, id: UInt64, bad: inout UInt64, sum: inout UInt64) {
    guard v.count == Workload.valueSize else { bad |= 1; return }
    bad |= UInt64(bigEndian: v.loadUnaligned(as: UInt64.self)) ^ id
    sum &+= UInt64(v[Workload.valueSize - 1])
}

func checkGets(_ engine: String, missing: Int, bad: UInt64, sum: UInt64, _ w: Workload) throws {
    guard missing == 0 else { throw BenchError("\(engine) b: \(missing) of \(w.n) keys not found") }
    guard bad == 0 else { throw BenchError("\(engine) b: a value did not start with its key or had the wrong length") }
    guard sum == w.lastByteSum else { throw BenchError("\(engine) b: last-byte checksum \(sum), expected \(w.lastByteSum)") }
}

func checkScan(_ engine: String, visited: Int, sum: UInt64, ordered: Bool, _ w: Workload) throws {
    guard ordered else { throw BenchError("\(engine) c: entry \(visited + 1) out of order or malformed") }
    guard visited == w.n else { throw BenchError("\(engine) c: visited \(visited) entries, expected \(w.n)") }
    let n = UInt64(w.n)
    guard sum == n * (n + 1) / 2 else { throw BenchError("\(engine) c: sum \(sum), expected \(n * (n + 1) / 2)") }
}

func checkValue(_ engine: String, key i: Int, _ found: UnsafeRawBufferPointer?, _ w: Workload) throws {
    guard let found else { throw BenchError("\(engine) verify: key \(i) missing") }
    let expected = w.finalValue(i)
    guard found.count == expected.count, memcmp(found.baseAddress!, expected.baseAddress!, expected.count) == 0 else {
        throw BenchError("\(engine) verify: key \(i) has the wrong value (\(found.count) bytes)")
    }
}

// MARK: - Cellar

final class CellarEngine: EngineUnderTest {
    static let treeName = "bench"
    let engine: StorageEngine

    /// Default options (durability `.full`) but for the node size.
    init(directory: String, nodeSize: Int) throws {
        engine = try StorageEngine(directory: directory, options: StorageOptions(nodeSize: nodeSize))
    }

    func put(_ w: Workload) throws -> Double {
        let n = w.n
        let start = now()
        try engine.write { txn in
            let tree = try txn.tree(Self.treeName)!
            for i in 1...n {
                var key = UInt64(i).bigEndian
                try withUnsafeBytes(of: &key) { try txn.put(tree, key: $0, value: w.value(i)) }
            }
        }
        return now() - start
    }

    func randomGets(_ w: Workload) throws -> Double {
        let start = now()
        let (missing, bad, sum) = try engine.read { txn -> (Int, UInt64, UInt64) in
            guard let tree = try txn.tree(Self.treeName) else { throw BenchError("cellar b: tree missing") }
            var missing = 0, bad: UInt64 = 0, sum: UInt64 = 0
            for id in w.permutation {
                var key = id.bigEndian
                guard let v = try withUnsafeBytes(of: &key, { try txn.get(tree, key: $0) }) else { missing += 1; continue }
                touch(v, id: id, bad: &bad, sum: &sum)
            }
            return (missing, bad, sum)
        }
        let seconds = now() - start
        try checkGets("cellar", missing: missing, bad: bad, sum: sum, w)
        return seconds
    }

    func scan(_ w: Workload) throws -> Double {
        let start = now()
        let (visited, sum, ordered) = try engine.read { txn -> (Int, UInt64, Bool) in
            guard let tree = try txn.tree(Self.treeName) else { throw BenchError("cellar c: tree missing") }
            var expected: UInt64 = 1, sum: UInt64 = 0, ordered = true
            try txn.cursor(tree).scan { key, value in
                guard key.count == 8, UInt64(bigEndian: key.loadUnaligned(as: UInt64.self)) == expected,
                      value.count == Workload.valueSize else { ordered = false; return false }
                sum &+= UInt64(bigEndian: value.loadUnaligned(as: UInt64.self))
                expected += 1
                return true
            }
            return (Int(expected - 1), sum, ordered)
        }
        let seconds = now() - start
        try checkScan("cellar", visited: visited, sum: sum, ordered: ordered, w)
        return seconds
    }

    func durableCommit(_ i: Int, _ w: Workload) throws -> Double {
        let start = now()
        try engine.write { txn in
            let tree = try txn.tree(Self.treeName)!
            var key = UInt64(i).bigEndian
            try withUnsafeBytes(of: &key) { try txn.put(tree, key: $0, value: w.updatedValue(i)) }
        }
        return now() - start
    }

    func verify(_ w: Workload) throws {
        try engine.read { txn in
            guard let tree = try txn.tree(Self.treeName) else { throw BenchError("cellar verify: tree missing") }
            let count = try txn.count(tree)
            guard count == w.n else { throw BenchError("cellar verify: \(count) entries, expected \(w.n)") }
            for i in 1...w.n {
                var key = UInt64(i).bigEndian
                try checkValue("cellar", key: i, try withUnsafeBytes(of: &key) { try txn.get(tree, key: $0) }, w)
            }
        }
    }

    func fileBytes() -> UInt64 { fileSize(engine.directory + "/" + StorageEngine.dataFileName) }

    func close() { engine.close() }
}

// MARK: - LMDB

final class LMDBEngine: EngineUnderTest {
    static let dbName = "bench"
    let directory: String
    private var env: OpaquePointer?
    private var dbi: MDB_dbi = 0

    static var version: String {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        _ = mdb_version(&major, &minor, &patch)
        return "\(major).\(minor).\(patch)"
    }

    /// The CRUD workload's environment (`openLMDBEnvironment`), one named DBI.
    init(directory: String) throws {
        self.directory = directory
        env = try openLMDBEnvironment(directory: directory)
    }

    deinit { close() }

    static func check(_ rc: Int32, _ what: String) throws { try lmdbCheck(rc, what) }

    private func beginTxn(readOnly: Bool) throws -> OpaquePointer? {
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn), "mdb_txn_begin")
        return txn
    }

    private func commit(_ txn: OpaquePointer?) throws {
        try Self.check(mdb_txn_commit(txn), "mdb_txn_commit")  // frees the txn even when it fails
    }

    func put(_ w: Workload) throws -> Double {
        let n = w.n
        let start = now()
        let txn = try beginTxn(readOnly: false)
        do {
            try Self.check(mdb_dbi_open(txn, Self.dbName, UInt32(MDB_CREATE), &dbi), "mdb_dbi_open")
            for i in 1...n {
                var key = UInt64(i).bigEndian
                let rc = withUnsafeMutableBytes(of: &key) { k -> Int32 in
                    var mk = MDB_val(mv_size: 8, mv_data: k.baseAddress)
                    var mv = MDB_val(mv_size: Workload.valueSize, mv_data: UnsafeMutableRawPointer(mutating: w.value(i).baseAddress))
                    return mdb_put(txn, dbi, &mk, &mv, 0)
                }
                try Self.check(rc, "mdb_put")
            }
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try commit(txn)
        return now() - start
    }

    func randomGets(_ w: Workload) throws -> Double {
        let start = now()
        let txn = try beginTxn(readOnly: true)
        var missing = 0, bad: UInt64 = 0, sum: UInt64 = 0, failure: Int32 = 0
        for id in w.permutation {
            var key = id.bigEndian
            var mv = MDB_val()
            let rc = withUnsafeMutableBytes(of: &key) { k -> Int32 in
                var mk = MDB_val(mv_size: 8, mv_data: k.baseAddress)
                return mdb_get(txn, dbi, &mk, &mv)
            }
            if rc == MDB_NOTFOUND { missing += 1; continue }
            if rc != 0 { failure = rc; break }
            touch(UnsafeRawBufferPointer(start: mv.mv_data, count: mv.mv_size), id: id, bad: &bad, sum: &sum)
        }
        mdb_txn_abort(txn)
        let seconds = now() - start
        try Self.check(failure, "mdb_get")
        try checkGets("lmdb", missing: missing, bad: bad, sum: sum, w)
        return seconds
    }

    func scan(_ w: Workload) throws -> Double {
        let start = now()
        let txn = try beginTxn(readOnly: true)
        var cursor: OpaquePointer?
        let opened = mdb_cursor_open(txn, dbi, &cursor)
        guard opened == 0 else { mdb_txn_abort(txn); try Self.check(opened, "mdb_cursor_open"); return 0 }
        var expected: UInt64 = 1, sum: UInt64 = 0, ordered = true
        var mk = MDB_val(), mv = MDB_val()
        var rc = mdb_cursor_get(cursor, &mk, &mv, MDB_FIRST)
        while rc == 0 {
            guard mk.mv_size == 8, UInt64(bigEndian: mk.mv_data!.loadUnaligned(as: UInt64.self)) == expected,
                  mv.mv_size == Workload.valueSize else { ordered = false; break }
            sum &+= UInt64(bigEndian: mv.mv_data!.loadUnaligned(as: UInt64.self))
            expected += 1
            rc = mdb_cursor_get(cursor, &mk, &mv, MDB_NEXT)
        }
        mdb_cursor_close(cursor)
        mdb_txn_abort(txn)
        let seconds = now() - start
        if ordered && rc != MDB_NOTFOUND { try Self.check(rc, "mdb_cursor_get") }
        try checkScan("lmdb", visited: Int(expected - 1), sum: sum, ordered: ordered, w)
        return seconds
    }

    func durableCommit(_ i: Int, _ w: Workload) throws -> Double {
        let start = now()
        let txn = try beginTxn(readOnly: false)
        var key = UInt64(i).bigEndian
        let rc = withUnsafeMutableBytes(of: &key) { k -> Int32 in
            var mk = MDB_val(mv_size: 8, mv_data: k.baseAddress)
            var mv = MDB_val(mv_size: Workload.valueSize, mv_data: UnsafeMutableRawPointer(mutating: w.updatedValue(i).baseAddress))
            return mdb_put(txn, dbi, &mk, &mv, 0)
        }
        if rc != 0 { mdb_txn_abort(txn); try Self.check(rc, "mdb_put") }
        try commit(txn)
        return now() - start
    }

    func verify(_ w: Workload) throws {
        let txn = try beginTxn(readOnly: true)
        defer { mdb_txn_abort(txn) }
        var stat = MDB_stat()
        try Self.check(mdb_stat(txn, dbi, &stat), "mdb_stat")
        guard stat.ms_entries == w.n else { throw BenchError("lmdb verify: \(stat.ms_entries) entries, expected \(w.n)") }
        for i in 1...w.n {
            var key = UInt64(i).bigEndian
            var mv = MDB_val()
            let rc = withUnsafeMutableBytes(of: &key) { k -> Int32 in
                var mk = MDB_val(mv_size: 8, mv_data: k.baseAddress)
                return mdb_get(txn, dbi, &mk, &mv)
            }
            if rc != 0 && rc != MDB_NOTFOUND { try Self.check(rc, "mdb_get") }
            try checkValue("lmdb", key: i, rc == 0 ? UnsafeRawBufferPointer(start: mv.mv_data, count: mv.mv_size) : nil, w)
        }
    }

    func fileBytes() -> UInt64 { fileSize(directory + "/data.mdb") }

    func close() {
        if env != nil { mdb_env_close(env); env = nil }
    }
}
