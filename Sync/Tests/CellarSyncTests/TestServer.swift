@testable import CellarSync
import Foundation
import Logging
import PostgresNIO
import Testing

/// The PostgreSQL server of the tests: the URL in `CELLAR_SYNC_POSTGRES`, such as the one
/// `scripts/postgres.sh start DIR` prints.
///
/// Tests that need it carry `.enabled(if: TestServer.enabled, TestServer.skipped)`: without the
/// variable they are skipped, unless `CI` is set: then they run and fail, so that CI cannot skip
/// them silently.
enum TestServer {
    static let url = ProcessInfo.processInfo.environment["CELLAR_SYNC_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 }
    static let inCI = ProcessInfo.processInfo.environment["CI"] != nil

    /// Whether tests of the server run: with a server, or in CI (where they fail without one).
    static let enabled = url != nil || inCI
    static let skipped: Comment = "CELLAR_SYNC_POSTGRES is not set (scripts/postgres.sh start DIR prints it); set CI to make this a failure"

    static let logger = Logger(label: "cellar-sync-tests")

    struct Missing: Error, CustomStringConvertible {
        var description: String {
            "CI is set but CELLAR_SYNC_POSTGRES is not: the PostgreSQL tests cannot be skipped in CI (scripts/postgres.sh start DIR prints the URL)"
        }
    }

    /// The server in `CELLAR_SYNC_POSTGRES`; throws when it is not set (in CI: tests that need
    /// the server fail then).
    static func server() throws -> SyncServer {
        guard let url else { throw Missing() }
        return try SyncServer(url: url)
    }

    /// The server in `CELLAR_SYNC_POSTGRES`, connecting as the login role `role` (without a
    /// password: the tests' server trusts local connections).
    static func server(as role: String) throws -> SyncServer {
        guard let url else { throw Missing() }
        var components = try #require(URLComponents(string: url))
        components.user = role
        components.password = nil
        return try SyncServer(url: try #require(components.string))
    }

    /// Drops `roles` through a connection of its own, errors ignored: roles a test made outlive
    /// its schema (and `freshSchema` drops that first), so a test drops them in a `defer`, after.
    static func dropRoles(_ roles: [String]) async {
        guard let connection = try? await server().connect(logger: logger) else { return }
        for role in roles { _ = try? await connection.query("DROP ROLE IF EXISTS \(unescaped: role)", logger: logger) }
        try? await connection.close()
    }

    /// Runs `body` with a connection to the server and a schema of its own, made for it with a
    /// name unique to the call (`t_` and 16 hex digits) and first on the connection's search
    /// path. Afterwards, whether `body` threw or not, drops the schema and all in it (`DROP
    /// SCHEMA … CASCADE`; through a new connection when `body` closed or lost its own: a test
    /// may restart the server) and closes the connection.
    static func freshSchema<Result: Sendable>(
        _ body: (_ connection: PostgresConnection, _ schema: String) async throws -> Result
    ) async throws -> Result {
        let connection = try await server().connect(logger: logger)
        let schema = "t_" + String(UInt64.random(in: 0...UInt64.max), radix: 16).leftPadded(to: 16)
        let result: Result
        do {
            try await connection.query("CREATE SCHEMA \(unescaped: schema)", logger: logger)
            try await connection.query("SET search_path TO \(unescaped: schema)", logger: logger)
            result = try await body(connection, schema)
        } catch {
            try? await drop(schema, on: connection)
            throw error
        }
        try await drop(schema, on: connection)
        return result
    }

    /// Drops `schema` through `connection`, or a new one when that fails; closes both.
    private static func drop(_ schema: String, on connection: PostgresConnection) async throws {
        let drop: PostgresQuery = "DROP SCHEMA IF EXISTS \(unescaped: schema) CASCADE"
        do {
            try await connection.query(drop, logger: logger)
            try? await connection.close()
            return
        } catch {
            try? await connection.close()
        }
        let fresh = try await server().connect(logger: logger)
        do {
            try await fresh.query(drop, logger: logger)
        } catch {
            try? await fresh.close()
            throw error
        }
        try? await fresh.close()
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
