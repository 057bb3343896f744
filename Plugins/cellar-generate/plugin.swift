// The `cellar-generate` command plugin:
//
//   swift package --allow-writing-to-package-directory cellar-generate --target Notes [--visibility public]
//
// For each target named, runs `cellar-generator` on the target's sources, with the model file
// `model-<Target>.json` and the output `generated/EntityInfo-<Target>.generated.swift`, both in
// the target's directory.
import Foundation
import PackagePlugin

@main
struct CellarGenerate: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        var extractor = ArgumentExtractor(arguments)
        let targetNames = extractor.extractOption(named: "target")
        let visibility = extractor.extractOption(named: "visibility").last ?? "internal"
        guard !targetNames.isEmpty else {
            throw PluginError("name the target(s) to generate for: cellar-generate --target NAME")
        }
        guard extractor.remainingArguments.isEmpty else {
            throw PluginError("unknown arguments: \(extractor.remainingArguments.joined(separator: " "))")
        }
        let tool = try context.tool(named: "cellar-generator")
        for name in targetNames {
            guard let target = try context.package.targets(named: [name]).first as? SourceModuleTarget else {
                throw PluginError("no Swift source target named \(name) in package \(context.package.displayName)")
            }
            let directory = target.directoryURL
            let process = Process()
            process.executableURL = tool.url
            process.arguments = [
                "--target", name,
                "--sources", directory.path,
                "--model", directory.appendingPathComponent("model-\(name).json").path,
                "--output", directory.appendingPathComponent("generated/EntityInfo-\(name).generated.swift").path,
                "--visibility", visibility,
            ]
            try process.run()
            process.waitUntilExit()
            guard process.terminationReason == .exit, process.terminationStatus == 0 else {
                throw PluginError("cellar-generator failed for target \(name) (its messages are above)")
            }
        }
    }
}

struct PluginError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
