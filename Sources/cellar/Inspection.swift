@_spi(Tools) import Cellar
import CellarStorage
@preconcurrency import Foundation

/// An error of the tool's own (a store without a model, a word it does not know), printed as its
/// message.
struct ToolError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// `cellar info`: what the store holds, as text or (`json`) one JSON object.
func info(_ directory: String, json: Bool, options: StorageOptions) throws {
    let engine = try StorageEngine(directory: directory, options: options)
    defer { engine.close() }
    let summary = try StoreSummary.read(engine)
    let size = engine.fileSize
    let garbage = size == 0 ? 0 : Double(size - min(engine.liveBytes, size)) / Double(size)
    if json {
        let object: [String: Any] = [
            "store": "\(engine.uuid)",
            "formatVersion": StorageEngine.formatVersion,
            "lastCommit": engine.lastTransactionId,
            "fileBytes": size,
            "liveBytes": engine.liveBytes,
            "garbageShare": (garbage * 1000).rounded() / 1000,
            "hasModel": summary.model != nil,
            "encrypted": engine.isEncrypted,
            "entities": summary.entities.map { entity -> [String: Any] in
                ["name": entity.name, "id": entity.id, "objects": entity.objects, "bytes": entity.bytes, "properties": entity.properties,
                 "relations": entity.relations, "embedded": entity.embedded,
                 "indexes": entity.indexes.map { ["property": $0.property, "kind": $0.kind, "unique": $0.unique, "built": $0.built] }]
            },
            "trees": summary.trees.map { ["name": $0.name, "entries": $0.entries] },
            "dictionaries": summary.dictionaries,
        ]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        print(String(decoding: data, as: UTF8.self))
        return
    }
    print("store      \(engine.uuid)")
    print("format     version \(StorageEngine.formatVersion)")
    print("commit     \(engine.lastTransactionId)")
    print("file       \(size) bytes, \(engine.liveBytes) live (\(String(format: "%.1f", garbage * 100)) % garbage)")
    print("encryption \(engine.isEncrypted ? "AES-256-GCM" : "none")")
    if summary.model == nil { print("model      none (a store of the storage engine alone)") }
    for entity in summary.entities {
        var line = "entity     \(entity.name) (\(entity.id)): "
        line += entity.embedded ? "embedded type" : "\(entity.objects) objects, \(entity.bytes) bytes"
        line += ", \(entity.properties) properties"
        if entity.relations > 0 { line += ", \(entity.relations) relations" }
        if !entity.indexes.isEmpty {
            line += "; indexes: " + entity.indexes.map { "\($0.property) (\($0.kind)\($0.unique ? ", unique" : "")\($0.built ? "" : ", not built yet"))" }.joined(separator: ", ")
        }
        print(line)
    }
    for (name, entries) in summary.trees { print("tree       \(name): \(entries) entries") }
    print("dictionaries \(summary.dictionaries.isEmpty ? "none" : summary.dictionaries.map(String.init).joined(separator: ", "))")
}

/// `cellar model`: the stored model as a model JSON file, on standard output.
func model(_ directory: String, options: StorageOptions) throws {
    let engine = try StorageEngine(directory: directory, options: options)
    defer { engine.close() }
    guard let model = try StoreSummary.read(engine).model else {
        throw ToolError("the store in \(directory) holds no model (a store of the storage engine alone)")
    }
    print(model.jsonString(), terminator: "")
}

func verify(_ directory: String, options: StorageOptions) throws {
    let engine = try StorageEngine(directory: directory, options: options)
    defer { engine.close() }
    var entries = 0
    var bytes = 0
    var deepTrees: [String] = []
    let bar = ProgressBar("verifying")
    try engine.read { txn in
        let names = try txn.treeNames()
        let total = try names.reduce(0) { try $0 + txn.count(txn.tree($1)!) }
        for name in names {
            let tree = try txn.tree(name)!
            var seen = 0
            do {
                try txn.cursor(tree).scan { key, value in
                    seen += 1
                    bytes += key.count + value.count
                    if (entries + seen) % 4096 == 0 { bar.update(entries + seen, of: total) }
                    return true
                }
            } catch let error as StorageError {
                throw ToolError("tree \(name), after its first \(seen) entries: \(error)")
            }
            let count = try txn.count(tree)
            guard seen == count else {
                throw StorageError.fileCorrupt(offset: 0, reason: "tree \(name) holds \(seen) entries but its catalog says \(count)")
            }
            let height = try txn.height(tree)
            if height > Tree.maximumHeight(count: count) { deepTrees.append("\(name) (\(height) levels for \(count) entries)") }
            entries += seen
        }
        bar.update(entries, of: total)
    }
    bar.finish()
    let objectBar = ProgressBar("checking objects")
    let indexBar = ProgressBar("checking indexes and relations")
    let objects = try RecordCheck.verify(engine) { phase, done, total in
        switch phase {
        case .objects: objectBar.update(done, of: total)
        case .indexes:
            if done == 0 { objectBar.finish() }
            indexBar.update(done, of: total)
        }
    }
    objectBar.finish()
    indexBar.finish()
    if !deepTrees.isEmpty {
        print("note: deeper than a tree of this build grows: \(deepTrees.joined(separator: ", ")); an older build wrote them, every entry reads, and `cellar compact` rebuilds them")
    }
    print("ok: \(entries) entries, \(bytes) bytes of keys and values, every record verified; \(objects.objects) objects of \(objects.entities) entities decode against the stored model; \(objects.indexEntries) index entries and \(objects.relationLinks) relation links match them")
}

/// What a compaction does with the store's encryption.
enum EncryptionChange {
    case keep, remove
    case encrypt(EncryptionKey)
}

/// Compacts the closed store in `directory` (opened with `options`, its key among them), writing
/// values as `mode` says (nil: with dictionaries when the store holds some, so that compacting a
/// dictionary-compressed store keeps it compressed; else uncompressed), encrypted as `change`
/// says.
func compact(_ directory: String, mode: String?, options: StorageOptions, change: EncryptionChange) throws {
    var options = options
    let chosen: Compression?
    switch mode {
    case "none": chosen = Compression.none
    case "zstd": chosen = .zstd()
    case "dictionary": chosen = .zstdDictionary()
    case nil: chosen = nil
    default: throw ToolError("unknown compression \(mode!) (none, zstd or dictionary)")
    }
    // One read of the store first: whether it holds dictionaries, and its undo steps that name commits.
    var readOptions = options
    readOptions.readOnly = true
    let reader = try StorageEngine(directory: directory, options: readOptions)
    let (trained, namingCommits) = try reader.read { read in
        (try !read.dictionaryIds().isEmpty, try Store.undoStepsNamingCommits(in: read))
    }
    reader.close()
    options.compression = chosen ?? (trained ? .zstdDictionary() : .none)
    if namingCommits > 0 {
        print("note: \(namingCommits) undo steps name commits this compaction drops: they will not undo (an app's own compaction, `Store.compact()`, gives them their values first)")
    }
    let bar = ProgressBar("compacting")
    let progress: StorageEngine.CompactionProgress = { copied, total in bar.update(copied, of: total) }
    let report: CompactionReport
    switch change {
    case .keep: report = try StorageEngine.compact(directory: directory, options: options, progress: progress)
    case .remove: report = try StorageEngine.compact(directory: directory, options: options, newKey: nil, progress: progress)
    case .encrypt(let key): report = try StorageEngine.compact(directory: directory, options: options, newKey: key, progress: progress)
    }
    bar.finish()
    print(report)
}
