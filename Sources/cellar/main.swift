// The `cellar` command-line tool: a demo of the library, and inspection of a store. Each
// subcommand has `--help`; errors go to standard error with status 1, wrong arguments status 64.
//
//   cellar demo [directory]     put, read, update and remove notes (default: ./cellar-demo)
//   cellar info [--json] <directory>
//                               the store's identity, size and garbage, commits, entities with
//                               their objects and indexes, trees, dictionaries (alias: inspect)
//   cellar model <directory>    the model stored in the store, as a model JSON file
//   cellar dump <directory> [--entity E] [--limit N] [--format table|jsonl]
//                               the objects, decoded with the stored model
//   cellar export <directory> --to FILE [--entity E]
//                               every object as JSON lines, with the model (`-`: standard output)
//   cellar import <directory> --from FILE [--batch-size N]
//                               the objects of an export into a store without them
//   cellar verify <directory>   read every record of every tree, checking every checksum
//   cellar browse <directory> [--port N]
//                               a local, read-only web UI (runs cellar-browse, its own package)
//   cellar compact <directory> [none|zstd|dictionary] [--keep-commits N]
//                               rewrite a closed store without its garbage (offline)
import ArgumentParser

struct CellarTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cellar",
        abstract: "Look into Cellar stores: what they hold, their model, their integrity; compact them.",
        subcommands: [Demo.self, Info.self, ModelCommand.self, Dump.self, Export.self, Import.self, Verify.self, Compact.self, Browse.self])
}

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Put, read, update and remove notes in a store (created on the first run).")

    @Argument(help: "The store's directory.")
    var directory = "cellar-demo"

    func run() throws { try demo(directory) }
}

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a store's identity, size and garbage share, commits, entities (objects, indexes), trees and dictionaries.",
        aliases: ["inspect"])

    @Flag(help: "One JSON object instead of text.")
    var json = false

    @Argument(help: "The store's directory.")
    var directory: String

    @OptionGroup var keys: KeyOptions

    func run() throws { try info(directory, json: json, options: keys.storageOptions(readOnly: true)) }
}

struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Print the model stored in a store as a model JSON file (to recover a lost one).")

    @Argument(help: "The store's directory.")
    var directory: String

    @OptionGroup var keys: KeyOptions

    func run() throws { try model(directory, options: keys.storageOptions(readOnly: true)) }
}

struct Dump: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a store's objects, decoded with the model stored in it (no generated code needed).",
        discussion: """
            One JSON object per line (--format jsonl: {"entity": …, "object": {…}}), or a table per entity \
            (the default; long values are cut). Properties appear as docs/tools.md describes: numbers, ISO 8601 \
            dates, base64 bytes, relations as ids, collections, flex values and embedded objects as JSON.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, jsonl
    }

    @Argument(help: "The store's directory.")
    var directory: String

    @Option(help: "Only the objects of this entity.")
    var entity: String?

    @Option(name: .customLong("where"), help: ArgumentHelp(
        "Only the objects that match, e.g. 'title startsWith \"Shop\" and status == 1'.",
        discussion: "==, !=, <, <=, >, >=, startsWith, endsWith, contains, is [not] null; and, or, not, parentheses (docs/tools.md)."))
    var condition: String?

    @Option(help: "At most this many objects (default: 50 in a table, all as JSON lines).")
    var limit: Int?

    @Option(help: "table or jsonl.")
    var format: Format = .table

    @OptionGroup var keys: KeyOptions

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
    }

    func run() throws {
        try dump(directory, entity: entity, where: condition, limit: limit ?? (format == .table ? 50 : .max), jsonLines: format == .jsonl,
                 options: keys.storageOptions(readOnly: true))
    }
}

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a store's objects and model to a JSON-lines file that `cellar import` reads back exactly.",
        discussion: """
            One snapshot of the store, opened read-only (another process may be writing it). The first line \
            holds the model and each entity's next id, then one line per object as `cellar dump --format jsonl` \
            prints it (flex values tagged so that their types survive), then an end line with the count \
            (docs/tools.md describes the format).
            """)

    @Argument(help: "The store's directory.")
    var directory: String

    @Option(help: "The file to write (created or replaced); - for standard output.")
    var to: String

    @Option(help: "Only the objects of this entity.")
    var entity: String?

    @OptionGroup var keys: KeyOptions

    func run() throws { try export(directory, entity: entity, to: to, options: keys.storageOptions(readOnly: true)) }
}

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read an export file into a store (created when missing) that holds no objects of its entities.",
        discussion: """
            Ids, values and relations are kept; indexes are built as puts build them. A new store gets the \
            file's model; an existing one must have the file's entities and properties (matched by UID). \
            Objects are written --batch-size at a time, each batch one transaction: a bad line stops the \
            import with its line number and nothing of its batch is written (earlier batches are). A file \
            without its end line (cut short) is refused the same way.
            """)

    @Argument(help: "The store's directory.")
    var directory: String

    @Option(help: "The export file to read; - for standard input.")
    var from: String

    @Option(help: "Objects per transaction.")
    var batchSize = 10_000

    @OptionGroup var keys: KeyOptions

    func validate() throws {
        if batchSize < 1 { throw ValidationError("--batch-size must be at least 1") }
    }

    func run() throws {
        try importObjects(into: directory, from: from, batchSize: batchSize, key: try keys.key())
    }
}

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read every record of every tree, checking every checksum, every object against the stored model, every index and relation.")

    @Argument(help: "The store's directory.")
    var directory: String

    @OptionGroup var keys: KeyOptions

    func run() throws { try verify(directory, options: keys.storageOptions(readOnly: true)) }
}

struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rewrite a store without its garbage. The store must not be open in another process (offline compaction).",
        discussion: """
            Values are written uncompressed (none), with zstd, or with zstd and a dictionary per tree \
            trained now. Without the word: with dictionaries when the store holds some, else uncompressed.

            Encryption: the store's key comes from CELLAR_KEY or CELLAR_PASSPHRASE (or --ask-passphrase). \
            --new-key writes the copy under the key in CELLAR_NEW_KEY or CELLAR_NEW_PASSPHRASE (or asked for \
            with --ask-new-passphrase): how a key is changed or a plain store encrypted. --remove-encryption \
            writes a plain copy. Keys are never taken as arguments.

            --keep-commits N keeps the newest N commits readable in the copy (Store.read(asOf:));             without it, the copy holds the newest commit only.
            """)

    @Argument(help: "The store's directory.")
    var directory: String

    @Argument(help: "How values are written: none, zstd or dictionary.")
    var compression: String?

    @OptionGroup var keys: KeyOptions

    @Flag(help: "Encrypt the copy with the key in CELLAR_NEW_KEY or CELLAR_NEW_PASSPHRASE.")
    var newKey = false

    @Flag(help: "Encrypt the copy with a passphrase typed at a prompt (not echoed).")
    var askNewPassphrase = false

    @Flag(help: "Write the copy unencrypted.")
    var removeEncryption = false

    @Option(help: "Keep the newest N commits readable in the copy.")
    var keepCommits: Int?

    func validate() throws {
        if let keepCommits, keepCommits < 1 { throw ValidationError("--keep-commits must be at least 1") }
        guard [newKey, askNewPassphrase, removeEncryption].filter({ $0 }).count <= 1 else {
            throw ValidationError("--new-key, --ask-new-passphrase and --remove-encryption exclude each other")
        }
    }

    func run() throws {
        var change: EncryptionChange = .keep
        if removeEncryption { change = .remove }
        if newKey || askNewPassphrase {
            guard let key = try toolKey(hex: "CELLAR_NEW_KEY", passphrase: "CELLAR_NEW_PASSPHRASE",
                                        ask: askNewPassphrase ? "New passphrase: " : nil) else {
                throw ToolError("--new-key needs CELLAR_NEW_KEY (64 hex digits) or CELLAR_NEW_PASSPHRASE in the environment")
            }
            change = .encrypt(key)
        }
        var options = try keys.storageOptions(readOnly: false)
        options.pastRetention = keepCommits.map { .commits($0) }
        try compact(directory, mode: compression, options: options, change: change)
    }
}

CellarTool.main()
