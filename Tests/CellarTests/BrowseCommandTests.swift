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
            try FileManager.default.copyItem(atPath: CellarToolTests.toolPath, toPath: tool)
        }
        return try CellarToolTests.run(["browse"] + arguments, onlyEnvironment: ["PATH": path, "HOME": directory], in: directory, tool: tool)
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
        let script = "#!/bin/sh\necho \"on PATH: $*\"\nexit 3\n"
        _ = FileManager.default.createFile(atPath: bin + "/cellar-browse", contents: Data(script.utf8), attributes: [.posixPermissions: 0o755])
        let onPath = try Self.browse(["store dir", "--port", "8123", "--host", "::1"], in: dir.path, path: bin)
        #expect(onPath.status == 3 && onPath.out == "on PATH: store dir --port 8123 --host ::1\n", "\(onPath)")

        let built = dir.path + "/Tools/CellarBrowse/.build/release"
        try FileManager.default.createDirectory(atPath: built, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: built + "/cellar-browse", contents: Data("#!/bin/sh\necho \"built: $*\"\n".utf8),
                                       attributes: [.posixPermissions: 0o755])
        let inTree = try Self.browse(["s", "--writable"], in: dir.path, path: dir.path + "/nothing-here")
        #expect(inTree.status == 0 && inTree.out == "built: s --writable\n", "\(inTree)")

        // One next to the tool comes first.
        _ = FileManager.default.createFile(atPath: dir.path + "/tool/cellar-browse", contents: Data("#!/bin/sh\necho \"next: $*\"\n".utf8),
                                           attributes: [.posixPermissions: 0o755])
        let next = try Self.browse(["s"], in: dir.path, path: bin)
        #expect(next.status == 0 && next.out == "next: s\n", "\(next)")
    }
}
