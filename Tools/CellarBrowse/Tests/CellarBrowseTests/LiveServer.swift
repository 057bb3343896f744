import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hummingbird
import ServiceLifecycle

/// A browser's router served on 127.0.0.1, at a port the system picks, for as long as a test's
/// body runs; requests to it go over HTTP through URLSession, which keeps no cookies (a test sends
/// its own). What Hummingbird's test client did, without the HTTP client and HTTP/2 stack that
/// HummingbirdTesting would build.
struct LiveServer: Sendable {
    /// The port the server listens on.
    let port: Int
    let session: URLSession

    /// A response: its status, its headers by name, its body as text (empty for HEAD).
    struct Response {
        let status: HTTPResponse.Status
        let response: HTTPURLResponse
        let body: String

        func header(_ name: String) -> String? { response.value(forHTTPHeaderField: name) }
    }

    struct NotStarted: Error {}

    /// Serves `router` while `body` runs, then stops the server.
    static func serving(_ router: Router<BasicRequestContext>, _ body: @Sendable (LiveServer) async throws -> Void) async throws {
        let (ports, announce) = AsyncStream.makeStream(of: Int.self)
        let app = Application(router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0), serverName: nil),
                              onServerRunning: { channel in
                                  announce.yield(channel.localAddress?.port ?? 0)
                                  announce.finish()
                              })
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpCookieStorage = nil
        let session = URLSession(configuration: configuration)
        defer { session.invalidateAndCancel() }
        // Stopped by a graceful shutdown, which lets the server close its connections.
        let services = ServiceGroup(configuration: ServiceGroupConfiguration(services: [app], logger: app.logger))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // A server that cannot start ends the wait for its port.
                defer { announce.finish() }
                try await services.run()
            }
            var running = ports.makeAsyncIterator()
            guard let port = await running.next(), port > 0 else {
                await services.triggerGracefulShutdown()
                try await group.waitForAll()
                throw NotStarted()
            }
            do {
                try await body(LiveServer(port: port, session: session))
            } catch {
                await services.triggerGracefulShutdown()
                throw error
            }
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
        }
    }

    /// The server's address of `path` (which starts with "/").
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Sends `method` to `path` with `headers`; the response.
    func execute(_ path: String, method: HTTPRequest.Method = .get, headers: [String: String] = [:]) async throws -> Response {
        var request = URLRequest(url: URL(string: url(path))!)
        request.httpMethod = method.rawValue
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        let http = response as! HTTPURLResponse
        return Response(status: HTTPResponse.Status(code: http.statusCode), response: http, body: String(decoding: data, as: UTF8.self))
    }
}
