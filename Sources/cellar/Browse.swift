import ArgumentParser
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `cellar browse <directory> [--port N] [--host H]`: runs the data browser, `cellar-browse`, with
/// the same arguments. The browser is a package of its own (Tools/CellarBrowse), so that the
/// `cellar` tool and the library build no web server.
struct Browse: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Browse a store in a web browser, read-only (runs cellar-browse from Tools/CellarBrowse).",
        discussion: """
            Runs cellar-browse with the same arguments: the one next to this tool, else the one on the PATH, else \
            Tools/CellarBrowse/.build/debug/cellar-browse or .build/release/cellar-browse under the current directory. \
            `cellar browse --help` shows its options. Build it with `swift build --package-path Tools/CellarBrowse`.
            """)

    @Argument(parsing: .captureForPassthrough, help: "The store's directory, then cellar-browse's options (--port N, --host H).")
    var arguments: [String] = []

    func run() throws {
        guard let browser = Self.locate() else {
            FileHandle.standardError.write(Data("""
                cellar browse: cellar-browse was not found (next to cellar, on the PATH, or in Tools/CellarBrowse/.build).
                Build it from the repository's root with:
                    swift build --package-path Tools/CellarBrowse
                then run `cellar browse` there again (or put Tools/CellarBrowse/.build/debug on the PATH).

                """.utf8))
            throw ExitCode.failure
        }
        // Replaces this process: the browser gets the terminal, the signals and the exit status.
        let argv = ([browser] + arguments).map { strdup($0) } + [nil]
        execv(browser, argv)
        throw ToolError("could not run \(browser): \(String(cString: strerror(errno)))")
    }

    /// Where `cellar-browse` is, looked for in the order the discussion gives.
    static func locate() -> String? {
        let fileManager = FileManager.default
        var candidates: [String] = []
        if let tool = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            candidates.append(tool.deletingLastPathComponent().appendingPathComponent("cellar-browse").path)
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        candidates += path.split(separator: ":").map { "\($0)/cellar-browse" }
        let here = fileManager.currentDirectoryPath
        candidates += ["debug", "release"].map { "\(here)/Tools/CellarBrowse/.build/\($0)/cellar-browse" }
        return candidates.first { fileManager.isExecutableFile(atPath: $0) }
    }
}
