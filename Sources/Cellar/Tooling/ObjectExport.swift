import CellarStorage
import Foundation

/// A store's objects as a JSON-lines file, from one snapshot: what `cellar export` writes and
/// `ObjectImport` reads back into a store with the same ids, values and relations.
///
/// The file, one JSON value per line:
///
/// ```
/// {"format":"cellar-export","version":1,"model":{…},"nextIds":{"Note":43},"store":"…","commit":17}
/// {"entity":"Note","object":{"id":1,"title":"Shopping",…,"tags":[3,5]}}
/// …
/// {"end":{"objects":42}}
/// ```
///
/// - The first line holds the stored model (as a model file has it), the next id each entity
///   would hand out (ids are never reused, also after an import), and where the objects came from.
/// - Each object line is what `cellar dump --format jsonl` prints, in `ObjectDump`'s `exact` style:
///   flex values keep their types.
/// - The last line counts the objects, so that a file cut short is told from a whole one.
package enum ObjectExport {
    /// The `format` of the first line.
    package static let format = "cellar-export"
    /// The version of the layout above; `ObjectImport` refuses others.
    package static let version = 1

    /// What an export wrote.
    package struct Report: Sendable, Equatable {
        package var objects: Int
        package var bytes: Int
    }

    /// Writes every object of the store `engine` holds (of `entity` only, when given) to the file
    /// at `path` (created or truncated; `-` is standard output). `progress` is called now and
    /// then with the objects written so far and the number in all. A failure removes the file.
    /// Throws `illegalArgument` for a store without a model or an unknown entity.
    @discardableResult
    package static func export(_ engine: StorageEngine, entity: String? = nil, to path: String,
                               progress: ((_ done: Int, _ total: Int) -> Void)? = nil) throws -> Report {
        let output = try LineOutput(path: path)
        do {
            let report = try export(engine, entity: entity, progress: progress) { try output.write($0) }
            try output.close()
            return report
        } catch {
            output.abandon()
            throw error
        }
    }

    /// Writes the export line by line to `write` (each line's bytes without its newline).
    @discardableResult
    package static func export(_ engine: StorageEngine, entity: String? = nil,
                               progress: ((_ done: Int, _ total: Int) -> Void)? = nil,
                               write: ([UInt8]) throws -> Void) throws -> Report {
        try translatingErrors {
            try engine.read { txn in
                guard let model = try StorageLayout.storedModel(in: txn) else {
                    throw CellarError.illegalArgument("the store holds no model (a store of the storage engine alone): there are no objects to export")
                }
                let entities = model.entities.filter { !$0.isEmbedded && (entity == nil || $0.name == entity) }
                var total = 0
                var nextIds: [JSONMember] = []
                for schema in entities {
                    if let tree = try txn.tree(StorageLayout.entityTree(schema.id.id)) { total += try txn.count(tree) }
                    nextIds.append(JSONMember(schema.name, .number(String(try nextId(of: schema, in: txn)))))
                }
                var bytes = 0
                func line(_ value: JSONValue) throws {
                    var out: [UInt8] = []
                    JSONWriter.writeCompact(value, into: &out)
                    bytes += out.count + 1
                    try write(out)
                }
                try line(.object([
                    JSONMember("format", .string(format)),
                    JSONMember("version", .number(String(version))),
                    JSONMember("model", try JSONParser.parse(model.jsonBytes(), source: "the stored model")),
                    JSONMember("nextIds", .object(nextIds)),
                    JSONMember("store", .string("\(engine.uuid)")),
                    JSONMember("commit", .number(String(txn.transactionId))),
                ]))
                var objects = 0
                progress?(0, total)
                try ObjectDump.forEachObject(in: txn, entity: entity, style: .exact) { name, object in
                    try line(.object([JSONMember("entity", .string(name)), JSONMember("object", object)]))
                    objects += 1
                    if objects % 4096 == 0 { progress?(objects, total) }
                }
                progress?(objects, total)
                try line(.object([JSONMember("end", .object([JSONMember("objects", .number(String(objects)))]))]))
                return Report(objects: objects, bytes: bytes)
            }
        }
    }

    /// The id `put` would hand out next for `entity`: one above both its highest id and the
    /// highest id removed from it (as `TransactionContext.loadSequence` works it out).
    private static func nextId(of entity: ModelEntity, in txn: ReadTransaction) throws -> Id {
        var highest: Id = 0
        if let tree = try txn.tree(StorageLayout.entityTree(entity.id.id)) {
            let cursor = try txn.cursor(tree)
            if try cursor.last() { highest = try StorageLayout.objectId(cursor.key) }
        }
        let bytes = try txn.tree(StorageLayout.metaTree).flatMap { try txn.get($0, key: StorageLayout.sequenceKey(entity.id.id)) }
        return IdSequence(highestInTree: highest, floor: try IdSequence.floor(stored: bytes, entity: entity.name)).next
    }
}

/// A file written line by line through a buffer (standard output for `-`).
final class LineOutput {
    private let file: UnsafeMutablePointer<FILE>
    private let path: String?

    init(path: String) throws {
        if path == "-" {
            // A stream of its own on a copy of the descriptor: closing it leaves standard output open.
            guard let opened = fdopen(dup(STDOUT_FILENO), "w") else {
                throw CellarError.illegalArgument("cannot write standard output: \(String(cString: strerror(errno)))")
            }
            file = opened
            self.path = nil
            return
        }
        guard let opened = fopen(path, "w") else {
            throw CellarError.illegalArgument("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        file = opened
        self.path = path
    }

    func write(_ line: [UInt8]) throws {
        let written = line.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        guard written == line.count, fputc(0x0A, file) != EOF else {
            throw CellarError.illegalArgument("cannot write \(path ?? "standard output"): \(String(cString: strerror(errno)))")
        }
    }

    /// Flushes and closes (a failed flush, a full disk say, throws).
    func close() throws {
        if fclose(file) != 0 { throw CellarError.illegalArgument("cannot write \(path ?? "standard output"): \(String(cString: strerror(errno)))") }
    }

    /// Closes and removes the file, after a failure.
    func abandon() {
        fclose(file)
        if let path { unlink(path) }
    }
}
