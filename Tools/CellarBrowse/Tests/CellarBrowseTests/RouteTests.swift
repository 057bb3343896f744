@_spi(Tools) import Cellar
import CellarStorage
@_spi(Tools) @testable import CellarBrowseKit
import Foundation
import Hummingbird
import Testing

/// The browser's pages, served on a local port (`LiveServer`): the token, every page, sorting,
/// paging, filters and their errors, validation, links, escaping, no writes, and a writer's
/// commits seen on reload.
@Suite struct RouteTests {
    static let token = AccessToken(value: "0123456789abcdef0123456789abcdef")

    /// Runs `body` with a browser over a fresh library store, served for its length (the store
    /// stays open for writing during `body`).
    static func withBrowser(_ label: String, _ body: @Sendable (LiveServer, Store) async throws -> Void) async throws {
        let dir = TemporaryDirectory(label)
        defer { dir.remove() }
        let store = try makeLibrary(dir.path)
        let inspector = try StoreInspector(directoryPath: dir.path)
        defer { inspector.close() }
        let browser = Browser(inspector: inspector, token: token, cookieSuffix: "test")
        try await LiveServer.serving(browser.router()) { client in try await body(client, store) }
        _ = store
    }

    /// GET `path` with the token (appended to its query); the status and the body.
    static func get(_ client: LiveServer, _ path: String, method: HTTPRequest.Method = .get,
                    token: String? = RouteTests.token.value) async throws -> (HTTPResponse.Status, String) {
        var uri = path
        if let token { uri += (path.contains("?") ? "&" : "?") + "token=" + token }
        let response = try await client.execute(uri, method: method)
        return (response.status, response.body)
    }

    /// The ids of the object table's rows, in order.
    static func rowIds(_ html: String) -> [Int] {
        html.components(separatedBy: "<tr data-id=\"").dropFirst().compactMap { Int($0.prefix { $0 != "\"" }) }
    }

    @Test func everyRequestNeedsTheToken() async throws {
        try await Self.withBrowser("token") { client, _ in
            for path in ["/", "/entities/Book", "/entities/Book/1", "/model", "/health", "/nowhere"] {
                #expect(try await Self.get(client, path, token: nil).0 == .forbidden, "\(path)")
                #expect(try await Self.get(client, path, token: "0123456789abcdef0123456789abcdee").0 == .forbidden, "\(path)")
            }
            let forbidden = try await Self.get(client, "/entities/Book", token: nil).1
            #expect(!forbidden.contains("Book 1"))
            // The first visit sets the cookie; the cookie alone lets later requests in.
            let cookie = try await client.execute("/?token=\(Self.token.value)").header("Set-Cookie")
            #expect(cookie?.hasPrefix("cellar_browse_test=\(Self.token.value)") == true)
            #expect(cookie?.contains("HttpOnly") == true && cookie?.contains("SameSite=Strict") == true)
            let withCookie = try await client.execute("/entities/Book", headers: ["Cookie": "cellar_browse_test=\(Self.token.value)"]).status
            #expect(withCookie == .ok)
            let wrongCookie = try await client.execute("/", headers: ["Cookie": "cellar_browse_test=nope"]).status
            #expect(wrongCookie == .forbidden)
            // Unknown pages: 404 with the token.
            #expect(try await Self.get(client, "/nowhere").0 == .notFound)
        }
    }

    @Test func entitiesModelAndHealth() async throws {
        try await Self.withBrowser("pages") { client, _ in
            let (status, entities) = try await Self.get(client, "/")
            #expect(status == .ok)
            #expect(entities.contains("<a href=\"/entities/Book\">Book</a></td><td class=\"num\">13</td>"))
            #expect(entities.contains("<a href=\"/entities/Author\">Author</a></td><td class=\"num\">3</td>"))
            #expect(entities.contains("author → Author") && entities.contains("tags → Tag"))
            let model = try await Self.get(client, "/model")
            #expect(model.0 == .ok && model.1.contains("&quot;name&quot;: &quot;Book&quot;"))
            let health = try await Self.get(client, "/health")
            #expect(health.0 == .ok && health.1.contains("<tr id=\"health-encrypted\"><th>Encryption</th><td>none</td>"))
            #expect(try await Self.get(client, "/", method: .head).0 == .ok)
        }
    }

    @Test func tablesSortAndPage() async throws {
        try await Self.withBrowser("table") { client, _ in
            let (status, table) = try await Self.get(client, "/entities/Book")
            #expect(status == .ok && Self.rowIds(table) == Array(1...13))
            #expect(table.contains("Objects 1–13 of 13"))
            // Sorted by year, largest first: book 13 (2000), then 12, 11, …
            let byYear = try await Self.get(client, "/entities/Book?sort=year&order=desc&size=4")
            #expect(Self.rowIds(byYear.1) == [13, 12, 11, 10])
            #expect(byYear.1.contains("year ▼") && byYear.1.contains("decoded 13 objects"))
            // Clicking the sorted column's header again sorts the other way.
            #expect(byYear.1.contains("href=\"/entities/Book?sort=year&amp;size=4\""))
            // Ratings ascending: none first (4, 8, 12), then 0 (5, 10), then 1 (1, 6, 11, 13).
            let byRating = try await Self.get(client, "/entities/Book?sort=rating")
            #expect(Self.rowIds(byRating.1) == [4, 8, 12, 5, 10, 1, 6, 11, 13, 2, 7, 3, 9])
            // Pages of 5: the second holds 6…10 with links both ways.
            let second = try await Self.get(client, "/entities/Book?size=5&page=2")
            #expect(Self.rowIds(second.1) == Array(6...10))
            #expect(second.1.contains("id=\"previous\" href=\"/entities/Book?size=5\""))
            #expect(second.1.contains("id=\"next\" href=\"/entities/Book?page=3&amp;size=5\""))
            let last = try await Self.get(client, "/entities/Book?size=5&page=3")
            #expect(Self.rowIds(last.1) == [11, 12, 13] && !last.1.contains("id=\"next\""))
            #expect(Self.rowIds(try await Self.get(client, "/entities/Book?size=5&page=9").1).isEmpty)
        }
    }

    @Test func filtersAndTheirErrors() async throws {
        try await Self.withBrowser("filter") { client, _ in
            // As a form submits it: spaces as +, quotes percent-encoded.
            let (status, page) = try await Self.get(client, "/entities/Book?filter=title+startsWith+%22Book+1%22")
            #expect(status == .ok && Self.rowIds(page) == [1, 10, 11, 12])
            #expect(page.contains("of 4 matching") && page.contains("value=\"title startsWith &quot;Book 1&quot;\""))
            let years = try await Self.get(client, "/entities/Book?filter=year%20%3E%201980%20and%20rating%20is%20not%20null&sort=year")
            #expect(Self.rowIds(years.1) == [11, 13])
            let bad = try await Self.get(client, "/entities/Book?filter=title+startsWith")
            #expect(bad.0 == .badRequest)
            #expect(bad.1.contains("id=\"error\"") && bad.1.contains("filter, at character"))
            #expect(bad.1.contains("id=\"filter-form\""))
            let unknown = try await Self.get(client, "/entities/Book?filter=colour+%3D%3D+1")
            #expect(unknown.0 == .badRequest && unknown.1.contains("colour"))
        }
    }

    @Test func everyInputIsValidated() async throws {
        try await Self.withBrowser("validate") { client, _ in
            #expect(try await Self.get(client, "/entities/Nope").0 == .notFound)
            #expect(try await Self.get(client, "/entities/Nope/1").0 == .notFound)
            #expect(try await Self.get(client, "/entities/Book/999").0 == .notFound)
            for bad in ["/entities/Book/abc", "/entities/Book/0", "/entities/Book/-1", "/entities/Book/99999999999999999999",
                        "/entities/Book?page=0", "/entities/Book?page=x", "/entities/Book?size=0", "/entities/Book?size=501",
                        "/entities/Book?order=up", "/entities/Book?sort=colour", "/entities/Book?sort=tags",
                        "/entities/Book?after=x", "/entities/Book?sort=title&after=3", "/entities/Book?filter=%FF"] {
                let (status, body) = try await Self.get(client, bad)
                #expect(status == .badRequest, "\(bad): \(status)")
                #expect(body.contains("id=\"error\""), "\(bad)")
            }
            let after = try await Self.get(client, "/entities/Book?after=10")
            #expect(after.0 == .ok && Self.rowIds(after.1) == [11, 12, 13])
        }
    }

    @Test func objectPagesLinkTheirRelations() async throws {
        try await Self.withBrowser("object") { client, _ in
            // Book 3: by Ada (n % 3 == 0), tagged classic (odd) and systems (n % 3 == 0).
            let (status, book) = try await Self.get(client, "/entities/Book/3")
            #expect(status == .ok && book.contains("Book 3"))
            #expect(book.contains("<a class=\"link\" href=\"/entities/Author/1\">1</a>"))
            #expect(book.contains("<a class=\"link\" href=\"/entities/Tag/1\">1</a>, <a class=\"link\" href=\"/entities/Tag/2\">2</a>"))
            let author = try await Self.get(client, "/entities/Author/1")
            #expect(author.0 == .ok && author.1.contains("Ada") && author.1.contains("1815"))
            // In the table too: the author column links to the author.
            let table = try await Self.get(client, "/entities/Book")
            #expect(table.1.contains("<a class=\"object\" href=\"/entities/Book/3\">3</a>"))
            #expect(table.1.contains("<a class=\"link\" href=\"/entities/Author/2\">2</a>"))
        }
    }

    @Test func markupInValuesIsEscaped() async throws {
        try await Self.withBrowser("escape") { client, _ in
            for path in ["/entities/Book/13", "/entities/Book", "/entities/Book?filter=title+contains+%22%3Cscript%22"] {
                let (status, html) = try await Self.get(client, path)
                #expect(status == .ok)
                #expect(!html.contains("<script"), "\(path)")
                #expect(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; more"), "\(path)")
            }
            // A filter's text comes back escaped in the form and in the error.
            let bad = try await Self.get(client, "/entities/Book?filter=%3Cscript%3E")
            #expect(bad.0 == .badRequest && !bad.1.contains("<script") && bad.1.contains("&lt;script&gt;"))
        }
    }

    @Test func noMethodButGetAndHeadSucceeds() async throws {
        try await Self.withBrowser("methods") { client, _ in
            for path in ["/", "/entities/Book", "/entities/Book/1", "/model", "/health", "/entities/Book/1/edit"] {
                for method in [HTTPRequest.Method.post, .put, .delete, .patch, .options] {
                    let status = try await Self.get(client, path, method: method).0
                    #expect(!(200..<300).contains(status.code), "\(method) \(path): \(status)")
                    #expect(status == .methodNotAllowed, "\(method) \(path): \(status)")
                }
            }
        }
    }

    @Test func reloadsShowTheWritersNewCommits() async throws {
        try await Self.withBrowser("follow") { client, store in
            let commit = try await Self.get(client, "/health").1
            #expect(!(try await Self.get(client, "/entities/Book").1.contains("Fresh arrival")))
            try store.box(for: Book.self).put(Book("Fresh arrival", year: 2026, rating: 5))
            let table = try await Self.get(client, "/entities/Book").1
            #expect(table.contains("Fresh arrival") && Self.rowIds(table).last == 14)
            #expect(try await Self.get(client, "/").1.contains("<td class=\"num\">14</td>"))
            #expect(try await Self.get(client, "/health").1 != commit)
            _ = try store.box(for: Book.self).remove(14)
            #expect(try await Self.get(client, "/entities/Book/14").0 == .notFound)
        }
    }

    @Test func encryptedStoresTakeTheKeyFromTheEnvironment() throws {
        let dir = TemporaryDirectory("encrypted")
        defer { dir.remove() }
        let hex = String(repeating: "ab", count: 32)
        do {
            let key = try #require(try storeKey(environment: ["CELLAR_KEY": hex]))
            _ = try makeLibrary(dir.path, options: StoreOptions(durability: .none, encryptionKey: key))
        }
        #expect(throws: (any Error).self) { try StoreInspector(directoryPath: dir.path) }
        let inspector = try StoreInspector(directoryPath: dir.path, encryptionKey: try storeKey(environment: ["CELLAR_KEY": hex]))
        defer { inspector.close() }
        #expect(try inspector.health().isEncrypted && inspector.entity(named: "Book")?.objectCount == 13)
        #expect(throws: BrowseError.self) { try storeKey(environment: ["CELLAR_KEY": "abc"]) }
        #expect(throws: BrowseError.self) { try storeKey(environment: ["CELLAR_PASSPHRASE": ""]) }
        #expect(try storeKey(environment: ["CELLAR_PASSPHRASE": "secret"]) != nil && storeKey(environment: [:]) == nil)
    }

    @Test func queriesDecodeAsFormsEncodeThem() {
        #expect(HTML.queryParameters("a=1&b=x+y%2B%22&c&a=2") == ["a": "1", "b": "x y+\"", "c": ""])
        #expect(HTML.queryParameters("a=%E2%9C%93") == ["a": "✓"])
        #expect(HTML.queryParameters("a=%FF") == nil)
        #expect(HTML.url("/e", [("filter", "a b+\"&"), ("sort", nil)]) == "/e?filter=a%20b%2B%22%26")
        #expect(HTML.escape("<a href='x'>&\"") == "&lt;a href=&#39;x&#39;&gt;&amp;&quot;")
        let token = AccessToken.random()
        #expect(token.value.count == 32 && token.value.allSatisfy(\.isHexDigit) && token != AccessToken.random())
        #expect(token.matches(token.value[...]) && !token.matches(nil) && !token.matches(token.value.dropLast()))
    }
}
