// What engine-bench and crud share of LMDB: the environment both open, and LMDB's errors as
// BenchErrors. Their hot loops call LMDB directly.
import BenchSupport
@_exported import CLMDB

/// Throws a `BenchError` naming `what` and LMDB's message when `rc` is not 0.
public func lmdbCheck(_ rc: Int32, _ what: String) throws {
    if rc != 0 { throw BenchError("lmdb: \(what) failed: \(String(cString: mdb_strerror(rc)))") }
}

/// An environment as the CRUD workload's anchors opened theirs: env flags 0 (a durable commit syncs the
/// data, then writes the meta page with O_DSYNC), map size 16 GiB, up to 4 named DBIs, in the
/// existing folder `directory`. The caller closes it (`mdb_env_close`).
public func openLMDBEnvironment(directory: String) throws -> OpaquePointer {
    var env: OpaquePointer?
    try lmdbCheck(mdb_env_create(&env), "mdb_env_create")
    do {
        try lmdbCheck(mdb_env_set_mapsize(env, 16 << 30), "mdb_env_set_mapsize")
        try lmdbCheck(mdb_env_set_maxdbs(env, 4), "mdb_env_set_maxdbs")
        try lmdbCheck(mdb_env_open(env, directory, 0, 0o644), "mdb_env_open")
    } catch {
        mdb_env_close(env)
        throw error
    }
    return env!
}
