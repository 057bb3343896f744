import CellarStorage

/// Schema versions and migrations at open (`docs/migrations.md`).
extension Store {
    /// What opening does about schema versions.
    struct VersionPlan {
        /// The stored version (0 when none was stored).
        var stored: UInt64 = 0
        /// Whether a migration runs: the store has objects of an older version.
        var migrating = false
        /// The version written by the open's model sync (a new store's), if any.
        var write: UInt64?
    }

    /// Reads the stored schema version and decides. Throws `schema` when the store holds a
    /// newer version than the app's.
    static func versionPlan(_ engine: StorageEngine, hasModel: Bool, options: StoreOptions, path: String) throws -> VersionPlan {
        var plan = VersionPlan()
        plan.stored = try translatingErrors {
            try engine.read { txn -> UInt64 in
                guard let meta = try txn.tree(StorageLayout.metaTree),
                      let bytes = try StorageLayout.schemaVersionKey.withUnsafeBytes({ try txn.get(meta, key: $0) }) else { return 0 }
                guard bytes.count == 8 else {
                    throw CellarError.fileCorrupt("the stored schema version has \(bytes.count) bytes, expected 8")
                }
                return bytes.loadLE(UInt64.self, at: 0)
            }
        }
        guard let version = options.schemaVersion else { return plan }
        guard hasModel else {
            plan.write = version
            return plan
        }
        if plan.stored > version {
            throw CellarError.schema("the database at \(path) holds schema version \(plan.stored), newer than this app's \(version): a newer version of the app wrote it. Update the app, or open a copy of the data made before the newer version ran")
        }
        plan.migrating = plan.stored < version
        if plan.migrating && options.readOnly {
            throw CellarError.schema("the database at \(path) holds schema version \(plan.stored), below this app's \(version): open it writable once to migrate it")
        }
        return plan
    }

    static func writeSchemaVersion(_ version: UInt64, in txn: WriteTransaction) throws {
        let meta = try txn.tree(StorageLayout.metaTree, create: true)!
        try withUnsafeBytes(of: version.littleEndian) { try txn.put(meta, key: StorageLayout.schemaVersionKey, value: Array($0)) }
    }

    /// Runs `code` and syncs the model in one write transaction: the migration's rewrites, the
    /// new model, the new version, and the indexes built again over the rewritten objects (a
    /// unique index checked there). Anything thrown leaves the store as it was.
    func migrate(from stored: Model, sync: ModelSync.Result, plan: VersionPlan, to version: UInt64,
                 code: ((Migration) throws -> Void)?) throws {
        do {
            try inWriteContext { context in
                let migration = Migration(oldVersion: plan.stored, newVersion: version, oldModel: stored,
                                          newModel: sync.model, context: context)
                try code?(migration)
                try migration.finish()
                let write = context.write!
                try Store.apply(sync, to: write)
                try Store.writeSchemaVersion(version, in: write)
                try reconcileIndexes(in: context, rebuilding: migration.rewritten)
            }
        } catch var error as CellarError where error.code == .schema || error.code == .illegalArgument {
            error.message = "the migration from schema version \(plan.stored) to \(version) failed, and the store is left at version \(plan.stored): \(error.message)"
            throw error
        }
    }
}
