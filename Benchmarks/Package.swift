// swift-tools-version: 6.1
// Benchmarks for Cellar, kept out of the main package so that building or testing Cellar never
// pulls in the benchmark framework or LMDB.
//
//   swift run -c release --package-path Benchmarks engine-bench --n 100000 --runs 3
//   swift run -c release --package-path Benchmarks box-bench --n 100000 --runs 5
//   swift run -c release --package-path Benchmarks query-bench --n 100000 --runs 3
//   swift run -c release --package-path Benchmarks crud --n 100000 --runs 3
//   swift run -c release --package-path Benchmarks collections --n 100000 --runs 3
//   swift run -c release --package-path Benchmarks embedded --n 100000 --runs 3
//   swift run -c release --package-path Benchmarks fts-bench --n 100000 --runs 3
//   swift run -c release --package-path Benchmarks geo-bench --n 1000000 --runs 3
//   swift run -c release --package-path Benchmarks vector-bench --n 100000 --runs 1
//   swift run -c release --package-path Benchmarks live-bench --n 100000 --commits 10000 --runs 3
//   swift run -c release --package-path Benchmarks commit-bench --n 4000 --runs 3
//   swift run -c release --package-path Benchmarks window-bench --n 10000 --runs 3
//   swift run -c release --package-path Benchmarks shared-bench --n 2000 --runs 5
//   swift run -c release --package-path Benchmarks bulk-bench --n 10000000
//   swift run -c release --package-path Benchmarks port-bench --n 100000 --runs 3
//   swift build -c release --package-path Benchmarks --product cellar  (the tool export-bench runs)
//   swift run -c release --package-path Benchmarks export-bench --n 1000000
//   swift package --package-path Benchmarks benchmark --target EngineMicro
//   swift package --package-path Benchmarks benchmark --target ObjectMicro
import PackageDescription

// `.package(path: "../")` takes its identity from the name of the checkout's folder, which differs
// from machine to machine: compute it.
let root = Context.packageDirectory.split(separator: "/").dropLast().last.map(String.init)!

let package = Package(
    name: "CellarBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../"),
        // Without the trait, resolution asks for a package that is not on the mirror.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        // SQLite as a Swift user would use it (crud); on Linux it links the system SQLite (libsqlite3-dev).
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        // LMDB from the system, the reference engine (Debian: liblmdb-dev, Homebrew: lmdb).
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        // What engine-bench and box-bench share: the command line, the clock, the CRUD workload's random
        // order, temporary folders on disk, the table and tsv output.
        .target(
            name: "BenchSupport",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // What the harnesses' SQLite sides share: the connection, set up as the CRUD workload's.
        .target(
            name: "BenchGRDB",
            dependencies: [.product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // What engine-bench and crud share of LMDB: opening an environment, errors.
        .target(
            name: "BenchLMDB",
            dependencies: ["BenchSupport", "CLMDB"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The CRUD workload's `Note` entity, its hand-written binding and objects: box-bench, query-bench and live-bench.
        .target(
            name: "BenchNote",
            dependencies: [.product(name: "Cellar", package: root)],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Cellar's storage engine and LMDB side by side on the same steps, in one process.
        .executableTarget(
            name: "engine-bench",
            dependencies: [
                "BenchSupport",
                .product(name: "CellarStorage", package: root),
                "BenchLMDB",
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The object layer (Store/Box) against the storage engine used directly, on the same data.
        .executableTarget(
            name: "box-bench",
            dependencies: [
                "BenchSupport",
                "BenchNote",
                .product(name: "Cellar", package: root),
                .product(name: "CellarStorage", package: root),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The CRUD workload's query steps e, e2 and e3 through Cellar's query API, beside ObjectBox's anchors.
        .executableTarget(
            name: "query-bench",
            dependencies: [
                "BenchSupport",
                "BenchNote",
                .product(name: "Cellar", package: root),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The CRUD workload's steps a b c d e e2 e3 f g: Cellar through its public API beside SQLite
        // through GRDB, in one process, with ObjectBox's anchors. Its `Note` entity is generated as
        // an app's is: `swift package --package-path Benchmarks --allow-writing-to-package-directory
        // cellar-generate --target crud` keeps model-crud.json and generated/EntityInfo-crud.generated.swift.
        .executableTarget(
            name: "crud",
            dependencies: [
                "BenchGRDB",
                "BenchSupport",
                .product(name: "Cellar", package: root),
                .product(name: "CellarStorage", package: root),
                .product(name: "GRDB", package: "GRDB.swift"),
                "BenchLMDB",
            ],
            exclude: ["model-crud.json"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // List, set and map properties: an `Item` with a tag list (element-indexed), a number list and
        // a string map, through Cellar's public API beside SQLite through GRDB (the tags in a table of
        // their own, the rest as JSON), in one process. `Item` is generated as crud's `Note` is:
        // `swift package --package-path Benchmarks --allow-writing-to-package-directory cellar-generate
        // --target collections` keeps model-collections.json and generated/EntityInfo-collections.generated.swift.
        .executableTarget(
            name: "collections",
            dependencies: [
                "BenchGRDB",
                "BenchSupport",
                .product(name: "Cellar", package: root),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            exclude: ["model-collections.json"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Objects identified by a primary key: insert, upsert and get by key, Cellar beside SQLite
        // through GRDB. `Contact` is generated like crud's `Note` (model-keyed.json, generated/).
        .executableTarget(
            name: "keyed",
            dependencies: [
                "BenchGRDB",
                "BenchSupport",
                .product(name: "Cellar", package: root),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            exclude: ["model-keyed.json"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // What a port from Realm or SwiftData leans on: a cascade delete and a look-up through an index
        // over two properties, Cellar beside SQLite through GRDB. Its entities are generated like
        // crud's `Note` (model-port-bench.json, generated/).
        .executableTarget(
            name: "port-bench",
            dependencies: [
                "BenchGRDB",
                "BenchSupport",
                .product(name: "Cellar", package: root),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            exclude: ["model-port-bench.json"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Embedded objects: orders with a list of embedded lines (sku indexed inside the embedded type),
        // Cellar beside SQLite through GRDB (an orders and an order_lines table). `Order` is generated
        // like crud's `Note` (model-embedded.json, generated/).
        .executableTarget(
            name: "embedded",
            dependencies: [
                "BenchGRDB",
                "BenchSupport",
                .product(name: "Cellar", package: root),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            exclude: ["model-embedded.json"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Full-text search: `Doc.text` in a full-text index, Cellar beside SQLite's FTS5 through
        // GRDB (plain SQL). `Doc` is generated like crud's `Note` (model-fts-bench.json, generated/).
        .executableTarget(
            name: "fts-bench",
            dependencies: [
                "BenchGRDB",
                "BenchSupport",
                .product(name: "Cellar", package: root),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            exclude: ["model-fts-bench.json"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Geospatial queries: circles and boxes through the geo index against the same queries by
        // scan, on one store of uniform random points. `Spot` is generated like crud's `Note`
        // (model-geo-bench.json, generated/).
        .executableTarget(
            name: "geo-bench",
            dependencies: [
                "BenchSupport",
                .product(name: "Cellar", package: root),
            ],
            exclude: ["model-geo-bench.json"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Vector search: clustered unit vectors in an HNSW index (cosine), d = 128 and 384: the insert,
        // warm and cold nearest-neighbour queries with recall@10 against a brute-force scan, the file
        // size. `Doc128` and `Doc384` are generated like crud's `Note` (model-vector-bench.json, generated/).
        .executableTarget(
            name: "vector-bench",
            dependencies: [
                "BenchSupport",
                .product(name: "Cellar", package: root),
            ],
            exclude: ["model-vector-bench.json"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Live results: one-object commits under live queries on the CRUD workload's `Note`
        // (BenchNote): the commit-to-delivery latency, the writer's commit rate with and without
        // live queries attached, unordered (updated incrementally) against ordered (run again).
        // Several stores writing one database: a commit's cost, and how soon another hears it.
        .executableTarget(
            name: "shared-bench",
            dependencies: [
                "BenchSupport",
                "BenchNote",
                .product(name: "Cellar", package: root),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "live-bench",
            dependencies: [
                "BenchSupport",
                "BenchNote",
                .product(name: "Cellar", package: root),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // N objects in one write transaction, within the transaction memory budget or without one:
        // the rate and the peak memory the transaction adds.
        .executableTarget(
            name: "bulk-bench",
            dependencies: [
                "BenchSupport",
                "BenchNote",
                .product(name: "Cellar", package: root),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // `cellar export` and `cellar import` of N notes, run as child processes: objects per
        // second and their peak memory.
        .executableTarget(
            name: "export-bench",
            dependencies: [
                "BenchSupport",
                "BenchNote",
                .product(name: "Cellar", package: root),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // One-object durable commits from 1 to 16 threads at once (Cellar's group commit), beside
        // SQLite through GRDB (WAL, synchronous=FULL) and LMDB, in one process.
        .executableTarget(
            name: "commit-bench",
            dependencies: [
                "BenchGRDB",
                "BenchLMDB",
                "BenchNote",
                "BenchSupport",
                .product(name: "Cellar", package: root),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // What a window of past commits (`pastRetention`) costs in file size, compaction time and
        // reading its oldest commit, under a steady update load.
        .executableTarget(
            name: "window-bench",
            dependencies: [
                "BenchNote",
                "BenchSupport",
                .product(name: "Cellar", package: root),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // package-benchmark micro-benchmarks. The plugin only picks up executable targets whose
        // folder sits directly in a folder named `Benchmarks`: this package's own folder.
        .executableTarget(
            name: "EngineMicro",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "CellarStorage", package: root),
            ],
            path: "EngineMicro",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The object layer's hot paths on the CRUD workload's `Note`: record encode/decode, a cursor seek
        // (node search), Box put/get, a query's count and findIds.
        .executableTarget(
            name: "ObjectMicro",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "BenchNote",
                .product(name: "Cellar", package: root),
                .product(name: "CellarStorage", package: root),
            ],
            path: "ObjectMicro",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
