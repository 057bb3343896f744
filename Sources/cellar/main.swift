// The `cellar` command-line tool: a demo of the library, and inspection of a store.
//
//   cellar demo [directory]     put, read, update and remove notes (default: ./cellar-demo)
//   cellar info [--json] <directory>
//                               the store's identity, size and garbage, commits, entities with
//                               their objects and indexes, trees, dictionaries (`inspect`: the same)
//   cellar model <directory>    the model stored in the store, as a model JSON file
//   cellar verify <directory>   read every record of every tree, checking every checksum
//   cellar compact <directory> [none|zstd|dictionary]
//                               rewrite a closed store without its garbage (offline)
@_spi(Testing) import Cellar
import CellarStorage
@preconcurrency import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func usage() -> Never {
    fputs("""
    usage: cellar demo [directory]      put, read, update and remove notes (default ./cellar-demo)
           cellar info [--json] <directory>
                                        show a store's identity, size and garbage, commits, entities
                                        (objects, indexes), trees and dictionaries; `inspect` too
           cellar model <directory>     print the model stored in the store as a model JSON file
                                        (to recover a lost one)
           cellar verify <directory>    read every record of every tree, checking every checksum
           cellar compact <directory> [none|zstd|dictionary]
                                        rewrite a store without its garbage; the store must not be
                                        open in another process (offline compaction). Values are
                                        written uncompressed (none), with zstd, or with zstd and a
                                        dictionary per tree trained now; without the word: with
                                        dictionaries when the store holds some, else uncompressed

    """, stderr)
    exit(2)
}

func demo(_ directory: String) throws {
    // The store and its model: the first run creates both; later runs find them.
    let store = try Store(directoryPath: directory, model: DemoNote.model)
    print("opened the store in \(directory) (\(store.modelChanges.isEmpty ? "model unchanged" : "model: \(store.modelChanges.map(\.description).joined(separator: ", "))"))")
    let notes = store.box(for: DemoNote.self)

    // 10,000 notes in one transaction, durable when put returns; ids are assigned by put.
    let batch = (1...10_000).map { DemoNote(title: "Note \($0) of this run", text: $0 % 3 == 0 ? nil : "written by the Cellar demo", stars: Int32($0 % 6)) }
    let ids = try notes.put(batch)
    print("put \(ids.count) notes in one transaction: ids \(ids.first!)…\(ids.last!), \(try notes.count()) stored")

    // Reads: by id, and all of them (on one snapshot).
    if let first = try notes.get(ids[0]) {
        print("note \(first.id): \"\(first.title)\", text \(first.text.map { "\"\($0)\"" } ?? "nil"), \(first.stars) stars")
    }
    let fiveStars = try notes.all().filter { $0.stars == 5 }.count
    print("read all: \(fiveStars) notes have five stars")

    // A transaction: everything in it, or nothing.
    try store.runInTransaction {
        for note in batch.prefix(100) {
            note.stars = 5
            try notes.put(note)
        }
        try notes.remove(Array(ids.suffix(5_000)).map(\.value))
    }
    print("one transaction: gave 100 notes five stars, removed 5,000: \(try notes.count()) stored")
    struct Undo: Error {}
    _ = try? store.runInTransaction {
        try notes.removeAll()
        throw Undo()
    }
    print("a transaction that threw rolled back its removeAll: still \(try notes.count()) stored; run the demo again to add more")
    store.close()
}

/// `cellar info`: what the store holds, as text or (`json`) one JSON object.
func info(_ directory: String, json: Bool) throws {
    let engine = try StorageEngine(directory: directory, options: StorageOptions(readOnly: true))
    defer { engine.close() }
    let summary = try StoreSummary.read(engine)
    let trees = try engine.read { txn in try txn.treeNames().map { ($0, try txn.count(txn.tree($0)!)) } }
    let size = engine.fileSize
    let garbage = size == 0 ? 0 : Double(size - min(engine.liveBytes, size)) / Double(size)
    if json {
        let object: [String: Any] = [
            "store": "\(engine.uuid)",
            "lastCommit": engine.lastTransactionId,
            "fileBytes": size,
            "liveBytes": engine.liveBytes,
            "garbageShare": (garbage * 1000).rounded() / 1000,
            "hasModel": summary.model != nil,
            "entities": summary.entities.map { entity -> [String: Any] in
                ["name": entity.name, "id": entity.id, "objects": entity.objects, "properties": entity.properties,
                 "relations": entity.relations, "embedded": entity.embedded,
                 "indexes": entity.indexes.map { ["property": $0.property, "kind": $0.kind, "unique": $0.unique, "built": $0.built] }]
            },
            "trees": trees.map { ["name": $0.0, "entries": $0.1] },
            "dictionaries": summary.dictionaries,
        ]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        print(String(decoding: data, as: UTF8.self))
        return
    }
    print("store      \(engine.uuid)")
    print("commit     \(engine.lastTransactionId)")
    print("file       \(size) bytes, \(engine.liveBytes) live (\(String(format: "%.1f", garbage * 100)) % garbage)")
    if summary.model == nil { print("model      none (a store of the storage engine alone)") }
    for entity in summary.entities {
        var line = "entity     \(entity.name) (\(entity.id)): "
        line += entity.embedded ? "embedded type" : "\(entity.objects) objects"
        line += ", \(entity.properties) properties"
        if entity.relations > 0 { line += ", \(entity.relations) relations" }
        if !entity.indexes.isEmpty {
            line += "; indexes: " + entity.indexes.map { "\($0.property) (\($0.kind)\($0.unique ? ", unique" : "")\($0.built ? "" : ", not built yet"))" }.joined(separator: ", ")
        }
        print(line)
    }
    for (name, entries) in trees { print("tree       \(name): \(entries) entries") }
    print("dictionaries \(summary.dictionaries.isEmpty ? "none" : summary.dictionaries.map(String.init).joined(separator: ", "))")
}

/// `cellar model`: the stored model as a model JSON file, on standard output.
func model(_ directory: String) throws {
    let engine = try StorageEngine(directory: directory, options: StorageOptions(readOnly: true))
    defer { engine.close() }
    guard let model = try StoreSummary.read(engine).model else {
        fputs("cellar: the store in \(directory) holds no model (a store of the storage engine alone)\n", stderr)
        exit(1)
    }
    print(model.jsonString(), terminator: "")
}

func verify(_ directory: String) throws {
    let engine = try StorageEngine(directory: directory, options: StorageOptions(readOnly: true))
    defer { engine.close() }
    var entries = 0
    var bytes = 0
    try engine.read { txn in
        for name in try txn.treeNames() {
            let tree = try txn.tree(name)!
            var seen = 0
            try txn.cursor(tree).scan { key, value in
                seen += 1
                bytes += key.count + value.count
                return true
            }
            guard seen == (try txn.count(tree)) else {
                throw StorageError.fileCorrupt(offset: 0, reason: "tree \(name) holds \(seen) entries but its catalog says \(try txn.count(tree))")
            }
            entries += seen
        }
    }
    let objects = try RecordCheck.verify(engine)
    print("ok: \(entries) entries, \(bytes) bytes of keys and values, every record verified; \(objects.objects) objects of \(objects.entities) entities decode against the stored model; \(objects.indexEntries) index entries and \(objects.relationLinks) relation links match them")
}

/// Compacts the closed store in `directory`, writing values as `mode` says (nil: with
/// dictionaries when the store holds some, so that compacting a dictionary-compressed store keeps
/// it compressed; else uncompressed).
func compact(_ directory: String, mode: String?) throws {
    let compression: Compression
    switch mode {
    case "none": compression = .none
    case "zstd": compression = .zstd()
    case "dictionary": compression = .zstdDictionary()
    case nil:
        let engine = try StorageEngine(directory: directory, options: StorageOptions(readOnly: true))
        let trained = try !engine.read { try $0.dictionaryIds() }.isEmpty
        engine.close()
        compression = trained ? .zstdDictionary() : .none
    default: usage()
    }
    print(try StorageEngine.compact(directory: directory, options: StorageOptions(compression: compression)))
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "demo": try demo(arguments.count > 1 ? arguments[1] : "cellar-demo")
    case "info" where arguments.count == 2, "inspect" where arguments.count == 2: try info(arguments[1], json: false)
    case "info" where arguments.count == 3 && arguments[1] == "--json", "inspect" where arguments.count == 3 && arguments[1] == "--json":
        try info(arguments[2], json: true)
    case "model" where arguments.count == 2: try model(arguments[1])
    case "verify" where arguments.count == 2: try verify(arguments[1])
    case "compact" where arguments.count == 2 || arguments.count == 3:
        try compact(arguments[1], mode: arguments.count == 3 ? arguments[2] : nil)
    default: usage()
    }
} catch {
    fputs("cellar: \(error)\n", stderr)
    exit(1)
}
