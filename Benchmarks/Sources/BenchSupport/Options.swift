import Foundation

/// The flags every benchmark takes.
public struct CommonOptions: Sendable {
    /// `--n`: how many keys or objects.
    public var n = 100_000
    /// `--runs`: the tables and tsv lines give the median over the runs.
    public var runs = 1
    /// `--format tsv` (else `human` or `table`, the default).
    public var tsv = false
    /// `--dir`: the folder the temporary stores go in.
    public var directory: String?

    public init() {}
}

/// A benchmark's options: the common flags (`--n`, `--runs`, `--format`, `--dir`, `-h`/`--help`)
/// are read by `parse`, the program's own ones by `parseOwn`.
public protocol BenchOptions {
    init()
    var common: CommonOptions { get set }
    /// Printed by `-h` / `--help`.
    static var usage: String { get }
    /// Reads `arg`, one of the program's own flags, taking its value from `arguments`; false when
    /// `arg` is none of them.
    mutating func parseOwn(_ arg: String, _ arguments: inout Arguments) throws -> Bool
}

extension BenchOptions {
    public var n: Int { common.n }
    public var runs: Int { common.runs }
    public var tsv: Bool { common.tsv }
    public var directory: String? { common.directory }

    public static func parse(_ arguments: [String]) throws -> Self {
        var options = Self()
        var rest = Arguments(arguments)
        while let arg = rest.next() {
            switch arg {
            case "--n":
                guard let n = Int(try rest.value(arg).replacingOccurrences(of: "_", with: "")), n >= 1 else { throw BenchError("--n must be a positive integer") }
                options.common.n = n
            case "--runs":
                options.common.runs = try rest.integer(arg, atLeast: 1, else: "--runs must be a positive integer")
            case "--format":
                switch try rest.value(arg) {
                case "tsv": options.common.tsv = true
                case "human", "table": options.common.tsv = false
                case let f: throw BenchError("unknown --format \(f) (human or tsv)")
                }
            case "--dir":
                options.common.directory = try rest.value(arg)
            case "-h", "--help":
                print(usage)
                exit(0)
            default:
                guard try options.parseOwn(arg, &rest) else { throw BenchError("unknown argument \(arg)") }
            }
        }
        return options
    }

    /// The options of this process's command line.
    public static func parseCommandLine() throws -> Self {
        try parse(Array(CommandLine.arguments.dropFirst()))
    }
}

/// The command line's arguments not read yet.
public struct Arguments {
    private var rest: ArraySlice<String>

    public init(_ arguments: [String]) { rest = arguments[...] }

    public mutating func next() -> String? { rest.popFirst() }

    /// The value that follows flag `name`.
    public mutating func value(_ name: String) throws -> String {
        guard let v = rest.popFirst() else { throw BenchError("\(name) needs a value") }
        return v
    }

    /// The value of `name` as an integer of at least `minimum`; else the error says `message`.
    public mutating func integer(_ name: String, atLeast minimum: Int, else message: String) throws -> Int {
        guard let v = Int(try value(name)), v >= minimum else { throw BenchError(message) }
        return v
    }

    /// The value of `name`: integers in `range`, separated by commas (at least one); else the
    /// error says that `name` takes `what`.
    public mutating func integers(_ name: String, in range: ClosedRange<Int>, what: String) throws -> [Int] {
        let texts = try value(name).split(separator: ",")
        let list = texts.compactMap { Int($0) }
        guard !list.isEmpty, list.count == texts.count, list.allSatisfy(range.contains) else {
            throw BenchError("\(name) takes \(what), separated by commas")
        }
        return list
    }

    /// The value of `name`: distinct names out of `allowed`, separated by commas.
    public mutating func list(_ name: String, of allowed: [String]) throws -> [String] {
        let list = try value(name).split(separator: ",").map(String.init)
        guard !list.isEmpty, Set(list).count == list.count, list.allSatisfy(allowed.contains) else {
            throw BenchError("\(name) takes \(allowed.joined(separator: ", ")) or \(allowed.joined(separator: ","))")
        }
        return list
    }
}

/// The command line of a harness that compares Cellar with SQLite through GRDB: the common flags
/// and `--engines cellar,grdb` (one of them alone, for profiling).
public struct CellarGRDBOptions: BenchOptions {
    public var common = CommonOptions()
    public var engines = ["cellar", "grdb"]

    public init() {}

    public static var usage: String {
        let tool = CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? "bench") } ?? "bench"
        return "usage: \(tool) [--n N] [--runs R] [--format human|tsv] [--engines cellar,grdb] [--dir PARENT]"
    }

    public mutating func parseOwn(_ arg: String, _ arguments: inout Arguments) throws -> Bool {
        switch arg {
        case "--engines": engines = try arguments.list(arg, of: ["cellar", "grdb"])
        default: return false
        }
        return true
    }
}
