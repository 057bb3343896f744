import CellarStorage

/// Copies, exports and imports: a store's data written elsewhere while it stays in use
/// (`docs/backups.md`).
extension Store {
    /// How ``copy(to:encryption:)`` encrypts the copy.
    public enum CopyEncryption: Sendable {
        /// As this store is: with its key, or plain.
        case same
        /// Not encrypted.
        case plain
        /// Encrypted with this key (a new one, or this store's).
        case key(EncryptionKey)
    }

    /// What ``copy(to:encryption:)`` wrote.
    public typealias CopyReport = StorageEngine.CopyReport

    /// Writes a consistent copy of the store — the newest commit, as a read transaction sees it —
    /// into a new store at `directoryPath`, which must not exist, while this one stays in use
    /// (readers and writers are not blocked). Realm's `writeCopy(toFile:)`.
    ///
    /// The copy is compacted (live objects only), compressed as this store's options say, and
    /// encrypted as `encryption` says. It keeps the objects and their ids, the indexes, relations,
    /// id sequences, the model and schema version, the change history, and the store's UUID (so
    /// persistent identifiers resolve in it, as in a restored backup). It appears whole or not at
    /// all: it is written into `directoryPath` + `.partial`, synced, then renamed (a crash leaves
    /// at most that `.partial`, removed by the next copy to the same path).
    ///
    /// Throws `illegalArgument` when `directoryPath` exists, `storeClosed`, and the copy's I/O
    /// errors (no space, say), after which no `directoryPath` exists.
    @discardableResult
    public func copy(to directoryPath: String, encryption: CopyEncryption = .same) throws -> CopyReport {
        let changingKey: EncryptionKey??
        switch encryption {
        case .same: changingKey = nil
        case .plain: changingKey = .some(nil)
        case .key(let key): changingKey = .some(key)
        }
        return try translatingErrors { try engine.writeCopy(to: directoryPath, changingKey: changingKey) }
    }

    /// What ``export(to:entity:)`` wrote.
    public struct ExportReport: Sendable, Equatable {
        /// Objects written.
        public var objects: Int
        /// Bytes of the file.
        public var bytes: Int
    }

    /// Writes the store's objects (of entity `entity` only, when given) as a JSON-lines export
    /// file at `path` (created or replaced), from one snapshot, while the store stays in use: the
    /// stored model, each entity's next id, then one line per object with its id, every value and
    /// its relations, then a line counting them (`docs/tools.md`, "export"; what `cellar export`
    /// writes). A failure removes the file. ``importObjects(from:into:options:)`` reads it back.
    @discardableResult
    public func export(to path: String, entity: String? = nil) throws -> ExportReport {
        let report = try ObjectExport.export(engine, entity: entity, to: path)
        return ExportReport(objects: report.objects, bytes: report.bytes)
    }

    /// What ``importObjects(from:into:options:)`` wrote.
    public struct ImportReport: Sendable, Equatable {
        /// Objects written.
        public var objects: Int
        /// Transactions they were written in.
        public var batches: Int
    }

    /// Reads an export file (``export(to:entity:)``, `cellar export`) into the store at
    /// `directoryPath` (created when missing; it must not be open, and must hold no objects of
    /// the file's entities), opened with `options`: every object with its id, values and
    /// relations, indexes kept as a put keeps them, each entity's next id as the file says.
    /// Objects are written 10,000 to a transaction; a line that does not parse, or holds a value
    /// its property cannot take, stops the import with its line number (that batch is not kept);
    /// a file cut short throws. Success is reported once everything is synced.
    @discardableResult
    public static func importObjects(from path: String, into directoryPath: String,
                                     options: StoreOptions = StoreOptions()) throws -> ImportReport {
        let report = try ObjectImport.importFile(path, into: directoryPath, options: options)
        return ImportReport(objects: report.objects, batches: report.batches)
    }
}
