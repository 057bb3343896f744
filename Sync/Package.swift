// swift-tools-version: 6.2
// Sync: a Cellar store kept in step with a PostgreSQL server. A package of its own so that apps
// using only Cellar never build networking (SwiftNIO, postgres-nio, swift-nio-ssl).
//
//   swift build --package-path Sync
//   swift test --package-path Sync     # against the server in CELLAR_SYNC_POSTGRES (a URL):
//                                      # scripts/postgres.sh start DIR prints one
import PackageDescription

/// Cellar is this repository's root package; its identity is the name of the folder it is
/// checked out in, which differs between machines: take it from this package's path.
let cellar = Context.packageDirectory.split(separator: "/").dropLast(1).last.map(String.init)!

/// Swift 6 language mode, warnings as errors, as in the root package.
let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "CellarSync",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "CellarSync", targets: ["CellarSync"]),
        .executable(name: "sync-bench", targets: ["SyncBench"]),
        .executable(name: "sync-example", targets: ["SyncExample"]),
    ],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // The server's address (SyncServer), its errors (SyncError); the sync engine.
        .target(
            name: "CellarSync",
            dependencies: [
                .product(name: "Cellar", package: cellar),
                .product(name: "CellarStorage", package: cellar),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The sync benchmark (throughput, latency) and the writer the fault tests kill.
        .executableTarget(
            name: "SyncBench",
            dependencies: [
                "CellarSync",
                .product(name: "Cellar", package: cellar),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            exclude: ["model-sync-bench.json"],
            swiftSettings: strict
        ),
        // Two stores syncing through a server: scripts/sync-demo.sh runs it.
        .executableTarget(
            name: "SyncExample",
            dependencies: [
                "CellarSync",
                .product(name: "Cellar", package: cellar),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["model-sync-example.json"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CellarSyncTests",
            dependencies: [
                "CellarSync",
                .product(name: "Cellar", package: cellar),
                .product(name: "CellarStorage", package: cellar),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["model-sync-tests.json"],
            swiftSettings: strict
        ),
    ]
)
