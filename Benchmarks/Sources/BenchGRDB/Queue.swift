import GRDB

/// The SQLite connection every harness's SQLite side uses, as the CRUD workload sets it up: one
/// `DatabaseQueue` (one connection) on the file at `path`, `journal_mode=WAL`, `synchronous=NORMAL`.
public func openBenchQueue(_ path: String) throws -> DatabaseQueue {
    var config = Configuration()
    config.journalMode = .wal
    config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
    return try DatabaseQueue(path: path, configuration: config)
}
