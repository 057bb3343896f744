@_spi(CellarGenerated) @_spi(Testing) import Cellar
import Foundation

/// One run of the generator: reads the entity sources and the model JSON, writes the model JSON
/// (keeping a `.bak` of the previous content when it changes) and the generated bindings. Files
/// whose content would not change are not touched.
public struct Generator {
    public struct Options: Sendable {
        /// Swift files, or directories searched for them (recursively; `*.generated.swift` skipped).
        public var sources: [String]
        public var modelPath: String
        public var outputPath: String
        public var targetName: String
        public var isPublic: Bool
        /// Writes nothing: the summary says whether the model JSON and the bindings are up to
        /// date with the sources (`cellar-generator --check`, the `CellarCheckBindings` plugin).
        public var checkOnly = false

        public init(sources: [String], modelPath: String, outputPath: String, targetName: String, isPublic: Bool = false) {
            self.sources = sources
            self.modelPath = modelPath
            self.outputPath = outputPath
            self.targetName = targetName
            self.isPublic = isPublic
        }
    }

    /// What a run did (with `checkOnly`, what it would do).
    public struct Summary: Sendable {
        public var entities: [String]
        public var modelChanged: Bool
        public var codeChanged: Bool
        /// Neither the model JSON nor the bindings change.
        public var isUpToDate: Bool { !modelChanged && !codeChanged }
        /// What changed in the model, in words (`Note.title was added`): what `--check` names.
        public var modelChanges: [String] = []
    }

    public var options: Options

    public init(options: Options) {
        self.options = options
    }

    public func run() throws -> Summary {
        var generator = SystemRandomNumberGenerator()
        return try run(using: &generator)
    }

    /// `run()` with a given source of random UIDs (tests use a seeded one).
    public func run<G: RandomNumberGenerator>(using random: inout G) throws -> Summary {
        let files = try sourceFiles().map { path in (path: path, contents: try read(path)) }
        let entities = try SourceScanner.scan(files: files)
        let projections = try ProjectionScanner.scan(files: files, entities: entities)
        guard entities.contains(where: { !$0.isEmbedded }) else {
            throw GeneratorError("no entities in the sources of \(options.targetName): conform a class or struct to `Entity`, or annotate it `// cellar: entity`")
        }
        let fileManager = FileManager.default
        var existing: Model?
        var oldBytes: [UInt8]?
        if fileManager.fileExists(atPath: options.modelPath) {
            oldBytes = Array(try Data(contentsOf: URL(fileURLWithPath: options.modelPath)))
            do {
                existing = try Model(json: oldBytes!, file: options.modelPath)
            } catch let error as CellarError {
                throw GeneratorError("\(error); fix the file (see docs/model.md), nothing was written")
            }
        }
        let model = try ModelUpdate(modelPath: options.modelPath).update(existing, with: entities, using: &random)
        let code = try CodeEmitter(targetName: options.targetName, isPublic: options.isPublic).emit(entities: entities, model: model, projections: projections)

        let newBytes = model.jsonBytes()
        let modelChanged = newBytes != oldBytes
        if modelChanged && !options.checkOnly {
            if let oldBytes { try write(oldBytes, to: options.modelPath + ".bak") }
            try write(newBytes, to: options.modelPath)
        }
        let codeBytes = Array(code.utf8)
        let oldCode = try? Data(contentsOf: URL(fileURLWithPath: options.outputPath))
        let codeChanged = oldCode.map(Array.init) != codeBytes
        if codeChanged && !options.checkOnly { try write(codeBytes, to: options.outputPath) }
        var summary = Summary(entities: entities.map(\.typeName), modelChanged: modelChanged, codeChanged: codeChanged)
        if modelChanged { summary.modelChanges = Self.changes(from: existing, to: model) }
        return summary
    }

    /// The differences between two versions of a model file, by UID, in words: entities and
    /// properties added, removed or renamed, indexes added or removed.
    static func changes(from old: Model?, to new: Model) -> [String] {
        guard let old else { return ["the model file is new"] }
        var changes: [String] = []
        let oldEntities = Dictionary(old.entities.map { ($0.id.uid, $0) }, uniquingKeysWith: { a, _ in a })
        for entity in new.entities {
            guard let before = oldEntities[entity.id.uid] else {
                changes.append("\(entity.name) was added")
                continue
            }
            if before.name != entity.name { changes.append("\(before.name) was renamed to \(entity.name)") }
            let oldProperties = Dictionary(before.properties.map { ($0.id.uid, $0) }, uniquingKeysWith: { a, _ in a })
            for property in entity.properties {
                guard let was = oldProperties[property.id.uid] else {
                    changes.append("\(entity.name).\(property.name) was added")
                    continue
                }
                if was.name != property.name { changes.append("\(entity.name).\(was.name) was renamed to \(property.name)") }
                if was.indexId?.uid != property.indexId?.uid {
                    changes.append("\(entity.name).\(property.name) \(property.indexId == nil ? "lost its index" : "gained an index")")
                } else if was != property && was.name == property.name {
                    changes.append("\(entity.name).\(property.name) changed")
                }
            }
            let uids = Set(entity.properties.map(\.id.uid))
            for property in before.properties where !uids.contains(property.id.uid) {
                changes.append("\(entity.name).\(property.name) was removed")
            }
            if before.relations != entity.relations { changes.append("the relations of \(entity.name) changed") }
            if before.indexes != entity.indexes { changes.append("the indexes over several properties of \(entity.name) changed") }
        }
        let uids = Set(new.entities.map(\.id.uid))
        for entity in old.entities where !uids.contains(entity.id.uid) { changes.append("\(entity.name) was removed") }
        return changes.isEmpty ? ["the model file's last IDs or retired UIDs differ"] : changes
    }

    /// The Swift files to scan, sorted (so that the output does not depend on directory order).
    func sourceFiles() throws -> [String] {
        let fileManager = FileManager.default
        var files: [String] = []
        for source in options.sources {
            var isDirectory: ObjCBool = false
            guard fileManager.fileExists(atPath: source, isDirectory: &isDirectory) else {
                throw GeneratorError("no such file or directory: \(source)")
            }
            if !isDirectory.boolValue {
                files.append(source)
                continue
            }
            guard let enumerator = fileManager.enumerator(atPath: source) else { continue }
            for case let relative as String in enumerator where relative.hasSuffix(".swift") && !relative.hasSuffix(".generated.swift") {
                files.append(source + "/" + relative)
            }
        }
        let output = URL(fileURLWithPath: options.outputPath).standardizedFileURL.path
        return files.filter { URL(fileURLWithPath: $0).standardizedFileURL.path != output }.sorted()
    }

    private func read(_ path: String) throws -> String {
        do {
            return String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
        } catch {
            throw GeneratorError("cannot read \(path): \(error.localizedDescription)")
        }
    }

    private func write(_ bytes: [UInt8], to path: String) throws {
        let url = URL(fileURLWithPath: path)
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url, options: .atomic)
        } catch {
            throw GeneratorError("cannot write \(path): \(error.localizedDescription)")
        }
    }
}
