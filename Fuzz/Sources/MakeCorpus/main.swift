// Writes the seed corpus of the fuzz targets with CellarStorage's and Cellar's public API:
//
//   corpus/open-store/  whole data files of small stores (FuzzOpenStore)
//   corpus/node/        node bodies taken out of those files (FuzzNode)
//   corpus/decompress/  zstd frames of compressed values, a dictionary byte first (FuzzDecompress)
//   corpus/embedded/    records with embedded objects, a mode byte first (FuzzEmbedded)
//
// Usage: MakeCorpus [CORPUS_DIR]   (default: the corpus/ folder beside Sources/ of this package)
//        MakeCorpus --reseal INPUT OUTPUT
//            writes INPUT with its checksums recomputed, as FuzzOpenStore's second pass opens it:
//            the data file to reproduce a FuzzOpenStore crash with the engine alone.
//        MakeCorpus --encrypt INPUT OUTPUT
//            writes INPUT, an encrypted store's plaintext image, with its records encrypted under
//            the fuzz key and its checksums recomputed, as FuzzOpenStore's third pass opens it.
// The four subfolders are emptied and written anew, except for files named `regression-*`
// (inputs that once crashed a fuzzer, added by hand), which are kept. The stores use small nodes
// (256 or 512 bytes) so that a few KB of data already make trees of several levels, values longer
// than a quarter of a node (stored out of line) and superblocks (interval 2). The stores are not
// byte-for-byte reproducible: each gets a random UUID and salt, and commit times (and an encrypted
// one random encryption salts, hence other ciphertext). The stores named `encrypted-*` are
// encrypted with FuzzOpenStore's key (`FuzzKey`, bytes 0..<32). The frames of
// corpus/decompress are, with the same libzstd: its compressor and dictionary trainer are
// deterministic.
import CellarStorage
import Foundation
import FuzzSupport

// MARK: Workloads

/// SplitMix64: a small deterministic generator, so the key and value mix is the same every run.
struct SplitMix64 {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

func key(_ prefix: String, _ i: Int) -> [UInt8] {
    Array("\(prefix)-\(String(i, radix: 10).leftPadded(to: 4))".utf8)
}

func value(_ rng: inout SplitMix64, length: Int) -> [UInt8] {
    (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// A store with no commits: only the file header.
func makeEmpty(_ dir: String) throws {
    let engine = try StorageEngine(directory: dir, options: StorageOptions(nodeSize: 256, superblockInterval: 2))
    engine.close()
}

/// One commit: one tree of a few dozen entries, three of them with out-of-line values.
func makeOneCommit(_ dir: String) throws {
    var rng = SplitMix64(state: 1)
    let engine = try StorageEngine(directory: dir, options: StorageOptions(nodeSize: 256, superblockInterval: 2))
    defer { engine.close() }
    try engine.write { txn in
        let items = try txn.tree("items")!
        for i in 0..<40 {
            // 256-byte nodes: values over 64 bytes go out of line.
            let length = i % 13 == 5 ? 100 + i : 4 + rng.below(24)
            try txn.put(items, key: key("item", i), value: value(&rng, length: length))
        }
    }
}

/// Several commits over three trees: inserts, overwrites, deletes, a dropped tree, a tree with a
/// non-ASCII name and an empty value. Superblocks every 2 commits. Returns the committed file
/// size before the last commit (where the last frame starts).
@discardableResult
func makeSeveralCommits(_ dir: String) throws -> UInt64 {
    var rng = SplitMix64(state: 2)
    let engine = try StorageEngine(directory: dir, options: StorageOptions(nodeSize: 256, superblockInterval: 2))
    defer { engine.close() }
    try engine.write { txn in
        let alpha = try txn.tree("alpha")!
        let beta = try txn.tree("beta")!
        for i in 0..<30 { try txn.put(alpha, key: key("a", i), value: value(&rng, length: 8 + rng.below(16))) }
        for i in 0..<10 { try txn.put(beta, key: key("b", i), value: value(&rng, length: i == 3 ? 90 : 12)) }
    }
    try engine.write { txn in
        let alpha = try txn.tree("alpha")!
        for i in stride(from: 0, to: 30, by: 3) { try txn.delete(alpha, key: key("a", i)) }
        try txn.put(alpha, key: key("a", 7), value: value(&rng, length: 120))
        try txn.put(alpha, key: [], value: [])
    }
    try engine.write { txn in
        let gamma = try txn.tree("gamma")!
        for i in 0..<20 { try txn.put(gamma, key: key("g", i * 7), value: value(&rng, length: 20)) }
        let beta = try txn.tree("beta")!
        try txn.delete(beta, key: key("b", 3))
    }
    try engine.write { txn in
        let names = try txn.tree("été ☃")!
        try txn.put(names, key: Array("clé".utf8), value: Array("valeur".utf8))
        let alpha = try txn.tree("alpha")!
        for i in 30..<45 { try txn.put(alpha, key: key("a", i), value: value(&rng, length: 10)) }
    }
    try engine.write { txn in
        _ = try txn.dropTree("gamma")
        let beta = try txn.tree("beta")!
        for i in 0..<10 { try txn.delete(beta, key: key("b", i)) }
    }
    let beforeLast = engine.fileSize
    try engine.write { txn in
        let alpha = try txn.tree("alpha")!
        for i in 0..<12 { try txn.put(alpha, key: key("a", 100 + i), value: value(&rng, length: i % 4 == 0 ? 70 : 16)) }
        try txn.delete(alpha, key: key("a", 31))
    }
    return beforeLast
}

/// 512-byte nodes and a few hundred keys: three levels in one tree.
func makeLevels(_ dir: String) throws {
    var rng = SplitMix64(state: 3)
    let engine = try StorageEngine(directory: dir, options: StorageOptions(nodeSize: 512, superblockInterval: 2))
    defer { engine.close() }
    for round in 0..<2 {
        try engine.write { txn in
            let big = try txn.tree("big")!
            for _ in 0..<200 {
                let n = rng.below(1000)
                let length = n % 50 == 0 ? 140 : 2 + rng.below(12)  // > 128 bytes: out of line
                try txn.put(big, key: key("k\(round)", n), value: value(&rng, length: length))
            }
        }
    }
    try engine.write { txn in
        let big = try txn.tree("big")!
        for i in 0..<300 { try txn.delete(big, key: key("k0", i)) }
    }
}

/// 256-byte nodes and many short entries in one commit: a tree of three levels (a root branch
/// over branches over leaves).
func makeDeep(_ dir: String) throws {
    var rng = SplitMix64(state: 5)
    let engine = try StorageEngine(directory: dir, options: StorageOptions(nodeSize: 256, superblockInterval: 2))
    defer { engine.close() }
    try engine.write { txn in
        let deep = try txn.tree("deep")!
        for i in 0..<250 { try txn.put(deep, key: key("d", i), value: value(&rng, length: 1 + rng.below(6))) }
    }
}

/// Commits without sync (`durability: .none`): commit records without the durable flag.
func makeNoSync(_ dir: String) throws {
    var rng = SplitMix64(state: 4)
    let engine = try StorageEngine(directory: dir, options: StorageOptions(durability: .none, nodeSize: 256, superblockInterval: 2))
    defer { engine.close() }
    for round in 0..<3 {
        try engine.write { txn in
            let log = try txn.tree("log")!
            for i in 0..<12 { try txn.put(log, key: key("r\(round)", i), value: value(&rng, length: 6 + rng.below(10))) }
        }
    }
}

/// Transactions larger than their memory budget (the smallest, 64 KiB, with 256-byte nodes):
/// one that spilled several times before it committed, then one that spilled and was never
/// committed, its records past the newest commit: the file as a crash in that transaction leaves
/// it (taken while the transaction is open). Returns those bytes; the store then aborts it.
/// With `key`, the store is encrypted: the tail is ciphertext too (the spilled records are sealed
/// as they are written), and the bytes are checked to hold a tail past the newest commit.
func makeSpilled(_ dir: String, key encryptionKey: EncryptionKey? = nil) throws -> [UInt8] {
    var rng = SplitMix64(state: 7)
    let options = StorageOptions(durability: .none, nodeSize: 256, superblockInterval: 2, transactionMemoryBudget: 64 << 10,
                                 encryptionKey: encryptionKey)
    let engine = try StorageEngine(directory: dir, options: options)
    defer { engine.close() }
    try engine.write { txn in
        let items = try txn.tree("items")!
        for i in 0..<900 { try txn.put(items, key: key("a", i), value: value(&rng, length: 4 + rng.below(12))) }
        for i in 0..<6 { try txn.put(items, key: key("big", i), value: value(&rng, length: 100)) }
    }
    let committed = Int(engine.fileSize)
    let txn = try engine.beginWrite()
    let items = try txn.tree("items")!
    for i in 0..<900 { try txn.put(items, key: key("b", i), value: value(&rng, length: 4 + rng.below(12))) }
    let file = try readFile("\(dir)/\(StorageEngine.dataFileName)")
    txn.abort()
    if encryptionKey != nil, !(committed < file.count && file[committed...].contains(where: { $0 != 0 })) {
        throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: dir, NSLocalizedDescriptionKey: "the open transaction spilled nothing past the commit at \(committed)"])
    }
    return file
}

/// The key of the encrypted seeds: FuzzOpenStore's (`FuzzKey`).
enum SeedKey {
    static let key = try! EncryptionKey(bytes: FuzzKey.bytes)
    static let other = try! EncryptionKey(bytes: FuzzKey.bytes.map { 255 - $0 })
}

/// Bytes no encrypted seed may hold in the clear: a value and a key of `makeEncryptedCommits`.
let encryptedMarker = Array("PLAINTEXT-MARKER: must not be in an encrypted file".utf8)

/// Encrypted with `SeedKey.key` (AES-256-GCM records), 256-byte nodes, superblocks every 2
/// commits: five commits in two opens of the store, so that its records carry write epochs 1 and 2
/// and both epoch slots are written. Two trees; inline values and values over a quarter of a node
/// (out of line, value records), overwrites, deletes, an empty key and value, a marker in a key and
/// in a value. Then checked: it opens only with its key (`encryptionKeyRequired` without,
/// `wrongEncryptionKey` with another), reads back as written, and holds no marker in the clear.
func makeEncryptedCommits(_ dir: String) throws {
    var rng = SplitMix64(state: 8)
    var expected: [String: [[UInt8]: [UInt8]]] = ["items": [:], "log": [:]]
    let options = StorageOptions(nodeSize: 256, superblockInterval: 2, encryptionKey: SeedKey.key)
    func commit(_ engine: StorageEngine, _ changes: [SeedChange]) throws {
        try commitChanges(changes, to: engine, expected: &expected)
    }
    do {
        let engine = try StorageEngine(directory: dir, options: options)
        defer { engine.close() }
        // 256-byte nodes: values over 64 bytes go out of line.
        try commit(engine, (0..<40).map { i in ("items", key("item", i), value(&rng, length: i % 9 == 4 ? 90 + i : 4 + rng.below(20))) })
        try commit(engine, (0..<12).map { i in ("log", key("log", i), value(&rng, length: 8)) }
            + [("items", encryptedMarker, encryptedMarker + encryptedMarker), ("items", [], [])])
        try commit(engine, stride(from: 0, to: 40, by: 5).map { ("items", key("item", $0), nil) }
            + [("items", key("item", 4), value(&rng, length: 120)), ("items", key("item", 13), value(&rng, length: 3))])
    }
    do {
        let engine = try StorageEngine(directory: dir, options: options)
        defer { engine.close() }
        try commit(engine, (40..<60).map { i in ("items", key("item", i), value(&rng, length: i % 6 == 0 ? 100 : 10)) })
        try commit(engine, (0..<6).map { ("log", key("log", $0 * 2), nil) } + [("log", key("log", 99), value(&rng, length: 70))])
    }
    for key in [nil, SeedKey.other] {
        do {
            try StorageEngine(directory: dir, options: StorageOptions(readOnly: true, encryptionKey: key)).close()
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: dir, NSLocalizedDescriptionKey: "opens with \(String(describing: key))"])
        } catch StorageError.encryptionKeyRequired where key == nil {
        } catch StorageError.wrongEncryptionKey where key != nil {
        }
    }
    try requireReadsBack(dir, expected, options: StorageOptions(readOnly: true, encryptionKey: SeedKey.key))
}

/// Compressed values with per-tree dictionaries (`.zstdDictionary()`): two trees of a few
/// hundred compressible values (enough for compaction to train a dictionary for each), compacted,
/// then two more commits that compress with those dictionaries, with values kept as they are
/// beside them (too short, incompressible) and one compressed value stored out of line. Then the
/// store is opened read-only and every value must read back as it was written: the seed is to
/// exercise decoding, not only its errors.
func makeZstdDictionary(_ dir: String) throws {
    var rng = SplitMix64(state: 6)
    var expected: [String: [[UInt8]: [UInt8]]] = ["notes": [:], "events": [:]]
    func event(_ i: Int) -> [UInt8] {
        let name = ["open", "save", "close", "share"][i % 4]
        return Array(("{\"event\":\"\(name)\",\"user\":\(1000 + i % 37),\"at\":\(1_700_000_000 + 17 * i),"
            + "\"device\":\"phone-\(NoteSamples.zeroPadded(i % 5, width: 2))\"}").utf8)
    }
    let options = StorageOptions(nodeSize: 512, superblockInterval: 2, compression: .zstdDictionary())
    do {
        let engine = try StorageEngine(directory: dir, options: options)
        defer { engine.close() }
        func commit(_ changes: [SeedChange]) throws {
            try commitChanges(changes, to: engine, expected: &expected)
        }
        // Compaction trains a dictionary from at least 256 values above the threshold (64 bytes).
        let perTree = 280
        try commit((0..<perTree).flatMap { i in
            [("notes", key("n", i), NoteSamples.note(i)), ("events", key("e", i), event(i))]
        })
        _ = try engine.compact()
        var changes: [(tree: String, key: [UInt8], value: [UInt8]?)] = (perTree..<(perTree + 6)).map { ("notes", key("n", $0), NoteSamples.note($0)) }
        changes.append(("notes", key("n", 3), NoteSamples.note(9_999)))                        // an overwrite
        changes.append(("notes", key("short", 0), Array("under the threshold".utf8)))
        changes.append(("notes", key("random", 0), value(&rng, length: 100)))                 // does not shrink
        // 20 notes in one value: compressed, and still over a quarter of a node (out of line).
        changes.append(("notes", key("batch", 0), (0..<20).flatMap { NoteSamples.note(500 + $0) }))
        try commit(changes)
        try commit(stride(from: 0, to: 40, by: 4).map { ("events", key("e", $0), nil) } + [("events", key("e", 1), event(9_999))])
    }
    try requireReadsBack(dir, expected, options: StorageOptions(readOnly: true))
}

/// A put (`value` set) or a delete (nil) of `key` in tree `tree`.
typealias SeedChange = (tree: String, key: [UInt8], value: [UInt8]?)

/// Commits `changes` in one transaction and records them in `expected`.
func commitChanges(_ changes: [SeedChange], to engine: StorageEngine, expected: inout [String: [[UInt8]: [UInt8]]]) throws {
    try engine.write { txn in
        for change in changes {
            let tree = try txn.tree(change.tree)!
            if let value = change.value {
                try txn.put(tree, key: change.key, value: value)
            } else {
                _ = try txn.delete(tree, key: change.key)
            }
        }
    }
    for change in changes { expected[change.tree]![change.key] = change.value }
}

/// Opens the store in `dir` with `options` and throws unless every tree of `expected` reads back
/// exactly as written (nil: the key was deleted): the seeds exercise decoding, not only errors.
func requireReadsBack(_ dir: String, _ expected: [String: [[UInt8]: [UInt8]]], options: StorageOptions) throws {
    let engine = try StorageEngine(directory: dir, options: options)
    defer { engine.close() }
    let problem = try engine.read { txn -> String? in
        for (name, entries) in expected {
            var read: [[UInt8]: [UInt8]] = [:]
            try txn.cursor(txn.tree(name)!).scan { key, value in
                read[Array(key)] = Array(value)
                return true
            }
            if read != entries.compactMapValues({ $0 }) { return "tree \(name) does not read back as written" }
        }
        return nil
    }
    if let problem {
        throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: dir, NSLocalizedDescriptionKey: problem])
    }
}

// MARK: Decompress seeds

/// A zstd frame built by hand (RFC 8878): magic, a single-segment header with a 4-byte content
/// size and, when given, a 4-byte dictionary id, then `blocks` (type 0 raw, 1 RLE, with the size
/// they decode to), the last one flagged as last. Frames of kinds the writer seldom makes.
func handFrame(contentSize: UInt32, dictionary: UInt32? = nil, blocks: [(type: UInt32, size: UInt32, bytes: [UInt8])]) -> [UInt8] {
    var frame: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]
    frame.append(0b1010_0000 | (dictionary == nil ? 0 : 3))  // FCS 4 bytes, single segment, dictionary id of 4 bytes
    if let dictionary { withUnsafeBytes(of: dictionary.littleEndian) { frame += $0 } }
    withUnsafeBytes(of: contentSize.littleEndian) { frame += $0 }
    for (index, block) in blocks.enumerated() {
        let header = (index == blocks.count - 1 ? 1 : 0) | block.type << 1 | block.size << 3
        frame += [UInt8(header & 0xFF), UInt8(header >> 8 & 0xFF), UInt8(header >> 16 & 0xFF)]
        frame += block.bytes
    }
    return frame
}

/// The seeds of corpus/decompress: byte 0 picks the dictionary (0: none, 1: FuzzDecompress's fixed
/// one), the rest is the frame. Valid frames without and with the dictionary, hand-made ones with
/// raw and RLE blocks, and broken ones.
func decompressSeeds() throws -> [(name: String, bytes: [UInt8])] {
    guard let dictionary = try Diagnostics.trainDictionary(NoteSamples.notes(), capacity: NoteSamples.dictionaryCapacity,
                                                       id: NoteSamples.dictionaryId) else {
        throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "zstd trains no dictionary from the Note samples"])
    }
    func compressed(_ name: String, _ value: [UInt8], withDictionary: Bool) throws -> [UInt8] {
        let frame = try value.withUnsafeBytes { value in
            try withDictionary ? dictionary.withUnsafeBytes { try Diagnostics.compressValue(value, dictionary: $0) }
                               : Diagnostics.compressValue(value)
        }
        guard let frame else {
            throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "decompress/\(name): \(value.count) bytes do not compress"])
        }
        // The seed must decode as FuzzDecompress decodes it, to the same bytes.
        let back = try frame.withUnsafeBytes { frame in
            try withDictionary ? dictionary.withUnsafeBytes { try Diagnostics.decodeCompressedValue(frame, dictionary: $0) }
                               : Diagnostics.decodeCompressedValue(frame, dictionary: nil)
        }
        guard back == value else {
            throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "decompress/\(name) does not decode to its value"])
        }
        return [withDictionary ? 1 : 0] + frame
    }

    var rng = SplitMix64(state: 7)
    let text = Array((0..<6).map { "\($0 + 1). \(NoteSamples.lorem) Ut enim ad minim veniam, quis nostrud exercitation ullamco." }
        .joined(separator: "\n").utf8)
    let notes = (0..<4).flatMap { NoteSamples.note(2_000 + $0) }
    // Over 64 KiB, but repetitive: an 80 KiB value made of one random KiB; about 1 KB compressed.
    let block = value(&rng, length: 1024)
    let repetitive = (0..<80).flatMap { _ in block }
    var seeds: [(name: String, bytes: [UInt8])] = [
        ("text", try compressed("text", text, withDictionary: false)),
        ("text-dictionary", try compressed("text-dictionary", text, withDictionary: true)),
        ("notes", try compressed("notes", notes, withDictionary: false)),
        ("note-dictionary", try compressed("note-dictionary", NoteSamples.note(1_234), withDictionary: true)),
        ("notes-dictionary", try compressed("notes-dictionary", notes, withDictionary: true)),
        ("repetitive-80k", try compressed("repetitive-80k", repetitive, withDictionary: false)),
    ]
    // Hand-made frames: one raw block, an RLE block, nothing at all, a raw block naming the dictionary.
    let raw = value(&rng, length: 96)
    seeds.append(("raw-block", [0] + handFrame(contentSize: 96, blocks: [(0, 96, raw)])))
    seeds.append(("rle-block", [0] + handFrame(contentSize: 3000, blocks: [(1, 3000, [0x41])])))
    seeds.append(("empty-value", [0] + handFrame(contentSize: 0, blocks: [(0, 0, [])])))
    seeds.append(("raw-block-dictionary", [1] + handFrame(contentSize: 96, dictionary: NoteSamples.dictionaryId, blocks: [(0, 96, raw)])))
    // Broken: cut in half; one byte flipped in the middle of the compressed data; a frame naming
    // the dictionary without it; a header that claims one byte more than the blocks hold.
    let textSeed = seeds[0].bytes
    seeds.append(("truncated", Array(textSeed[..<(textSeed.count / 2)])))
    var flipped = seeds[3].bytes
    flipped[flipped.count / 2] ^= 0x10
    seeds.append(("flipped-byte", flipped))
    seeds.append(("missing-dictionary", [0] + seeds[3].bytes.dropFirst()))
    seeds.append(("size-too-large", [0] + handFrame(contentSize: 97, blocks: [(0, 96, raw)])))
    return seeds
}

// MARK: Files



func readFile(_ path: String) throws -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else {
        throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: path])
    }
    return [UInt8](data)
}

func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// The data file of the store in `dir` up to the end of its log (`fileSize` once reopened): without
/// the zeros that `.full` durability keeps written ahead of the log (at least 1 MiB, see
/// docs/format.md), which would make every seed a megabyte. A store opens the same without them.
func logBytes(_ dir: String, key: EncryptionKey? = nil) throws -> [UInt8] {
    let engine = try StorageEngine(directory: dir, options: StorageOptions(readOnly: true, encryptionKey: key))
    let length = Int(engine.fileSize)
    engine.close()
    let bytes = try readFile("\(dir)/\(StorageEngine.dataFileName)")
    guard length <= bytes.count, bytes[length...].allSatisfy({ $0 == 0 }) else {
        throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: dir, NSLocalizedDescriptionKey: "more than zeros after the log's end \(length)"])
    }
    return Array(bytes[..<length])
}

/// The bodies of the node records (kind 1) of a data file, in file order: after the 4096-byte
/// header, records of u64 checksum, u32 length (with the 16-byte header), u8 kind, 3 zero bytes,
/// then the body.
func nodeBodies(_ file: [UInt8]) -> [[UInt8]] {
    nodeRecords(file).map(\.body)
}

func nodeRecords(_ file: [UInt8]) -> [(offset: Int, body: [UInt8])] {
    var bodies: [(offset: Int, body: [UInt8])] = []
    var offset = 4096
    while offset + 16 <= file.count {
        let length = (0..<4).reduce(0) { $0 | Int(file[offset + 8 + $1]) << (8 * $1) }
        guard length >= 16, length % 8 == 0, offset + length <= file.count else { break }
        if file[offset + 12] == 1 { bodies.append((offset, Array(file[offset + 16 ..< offset + length]))) }
        offset += length
    }
    return bodies
}

/// Up to `count` elements spread evenly over `items`.
func spread<T>(_ items: [T], count: Int) -> [T] {
    guard items.count > count else { return items }
    return (0..<count).map { items[$0 * items.count / count] }
}

func contains(_ bytes: [UInt8], _ pattern: [UInt8]) -> Bool {
    bytes.count >= pattern.count && (0...(bytes.count - pattern.count)).contains { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }
}

// MARK: Main

if CommandLine.arguments.count > 1 && ["--reseal", "--encrypt"].contains(CommandLine.arguments[1]) {
    let mode = CommandLine.arguments[1]
    guard CommandLine.arguments.count == 4 else {
        FileHandle.standardError.write(Data("usage: MakeCorpus \(mode) INPUT OUTPUT\n".utf8))
        exit(2)
    }
    do {
        var bytes = try readFile(CommandLine.arguments[2])
        if mode == "--encrypt" {
            let changed = Reencrypt.encryptRecords(&bytes, key: FuzzKey.bytes)
            try writeFile(CommandLine.arguments[3], bytes)
            print(changed ? "encrypted under the fuzz key (bytes 0..<32) and resealed"
                          : "unchanged: not encrypted with a raw key, no record, or ciphertext already (FuzzOpenStore skips its third pass)")
            exit(0)
        }
        let changed = Reseal.reseal(&bytes)
        try writeFile(CommandLine.arguments[3], bytes)
        print(changed ? "resealed: checksums rewritten" : "unchanged: every checksum already matched")
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("MakeCorpus: \(error)\n".utf8))
        exit(1)
    }
}

let corpus = CommandLine.arguments.count > 1
    ? CommandLine.arguments[1]
    : URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("corpus").path
let openStoreDir = corpus + "/open-store"
let nodeDir = corpus + "/node"
let decompressDir = corpus + "/decompress"
let embeddedDir = corpus + "/embedded"
let work = NSTemporaryDirectory() + "cellar-make-corpus-\(ProcessInfo.processInfo.processIdentifier)"

do {
    try? FileManager.default.removeItem(atPath: work)
    defer { try? FileManager.default.removeItem(atPath: work) }
    try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    for dir in [openStoreDir, nodeDir, decompressDir, embeddedDir] {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        // Seeds added by hand from crashes found (`regression-*`) stay.
        for name in try FileManager.default.contentsOfDirectory(atPath: dir) where !name.hasPrefix("regression-") {
            try FileManager.default.removeItem(atPath: "\(dir)/\(name)")
        }
    }
    try makeEmpty("\(work)/empty")
    try makeOneCommit("\(work)/one-commit")
    let lastFrame = try makeSeveralCommits("\(work)/several-commits")
    try makeLevels("\(work)/levels-512")
    try makeNoSync("\(work)/no-sync")
    try makeDeep("\(work)/deep-256")
    try makeZstdDictionary("\(work)/zstd-dictionary")
    try makeEncryptedCommits("\(work)/encrypted-commits")

    var stores: [(name: String, bytes: [UInt8])] = []
    for name in ["empty", "one-commit", "several-commits", "levels-512", "no-sync", "deep-256", "zstd-dictionary", "encrypted-commits"] {
        let bytes = try logBytes("\(work)/\(name)", key: name.hasPrefix("encrypted-") ? SeedKey.key : nil)
        // FuzzOpenStore's resealing must leave an intact store as it is: that checks its XXH64 and
        // its reading of the layout against the engine's.
        var resealed = bytes
        guard !Reseal.reseal(&resealed) else {
            FileHandle.standardError.write(Data("MakeCorpus: resealing \(name) changed it: FuzzSupport disagrees with the engine\n".utf8))
            exit(1)
        }
        stores.append((name, bytes))
    }
    // The compressed store must hold what FuzzOpenStore is to read: zstd frames (magic 28 B5 2F FD)
    // and, in the engine's reserved tree, a dictionary (magic 37 A4 30 EC).
    let zstdStore = stores[6].bytes
    guard contains(zstdStore, [0x28, 0xB5, 0x2F, 0xFD]), contains(zstdStore, [0x37, 0xA4, 0x30, 0xEC]),
          contains(zstdStore, Array("\u{0}zstd-dictionaries".utf8)) else {
        FileHandle.standardError.write(Data("MakeCorpus: zstd-dictionary holds no compressed value or no dictionary\n".utf8))
        exit(1)
    }
    // Spilled: a committed transaction that spilled, and records of one that spilled and never
    // committed past the newest commit (a crash then).
    let spilled = try makeSpilled("\(work)/spilled")
    stores.append(("spilled-uncommitted-tail", spilled))
    // The same encrypted: its tail is sealed records too (which resealing must leave as they are).
    let encryptedSpilled = try makeSpilled("\(work)/encrypted-spilled", key: SeedKey.key)
    var resealedSpilled = encryptedSpilled
    guard !Reseal.reseal(&resealedSpilled) else {
        FileHandle.standardError.write(Data("MakeCorpus: resealing encrypted-spilled-uncommitted-tail changed it: FuzzSupport disagrees with the engine\n".utf8))
        exit(1)
    }
    stores.append(("encrypted-spilled-uncommitted-tail", encryptedSpilled))
    // The encrypted stores hold no plaintext: the commits' marker (in a key and a value) is not
    // there, nor the spilled one's keys.
    for store in stores where store.name.hasPrefix("encrypted-") {
        guard !contains(store.bytes, encryptedMarker), !contains(store.bytes, key("a", 123)), !contains(store.bytes, key("b", 123)),
              store.bytes.count > 60, store.bytes[56] & 2 != 0 else {
            FileHandle.standardError.write(Data("MakeCorpus: \(store.name) is not encrypted, or holds plaintext\n".utf8))
            exit(1)
        }
    }
    // The plaintext image of encrypted-commits (every record decrypted in place), which
    // FuzzOpenStore's third pass encrypts again (`Reencrypt`): encrypting it must give the engine's
    // file back, byte for byte, which checks FuzzSupport's key derivation, nonces and layout
    // against the engine's.
    let encryptedCommits = stores[7].bytes
    var unauthenticated = 0
    guard let image = Reencrypt.decryptRecords(encryptedCommits, key: FuzzKey.bytes, failed: &unauthenticated),
          unauthenticated == 0, image != encryptedCommits, contains(image, encryptedMarker) else {
        FileHandle.standardError.write(Data("MakeCorpus: encrypted-commits does not decrypt with FuzzKey (\(unauthenticated) records fail)\n".utf8))
        exit(1)
    }
    var reencrypted = image
    var ciphertext = encryptedCommits
    guard Reencrypt.encryptRecords(&reencrypted, key: FuzzKey.bytes), reencrypted == encryptedCommits,
          !Reencrypt.encryptRecords(&ciphertext, key: FuzzKey.bytes) else {
        FileHandle.standardError.write(Data("MakeCorpus: encrypting the image of encrypted-commits does not give it back (or encrypting the file itself does not refuse): FuzzSupport disagrees with the engine\n".utf8))
        exit(1)
    }
    stores.append(("encrypted-commits-plaintext", image))
    // Torn: the several-commits store cut in the middle of its last frame.
    let several = stores[2].bytes
    let cut = (Int(lastFrame) + several.count) / 2
    stores.append(("truncated-mid-frame", Array(several[..<cut])))
    // Corrupt: one byte flipped in the middle of the one-commit store's log.
    var flipped = stores[1].bytes
    flipped[(4096 + flipped.count) / 2] ^= 0x10
    stores.append(("flipped-byte", flipped))
    var resealedFlip = flipped
    guard Reseal.reseal(&resealedFlip) else {
        FileHandle.standardError.write(Data("MakeCorpus: resealing flipped-byte changed nothing\n".utf8))
        exit(1)
    }

    for store in stores {
        try writeFile("\(openStoreDir)/\(store.name)", store.bytes)
        print("open-store/\(store.name): \(store.bytes.count) bytes")
    }

    // Node bodies from the intact stores, leaves and branches, spread over the files.
    var leaves: [[UInt8]] = []
    var branches: [[UInt8]] = []
    for store in stores where ["one-commit", "several-commits", "levels-512", "no-sync", "deep-256"].contains(store.name) {
        for body in nodeBodies(store.bytes) {
            if body.first == 1 { leaves.append(body) } else { branches.append(body) }
        }
    }
    var nodes = spread(leaves, count: 8).enumerated().map { ("leaf-\($0.offset + 1)", $0.element) }
    nodes += spread(branches, count: 6).enumerated().map { ("branch-\($0.offset + 1)", $0.element) }
    nodes.append(("empty-leaf", [1, 0, 0, 0, 0, 0, 0, 0]))
    // How many branches sit over other branches (trees of three levels or more): child 0 of a
    // branch is the u64 at the start of its entry 0, whose offset is slot 0 (body bytes 8..<12).
    func le(_ bytes: [UInt8], _ at: Int, _ width: Int) -> Int {
        (0..<width).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) }
    }
    // (Not the encrypted stores: their node bodies are ciphertext.)
    for store in stores where store.name != "truncated-mid-frame" && store.name != "flipped-byte" && !store.name.hasPrefix("encrypted-") {
        let records = nodeRecords(store.bytes)
        let kinds = Dictionary(uniqueKeysWithValues: records.map { ($0.offset, $0.body[0]) })
        let upper = records.filter { $0.body[0] == 2 && kinds[le($0.body, le($0.body, 8, 4), 8)] == 2 }.count
        print("\(store.name): \(records.count) node records, \(upper) branches over branches")
    }
    for (name, body) in nodes {
        try writeFile("\(nodeDir)/\(name)", body)
        print("node/\(name): \(body.count) bytes")
    }

    let frames = try decompressSeeds()
    for (name, bytes) in frames {
        try writeFile("\(decompressDir)/\(name)", bytes)
        print("decompress/\(name): \(bytes.count) bytes")
    }
    let embedded = try embeddedSeeds()
    for (name, bytes) in embedded {
        try writeFile("\(embeddedDir)/\(name)", bytes)
        print("embedded/\(name): \(bytes.count) bytes")
    }
    print("found \(leaves.count) leaves and \(branches.count) branches; wrote \(stores.count) stores, \(nodes.count) nodes, "
          + "\(frames.count) frames and \(embedded.count) embedded records to \(corpus)")
} catch {
    FileHandle.standardError.write(Data("MakeCorpus: \(error)\n".utf8))
    exit(1)
}
