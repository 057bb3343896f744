// swift-tools-version: 6.2
// The data browser: `cellar-browse <directory>` serves a local, read-only web UI over a store
// (what `cellar browse` runs). A package of its own so that apps using Cellar never build a web
// server.
//
//   swift build --package-path Tools/CellarBrowse
//   swift test --package-path Tools/CellarBrowse     # headless Chromium for the browser tests
import PackageDescription

/// Cellar is this repository's root package; its identity is the name of the folder it is
/// checked out in, which differs between machines: take it from this package's path.
let cellar = Context.packageDirectory.split(separator: "/").dropLast(2).last.map(String.init)!

/// Swift 6 language mode, warnings as errors, as in the root package.
let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "CellarBrowse",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "cellar-browse", targets: ["cellar-browse"]),
    ],
    dependencies: [
        .package(path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // The tests stop their server with a graceful shutdown (Hummingbird's own dependency).
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // Routes, HTML pages, the access token.
        .target(
            name: "CellarBrowseKit",
            dependencies: [
                .product(name: "Cellar", package: cellar),
                .product(name: "CellarStorage", package: cellar),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "cellar-browse",
            dependencies: [
                "CellarBrowseKit",
                .product(name: "CellarStorage", package: cellar),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CellarBrowseTests",
            dependencies: [
                "CellarBrowseKit",
                .product(name: "Cellar", package: cellar),
                .product(name: "CellarStorage", package: cellar),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
    ]
)
