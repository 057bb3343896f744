import BenchSupport
import BenchLMDB
import Foundation

/// The steps on LMDB 0.9.24 exactly as the CRUD workload's "LMDB raw" anchors ran them: env flags 0
/// (every commit durable), map size 16 GiB, DBI `notes` (8-byte big-endian id → the `FlatNote`
/// bytes) and DBI `author_idx` (author BE8 ‖ id BE8 → empty), a generic put (`mdb_get` the old
/// version, `mdb_put` the object; when there was none or its author differs, `mdb_put` the index
/// entry and `mdb_del` the old one), reads through a generic FlatBuffers table reader.
///
/// Not a competitor Cellar is judged against: the ruler. docs/crud-workload.md has LMDB's figures from the
/// day its ObjectBox anchors were measured, so LMDB measured again in the same run says how much
/// faster or slower this machine is now, and scales ObjectBox's anchors to it (Crud.swift).
/// bget and e2find (objects built) have no LMDB counterpart and are not run.
enum LMDBEngine {
    /// A step's figure from the CRUD workload's "LMDB raw" column, at N = 100,000 and 1,000,000.
    static func anchor(_ step: Step, _ n: Int) -> Double? {
        switch (step, n) {
        case (.a, 100_000): 1_221_304
        case (.a, 1_000_000): 1_130_950
        case (.b, 100_000): 2_034_142
        case (.b, 1_000_000): 1_155_557
        case (.c, 100_000): 26.8e6
        case (.c, 1_000_000): 24.1e6
        case (.d, 100_000): 2_166_373
        case (.d, 1_000_000): 2_125_036
        case (.e, 100_000): 158_009
        case (.e, 1_000_000): 16_771
        case (.e3, 100_000): 118_332
        case (.e3, 1_000_000): 12_354
        case (.f, 100_000): 4_731
        case (.f, 1_000_000): 3_373
        // g (2.49M and 2.36M objects/s in docs/crud-workload.md) is left out: two `mdb_drop`s and a commit
        // run here at 50–150M objects/s, so the anchor's figure cannot have timed the same work.
        default: nil
        }
    }

    static func run(_ w: Workload, folder: String) throws -> RunResult {
        let n = w.n
        var result = RunResult()
        let env = try Env(directory: folder)
        defer { env.close() }
        let dataFile = folder + "/data.mdb"
        // The put's buffer, as large as the largest object's bytes.
        let largest = w.notes.map { FlatNote.size(titleBytes: $0.title.utf8.count, textBytes: $0.text.utf8.count) }.max() ?? 0
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: largest, alignment: 8)
        defer { bytes.deallocate() }

        var (notes, index): (MDB_dbi, MDB_dbi) = (0, 0)
        try env.write { txn in
            notes = try env.open(txn, "notes")
            index = try env.open(txn, "author_idx")
        }

        /// The CRUD workload's generic put of object i (1-based) with this modificationDate.
        func put(_ txn: OpaquePointer?, _ i: Int, modified: Int64) throws {
            let note = w.notes[i - 1]
            let created = Workload.creationMs(i)
            let length = FlatNote.build(into: bytes, id: UInt64(i), title: note.title, text: note.text,
                                        creationDate: created, modificationDate: modified, author: note.author)
            var key = UInt64(i).bigEndian
            try withUnsafeMutableBytes(of: &key) { k in
                var mk = MDB_val(mv_size: 8, mv_data: k.baseAddress)
                var old = MDB_val()
                let found = mdb_get(txn, notes, &mk, &old)
                if found != MDB_NOTFOUND { try lmdbCheck(found, "mdb_get") }
                var mv = MDB_val(mv_size: length, mv_data: bytes)
                try lmdbCheck(mdb_put(txn, notes, &mk, &mv, 0), "mdb_put notes")
                if found == 0 {
                    let oldAuthor = FlatNote.Reader(base: old.mv_data!, count: old.mv_size).u64(slot: 5)
                    if oldAuthor == note.author { return }  // the index entry stands
                    if let oldAuthor {
                        var stale = indexKey(author: oldAuthor, id: UInt64(i))
                        try withUnsafeMutableBytes(of: &stale) { s in
                            var sk = MDB_val(mv_size: 16, mv_data: s.baseAddress)
                            try lmdbCheck(mdb_del(txn, index, &sk, nil), "mdb_del author_idx")
                        }
                    }
                }
                var entry = indexKey(author: note.author, id: UInt64(i))
                try withUnsafeMutableBytes(of: &entry) { e in
                    var ek = MDB_val(mv_size: 16, mv_data: e.baseAddress)
                    var empty = MDB_val(mv_size: 0, mv_data: nil)
                    try lmdbCheck(mdb_put(txn, index, &ek, &empty, 0), "mdb_put author_idx")
                }
            }
        }

        // a: put N new objects in one write transaction.
        var start = now()
        try env.write { txn in
            for i in 1...n { try put(txn, i, modified: Workload.creationMs(i)) }
        }
        result.seconds[.a] = now() - start
        try check("lmdb a: N objects, N index entries", try env.entries(notes) == n && env.entries(index) == n)
        result.sizeAfterA = fileBytes(dataFile)

        // b: one read transaction, every object by id in the CRUD workload's random order, title length.
        start = now()
        let (found, titleBytes) = try env.read { txn in
            var (found, titleBytes) = (0, 0)
            for id in w.permutation {
                var key = id.bigEndian
                var value = MDB_val()
                let rc = withUnsafeMutableBytes(of: &key) { k in
                    var mk = MDB_val(mv_size: 8, mv_data: k.baseAddress)
                    return mdb_get(txn, notes, &mk, &value)
                }
                if rc == MDB_NOTFOUND { continue }
                try lmdbCheck(rc, "mdb_get")
                if let length = FlatNote.Reader(base: value.mv_data!, count: value.mv_size).stringLength(slot: 1) {
                    found += 1
                    titleBytes += length
                }
            }
            return (found, titleBytes)
        }
        result.seconds[.b] = now() - start
        try w.checkGets("lmdb b", found: found, titleBytes: titleBytes)

        // c: one read transaction, a cursor over notes in id order, Σ creationDate.
        start = now()
        let (scanned, creationSum, ordered) = try env.read { txn in
            var (scanned, sum, ordered) = (0, Int64(0), true)
            try env.forEach(txn, notes, from: nil) { key, value in
                scanned += 1
                if UInt64(bigEndian: key.loadUnaligned(as: UInt64.self)) != UInt64(scanned) { ordered = false }
                sum &+= Int64(bitPattern: FlatNote.Reader(base: value.baseAddress!, count: value.count).u64(slot: 3) ?? 0)
                return true
            }
            return (scanned, sum, ordered)
        }
        result.seconds[.c] = now() - start
        try w.checkScan("lmdb c", scanned: scanned, ordered: ordered, creationSum: creationSum)

        // d: one write transaction, every object rebuilt with modificationDate = creationDate + 60 s.
        start = now()
        try env.write { txn in
            for i in 1...n { try put(txn, i, modified: Workload.creationMs(i) + 60_000) }
        }
        result.seconds[.d] = now() - start
        try checkModificationDates("d", env, notes, w, afterF: false)
        try check("lmdb d: N index entries", try env.entries(index) == n)
        result.sizeAfterD = fileBytes(dataFile)

        /// author == 42 through the index, in a read transaction of its own: calls `hit` per id.
        func query(_ hit: (OpaquePointer?, UInt64) throws -> Void) throws {
            try env.read { txn in
                var from = indexKey(author: 42, id: 0)
                try withUnsafeBytes(of: &from) { start in
                    try env.forEach(txn, index, from: start) { entry, _ in
                        guard UInt64(bigEndian: entry.loadUnaligned(as: UInt64.self)) == 42 else { return false }
                        try hit(txn, UInt64(bigEndian: entry.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
                        return true
                    }
                }
            }
        }
        let hits = w.authorIds.count

        // e: count the index keys with prefix 42, 100 times.
        var counts = [Int](repeating: -1, count: Workload.queries)
        start = now()
        for k in counts.indices {
            var count = 0
            try query { _, _ in count += 1 }
            counts[k] = count
        }
        result.seconds[.e] = now() - start
        for c in counts { try check("lmdb e: count == \(hits)", c == hits, "\(c)") }

        // e2: the same, each hit's object read (mdb_get) and its title length taken.
        var visits = [Int](repeating: -1, count: Workload.queries)
        start = now()
        for k in visits.indices {
            var titleBytes = 0
            try query { txn, id in
                var key = id.bigEndian
                var value = MDB_val()
                let rc = withUnsafeMutableBytes(of: &key) { k in
                    var mk = MDB_val(mv_size: 8, mv_data: k.baseAddress)
                    return mdb_get(txn, notes, &mk, &value)
                }
                try lmdbCheck(rc, "mdb_get")
                titleBytes += FlatNote.Reader(base: value.mv_data!, count: value.mv_size).stringLength(slot: 1) ?? 0
            }
            visits[k] = titleBytes
        }
        result.seconds[.e2] = now() - start
        for v in visits { try check("lmdb e2: Σ title length == 20 × hits", v == 20 * hits, "\(v)") }

        // e3: the ids of the hits, copied into an array (a C harness's: malloc'd, doubled as it
        // fills, freed once checked). Each query is timed on its own and its array checked and
        // freed after its timer: kept until the end, 100 fresh arrays made e3 fault in new pages
        // and run at half the speed of the same loop in C (Benchmarks/ruler/lmdb_crud.c).
        var e3Seconds = 0.0
        for _ in 0..<Workload.queries {
            start = now()
            var (list, count, capacity) = (UnsafeMutablePointer<Int64>.allocate(capacity: 64), 0, 64)
            try query { _, id in
                if count == capacity {
                    let larger = UnsafeMutablePointer<Int64>.allocate(capacity: 2 * capacity)
                    larger.moveInitialize(from: list, count: count)
                    list.deallocate()
                    (list, capacity) = (larger, 2 * capacity)
                }
                (list + count).initialize(to: Int64(id))
                count += 1
            }
            e3Seconds += now() - start
            let ids = Array(UnsafeBufferPointer(start: list, count: count))
            list.deallocate()
            try check("lmdb e3: ids == 42, 142, 242, …", ids == w.authorIds, "\(ids.prefix(3))… (\(ids.count))")
        }
        result.seconds[.e3] = e3Seconds

        // f: 1,000 durable write transactions, each updating one object.
        start = now()
        for i in 1...Workload.commits(n) {
            try env.write { txn in try put(txn, i, modified: Workload.creationMs(i) + 120_000) }
        }
        result.seconds[.f] = now() - start
        try checkModificationDates("f", env, notes, w, afterF: true)

        // g: both DBIs emptied in one write transaction.
        start = now()
        try env.write { txn in
            try lmdbCheck(mdb_drop(txn, notes, 0), "mdb_drop notes")
            try lmdbCheck(mdb_drop(txn, index, 0), "mdb_drop author_idx")
        }
        result.seconds[.g] = now() - start
        try check("lmdb g: both DBIs empty", try env.entries(notes) == 0 && env.entries(index) == 0)
        return result
    }

    static func indexKey(author: UInt64, id: UInt64) -> (UInt64, UInt64) { (author.bigEndian, id.bigEndian) }

    static func checkModificationDates(_ step: String, _ env: Env, _ notes: MDB_dbi, _ w: Workload, afterF: Bool) throws {
        try env.read { txn in
            var k = 0
            try env.forEach(txn, notes, from: nil) { _, value in
                k += 1
                let reader = FlatNote.Reader(base: value.baseAddress!, count: value.count)
                let (id, modified) = (reader.u64(slot: 0), reader.u64(slot: 4).map { Int64(bitPattern: $0) })
                let expected = w.modificationMs(k, afterF: afterF)
                guard id == UInt64(k), modified == expected else {
                    throw BenchError("check failed: lmdb \(step): object \(k) has id \(id.map(String.init) ?? "none"), modificationDate \(modified.map(String.init) ?? "none"), expected \(expected)")
                }
                return true
            }
            try check("lmdb \(step): N objects read back", k == w.n, "\(k)")
        }
    }

    /// The CRUD workload's LMDB environment (`openLMDBEnvironment`) and its transactions.
    final class Env {
        private var env: OpaquePointer?

        init(directory: String) throws {
            env = try openLMDBEnvironment(directory: directory)
        }

        deinit { close() }

        func close() {
            if env != nil { mdb_env_close(env) }
            env = nil
        }

        func open(_ txn: OpaquePointer?, _ name: String) throws -> MDB_dbi {
            var dbi: MDB_dbi = 0
            try lmdbCheck(mdb_dbi_open(txn, name, UInt32(MDB_CREATE), &dbi), "mdb_dbi_open \(name)")
            return dbi
        }

        /// A write transaction, committed (durably: env flags 0) when `body` returns, else aborted.
        func write(_ body: (OpaquePointer?) throws -> Void) throws {
            var txn: OpaquePointer?
            try lmdbCheck(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
            do { try body(txn) } catch {
                mdb_txn_abort(txn)
                throw error
            }
            try lmdbCheck(mdb_txn_commit(txn), "mdb_txn_commit")
        }

        func read<T>(_ body: (OpaquePointer?) throws -> T) throws -> T {
            var txn: OpaquePointer?
            try lmdbCheck(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
            defer { mdb_txn_abort(txn) }
            return try body(txn)
        }

        func entries(_ dbi: MDB_dbi) throws -> Int {
            try read { txn in
                var stat = MDB_stat()
                try lmdbCheck(mdb_stat(txn, dbi, &stat), "mdb_stat")
                return Int(stat.ms_entries)
            }
        }

        /// A cursor over `dbi` from the first key ≥ `from` (nil: the first key), while `body` says go on.
        /// Inlined into its callers: called through a closure per entry, e's index scan ran at 0.7×
        /// the speed of the same loop in C (Benchmarks/ruler/lmdb_crud.c).
        @inline(__always)
        func forEach(_ txn: OpaquePointer?, _ dbi: MDB_dbi, from: UnsafeRawBufferPointer?,
                     _ body: (UnsafeRawPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
            var cursor: OpaquePointer?
            try lmdbCheck(mdb_cursor_open(txn, dbi, &cursor), "mdb_cursor_open")
            defer { mdb_cursor_close(cursor) }
            var key = MDB_val(mv_size: from?.count ?? 0, mv_data: from.map { UnsafeMutableRawPointer(mutating: $0.baseAddress) } ?? nil)
            var value = MDB_val()
            var rc = mdb_cursor_get(cursor, &key, &value, from == nil ? MDB_FIRST : MDB_SET_RANGE)
            while rc == 0 {
                guard try body(UnsafeRawPointer(key.mv_data!), UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)) else { return }
                rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
            }
            if rc != MDB_NOTFOUND { try lmdbCheck(rc, "mdb_cursor_get") }
        }
    }
}
