import Cellar
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The `cellar-browse` executable as a user runs it: in a process of its own, over a store this
/// process keeps writing (the writer never notices the reader); it prints the URL with the token,
/// and a reload shows the writer's newest commit.
@Suite struct ExecutableTests {
    /// The executable sits next to the test binary in the build folder.
    static var executable: String {
        let me = CommandLine.arguments[0]
        let folder = me.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return (folder.isEmpty ? "." : folder) + "/cellar-browse"
    }

    static func fetch(_ url: String) async throws -> (Int, String) {
        let (data, response) = try await URLSession.shared.data(from: URL(string: url)!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    @Test(.timeLimit(.minutes(1))) func servesAStoreAnotherProcessWrites() async throws {
        let dir = TemporaryDirectory("executable")
        defer { dir.remove() }
        let store = try makeLibrary(dir.path)
        let books = store.box(for: Book.self)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.executable)
        process.arguments = [dir.path, "--port", "0"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { process.terminate(); process.waitUntilExit() }

        // The URL is the second line it prints.
        var printed = ""
        while !printed.contains("?token=") || !printed.hasSuffix("\n") {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            printed += String(decoding: chunk, as: UTF8.self)
        }
        let url = try #require(printed.split(separator: "\n").last.map(String.init))
        #expect(url.hasPrefix("http://127.0.0.1:") && url.contains("/?token="))
        let token = try #require(url.split(separator: "=").last)
        #expect(token.count == 32 && token.allSatisfy(\.isHexDigit))
        let base = String(url.prefix { $0 != "?" })

        #expect(try await Self.fetch(base + "entities/Book").0 == 403)
        let before = try await Self.fetch(url)
        #expect(before.0 == 200 && before.1.contains("<td class=\"num\">13</td>"))
        // This process writes on; the server, another process, follows at the next page.
        try books.put(Book("Written meanwhile", year: 2026, rating: 4))
        let after = try await Self.fetch(base + "entities/Book?token=" + token)
        #expect(after.0 == 200 && after.1.contains("Written meanwhile"))
        try books.put(Book("And one more", year: 2026, rating: nil))
        #expect(try books.count() == 15)
        #expect(try await Self.fetch(url).1.contains("<td class=\"num\">15</td>"))
    }
}
