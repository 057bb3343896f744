// cellar-generator: reads a target's entity sources and its model JSON, updates the model JSON
// and writes the generated bindings. The `cellar-generate` command plugin runs it; it also runs
// on its own:
//
//   cellar-generator --target Notes --sources Sources/Notes --model Sources/Notes/model-Notes.json \
//       --output Sources/Notes/generated/EntityInfo-Notes.generated.swift [--visibility public]
//
// With `--check` it writes nothing and fails (exit 1, naming what is stale) when the model JSON or
// the bindings are not what the sources make; `--stamp FILE` then writes FILE (a Swift file
// holding a comment) when they are: the `CellarCheckBindings` build plugin's output.
import CellarGenerator
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func fail(_ message: String, usage: Bool = false) -> Never {
    fputs(message + "\n", stderr)
    if usage {
        fputs("usage: cellar-generator --target NAME --sources PATH [--sources PATH …] --model FILE --output FILE [--visibility internal|public] [--check [--stamp FILE]]\n", stderr)
    }
    exit(usage ? 2 : 1)
}

var sources: [String] = []
var model: String?
var output: String?
var target: String?
var isPublic = false
var check = false
var stamp: String?
var arguments = Array(CommandLine.arguments.dropFirst())[...]
while let argument = arguments.popFirst() {
    switch argument {
    case "--check":
        check = true
    case "--sources", "--model", "--output", "--target", "--visibility", "--stamp":
        guard let value = arguments.popFirst() else { fail("cellar-generator: \(argument) needs a value", usage: true) }
        switch argument {
        case "--sources": sources.append(value)
        case "--model": model = value
        case "--output": output = value
        case "--target": target = value
        case "--stamp": stamp = value
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

if stamp != nil && !check { fail("cellar-generator: --stamp goes with --check", usage: true) }
do {
    var options = Generator.Options(sources: sources, modelPath: model, outputPath: output, targetName: target, isPublic: isPublic)
    options.checkOnly = check
    let summary = try Generator(options: options).run()
    if check {
        guard summary.isUpToDate else {
            let stale = [summary.modelChanged ? model : nil, summary.codeChanged ? output : nil].compactMap { $0 }
            let why = summary.modelChanges.isEmpty
                ? "the entities' code changed (a type, an annotation, an initial value) or the generator did"
                : summary.modelChanges.joined(separator: ", ")
            fail("error: the Cellar bindings of \(target) are stale (\(why)): \(stale.joined(separator: " and ")) \(stale.count == 1 ? "is" : "are") not what its entities make. Run `swift package --allow-writing-to-package-directory cellar-generate --target \(target)\(isPublic ? " --visibility public" : "")` and commit the result")
        }
        if let stamp {
            let text = "// The Cellar bindings of \(target) matched its entities when this target was built.\n"
            guard let file = fopen(stamp, "w"), fputs(text, file) >= 0, fclose(file) == 0 else {
                fail("cellar-generator: cannot write \(stamp)")
            }
        }
        print("cellar-generator: the bindings of \(target) are up to date (\(summary.entities.count) entities)")
        exit(0)
    }
    print("cellar-generator: \(summary.entities.count) entities (\(summary.entities.joined(separator: ", "))); "
        + "\(model) \(summary.modelChanged ? "updated" : "unchanged"); \(output) \(summary.codeChanged ? "written" : "unchanged")")
} catch {
    fail("\(error)")
}
