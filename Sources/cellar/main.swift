// The `cellar` command-line tool: a demo of the library, and inspection of a store.
//
//   cellar demo [directory]     put, read, update and remove notes (default: ./cellar-demo)
//   cellar inspect <directory>  the store's identity, size, commits and trees
//   cellar verify <directory>   read every record of every tree, checking every checksum
//   cellar compact <directory> [none|zstd|dictionary]
//                               rewrite a closed store without its garbage (offline)
import Cellar
import CellarStorage
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func usage() -> Never {
    fputs("""
    usage: cellar demo [directory]      put, read, update and remove notes (default ./cellar-demo)
           cellar inspect <directory>   show a store's identity, size, commits and trees
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

func inspect(_ directory: String) throws {
    let engine = try StorageEngine(directory: directory, options: StorageOptions(readOnly: true))
    defer { engine.close() }
    print("store      \(engine.uuid)")
    print("commit     \(engine.lastTransactionId)")
    print("file       \(engine.fileSize) bytes, \(engine.liveBytes) live")
    try engine.read { txn in
        for name in try txn.treeNames() {
            print("tree       \(name): \(try txn.count(txn.tree(name)!)) entries")
        }
    }
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
    case "inspect" where arguments.count == 2: try inspect(arguments[1])
    case "verify" where arguments.count == 2: try verify(arguments[1])
    case "compact" where arguments.count == 2 || arguments.count == 3:
        try compact(arguments[1], mode: arguments.count == 3 ? arguments[2] : nil)
    default: usage()
    }
} catch {
    fputs("cellar: \(error)\n", stderr)
    exit(1)
}
