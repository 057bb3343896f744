// port-bench: what a port from Realm, SwiftData or Core Data leans on, Cellar beside SQLite through
// GRDB 7.10.0 (crud's settings: WAL, synchronous=NORMAL, statements cached), in one process.
//   cascade  N parents with 10 children each (Child.parent, its backlink `onDelete = cascade`);
//            remove every parent by id, one write transaction. SQLite: child.parent_id REFERENCES
//            parent(id) ON DELETE CASCADE with an index on parent_id, PRAGMA foreign_keys = ON,
//            DELETE FROM parent WHERE id = ? per parent.
//   lookup   N people; N look-ups by last and first name (an index over both: Cellar's
//            `// cellar: index = ["lastName", "firstName"]`, SQLite's CREATE INDEX … (last, first)),
//            in the CRUD workload's random order, each one's objects built, one read transaction;
//            Cellar's query is built once and its parameters set per look-up.
//
//   swift run -c release --package-path Benchmarks port-bench --n 100000 [--runs 3] [--format tsv] [--dir PARENT]
//
// Rates are objects per second: parents removed (each with 10 children), look-ups answered.
// Checks after the timers (a failed one exits 1): no parent or child left after cascade; each
// look-up finds exactly the people with that name (names repeat: N/4 last names × 4 first names).
import BenchGRDB
import BenchSupport
import Cellar
import Foundation
import GRDB

struct PortOptions: BenchOptions {
    var common = CommonOptions()
    static let usage = "usage: port-bench [--n N] [--runs R] [--format human|tsv] [--dir PARENT]"
    mutating func parseOwn(_ arg: String, _ arguments: inout Arguments) throws -> Bool { false }
}

let steps = ["cascade", "lookup"]
let childrenPerParent = 10

/// Person i's names: N/4 last names, each with 4 first names, so a look-up finds one person.
func names(_ i: Int) -> (last: String, first: String) { ("Last\(i / 4)", "First\(i % 4)") }

func runCellar(n: Int, order: [UInt64], folder: String) throws -> [String: Double] {
    var seconds: [String: Double] = [:]
    let store = try Store(directoryPath: folder + "/cellar", model: cellarModel())
    defer { store.close() }
    let parents = store.box(for: Parent.self)
    let children = store.box(for: Child.self)
    let parentObjects = (0..<n).map { Parent(name: "p\($0)") }
    try parents.put(parentObjects)
    var childObjects: [Child] = []
    childObjects.reserveCapacity(n * childrenPerParent)
    for parent in parentObjects {
        for k in 0..<childrenPerParent {
            let child = Child(name: "c\(k)")
            child.parent.target = parent
            childObjects.append(child)
        }
    }
    try children.put(childObjects)
    let ids = parentObjects.map(\.id)
    var start = now()
    _ = try parents.remove(ids)
    seconds["cascade"] = now() - start
    guard try parents.count() == 0, try children.count() == 0 else {
        throw BenchError("cellar cascade: \(try parents.count()) parents and \(try children.count()) children left")
    }

    let people = store.box(for: Person.self)
    try people.put((0..<n).map { Person(lastName: names($0).last, firstName: names($0).first, age: $0 % 90) })
    let query = try people.query { Person.lastName == "" && Person.firstName == "" }.build()
    var found: [Person] = []
    found.reserveCapacity(n)
    start = now()
    try store.runInReadOnlyTransaction {
        for i in order {
            let (last, first) = names(Int(i) - 1)
            query.setParameter(Person.lastName, to: last)
            query.setParameter(Person.firstName, to: first)
            found += try query.find()
        }
    }
    seconds["lookup"] = now() - start
    guard found.count == n else { throw BenchError("cellar lookup: \(found.count) people found for \(n) look-ups") }
    for (person, i) in zip(found, order) where (person.lastName, person.firstName) != names(Int(i) - 1) {
        throw BenchError("cellar lookup: \(names(Int(i) - 1)) found \(person.lastName) \(person.firstName)")
    }
    return seconds
}

func runGRDB(n: Int, order: [UInt64], folder: String) throws -> [String: Double] {
    var seconds: [String: Double] = [:]
    let queue = try openBenchQueue(folder + "/port.sqlite")
    defer { try? queue.close() }
    try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA foreign_keys = ON") }
    try queue.write { db in
        try db.execute(sql: """
            CREATE TABLE parent(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE child(id INTEGER PRIMARY KEY, name TEXT NOT NULL,
                               parent_id INTEGER REFERENCES parent(id) ON DELETE CASCADE);
            CREATE INDEX child_parent ON child(parent_id);
            CREATE TABLE person(id INTEGER PRIMARY KEY, last TEXT NOT NULL, first TEXT NOT NULL, age INTEGER NOT NULL);
            CREATE INDEX person_name ON person(last, first);
            """)
        let parent = try db.cachedStatement(sql: "INSERT INTO parent(id, name) VALUES (?, ?)")
        let child = try db.cachedStatement(sql: "INSERT INTO child(name, parent_id) VALUES (?, ?)")
        for p in 1...n {
            try parent.execute(arguments: [p, "p\(p)"])
            for k in 0..<childrenPerParent { try child.execute(arguments: ["c\(k)", p]) }
        }
    }
    var start = now()
    try queue.write { db in
        let delete = try db.cachedStatement(sql: "DELETE FROM parent WHERE id = ?")
        for p in 1...n { try delete.execute(arguments: [p]) }
    }
    seconds["cascade"] = now() - start
    let left = try queue.read { db in try Int.fetchOne(db, sql: "SELECT (SELECT count(*) FROM parent) + (SELECT count(*) FROM child)")! }
    guard left == 0 else { throw BenchError("grdb cascade: \(left) rows left") }

    try queue.write { db in
        let insert = try db.cachedStatement(sql: "INSERT INTO person(last, first, age) VALUES (?, ?, ?)")
        for i in 0..<n { try insert.execute(arguments: [names(i).last, names(i).first, i % 90]) }
    }
    start = now()
    let found: [(String, String, Int64, Int)] = try queue.read { db in
        let select = try db.cachedStatement(sql: "SELECT id, last, first, age FROM person WHERE last = ? AND first = ?")
        var rows: [(String, String, Int64, Int)] = []
        rows.reserveCapacity(n)
        for i in order {
            let (last, first) = names(Int(i) - 1)
            for row in try Row.fetchAll(select, arguments: [last, first]) { rows.append((row[1], row[2], row[0], row[3])) }
        }
        return rows
    }
    seconds["lookup"] = now() - start
    guard found.count == n else { throw BenchError("grdb lookup: \(found.count) rows for \(n) look-ups") }
    for (row, i) in zip(found, order) where (row.0, row.1) != names(Int(i) - 1) {
        throw BenchError("grdb lookup: \(names(Int(i) - 1)) found \(row.0) \(row.1)")
    }
    return seconds
}

runMain("port-bench") {
    let options = try PortOptions.parseCommandLine()
    let n = options.n
    let (parent, fs) = try scratchParent(options.directory, tool: "port-bench", reason: "databases on disk")
    if !options.tsv { print("port-bench: N=\(n), runs=\(options.runs), engines cellar,grdb alternated, databases under \(parent) (\(fs))") }
    let order = randomOrder(n)
    var results: [String: [[String: Double]]] = ["cellar": [], "grdb": []]
    for run in 1...options.runs {
        // Alternated, the first engine changing each run, so that a slower phase of the machine
        // falls on both.
        let engines = run % 2 == 1 ? [("cellar", runCellar), ("grdb", runGRDB)] : [("grdb", runGRDB), ("cellar", runCellar)]
        for (engine, body) in engines {
            let folder = try makeTemporaryFolder(in: parent, prefix: "port-\(engine)")
            defer { removeTree(folder) }
            let seconds = try body(n, order, folder)
            results[engine]!.append(seconds)
            logRun(run - 1, of: options.runs, engine, rates: steps.map { ($0, Double(n) / seconds[$0]!) })
        }
    }
    func rates(_ engine: String, _ step: String) -> [Double] { results[engine]!.map { Double(n) / $0[step]! } }
    func ratios(_ step: String) -> [Double] { zip(rates("cellar", step), rates("grdb", step)).map { $0 / $1 } }
    if options.tsv {
        for engine in ["cellar", "grdb"] {
            for step in steps {
                let rate = median(rates(engine, step))
                print(tsvLine(engine, step, n, opsPerSecond: rate, seconds: Double(n) / rate))
            }
        }
        for step in steps { print(tsvRatioLine("cellar_vs_grdb", step, n, median(ratios(step)))) }
        return
    }
    let rows = steps.map { step -> [String] in
        let spread = ratios(step)
        return [step, formatRate(median(rates("cellar", step))), formatRate(median(rates("grdb", step))),
                String(format: "%.2f× (%.2f–%.2f)", median(spread), spread.min()!, spread.max()!)]
    }
    print("")
    printTable(header: ["step (objects/s)", "cellar", "sqlite (GRDB)", "cellar/sqlite (min–max of runs)"], rows: rows)
}
