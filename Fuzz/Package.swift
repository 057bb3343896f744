// swift-tools-version: 6.2
// Fuzz targets for CellarStorage and Cellar's model file: a package of its own, so that the
// sanitizer builds (and their build directory) never touch the root package. See README.md.
import PackageDescription

/// The root package's identity is the name of the folder it is checked out in, which differs
/// between machines (CI clones into a folder of its own): take it from this package's path.
let root = Context.packageDirectory.split(separator: "/").dropLast().last.map(String.init)!

/// Swift 6 language mode with warnings as errors, as in the root package.
let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "CellarFuzz",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "FuzzOpenStore", targets: ["FuzzOpenStore"]),
        .executable(name: "FuzzNode", targets: ["FuzzNode"]),
        .executable(name: "FuzzModelJSON", targets: ["FuzzModelJSON"]),
        .executable(name: "FuzzRecord", targets: ["FuzzRecord"]),
        .executable(name: "FuzzIdentifier", targets: ["FuzzIdentifier"]),
        .executable(name: "FuzzDecompress", targets: ["FuzzDecompress"]),
        .executable(name: "FuzzFlex", targets: ["FuzzFlex"]),
        .executable(name: "FuzzEmbedded", targets: ["FuzzEmbedded"]),
        .executable(name: "FuzzFullTextQuery", targets: ["FuzzFullTextQuery"]),
        .executable(name: "FuzzGeo", targets: ["FuzzGeo"]),
        .executable(name: "MakeCorpus", targets: ["MakeCorpus"]),
    ],
    dependencies: [
        .package(path: "../"),
        // FuzzSupport encrypts the plaintext images of encrypted stores for FuzzOpenStore
        // (Reencrypt.swift). The same URL and requirement as the root package's, whose encryption
        // backend off Linux it is: scripts/fuzz-smoke.sh builds with CELLAR_CRYPTO=swift-crypto,
        // so that the engine here uses it too (one checkout, one build of it).
        .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
    ],
    targets: [
        // Recomputes the checksums of a data file (so that mutations get past them) and encrypts
        // the records of an encrypted one's plaintext image under the fixed fuzz key (so that they
        // get past its authentication); the Note-like values the compression fuzzing trains its
        // dictionary from.
        .target(
            name: "FuzzSupport",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict
        ),
        // libFuzzer: the input is the whole data file of a store, opened read-only and read; then
        // the same with its checksums recomputed; an encrypted one with the fixed fuzz key, and a
        // third time with its record bodies taken as plaintext and encrypted.
        .executableTarget(
            name: "FuzzOpenStore",
            dependencies: ["FuzzSupport", .product(name: "CellarStorage", package: root)],
            swiftSettings: strict
        ),
        // libFuzzer: the input is a B+tree node body, checked by Diagnostics.checkNode.
        .executableTarget(
            name: "FuzzNode",
            dependencies: [.product(name: "CellarStorage", package: root)],
            swiftSettings: strict
        ),
        // libFuzzer: the input is a model JSON file, parsed as JSON and read as a model; what
        // parses is written, parsed again and must give the same value and the same bytes.
        .executableTarget(
            name: "FuzzModelJSON",
            dependencies: [.product(name: "Cellar", package: root)],
            swiftSettings: strict
        ),
        // libFuzzer: the input picks slot types and gives an object record, read with every
        // accessor and verified; what verifies is written again and must read back the same.
        .executableTarget(
            name: "FuzzRecord",
            dependencies: [.product(name: "Cellar", package: root)],
            swiftSettings: strict
        ),
        // libFuzzer: the input is a persistent identifier's string, read and written back.
        .executableTarget(
            name: "FuzzIdentifier",
            dependencies: [.product(name: "Cellar", package: root)],
            swiftSettings: strict
        ),
        // libFuzzer: byte 0 picks a dictionary (none, or a fixed one), the rest is a compressed
        // value's zstd frame, decoded as a read decodes it; what decodes is compressed again and
        // must decode to the same bytes.
        .executableTarget(
            name: "FuzzDecompress",
            dependencies: ["FuzzSupport", .product(name: "CellarStorage", package: root)],
            swiftSettings: strict
        ),
        // libFuzzer: the input is a Flex value's encoding, verified, decoded and looked into;
        // what decodes is encoded again and must give the same bytes and an equal value.
        .executableTarget(
            name: "FuzzFlex",
            dependencies: [.product(name: "Cellar", package: root)],
            swiftSettings: strict
        ),
        // Entities with embedded objects (contacts with addresses, orders with lines, outlines of
        // recursive nodes), their hand-written bindings and their model: for FuzzEmbedded and
        // for the seeds MakeCorpus writes.
        .target(
            name: "EmbeddedFuzzModel",
            dependencies: [.product(name: "Cellar", package: root)],
            swiftSettings: strict
        ),
        // libFuzzer: byte 0 picks a type of EmbeddedFuzzModel and the rest is a record of it,
        // verified and read through the binding; what reads is written again and must read back
        // equal. Or byte 0 picks the structured mode: the input makes objects with embedded
        // objects, put into a store in memory, got back and queried; the queries must find what
        // the same filter finds in memory.
        .executableTarget(
            name: "FuzzEmbedded",
            dependencies: ["EmbeddedFuzzModel", .product(name: "Cellar", package: root)],
            swiftSettings: strict
        ),
        // libFuzzer: the input is tokenized as text and parsed as a full-text query; tokens must be
        // short, without a 0 byte, valid UTF-8 and folded already (they tokenize to themselves);
        // a query that does not parse must throw illegalArgument.
        .executableTarget(
            name: "FuzzFullTextQuery",
            dependencies: [.product(name: "Cellar", package: root)],
            swiftSettings: strict
        ),
        // libFuzzer: the input is a stored GeoPoint, then the parameters of a box, a circle or a
        // polygon, built through their throwing initializers and covered by ranges of cell ids
        // that must hold the cell of every point the shape contains; its last bytes are a
        // full-text index's stored statistics.
        .executableTarget(
            name: "FuzzGeo",
            dependencies: [.product(name: "Cellar", package: root)],
            swiftSettings: strict
        ),
        // Writes the seed corpus (corpus/open-store, corpus/node, corpus/decompress,
        // corpus/embedded) with the public API. Built without sanitizers, in its own scratch path.
        .executableTarget(
            name: "MakeCorpus",
            dependencies: ["FuzzSupport", "EmbeddedFuzzModel", .product(name: "CellarStorage", package: root),
                           .product(name: "Cellar", package: root)],
            swiftSettings: strict
        ),
    ]
)

/// `CELLAR_FUZZERS_ONLY=1` leaves out MakeCorpus, so that one `swift build` builds every fuzzer
/// with the fuzzing sanitizers (scripts/fuzz-smoke.sh sets it): under `-sanitize=fuzzer` a
/// program's top-level code does not compile, and MakeCorpus is a program of its own.
if Context.environment["CELLAR_FUZZERS_ONLY"] == "1" {
    package.targets.removeAll { $0.name == "MakeCorpus" }
    package.products.removeAll { $0.name == "MakeCorpus" }
}
