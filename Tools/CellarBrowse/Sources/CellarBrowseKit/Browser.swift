@_spi(Tools) import Cellar
import Foundation
import Hummingbird

/// The data browser's web application over one store: GET (and HEAD) pages only, every request
/// checked for the access token.
///
/// Pages: `/` the entities with their object counts; `/entities/<name>` a page of objects
/// (`sort`, `order=asc|desc`, `filter`, `page`, `size`, `after`); `/entities/<name>/<id>` one
/// object with links to the objects its relations point to; `/model` the stored model as JSON;
/// `/health` size, garbage share, last commit, encryption.
public struct Browser: Sendable {
    /// The store, opened read-only.
    @_spi(Tools) public let inspector: StoreInspector
    /// The token a request must carry.
    public let token: AccessToken
    /// The name of the cookie the token is kept in after the first visit: one per server (a
    /// random suffix), so that two browsers on one host do not overwrite each other's.
    public let cookieName: String

    /// The most objects a page may hold (`size`).
    public static let maxPageSize = 500
    /// The longest filter accepted, in characters.
    public static let maxFilterLength = 2_000

    /// A browser over `inspector`'s store that lets in requests with `token`.
    @_spi(Tools) public init(inspector: StoreInspector, token: AccessToken, cookieSuffix: String = AccessToken.random().value.prefix(8).description) {
        self.inspector = inspector
        self.token = token
        cookieName = "cellar_browse_" + cookieSuffix
    }

    /// The router with the pages and the access check.
    public func router() -> Router<BasicRequestContext> {
        let router = Router(options: .autoGenerateHeadEndpoints)
        router.add(middleware: AccessMiddleware(browser: self))
        router.get("/") { _, _ in try self.render { try self.entitiesPage() } }
        router.get("/entities/:entity") { request, context in
            try self.render { try self.objectsPage(context.parameters.get("entity") ?? "", request.uri.query) }
        }
        router.get("/entities/:entity/:id") { _, context in
            try self.render { try self.objectPage(context.parameters.get("entity") ?? "", context.parameters.get("id") ?? "") }
        }
        router.get("/model") { _, _ in try self.render { try self.modelPage() } }
        router.get("/health") { _, _ in try self.render { try self.healthPage() } }
        return router
    }

    // MARK: - Responses

    /// An HTML page to send: its status, title and body.
    struct Page {
        var status: HTTPResponse.Status = .ok
        var title: String
        var body: String
    }

    /// A page that could not be made: its status and message (shown escaped).
    struct Failure: Error {
        var status: HTTPResponse.Status
        var message: String
        /// Shown above the message (the filter form, so that a bad filter can be fixed).
        var before: String = ""
    }

    func render(_ make: () throws -> Page) throws -> Response {
        do {
            return response(try make())
        } catch let failure as Failure {
            return errorResponse(failure.status, failure.message, before: failure.before)
        }
    }

    func response(_ page: Page) -> Response {
        let html = HTML.document(title: page.title, store: inspector.directoryPath, body: page.body)
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: page.status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    /// A page with `message` under a heading naming `status`.
    func errorResponse(_ status: HTTPResponse.Status, _ message: String, before: String = "") -> Response {
        response(Page(status: status, title: "\(status.code) \(status.reasonPhrase)",
                      body: before + "<div class=\"error\" id=\"error\">\(HTML.escape(message))</div>\n<p><a href=\"/\">Entities</a></p>"))
    }

    // MARK: - Pages

    func entitiesPage() throws -> Page {
        let entities = try inspector.entities()
        let health = try inspector.health()
        var body = "<p class=\"note\">Commit \(health.lastCommit). Reload to see newer commits of a writer.</p>\n"
        if entities.isEmpty {
            body += "<p id=\"empty\">The store holds no model: it is a store of the storage engine alone, with no objects to show.</p>"
            return Page(title: "Entities", body: body)
        }
        body += "<table id=\"entities\"><thead><tr><th>Entity</th><th>Objects</th><th>Properties</th><th>Relations</th></tr></thead><tbody>\n"
        for entity in entities {
            let properties = entity.properties.map { HTML.escape($0.name) + " <span class=\"muted\">" + HTML.escape($0.type) + "</span>" }
            let relations = entity.relations.map { HTML.escape($0.name) + " → " + HTML.escape($0.target ?? "?") }
                + entity.properties.compactMap { property in property.target.map { HTML.escape(property.name) + " → " + HTML.escape($0) } }
            body += "<tr><td><a href=\"\(HTML.escape(Self.entityURL(entity.name)))\">\(HTML.escape(entity.name))</a></td>"
            body += "<td class=\"num\">\(entity.objectCount)</td><td>\(properties.joined(separator: ", "))</td><td>\(relations.joined(separator: ", "))</td></tr>\n"
        }
        body += "</tbody></table>"
        return Page(title: "Entities", body: body)
    }

    static func entityURL(_ entity: String, _ parameters: [(String, String?)] = []) -> String {
        HTML.url("/entities/" + HTML.percentEncode(entity), parameters)
    }

    static func objectURL(_ entity: String, _ id: Id) -> String {
        "/entities/" + HTML.percentEncode(entity) + "/\(id)"
    }

    /// What the object table of an entity was asked for.
    struct TableQuery {
        var filter: String?
        var sort = "id"
        var descending = false
        var page = 1
        var size = 50
        var after: Id?

        func parameters(page: Int? = nil, sort: String? = nil, descending: Bool? = nil) -> [(String, String?)] {
            let sortName = sort ?? self.sort
            let down = descending ?? self.descending
            let number = page ?? self.page
            return [("filter", filter.flatMap { $0.isEmpty ? nil : $0 }), ("sort", sortName == "id" ? nil : sortName),
                    ("order", down ? "desc" : nil), ("page", number == 1 ? nil : String(number)), ("size", size == 50 ? nil : String(size))]
        }
    }

    /// Reads the table's query parameters; throws a 400 failure naming the first bad one.
    static func tableQuery(_ query: String?) throws -> TableQuery {
        guard let parameters = HTML.queryParameters(query) else {
            throw Failure(status: .badRequest, message: "the query is not valid percent-encoded UTF-8")
        }
        var table = TableQuery()
        func number(_ name: String, _ range: ClosedRange<Int>) throws -> Int? {
            guard let text = parameters[name] else { return nil }
            guard let value = Int(text), range.contains(value) else {
                throw Failure(status: .badRequest, message: "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not \"\(text)\"")
            }
            return value
        }
        table.page = try number("page", 1...10_000_000) ?? 1
        table.size = try number("size", 1...maxPageSize) ?? 50
        if let sort = parameters["sort"], !sort.isEmpty { table.sort = sort }
        switch parameters["order"] {
        case nil, "", "asc": table.descending = false
        case "desc": table.descending = true
        case let other?: throw Failure(status: .badRequest, message: "order must be asc or desc, not \"\(other)\"")
        }
        if let filter = parameters["filter"] {
            guard filter.count <= maxFilterLength else {
                throw Failure(status: .badRequest, message: "the filter is longer than \(maxFilterLength) characters")
            }
            table.filter = filter
        }
        if let after = parameters["after"], !after.isEmpty {
            guard let id = Id(after) else { throw Failure(status: .badRequest, message: "after must be an object id, not \"\(after)\"") }
            table.after = id
        }
        return table
    }

    func objectsPage(_ name: String, _ query: String?) throws -> Page {
        let table = try Self.tableQuery(query)
        let form = Self.filterForm(name, table)
        let request = StoreInspector.PageRequest(
            filter: table.filter, sort: table.sort == "id" ? .id : .property(table.sort), descending: table.descending,
            limit: table.size, offset: (table.page - 1) * table.size, after: table.after)
        let read: StoreInspector.ObjectPage?
        do {
            read = try inspector.page(of: name, request)
        } catch let error as CellarError where error.code == .illegalArgument {
            throw Failure(status: .badRequest, message: error.message, before: "<h2>\(HTML.escape(name))</h2>\n" + form)
        }
        guard let page = read else {
            throw Failure(status: .notFound, message: "The stored model has no entity named \"\(name)\".")
        }
        // The entity with its count at the commit the page was read on.
        let entity = page.entity
        var body = form
        let first = request.offset + 1, last = request.offset + page.objects.count
        var counts = page.objects.isEmpty ? "No objects" : "Objects \(first)–\(last)"
        if let matched = page.matched {
            counts += table.filter?.isEmpty == false ? " of \(matched) matching" : " of \(matched)"
        } else if page.hasMore {
            counts += " (more follow)"
        }
        counts += "; \(entity.objectCount) in the entity"
        body += "<p class=\"note\" id=\"counts\">\(HTML.escape(counts)). Sorted by \(HTML.escape(table.sort)) \(table.descending ? "descending" : "ascending").</p>\n"
        if table.sort != "id" || table.filter?.isEmpty == false {
            body += "<p class=\"note\" id=\"scan\">This page came from a scan that decoded \(page.scanned) objects (filters and sorts by a property use no index).</p>\n"
        }
        if page.scanCapped {
            body += "<p class=\"error\" id=\"capped\">The scan stopped after the first \(request.scanLimit) objects in id order: the entity has \(entity.objectCount), and this page shows only what those gave.</p>\n"
        }
        body += objectTable(entity, page.objects, table)
        body += "<p class=\"pager\">"
        if table.page > 1 { body += "<a id=\"previous\" href=\"\(HTML.escape(Self.entityURL(entity.name, table.parameters(page: table.page - 1))))\">← Previous</a>" }
        body += "<span>Page \(table.page)</span> "
        if page.hasMore { body += "<a id=\"next\" href=\"\(HTML.escape(Self.entityURL(entity.name, table.parameters(page: table.page + 1))))\">Next →</a>" }
        body += "</p>"
        return Page(title: entity.name, body: body)
    }

    static func filterForm(_ entity: String, _ table: TableQuery) -> String {
        var form = "<form method=\"get\" action=\"\(HTML.escape(entityURL(entity)))\" id=\"filter-form\">\n"
        form += "<input type=\"text\" name=\"filter\" id=\"filter\" value=\"\(HTML.escape(table.filter ?? ""))\" placeholder=\"title startsWith &quot;A&quot; and year &gt; 1990\">\n"
        if table.sort != "id" { form += "<input type=\"hidden\" name=\"sort\" value=\"\(HTML.escape(table.sort))\">" }
        if table.descending { form += "<input type=\"hidden\" name=\"order\" value=\"desc\">" }
        if table.size != 50 { form += "<input type=\"hidden\" name=\"size\" value=\"\(table.size)\">" }
        form += "<button type=\"submit\">Filter</button> <a href=\"\(HTML.escape(entityURL(entity)))\">Clear</a>\n"
        form += "<div class=\"note\">==, !=, &lt;, &lt;=, &gt;, &gt;=, startsWith, endsWith, contains, is null, is not null; and, or, not, parentheses; "
        form += "text in \"quotes\"; an embedded object's property as place.city.</div>\n</form>\n"
        return form
    }

    func objectTable(_ entity: StoreInspector.Entity, _ objects: [StoreInspector.Object], _ table: TableQuery) -> String {
        let toMany = Set(entity.relations.map(\.name))
        var html = "<table id=\"objects\"><thead><tr>"
        for column in entity.columns {
            if toMany.contains(column) {
                html += "<th>\(HTML.escape(column))</th>"
                continue
            }
            let current = table.sort == column
            let descending = current && !table.descending
            let arrow = current ? (table.descending ? " ▼" : " ▲") : ""
            let url = Self.entityURL(entity.name, table.parameters(page: 1, sort: column, descending: descending))
            html += "<th><a class=\"sort\" href=\"\(HTML.escape(url))\">\(HTML.escape(column))\(arrow)</a></th>"
        }
        html += "</tr></thead><tbody>\n"
        for object in objects {
            html += "<tr data-id=\"\(object.id)\">"
            for column in entity.columns {
                if column == "id" {
                    html += "<td class=\"num\"><a class=\"object\" href=\"\(HTML.escape(Self.objectURL(entity.name, object.id)))\">\(object.id)</a></td>"
                } else if let link = object.links.first(where: { $0.name == column }) {
                    html += "<td>\(Self.linkCell(link, limit: 10))</td>"
                } else {
                    html += "<td>\(Self.cell(object[column], limit: 80))</td>"
                }
            }
            html += "</tr>\n"
        }
        html += "</tbody></table>\n"
        return html
    }

    /// A value as table cell text: text as it is, the rest as JSON, cut at `limit` characters.
    static func cell(_ value: JSONValue, limit: Int) -> String {
        var text: String
        switch value {
        case .null: return "<span class=\"null\">null</span>"
        case .string(let string): text = string
        default: text = StoreInspector.jsonText(value)
        }
        if text.count > limit { text = String(text.prefix(limit - 1)) + "…" }
        return HTML.escape(text)
    }

    /// The ids of a link as links to their objects (at most `limit`, then how many more).
    static func linkCell(_ link: StoreInspector.Link, limit: Int) -> String {
        guard !link.ids.isEmpty else { return link.isToMany ? "<span class=\"null\">none</span>" : "<span class=\"null\">0</span>" }
        var parts = link.ids.prefix(limit).map { id -> String in
            guard let target = link.target else { return "\(id)" }
            return "<a class=\"link\" href=\"\(HTML.escape(objectURL(target, id)))\">\(id)</a>"
        }
        if link.ids.count > limit { parts.append("… \(link.ids.count - limit) more") }
        return parts.joined(separator: ", ")
    }

    func objectPage(_ name: String, _ idText: String) throws -> Page {
        guard let entity = try inspector.entity(named: name) else {
            throw Failure(status: .notFound, message: "The stored model has no entity named \"\(name)\".")
        }
        guard let id = Id(idText), id > 0 else {
            throw Failure(status: .badRequest, message: "\"\(idText)\" is no object id (a whole number from 1 to \(Id.max)).")
        }
        guard let object = try inspector.object(of: entity.name, id: id) else {
            throw Failure(status: .notFound, message: "\(entity.name) has no object with id \(id).")
        }
        var body = "<p class=\"note\"><a href=\"\(HTML.escape(Self.entityURL(entity.name)))\">All \(HTML.escape(entity.name)) objects</a></p>\n"
        body += "<table id=\"object\"><thead><tr><th>Property</th><th>Type</th><th>Value</th></tr></thead><tbody>\n"
        body += "<tr><td>id</td><td class=\"muted\">Id</td><td class=\"num\">\(object.id)</td></tr>\n"
        for property in entity.properties where !property.isId {
            let value: String
            if let link = object.links.first(where: { $0.name == property.name }) {
                value = Self.linkCell(link, limit: 1)
            } else {
                value = Self.cell(object[property.name], limit: 100_000)
            }
            body += "<tr><td>\(HTML.escape(property.name))</td><td class=\"muted\">\(HTML.escape(property.type))</td><td style=\"white-space:pre-wrap\">\(value)</td></tr>\n"
        }
        body += "</tbody></table>\n<h2>Relations</h2>\n"
        if object.links.isEmpty {
            body += "<p class=\"note\">None.</p>\n"
        } else {
            body += "<ul id=\"relations\">\n"
            for link in object.links {
                body += "<li>\(HTML.escape(link.name)) → \(HTML.escape(link.target ?? "?")): \(Self.linkCell(link, limit: 200))</li>\n"
            }
            body += "</ul>\n"
        }
        body += "<p class=\"note\">Objects that point to this one (backlinks) are not listed.</p>\n"
        return Page(title: "\(entity.name) \(object.id)", body: body)
    }

    func modelPage() throws -> Page {
        guard let json = try inspector.modelJSON() else {
            return Page(title: "Model", body: "<p id=\"empty\">The store holds no model.</p>")
        }
        return Page(title: "Model", body: "<p class=\"note\">The model stored in the store, as a model JSON file (what <code>cellar model</code> prints).</p>\n<pre id=\"model-json\">\(HTML.escape(json))</pre>")
    }

    func healthPage() throws -> Page {
        let health = try inspector.health()
        func bytes(_ count: UInt64) -> String {
            let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
            var value = Double(count), unit = 0
            while value >= 1024, unit < units.count - 1 { value /= 1024; unit += 1 }
            return unit == 0 ? "\(count) bytes" : String(format: "%.1f", value) + " \(units[unit]) (\(count) bytes)"
        }
        let rows: [(String, String, String)] = [
            ("directory", "Directory", inspector.directoryPath),
            ("uuid", "Store UUID", health.storeUUID),
            ("commit", "Last commit", String(health.lastCommit)),
            ("file", "File size", bytes(health.fileBytes)),
            ("live", "Live bytes", bytes(health.liveBytes)),
            ("garbage", "Garbage share", String(format: "%.1f %%", health.garbageShare * 100)),
            ("encrypted", "Encryption", health.isEncrypted ? "AES-256-GCM" : "none"),
            ("model", "Model", health.hasModel ? "stored" : "none (a store of the storage engine alone)"),
        ]
        var body = "<table id=\"health\"><tbody>\n"
        for (id, label, value) in rows {
            body += "<tr id=\"health-\(id)\"><th>\(HTML.escape(label))</th><td>\(HTML.escape(value))</td></tr>\n"
        }
        body += "</tbody></table>\n<p class=\"note\">Garbage is what a compaction (<code>cellar compact</code>, or the writer's own) would reclaim. Reload to see newer commits.</p>"
        return Page(title: "Health", body: body)
    }
}

/// Lets in only requests with the token (in the query, or in the cookie set on the first visit),
/// answers only GET and HEAD, renders errors as pages, and adds headers that keep the pages from
/// loading anything or being framed.
struct AccessMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let browser: Browser

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await respond(request, context: context, next: next)
        response.headers[.contentSecurityPolicy] = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        response.headers[.init("X-Content-Type-Options")!] = "nosniff"
        response.headers[.init("Referrer-Policy")!] = "no-referrer"
        response.headers[.init("X-Frame-Options")!] = "DENY"
        return response
    }

    private func respond(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let queryToken = HTML.queryParameter("token", in: request.uri.query)
        let fromQuery = browser.token.matches(queryToken.map { $0[...] })
        guard fromQuery || browser.token.matches(request.cookies[browser.cookieName]?.value[...]) else {
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; charset=utf-8"
            headers[.cacheControl] = "no-store"
            return Response(status: .forbidden, headers: headers,
                            body: ResponseBody(byteBuffer: ByteBuffer(string: "403 Forbidden: open the URL cellar-browse printed (it holds the access token).\n")))
        }
        guard request.method == .get || request.method == .head else {
            var response = browser.errorResponse(.methodNotAllowed, "The data browser is read-only: it answers GET and HEAD only.")
            response.headers[.allow] = "GET, HEAD"
            return response
        }
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            response = browser.errorResponse(.notFound, "No page at \(request.uri.path).")
        } catch let error as HTTPError {
            response = browser.errorResponse(error.status, error.body ?? error.status.reasonPhrase)
        } catch let error as CellarError {
            response = browser.errorResponse(.internalServerError, "The store could not be read: \(error.message)")
        } catch {
            response = browser.errorResponse(.internalServerError, "The store could not be read: \(error)")
        }
        if fromQuery {
            response.setCookie(Cookie(name: browser.cookieName, value: browser.token.value, path: "/", httpOnly: true, sameSite: .strict))
        }
        return response
    }
}
