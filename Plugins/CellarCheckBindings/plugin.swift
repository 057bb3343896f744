// The `CellarCheckBindings` build plugin: fails the build of a target whose generated Cellar
// bindings or model file are stale (an entity changed since `cellar-generate` last ran). Add it
// to the target that holds the entities:
//
//   .target(name: "Notes", dependencies: [.product(name: "Cellar", package: "Cellar")],
//           plugins: [.plugin(name: "CellarCheckBindings", package: "Cellar")])
//
// It runs `cellar-generator --check` on the target's sources, its `model-<Target>.json` and
// `generated/EntityInfo-<Target>.generated.swift` (with the visibility the generated file has),
// again whenever one of them changes. It writes nothing into the package: its only output is a
// Swift file holding a comment, in the plugin's work directory.
import Foundation
import PackagePlugin

@main
struct CellarCheckBindings: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let directory = target.directoryURL
        let model = directory.appendingPathComponent("model-\(target.name).json")
        let output = directory.appendingPathComponent("generated/EntityInfo-\(target.name).generated.swift")
        let generated = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        let visibility = generated.contains("public func cellarModel()") ? "public" : "internal"
        let stamp = context.pluginWorkDirectoryURL.appendingPathComponent("CellarBindingsChecked.swift")
        let inputs = target.sourceFiles(withSuffix: "swift").map(\.url) + [model]
        return [.buildCommand(
            displayName: "Checking the Cellar bindings of \(target.name)",
            executable: try context.tool(named: "cellar-generator").url,
            arguments: ["--target", target.name, "--sources", directory.path, "--model", model.path,
                        "--output", output.path, "--visibility", visibility, "--check", "--stamp", stamp.path],
            inputFiles: inputs,
            outputFiles: [stamp])]
    }
}
