// swift-tools-version: 6.2
// An example app package that uses Cellar the way an app does: entities in its own sources, the
// `cellar-generate` plugin keeping model-Notes.json and the generated bindings (both committed).
//
//   swift run --package-path Examples/Notes notes                  # run it
//   swift package --package-path Examples/Notes --allow-writing-to-package-directory \
//       cellar-generate --target Notes                             # after changing an entity
import PackageDescription

/// Cellar is this repository's root package; its identity is the name of the folder it is
/// checked out in, which differs between machines: take it from this package's path.
let cellar = Context.packageDirectory.split(separator: "/").dropLast(2).last.map(String.init)!

let package = Package(
    name: "Notes",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .executable(name: "notes", targets: ["Notes"]),
    ],
    dependencies: [
        .package(path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "Notes",
            dependencies: [.product(name: "Cellar", package: cellar)],
            exclude: ["model-Notes.json"],
            swiftSettings: [.swiftLanguageMode(.v6), .treatAllWarnings(as: .error)],
            // The build fails when the generated bindings are stale (an entity changed since the
            // last `cellar-generate`).
            plugins: [.plugin(name: "CellarCheckBindings", package: cellar)]
        ),
    ]
)
