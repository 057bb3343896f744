@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// The `cellar` tool's commands, run as a process on stores the tests make: `info`, `model`, and
/// how it reports errors and wrong arguments.
@Suite struct CellarToolTests {
    /// The tool sits next to the test binary in the build folder.
    static var toolPath: String {
        let me = CommandLine.arguments[0]
        let folder = me.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return (folder.isEmpty ? "." : folder) + "/cellar"
    }

    /// Runs the tool with `arguments`; returns its exit status and what it printed.
    /// `environment` adds to this process's variables; `onlyEnvironment`, when given, is the
    /// whole environment instead. `tool` is the binary to run (the built tool by default).
    static func run(_ arguments: [String], environment: [String: String] = [:], onlyEnvironment: [String: String]? = nil,
                    in directory: String? = nil, tool: String = toolPath) throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        if let onlyEnvironment {
            process.environment = onlyEnvironment
        } else if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
    }

    /// A closed store of the query test model: 3 authors and 40 items.
    static func makeStore(_ dir: TestDirectory) throws -> Cellar.Model { try makeStore(at: dir.path) }

    static func makeStore(at path: String) throws -> Cellar.Model {
        let store = try Store(directoryPath: path, model: queryModel(), options: StoreOptions(durability: .none))
        let authors = try store.box(for: QAuthor.self).put((0..<3).map { QAuthor("a\($0)", email: "\($0)@x") }).map(\.value)
        var rng = SplitMix64(seed: 5)
        let items = (0..<40).map { _ -> QItem in
            let item = QItem()
            QueryDifferentialTests.randomItem(&rng, into: item, authors: authors)
            return item
        }
        try store.box(for: QItem.self).put(items)
        let model = try store.engine.read { try StorageLayout.storedModel(in: $0)! }
        store.close()
        return model
    }

    @Test("cellar model prints the stored model as a model file that reads back as the same model")
    func modelRecoversTheStoredModel() throws {
        let dir = TestDirectory("tool-model")
        defer { dir.remove() }
        let stored = try Self.makeStore(dir)
        let (status, out, err) = try Self.run(["model", dir.path])
        #expect(status == 0, "\(err)")
        #expect(out.hasPrefix("{\n  \"_note1\""), "a model file, with its notes first")
        #expect(try Cellar.Model(json: Array(out.utf8), file: "output") == stored)
    }

    @Test("cellar info --json counts each entity's objects and names its indexes; the text form says the same")
    func infoCountsObjectsAndIndexes() throws {
        let dir = TestDirectory("tool-info")
        defer { dir.remove() }
        _ = try Self.makeStore(dir)
        let (status, out, err) = try Self.run(["info", "--json", dir.path])
        #expect(status == 0, "\(err)")
        let info = try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])
        #expect(info["hasModel"] as? Bool == true)
        #expect((info["lastCommit"] as? Int ?? 0) >= 2)
        let share = try #require(info["garbageShare"] as? Double)
        #expect(share >= 0 && share < 1)
        let entities = try #require(info["entities"] as? [[String: Any]])
        let byName = Dictionary(uniqueKeysWithValues: entities.map { ($0["name"] as! String, $0) })
        #expect(byName["QItem"]?["objects"] as? Int == 40)
        #expect(byName["QAuthor"]?["objects"] as? Int == 3)
        #expect(info["formatVersion"] as? Int == 1)
        // Bytes of keys and records: each author's key (8 bytes) and a record holding its name and email.
        let authorBytes = try #require(byName["QAuthor"]?["bytes"] as? Int)
        #expect(authorBytes > 3 * (8 + 6) && authorBytes < 3 * 200, "\(authorBytes)")
        #expect((byName["QItem"]?["bytes"] as? Int ?? 0) > authorBytes)
        let indexes = try #require(byName["QItem"]?["indexes"] as? [[String: Any]])
        let kinds = Dictionary(uniqueKeysWithValues: indexes.map { ($0["property"] as! String, $0["kind"] as! String) })
        #expect(kinds["title"] == "value" && kinds["score"] == "value")
        #expect(kinds["text"]?.hasPrefix("hash") == true, "\(kinds)")
        #expect(indexes.allSatisfy { $0["built"] as? Bool == true })
        let emailIndex = (byName["QAuthor"]?["indexes"] as? [[String: Any]])?.first { $0["property"] as? String == "email" }
        #expect(emailIndex?["unique"] as? Bool == true)

        let text = try Self.run(["info", dir.path])
        #expect(text.status == 0)
        #expect(text.out.contains("QItem (") && text.out.contains("40 objects, "), "\(text.out)")
        #expect(text.out.contains("format     version 1"), "\(text.out)")
        #expect(text.out.contains("% garbage"))
    }

    @Test("a store without a model, a missing store, and a wrong command: errors with a reason and a non-zero status")
    func errorsSayWhy() throws {
        let dir = TestDirectory("tool-engine-only")
        defer { dir.remove() }
        let engine = try StorageEngine(directory: dir.path)
        try engine.write { txn in try txn.put(txn.tree("t")!, key: [1], value: [2]) }
        engine.close()
        let noModel = try Self.run(["model", dir.path])
        #expect(noModel.status == 1 && noModel.err.contains("holds no model"), "\(noModel)")
        let info = try Self.run(["info", dir.path])
        #expect(info.status == 0 && info.out.contains("model      none"), "\(info)")
        let missing = try Self.run(["info", dir.path + "/missing"])
        #expect(missing.status == 1 && missing.err.hasPrefix("Error: ") && missing.err.contains("missing"), "\(missing)")
        let wrong = try Self.run(["model"])
        #expect(wrong.status == 64 && wrong.err.contains("Usage: cellar model <directory>"), "\(wrong)")
        let word = try Self.run(["compact", dir.path, "brotli"])
        #expect(word.status == 1 && word.err.contains("unknown compression brotli"), "\(word)")
        let help = try Self.run(["--help"])
        #expect(help.status == 0 && ["demo", "info, inspect", "model", "verify", "compact"].allSatisfy(help.out.contains), "\(help.out)")
    }

    @Test("cellar dump prints each object as a JSON line or in a table per entity; a wrong entity says which there are")
    func dumpPrintsTheObjects() throws {
        let dir = TestDirectory("tool-dump")
        defer { dir.remove() }
        _ = try Self.makeStore(dir)
        let lines = try Self.run(["dump", dir.path, "--format", "jsonl"])
        #expect(lines.status == 0, "\(lines)")
        let objects = try lines.out.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(objects.count == 43, "3 authors and 40 items: \(objects.count)")
        #expect(objects.filter { $0["entity"] as? String == "QAuthor" }.count == 3)
        let author = try #require(objects.first { $0["entity"] as? String == "QAuthor" }?["object"] as? [String: Any])
        #expect(author["id"] as? Int == 1 && author["name"] as? String == "a0" && author["email"] as? String == "0@x", "\(author)")

        let table = try Self.run(["dump", dir.path, "--entity", "QItem", "--limit", "5"])
        #expect(table.status == 0 && table.out.hasPrefix("QItem (5 shown)"), "\(table)")
        #expect(table.out.split(separator: "\n").count == 3 + 5)
        let wrong = try Self.run(["dump", dir.path, "--entity", "Nope"])
        #expect(wrong.status == 1 && wrong.err.contains("no entity named Nope") && wrong.err.contains("QItem"), "\(wrong)")
        #expect(try Self.run(["dump", dir.path, "--limit", "0"]).status == 64)
        // --where: the authors with a name, by a condition; a bad one says what is wrong.
        let filtered = try Self.run(["dump", dir.path, "--format", "jsonl", "--where", "name == 'a1' or email endsWith '2@x'"])
        #expect(filtered.status == 0 && filtered.out.split(separator: "\n").count == 2, "\(filtered)")
        let bad = try Self.run(["dump", dir.path, "--where", "name =="])
        #expect(bad.status == 1 && bad.err.contains("expected a value"), "\(bad)")
    }

    @Test("verify and compact report progress (rate and time left) on standard error; not when it is no terminal")
    func progressOfLongCommands() throws {
        let dir = TestDirectory("tool-progress")
        defer { dir.remove() }
        _ = try Self.makeStore(dir)
        let verify = try Self.run(["verify", dir.path], environment: ["CELLAR_PROGRESS": "always"])
        #expect(verify.status == 0 && verify.err.contains("verifying 100% [####################]") && verify.err.contains("/s"), "\(verify)")
        // Then the objects against the model (40 items, 3 authors), the indexes and relations.
        #expect(verify.err.contains("checking objects 100% [####################] 43 of 43"), "\(verify)")
        #expect(verify.err.contains("checking indexes and relations 100% [####################]"), "\(verify)")
        let compact = try Self.run(["compact", dir.path], environment: ["CELLAR_PROGRESS": "always"])
        #expect(compact.status == 0 && compact.err.contains("compacting 100% [####################]") && compact.err.contains(" left"),
                "\(compact)")
        // --keep-commits: the newest commits stay readable in the copy.
        let before = try Store(directoryPath: dir.path, model: queryModel(), options: StoreOptions(durability: .none))
        let items = before.box(for: QItem.self)
        var commits: [(id: UInt64, count: Int)] = []
        for n in 0..<4 {
            let item = QItem()
            item.title = "kept \(n)"
            try items.put(item)
            commits.append((before.lastCommitId, try items.count()))
        }
        before.close()
        let keeping = try Self.run(["compact", dir.path, "--keep-commits", "3"])
        #expect(keeping.status == 0, "\(keeping)")
        let after = try Store(directoryPath: dir.path, model: queryModel(), options: StoreOptions(durability: .none))
        #expect(try after.oldestReadableCommit()?.commit == commits[1].id)
        for commit in commits.dropFirst() {
            #expect(try after.read(asOf: .commit(commit.id)) { try after.box(for: QItem.self).count() } == commit.count)
        }
        after.close()
        #expect(try Self.run(["compact", dir.path, "--keep-commits", "0"]).status != 0)
        // Standard error is a pipe here: without the variable, no progress lines.
        let quiet = try Self.run(["verify", dir.path])
        #expect(quiet.status == 0 && !quiet.err.contains("verifying"), "\(quiet)")
    }

    @Test func compactSaysWhichUndoStepsItLeavesUnableToUndo() throws {
        let dir = TestDirectory("tool-undo-steps")
        defer { dir.remove() }
        let options = StoreOptions(durability: .none, changeHistory: true)
        var store = try Store(directoryPath: dir.path, model: queryModel(), options: options)
        let items = store.box(for: QItem.self)
        for title in ["a", "b"] { try store.write(actionName: "put \(title)") { _ = try items.put(UndoTests.item(title)) } }
        store.close()
        let compact = try Self.run(["compact", dir.path])
        #expect(compact.status == 0 && compact.out.contains("note: 2 undo steps name commits this compaction drops"), "\(compact)")
        store = try Store(directoryPath: dir.path, model: queryModel(), options: options)
        defer { store.close() }
        #expect(throws: CellarError.self) { try store.undo() }
        try store.clearUndoLog()
        // Without such steps, no note.
        store.close()
        let again = try Self.run(["compact", dir.path])
        #expect(again.status == 0 && !again.out.contains("undo steps"), "\(again)")
        store = try Store(directoryPath: dir.path, model: queryModel(), options: options)
    }

    @Test func encryptedStoresTakeTheKeyFromTheEnvironmentAndCompactToANewOne() throws {
        let dir = TestDirectory("tool-encrypted")
        defer { dir.remove() }
        let key = (0..<32).map { String(format: "%02x", $0 * 3) }.joined()
        let newKey = (0..<32).map { String(format: "%02x", 255 - $0) }.joined()
        let store = try Store(directoryPath: dir.path, model: queryModel(),
                              options: StoreOptions(durability: .none, encryptionKey: EncryptionKey(bytes: Self.hexBytes(key))))
        try store.box(for: QAuthor.self).put(QAuthor("someone", email: "s@x"))
        store.close()

        let refused = try Self.run(["info", dir.path])
        #expect(refused.status == 1 && refused.err.contains("is encrypted"), "\(refused)")
        let badHex = try Self.run(["info", dir.path], environment: ["CELLAR_KEY": "12ab"])
        #expect(badHex.status == 1 && badHex.err.contains("64 hexadecimal digits"), "\(badHex)")
        let wrong = try Self.run(["info", dir.path], environment: ["CELLAR_KEY": newKey])
        #expect(wrong.status == 1 && wrong.err.contains("does not open"), "\(wrong)")
        let info = try Self.run(["info", dir.path], environment: ["CELLAR_KEY": key])
        #expect(info.status == 0 && info.out.contains("encryption AES-256-GCM"), "\(info)")
        #expect(try Self.run(["verify", dir.path], environment: ["CELLAR_KEY": key]).status == 0)

        // A new key by compaction: the old one no longer opens it, the new one does.
        let compacted = try Self.run(["compact", dir.path, "--new-key"], environment: ["CELLAR_KEY": key, "CELLAR_NEW_KEY": newKey])
        #expect(compacted.status == 0, "\(compacted)")
        #expect(try Self.run(["info", dir.path], environment: ["CELLAR_KEY": key]).status == 1)
        #expect(try Self.run(["model", dir.path], environment: ["CELLAR_KEY": newKey]).status == 0)
        // And no key at all.
        #expect(try Self.run(["compact", dir.path, "--remove-encryption"], environment: ["CELLAR_KEY": newKey]).status == 0)
        let plain = try Self.run(["info", dir.path, "--json"])
        #expect(plain.status == 0 && plain.out.contains("\"encrypted\" : false"), "\(plain)")
    }

    @Test("cellar export and cellar import: a store through a file or a pipe, into an encrypted one, relative paths; bad lines by number")
    func exportAndImport() throws {
        let dir = TestDirectory("tool-export")
        defer { dir.remove() }
        _ = try Self.makeStore(at: dir.sub("source"))
        let key = (0..<32).map { String(format: "%02x", $0 * 7 % 256) }.joined()
        // Relative paths, from the directory the tool runs in.
        let exported = try Self.run(["export", "source", "--to", "all.jsonl"], environment: ["CELLAR_PROGRESS": "always"], in: dir.path)
        #expect(exported.status == 0 && exported.err.contains("exported 43 objects") && exported.err.contains("exporting 100%"), "\(exported)")
        let imported = try Self.run(["import", "copy", "--from", "all.jsonl", "--batch-size", "7"], environment: ["CELLAR_KEY": key], in: dir.path)
        #expect(imported.status == 0 && imported.err.contains("imported 43 objects from 45 lines in 7 transactions"), "\(imported)")
        let original = try Self.run(["dump", dir.sub("source"), "--format", "jsonl"])
        let copy = try Self.run(["dump", dir.sub("copy"), "--format", "jsonl"], environment: ["CELLAR_KEY": key])
        #expect(original.status == 0 && copy.status == 0 && copy.out == original.out && original.out.count > 1_000)
        #expect(try Self.run(["info", dir.sub("copy")]).status == 1)  // encrypted: no key, no look
        #expect(try Self.run(["verify", dir.sub("copy")], environment: ["CELLAR_KEY": key]).status == 0)

        // Standard output, one entity; a line broken in the second batch.
        let piped = try Self.run(["export", dir.sub("source"), "--entity", "QAuthor", "--to", "-"])
        var lines = piped.out.split(separator: "\n").map(String.init)
        #expect(piped.status == 0 && lines.count == 5 && lines[0].contains("\"format\":\"cellar-export\""), "\(piped)")
        lines[3] = lines[3].replacingOccurrences(of: "\"name\":", with: "\"name\":17,\"x\":")
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: dir.sub("broken.jsonl")))
        let broken = try Self.run(["import", dir.sub("broken"), "--from", dir.sub("broken.jsonl"), "--batch-size", "2"])
        #expect(broken.status == 1 && broken.err.contains("line 4: QAuthor.name: expected a string, found 17"), "\(broken)")
        let kept = try Self.run(["dump", dir.sub("broken"), "--format", "jsonl"])
        #expect(kept.out.split(separator: "\n").count == 2, "the first batch of 2 stays: \(kept)")
        #expect(try Self.run(["import", dir.sub("x"), "--from", "all.jsonl", "--batch-size", "0"]).status == 64)
    }

    static func hexBytes(_ text: String) -> [UInt8] {
        stride(from: 0, to: text.count, by: 2).map { i in
            UInt8(text[text.index(text.startIndex, offsetBy: i)..<text.index(text.startIndex, offsetBy: i + 2)], radix: 16)!
        }
    }
}
