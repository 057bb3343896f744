// swift-tools-version: 6.2
// Cellar: an embedded object database for Swift.
import PackageDescription

/// Every target of ours is built in Swift 6 language mode with warnings as errors.
let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .treatAllWarnings(as: .error),
]

/// `CELLAR_WITHOUT_GENERATOR=1` leaves out the generator (its library, executable, plugin and
/// tests) and swift-syntax with it, for a build that needs only the library, the tool and the
/// engine's and object layer's tests: CI's ThreadSanitizer build. An app never sets it.
let withoutGenerator = Context.environment["CELLAR_WITHOUT_GENERATOR"] == "1"

/// Encryption at rest takes its cryptography from the system's libcrypto (OpenSSL) on Linux and
/// from swift-crypto (CryptoKit on Apple platforms) everywhere else; see
/// Sources/CellarStorage/Encryption/Primitives. `CELLAR_CRYPTO=swift-crypto` makes a Linux build
/// take swift-crypto too, so that its backend is compiled and tested here (the fuzz build does).
let swiftCryptoEverywhere = Context.environment["CELLAR_CRYPTO"] == "swift-crypto"
let swiftCryptoPlatforms: [Platform] = [.macOS, .macCatalyst, .iOS, .tvOS, .watchOS, .visionOS, .windows, .android, .wasi, .openbsd]
    + (swiftCryptoEverywhere ? [.linux] : [])
let cryptography: [Target.Dependency] = [
    .product(name: "Crypto", package: "swift-crypto", condition: .when(platforms: swiftCryptoPlatforms)),
    .product(name: "CryptoExtras", package: "swift-crypto", condition: .when(platforms: swiftCryptoPlatforms)),
] + (swiftCryptoEverywhere ? [] : [.target(name: "COpenSSL", condition: .when(platforms: [.linux]))])
let cryptographySettings: [SwiftSetting] = swiftCryptoEverywhere ? [] : [.define("CELLAR_OPENSSL", .when(platforms: [.linux]))]

/// zstd, the compression codec, comes from the system's libzstd (Sources/CellarStorage/Compression/
/// Zstd.swift): with the `Zstd` trait (on by default) on Linux and the other platforms that ship
/// it, with the `ZstdOnMacOS` trait (off by default) on macOS, from Homebrew: for tools and servers
/// on a Mac, not for apps that run on other Macs, which have no Homebrew. iOS, tvOS, watchOS and
/// visionOS have no libzstd: Cellar is built there without it. A build without zstd refuses the
/// compression options and throws `compressionUnavailable` when it meets a compressed value.
/// (Two targets for the one library: SwiftPM takes one condition per dependency on a target.)
let zstd: [Target.Dependency] = [
    .target(name: "CZstd", condition: .when(platforms: [.linux, .android, .openbsd, .windows, .wasi], traits: ["Zstd"])),
    .target(name: "CZstdMacOS", condition: .when(platforms: [.macOS], traits: ["ZstdOnMacOS"])),
]

let package = Package(
    name: "Cellar",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10)],
    products: [
        .library(name: "Cellar", targets: ["Cellar"]),
        .library(name: "CellarStorage", targets: ["CellarStorage"]),
        .executable(name: "cellar", targets: ["cellar"]),
        .executable(name: "cellar-generator", targets: ["cellar-generator"]),
        .plugin(name: "cellar-generate", targets: ["cellar-generate"]),
        .plugin(name: "CellarCheckBindings", targets: ["CellarCheckBindings"]),
    ],
    traits: [
        .trait(name: "Zstd", description: "Compression with the system's libzstd on Linux and other platforms that have it (Debian: libzstd-dev)"),
        .trait(name: "ZstdOnMacOS", description: "Compression with Homebrew's libzstd on macOS: for tools and servers, not for apps shipped to other Macs"),
        .default(enabledTraits: ["Zstd"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-atomics", from: "1.3.0"),
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "602.0.0"),
        // Encryption at rest off Linux: AES-256-GCM and HMAC (Crypto: CryptoKit on Apple
        // platforms), scrypt for passphrases (CryptoExtras). Not built on Linux (libcrypto there).
        .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
        // The `cellar` tool's command line only.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Plugin only (`swift package generate-documentation`, scripts/docs.sh): no library or
        // target depends on it, so building Cellar compiles nothing of it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // libzstd from the system (Debian: libzstd-dev), where `zstd` above says; on macOS the
        // same library from Homebrew, under another module name.
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"])]
        ),
        .systemLibrary(
            name: "CZstdMacOS",
            pkgConfig: "libzstd",
            providers: [.brew(["zstd"])]
        ),
        // libcrypto from the system, Linux only (Debian: libssl-dev): encryption at rest.
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // The storage engine: log, copy-on-write B+tree, transactions, recovery.
        .target(
            name: "CellarStorage",
            dependencies: zstd + [.product(name: "Atomics", package: "swift-atomics")] + cryptography,
            swiftSettings: strict + cryptographySettings
        ),
        // Float vector kernels for the HNSW index in C, so that an AVX2 + FMA version can be built
        // beside a portable one and chosen at run time (Swift has no per-function target).
        .target(
            name: "CCellarSIMD",
            cSettings: [.enableWarning("all"), .enableWarning("extra"), .treatAllWarnings(as: .error)]
        ),
        // The object layer and the API apps use: records, meta model, Store, Box, transactions.
        .target(
            name: "Cellar",
            dependencies: ["CellarStorage", "CCellarSIMD", .product(name: "Atomics", package: "swift-atomics")],
            swiftSettings: strict
        ),
        // The generator: reads entity sources (swift-syntax), keeps the model JSON, writes bindings.
        .target(
            name: "CellarGenerator",
            dependencies: [
                "Cellar",
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftParser", package: "swift-syntax"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "cellar-generator",
            dependencies: ["CellarGenerator"],
            swiftSettings: strict
        ),
        // `swift package --allow-writing-to-package-directory cellar-generate --target NAME`
        .plugin(
            name: "cellar-generate",
            capability: .command(
                intent: .custom(verb: "cellar-generate", description: "Generate Cellar bindings and update the model JSON of a target"),
                permissions: [.writeToPackageDirectory(reason: "Writes model-<Target>.json and generated/EntityInfo-<Target>.generated.swift into the target")]
            ),
            dependencies: ["cellar-generator"]
        ),
        // A build plugin for an app's entity target: the build fails when its bindings are stale.
        .plugin(
            name: "CellarCheckBindings",
            capability: .buildTool(),
            dependencies: ["cellar-generator"]
        ),
        // The command-line tool: demo, inspect and verify a store.
        .executableTarget(
            name: "cellar",
            dependencies: ["Cellar", "CellarStorage", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict
        ),
        // Shared by the tests and the crash child: seeded workloads, an in-memory model, the
        // fault-injecting file, a word list (scripts/make-word-list.sh).
        .target(
            name: "CellarTestSupport",
            dependencies: ["Cellar", "CellarStorage"],
            path: "Tests/CellarTestSupport",
            resources: [.copy("Resources/words.txt")],
            swiftSettings: strict
        ),
        // A child process for the kill -9 test: commits and reports acknowledged commits.
        .executableTarget(
            name: "CellarCrashChild",
            dependencies: ["CellarStorage", "CellarTestSupport"],
            path: "Tests/CellarCrashChild",
            swiftSettings: strict
        ),
        // A child process for the HNSW kill -9 test: commits vector inserts, updates and removes.
        .executableTarget(
            name: "CellarVectorCrashChild",
            dependencies: ["Cellar", "CellarTestSupport"],
            path: "Tests/CellarVectorCrashChild",
            swiftSettings: strict
        ),
        .testTarget(
            name: "CellarStorageTests",
            dependencies: ["CellarStorage", "CellarTestSupport", "CellarCrashChild", .product(name: "Atomics", package: "swift-atomics")],
            exclude: ["Fixtures"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CellarGeneratorTests",
            dependencies: ["CellarGenerator", "Cellar", "CellarTestSupport"],
            exclude: ["Fixtures"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CellarTests",
            dependencies: ["Cellar", "CellarStorage", "CellarTestSupport", "CellarVectorCrashChild", "cellar", "CCellarSIMD",
                           .product(name: "Atomics", package: "swift-atomics")],
            exclude: ["Generated/model-CellarTests.json"],
            swiftSettings: strict
        ),
    ]
)

if withoutGenerator {
    let generator: Set<String> = ["CellarGenerator", "cellar-generator", "cellar-generate", "CellarCheckBindings", "CellarGeneratorTests"]
    package.targets.removeAll { generator.contains($0.name) }
    package.products.removeAll { generator.contains($0.name) }
    package.dependencies.removeAll { dependency in
        if case .sourceControl(_, let location, _) = dependency.kind { return location.hasSuffix("/swift-syntax") }
        return false
    }
}
