import CellarStorage
import Foundation

/// Reads a file `ObjectExport` wrote back into a store: every object with its id, its values and
/// its relations, the indexes kept as a `put` keeps them. What `cellar import` runs.
///
/// - **The store.** When it holds no model yet (a new directory), it gets the file's. When it has
///   one, entities, properties and relations are matched by UID, so that a store of the same app
///   takes the file even after renames; a property of the file the store lacks throws `schema`.
///   The store must hold no objects of the file's entities: ids are kept, so they would collide.
/// - **Batches.** Objects are written `batchSize` at a time, each batch one transaction, so that
///   memory stays bounded however long the file is. A line that does not parse, or holds a value
///   its property cannot take, stops the import with its line number: its batch is rolled back,
///   the batches before it stay.
/// - **The end.** The file's last line counts its objects; a file cut short (no such line)
///   throws, and its last batch is not written.
/// - **Durability.** Batches commit without syncing (`.none`); the import syncs once when the
///   end line was read, and reports success only after that sync. A crash or power loss before it
///   may lose batches (the store stays sound); import again into a new directory.
/// - **Ids.** Each entity's next id is set as the file says, so ids handed out after the import
///   are above every id the exported store had handed out.
package enum ObjectImport {
    /// What an import wrote.
    package struct Report: Sendable, Equatable {
        package var objects: Int
        package var lines: Int
        package var batches: Int
    }

    /// Imports the export file at `path` (`-`: standard input) into the store in `directory`
    /// (created when missing), opened with `options`. `progress` is called now and then with
    /// the bytes read so far and the file's size (0 when unknown).
    @discardableResult
    package static func importFile(_ path: String, into directory: String, options: StoreOptions = StoreOptions(),
                                   batchSize: Int = 10_000,
                                   progress: ((_ bytesRead: Int, _ totalBytes: Int) -> Void)? = nil) throws -> Report {
        guard batchSize >= 1 else { throw CellarError.illegalArgument("the batch size must be at least 1") }
        let input = try LineInput(path: path)
        defer { input.close() }
        guard let first = try input.next() else {
            throw CellarError.illegalArgument("\(path) is empty: an export file starts with its header line")
        }
        let header = try annotated(line: 1) { try Header(first) }
        // An in-memory store is new and empty each time it is opened.
        let storeModel = directory.hasPrefix(Store.inMemoryPrefix) ? nil : try Store.storedModel(at: directory, options: options)
        // Batches are committed without a sync each; one sync at the end makes them all durable
        // before the import reports success (a crash before it loses batches, not the store).
        var batchOptions = options
        batchOptions.durability = .none
        let store = try Store(directoryPath: directory, model: storeModel ?? header.model, options: batchOptions)
        defer { store.close() }
        var importer = try Importer(store: store, header: header)
        var batches = 0
        var finished = false
        while !finished {
            try store.inWriteContext { context in
                if batches == 0 { try importer.prepare(context) }
                var written = 0
                while written < batchSize {
                    guard let line = try input.next() else {
                        throw CellarError.illegalArgument("line \(input.lineNumber): the file ends without its end line ({\"end\": …}): it was cut short. The \(importer.objects) objects before this batch were imported; nothing after them")
                    }
                    if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
                    let ended = try annotated(line: input.lineNumber) { try importer.take(line, context) }
                    if ended {
                        finished = true
                        break
                    }
                    written += 1
                }
                importer.objects += written
            }
            batches += 1
            progress?(input.bytesRead, input.totalBytes)
        }
        while let line = try input.next() {
            guard line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) else {
                throw CellarError.illegalArgument("line \(input.lineNumber): a line after the end line (the file's objects were imported)")
            }
        }
        try translatingErrors { try store.engine.sync() }
        return Report(objects: importer.objects, lines: input.lineNumber, batches: batches)
    }

    /// Runs `body`, putting `line` in front of a data error's message (a storage failure is
    /// thrown as it is).
    private static func annotated<T>(line: Int, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as CellarError where ![.storage, .storeClosed, .fileCorrupt].contains(error.code) {
            throw CellarError(.illegalArgument, message: "line \(line): \(error.code == .illegalArgument ? error.message : "\(error)")")
        }
    }

    /// The file's first line.
    struct Header {
        let model: Model
        /// The next id of each entity whose objects the file holds, by name (an export of one
        /// entity lists that one).
        let nextIds: [String: Id]

        init(_ line: [UInt8]) throws {
            guard case .object(let members) = try JSONParser.parse(line, source: "the header line"),
                  members.first(where: { $0.name == "format" })?.value == .string(ObjectExport.format) else {
                throw CellarError.illegalArgument("not a Cellar export file (its first line has no \"format\": \"\(ObjectExport.format)\")")
            }
            guard members.first(where: { $0.name == "version" })?.value == .number(String(ObjectExport.version)) else {
                throw CellarError.illegalArgument("an export file of another version than \(ObjectExport.version), which this Cellar reads")
            }
            guard let model = members.first(where: { $0.name == "model" })?.value else {
                throw CellarError.illegalArgument("the header line has no model")
            }
            self.model = try Model(json: JSONWriter.bytes(model), file: "the export's model")
            var nextIds: [String: Id] = [:]
            if case .object(let entries)? = members.first(where: { $0.name == "nextIds" })?.value {
                for entry in entries {
                    guard case .number(let text) = entry.value, let next = Id(text) else {
                        throw CellarError.illegalArgument("nextIds.\(entry.name) is not an id")
                    }
                    nextIds[entry.name] = next
                }
            }
            self.nextIds = nextIds
        }
    }

    /// Puts the objects of the lines it is given.
    private struct Importer {
        let store: Store
        let header: Header
        /// By the file's entity name.
        let entities: [String: (mapping: ImportMapping, schema: EntitySchema)]
        let builder = RecordBuilder(capacity: 4096)
        /// Objects written by the batches committed so far.
        var objects = 0

        init(store: Store, header: Header) throws {
            self.store = store
            self.header = header
            let byUid = Dictionary(store.model.entities.map { ($0.id.uid, $0) }, uniquingKeysWith: { a, _ in a })
            var entities: [String: (ImportMapping, EntitySchema)] = [:]
            for entity in header.model.entities where !entity.isEmbedded {
                guard let target = byUid[entity.id.uid], !target.isEmbedded, let schema = store.schemasById[target.id.id] else {
                    throw CellarError.schema("the store's model has no entity \(entity.name) (UID \(entity.id.uid)) of the file's model")
                }
                entities[entity.name] = (try ImportMapping(file: entity, in: header.model, store: target, in: store.model), schema)
            }
            self.entities = entities
        }

        /// Checks that the store holds no object of the file's entities, and sets their next ids.
        func prepare(_ context: TransactionContext) throws {
            for (name, entity) in entities.sorted(by: { $0.key < $1.key }) where header.nextIds[name] != nil {
                let count = try context.count(entity.schema)
                guard count == 0 else {
                    throw CellarError.illegalArgument("the store already holds \(count) \(entity.schema.name) objects; import into a store without objects of the file's entities (the file's ids are kept)")
                }
                if let next = header.nextIds[name], next > 1 {
                    try context.withSequence(entity.schema) { $0.noteRemoved(next - 1) }
                }
            }
        }

        /// Puts the object of `line`; true when it is the end line instead (its count checked).
        func take(_ line: [UInt8], _ context: TransactionContext) throws -> Bool {
            guard case .object(let members) = try JSONParser.parse(line, source: "the line") else {
                throw CellarError.illegalArgument("expected an object: {\"entity\": …, \"object\": {…}}")
            }
            if members.count == 1, members[0].name == "end" {
                guard case .object(let end) = members[0].value, case .number(let text)? = end.first(where: { $0.name == "objects" })?.value,
                      let count = Int(text) else {
                    throw CellarError.illegalArgument("the end line has no object count")
                }
                // The store held none of the file's entities' objects before.
                let read = try context.count(of: entities.filter { header.nextIds[$0.key] != nil }.map(\.value.schema))
                guard count == read else {
                    throw CellarError.illegalArgument("the end line counts \(count) objects, the file has \(read): lines are missing")
                }
                return true
            }
            guard members.count == 2, case .string(let name)? = members.first(where: { $0.name == "entity" })?.value,
                  case .object(let properties)? = members.first(where: { $0.name == "object" })?.value else {
                throw CellarError.illegalArgument("expected an object: {\"entity\": …, \"object\": {…}}")
            }
            guard let (mapping, schema) = entities[name], header.nextIds[name] != nil else {
                throw CellarError.illegalArgument(entities[name] == nil ? "the file's model has no entity \(name)"
                                                  : "the header's nextIds do not list \(name): the file holds none of its objects")
            }
            guard case .number(let idText)? = properties.first(where: { $0.name == "id" })?.value, let id = Id(idText), id != 0 else {
                throw CellarError.illegalArgument("the \(name) object has no id (a positive integer)")
            }
            guard try !context.contains(schema, id) else {
                throw CellarError.illegalArgument("\(name) \(id) appears twice in the file")
            }
            try ObjectRecordEncoder.write(properties, mapping, into: builder)
            let tree = try context.writeTree(schema)
            if schema.hasIndexes {
                try context.putIndexed(schema, id: id, record: builder.finished, tree: tree, isNew: true)
            } else {
                context.history?.notePut(schema, id: id)
                try StorageLayout.withObjectKey(id) { try context.write!.put(tree, key: $0, value: builder.finished) }
            }
            try context.withSequence(schema) { $0.noteAssigned(id) }
            context.changeLog?.note(schema, id)
            for member in properties {
                guard let relation = mapping.relations[member.name] else { continue }
                guard case .array(let targets) = member.value else {
                    throw CellarError.illegalArgument("\(name).\(member.name): expected an array of ids")
                }
                let targetSchema = store.schemasById[relation.targetId.id]
                guard let targetSchema else { throw CellarError.schema("the target of \(name).\(member.name) is not in the store's model") }
                for target in targets {
                    guard case .number(let text) = target, let targetId = Id(text), targetId != 0 else {
                        throw CellarError.illegalArgument("\(name).\(member.name): expected an array of ids")
                    }
                    try context.setLink(id, targetId, link: .relation(relation.id.id), linked: true, targetSchema: targetSchema)
                }
            }
            return false
        }
    }
}

extension TransactionContext {
    /// The objects of `schemas` in all.
    fileprivate func count(of schemas: [EntitySchema]) throws -> Int {
        try schemas.reduce(0) { try $0 + count($1) }
    }
}

/// A file read line by line (standard input for `-`), counting lines and bytes.
final class LineInput {
    private let file: UnsafeMutablePointer<FILE>
    private var buffer: UnsafeMutablePointer<CChar>?
    private var capacity = 0
    /// The number of the line `next` returned last (1 for the first).
    private(set) var lineNumber = 0
    private(set) var bytesRead = 0
    /// The file's size; 0 when it is not a regular file.
    let totalBytes: Int

    init(path: String) throws {
        // Standard input through a stream of its own on a copy of the descriptor.
        guard let opened = path == "-" ? fdopen(dup(STDIN_FILENO), "r") : fopen(path, "r") else {
            throw CellarError.illegalArgument("cannot read \(path == "-" ? "standard input" : path): \(String(cString: strerror(errno)))")
        }
        file = opened
        var status = stat()
        totalBytes = fstat(fileno(file), &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG ? Int(status.st_size) : 0
    }

    /// The next line without its newline; nil at the end of the file.
    func next() throws -> [UInt8]? {
        let length = getline(&buffer, &capacity, file)
        guard length >= 0 else {
            if ferror(file) != 0 { throw CellarError.illegalArgument("cannot read line \(lineNumber + 1): \(String(cString: strerror(errno)))") }
            return nil
        }
        lineNumber += 1
        bytesRead += length
        var count = length
        if count > 0, buffer![count - 1] == 0x0A { count -= 1 }
        return UnsafeRawBufferPointer(start: buffer, count: count).map { $0 }
    }

    func close() {
        free(buffer)
        buffer = nil
        fclose(file)
    }
}
