import CellarTestSupport
import Foundation
import Testing

/// `cellar browse`: it runs `cellar-browse` with its arguments, or says how to build it.
@Suite struct BrowseCommandTests {
    /// Runs `cellar browse` with `arguments` in `directory`, with only `path` as the PATH. The
    /// tool runs from a copy in `directory`/tool: a `cellar-browse` next to the built tool (the
    /// CI step builds one there) would be found first.
    static func browse(_ arguments: [String], in directory: String, path: String) throws -> (status: Int32, out: String, err: String) {
        let tool = directory + "/tool/cellar"
        if !FileManager.default.fileExists(atPath: tool) {
            try FileManager.default.createDirectory(atPath: directory + "/tool", withIntermediateDirectories: true)
            try installExecutable(from: CellarToolTests.toolPath, at: tool)
        }
        return try CellarToolTests.run(["browse"] + arguments, onlyEnvironment: ["PATH": path, "HOME": directory], in: directory, tool: tool)
    }

    /// Puts a copy of `source` at `path`, executable, written by an `install` child process.
    /// Written from this process, the new file would be open for writing here for a moment; a
    /// process another test forks in that moment holds that descriptor until its `exec`, and
    /// running the file meanwhile fails with "Text file busy" (ETXTBSY). The child's descriptor
    /// is in no process this one forks.
    static func installExecutable(from source: String, at path: String) throws {
        let install = try CellarToolTests.run(["install", "-m", "755", source, path], tool: "/usr/bin/env")
        guard install.status == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: install.err])
        }
    }

    /// Puts a shell script with `text` at `path`, executable (see `installExecutable`: the file
    /// this process writes is a staging copy that is never run).
    static func installScript(_ text: String, at path: String) throws {
        let staging = path + ".staging"
        guard FileManager.default.createFile(atPath: staging, contents: Data(text.utf8)) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: staging])
        }
        defer { try? FileManager.default.removeItem(atPath: staging) }
        try installExecutable(from: staging, at: path)
    }

    @Test func withoutTheBrowserItSaysHowToBuildIt() throws {
        let dir = TestDirectory("browse-missing")
        defer { dir.remove() }
        let result = try Self.browse(["some-store"], in: dir.path, path: dir.path + "/nothing-here")
        #expect(result.status == 1)
        #expect(result.err.contains("swift build --package-path Tools/CellarBrowse"), "\(result.err)")
    }

    @Test func itRunsTheBrowserWithTheSameArguments() throws {
        let dir = TestDirectory("browse-found")
        defer { dir.remove() }
        // A stand-in browser on the PATH that prints its arguments, then one under
        // Tools/CellarBrowse/.build in the current directory, then one next to the tool.
        let bin = dir.path + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try Self.installScript("#!/bin/sh\necho \"on PATH: $*\"\nexit 3\n", at: bin + "/cellar-browse")
        let onPath = try Self.browse(["store dir", "--port", "8123", "--host", "::1"], in: dir.path, path: bin)
        #expect(onPath.status == 3 && onPath.out == "on PATH: store dir --port 8123 --host ::1\n", "\(onPath)")

        let built = dir.path + "/Tools/CellarBrowse/.build/release"
        try FileManager.default.createDirectory(atPath: built, withIntermediateDirectories: true)
        try Self.installScript("#!/bin/sh\necho \"built: $*\"\n", at: built + "/cellar-browse")
        let inTree = try Self.browse(["s", "--writable"], in: dir.path, path: dir.path + "/nothing-here")
        #expect(inTree.status == 0 && inTree.out == "built: s --writable\n", "\(inTree)")

        // One next to the tool comes first.
        try Self.installScript("#!/bin/sh\necho \"next: $*\"\n", at: dir.path + "/tool/cellar-browse")
        let next = try Self.browse(["s"], in: dir.path, path: bin)
        #expect(next.status == 0 && next.out == "next: s\n", "\(next)")
    }
}
