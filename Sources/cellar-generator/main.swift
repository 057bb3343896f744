// cellar-generator: reads a target's entity sources and its model JSON, updates the model JSON
// and writes the generated bindings. The `cellar-generate` command plugin runs it; it also runs
// on its own:
//
//   cellar-generator --target Notes --sources Sources/Notes --model Sources/Notes/model-Notes.json \
//       --output Sources/Notes/generated/EntityInfo-Notes.generated.swift [--visibility public]
import CellarGenerator
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func fail(_ message: String, usage: Bool = false) -> Never {
    fputs(message + "\n", stderr)
    if usage {
        fputs("usage: cellar-generator --target NAME --sources PATH [--sources PATH …] --model FILE --output FILE [--visibility internal|public]\n", stderr)
    }
    exit(usage ? 2 : 1)
}

var sources: [String] = []
var model: String?
var output: String?
var target: String?
var isPublic = false
var arguments = Array(CommandLine.arguments.dropFirst())[...]
while let argument = arguments.popFirst() {
    switch argument {
    case "--sources", "--model", "--output", "--target", "--visibility":
        guard let value = arguments.popFirst() else { fail("cellar-generator: \(argument) needs a value", usage: true) }
        switch argument {
        case "--sources": sources.append(value)
        case "--model": model = value
        case "--output": output = value
        case "--target": target = value
        default:
            guard value == "public" || value == "internal" else { fail("cellar-generator: --visibility is internal or public, not \(value)", usage: true) }
            isPublic = value == "public"
        }
    case "-h", "--help":
        fail("cellar-generator: writes the model JSON and the bindings of a target's entities", usage: true)
    default:
        fail("cellar-generator: unknown argument \(argument)", usage: true)
    }
}
guard let model, let output, let target, !sources.isEmpty else { fail("cellar-generator: --target, --sources, --model and --output are needed", usage: true) }

do {
    let summary = try Generator(options: .init(sources: sources, modelPath: model, outputPath: output, targetName: target, isPublic: isPublic)).run()
    print("cellar-generator: \(summary.entities.count) entities (\(summary.entities.joined(separator: ", "))); "
        + "\(model) \(summary.modelChanged ? "updated" : "unchanged"); \(output) \(summary.codeChanged ? "written" : "unchanged")")
} catch {
    fail("\(error)")
}
