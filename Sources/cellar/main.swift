// The `cellar` command-line tool: a demo of the storage engine, and inspection of a store.
//
//   cellar demo [directory]     write, read and scan a small store (default: ./cellar-demo)
//   cellar inspect <directory>  the store's identity, size, commits and trees
//   cellar verify <directory>   read every record of every tree, checking every checksum
import CellarStorage
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func usage() -> Never {
    fputs("""
    usage: cellar demo [directory]      write, read and scan a small store (default ./cellar-demo)
           cellar inspect <directory>   show a store's identity, size, commits and trees
           cellar verify <directory>    read every record of every tree, checking every checksum

    """, stderr)
    exit(2)
}

func key(_ n: UInt64) -> [UInt8] { withUnsafeBytes(of: n.bigEndian) { Array($0) } }

func demo(_ directory: String) throws {
    let engine = try StorageEngine(directory: directory)
    print("opened store \(engine.uuid) in \(directory) at commit \(engine.lastTransactionId)")
    // New notes go after the newest one, so running the demo again adds to the store.
    let start = try engine.read { txn -> Int in
        guard let notes = try txn.tree("notes") else { return 0 }
        let cursor = try txn.cursor(notes)
        guard try cursor.last() else { return 0 }
        return Int(cursor.key.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }
    // One transaction of 10,000 puts, durable on return.
    try engine.write { txn in
        let notes = try txn.tree("notes")!
        for i in 1...10_000 {
            let n = UInt64(start + i)
            try txn.put(notes, key: key(n), value: Array("note \(n): written by the Cellar demo".utf8))
        }
    }
    print("committed 10000 puts in one transaction (commit \(engine.lastTransactionId))")
    // Reads on a snapshot.
    try engine.read { txn in
        let notes = try txn.tree("notes")!
        let count = try txn.count(notes)
        let first = try txn.get(notes, key: key(1)).map { String(decoding: $0, as: UTF8.self) } ?? "-"
        print("read: \(count) notes; note 1 is \"\(first)\"")
        var lastThree: [String] = []
        try txn.cursor(notes).scan(reverse: true) { _, value in
            lastThree.append(String(decoding: value, as: UTF8.self))
            return lastThree.count < 3
        }
        print("the three newest, scanning backwards:")
        for line in lastThree { print("  \(line)") }
    }
    // Deletes, then a look at the file.
    try engine.write { txn in
        let notes = try txn.tree("notes")!
        for i in stride(from: 2, through: 10_000, by: 2) { try txn.delete(notes, key: key(UInt64(start + i))) }
    }
    let count = try engine.read { txn in try txn.count(txn.tree("notes")!) }
    print("deleted every second new note: \(count) left (commit \(engine.lastTransactionId))")
    print("file: \(engine.fileSize) bytes, of which \(engine.liveBytes) live; run it again to add more")
    engine.close()
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
    print("ok: \(entries) entries, \(bytes) bytes of keys and values, every record verified")
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "demo": try demo(arguments.count > 1 ? arguments[1] : "cellar-demo")
    case "inspect" where arguments.count == 2: try inspect(arguments[1])
    case "verify" where arguments.count == 2: try verify(arguments[1])
    default: usage()
    }
} catch {
    fputs("cellar: \(error)\n", stderr)
    exit(1)
}
