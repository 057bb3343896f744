@_spi(Tools) import Cellar
@_spi(Tools) import CellarBrowseKit
import Foundation
import Hummingbird
import Testing

/// The browser in a real browser: headless Chromium loads the pages of a live server (on a free
/// port), its DOM is checked, and screenshots of the main pages are saved to the directory in
/// `CELLAR_BROWSE_SCREENSHOTS` (a temporary one by default).
///
/// Without `chromium` on the PATH the suite is skipped, unless `CI` is set: then it fails, so that
/// CI cannot skip it silently.
@Suite(.serialized) struct ChromiumTests {
    /// The Chromium executable on the PATH, if any.
    static let chromium: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            for name in ["chromium", "chromium-browser"] {
                let candidate = "\(directory)/\(name)"
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            }
        }
        return nil
    }()

    static let inCI = ProcessInfo.processInfo.environment["CI"] != nil

    static var screenshots: String {
        if let directory = ProcessInfo.processInfo.environment["CELLAR_BROWSE_SCREENSHOTS"], !directory.isEmpty { return directory }
        return NSTemporaryDirectory() + "cellar-browse-screenshots"
    }

    /// Runs Chromium with `arguments` (after the headless ones, with the profile in `profile`),
    /// waits for it (at most 90 s) and returns what it wrote to standard output.
    static func run(_ chromium: String, profile: String, _ arguments: [String]) async throws -> String {
        let output = profile + "-out-\(UUID().uuidString.prefix(8)).html"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: output) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: chromium)
        // --no-sandbox: the tests may run as root (in CI), where Chromium's sandbox refuses to start.
        process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                             "--disable-extensions", "--hide-scrollbars", "--user-data-dir=\(profile)"] + arguments
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardError = FileHandle.nullDevice
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in continuation.resume() }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        } as Void
        return (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    }

    @Test(.enabled(if: chromium != nil || inCI, "chromium is not installed (Debian: apt-get install chromium); set CI to make this a failure"),
          .timeLimit(.minutes(5)))
    func pagesInHeadlessChromium() async throws {
        guard let chromium = Self.chromium else {
            Issue.record("CI is set but chromium is not on the PATH: the browser tests cannot be skipped in CI")
            return
        }
        let dir = TemporaryDirectory("chromium")
        defer { dir.remove() }
        let store = try makeLibrary(dir.path)
        let inspector = try StoreInspector(directoryPath: dir.path)
        defer { inspector.close() }
        let token = AccessToken.random()
        let shots = Self.screenshots
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        let profile = dir.path + "-profile"
        defer { try? FileManager.default.removeItem(atPath: profile) }

        try await LiveServer.serving(Browser(inspector: inspector, token: token).router()) { client in
            let base = client.url("")
            func dom(_ path: String, token withToken: Bool = true) async throws -> String {
                let url = base + path + (withToken ? (path.contains("?") ? "&" : "?") + "token=\(token)" : "")
                return try await Self.run(chromium, profile: profile, ["--dump-dom", url])
            }
            func screenshot(_ name: String, _ path: String) async throws {
                let url = base + path + (path.contains("?") ? "&" : "?") + "token=\(token)"
                let file = "\(shots)/browse-\(name).png"
                try? FileManager.default.removeItem(atPath: file)
                _ = try await Self.run(chromium, profile: profile, ["--screenshot=\(file)", "--window-size=1280,900", url])
                #expect(FileManager.default.fileExists(atPath: file), "no screenshot \(file)")
            }

            // Without the token: the 403 text, no data.
            let denied = try await dom("/entities/Book", token: false)
            #expect(denied.contains("403 Forbidden") && !denied.contains("Book 1"))

            // The entity list, with counts and links.
            let entities = try await dom("/")
            #expect(entities.contains("<a href=\"/entities/Book\">Book</a>"))
            #expect(entities.contains("<td class=\"num\">13</td>"))

            // The table: a row per book; the markup in book 13's title stays text.
            let table = try await dom("/entities/Book?sort=year&order=desc")
            #expect(table.contains("<tr data-id=\"3\">") && table.contains("Book 3"))
            #expect(table.contains("&lt;script&gt;alert('x')&lt;/script&gt; &amp; more") && !table.contains("<script>"))
            #expect(table.range(of: "data-id=\"13\"")!.lowerBound < table.range(of: "data-id=\"12\"")!.lowerBound)

            // A filter, as the form submits it.
            let filtered = try await dom("/entities/Book?filter=title+startsWith+%22Book+1%22")
            #expect(filtered.contains("of 4 matching") && filtered.contains("data-id=\"10\"") && !filtered.contains("data-id=\"2\""))

            // The object page reached through the href of the table's link. Each Chromium run is a
            // new browser session, without the session cookie of the last one: the token goes on
            // the href (the cookie is checked in RouteTests).
            let href = try #require(Self.href(after: "<tr data-id=\"3\">", in: table))
            #expect(href == "/entities/Book/3")
            let book = try await dom(href)
            #expect(book.contains("<h1>Book 3</h1>") && book.contains("href=\"/entities/Author/1\""))
            let authorHref = try #require(Self.href(after: "<td>author</td>", in: book))
            #expect(authorHref == "/entities/Author/1")
            let author = try await dom(authorHref)
            #expect(author.contains("<h1>Author 1</h1>") && author.contains("Ada"))

            // A bad filter: its message in the page.
            let bad = try await dom("/entities/Book?filter=year+%3E%3E+3")
            #expect(bad.contains("id=\"error\"") && bad.contains("filter, at character"))

            // A writer's commit shows on reload.
            try store.box(for: Book.self).put(Book("Fresh arrival", year: 2026, rating: 5))
            #expect(try await dom("/entities/Book").contains("Fresh arrival"))

            let health = try await dom("/health")
            #expect(health.contains("Garbage share") && health.contains("<td>none</td>"))

            try await screenshot("entities", "/")
            try await screenshot("table", "/entities/Book?sort=year&order=desc&size=10")
            try await screenshot("object", "/entities/Book/3")
            try await screenshot("filter-error", "/entities/Book?filter=year+%3E%3E+3")
            try await screenshot("health", "/health")
        }
        _ = store
    }

    /// The first link's href after `marker` in the DOM text (entities decoded as Chromium writes
    /// them: `&amp;` only).
    static func href(after marker: String, in html: String) -> String? {
        guard let start = html.range(of: marker),
              let link = html.range(of: "href=\"", range: start.upperBound..<html.endIndex),
              let end = html[link.upperBound...].firstIndex(of: "\"") else { return nil }
        return String(html[link.upperBound..<end]).replacingOccurrences(of: "&amp;", with: "&")
    }
}
