@testable import CellarSync
import Logging
import PostgresNIO
import Testing

/// SyncServer: its URLs, its description, its connections; and that no password ever shows in a
/// description or an error.
@Suite struct SyncServerTests {
    static let password = "s3cret-PASSWORD"

    // MARK: URLs

    @Test func fullURL() throws {
        let server = try SyncServer(url: "postgres://alice:s3cret-PASSWORD@db.example.com:6543/app?sslmode=require")
        #expect(server.host == "db.example.com")
        #expect(server.port == 6543)
        #expect(server.username == "alice")
        #expect(server.password == Self.password)
        #expect(server.database == "app")
        guard case .require = server.tls else { Issue.record("tls is not .require"); return }
    }

    @Test func defaults() throws {
        let server = try SyncServer(url: "postgresql://bob@localhost/sync")
        #expect(server.host == "localhost")
        #expect(server.port == 5432)
        #expect(server.username == "bob")
        #expect(server.password == nil)
        #expect(server.database == "sync")
        guard case .prefer = server.tls else { Issue.record("tls is not .prefer"); return }
    }

    @Test func sslModes() throws {
        guard case .disable = try SyncServer(url: "postgres://u@h/d?sslmode=disable").tls else {
            Issue.record("disable"); return
        }
        guard case .prefer = try SyncServer(url: "postgres://u@h/d?sslmode=prefer").tls else {
            Issue.record("prefer"); return
        }
        guard case .require = try SyncServer(url: "postgres://u@h/d?sslmode=require").tls else {
            Issue.record("require"); return
        }
        guard case .require = try SyncServer(url: "postgres://u@h/d?sslmode=verify-full").tls else {
            Issue.record("verify-full"); return
        }
    }

    @Test func percentEncodedCredentials() throws {
        let server = try SyncServer(url: "postgres://us%40er:p%40ss%3Aw%2Ford%3F%25%C3%A9@h:1/d%20b")
        #expect(server.username == "us@er")
        #expect(server.password == "p@ss:w/ord?%é")
        #expect(server.database == "d b")
        #expect(server.port == 1)
    }

    @Test func unencodedAtSignInPassword() throws {
        let server = try SyncServer(url: "postgres://u:p@ss@h:5433/d")
        #expect(server.username == "u")
        #expect(server.password == "p@ss")
        #expect(server.host == "h")
        #expect(server.port == 5433)
    }

    @Test func ipv6Host() throws {
        let server = try SyncServer(url: "postgres://u@[::1]:5440/d")
        #expect(server.host == "::1")
        #expect(server.port == 5440)
        #expect(server.description == "postgres://u@[::1]:5440/d")
        #expect(try SyncServer(url: "postgres://u@[::1]/d").port == 5432)
    }

    @Test(arguments: [
        "http://u:s3cret-PASSWORD@h/d",
        "s3cret-PASSWORD",
        "postgres://h:5432/d",
        "postgres://:s3cret-PASSWORD@h/d",
        "postgres://u:s3cret-PASSWORD@/d",
        "postgres://u:s3cret-PASSWORD@h:0/d",
        "postgres://u:s3cret-PASSWORD@h:65536/d",
        "postgres://u:s3cret-PASSWORD@h:port/d",
        "postgres://u:s3cret-PASSWORD@h:5432",
        "postgres://u:s3cret-PASSWORD@h:5432/",
        "postgres://u:s3cret-PASSWORD%zz@h/d",
        "postgres://u:s3cret-PASSWORD%@h/d",
        "postgres://u:s3cret-PASSWORD%FF@h/d",
        "postgres://u%4:s3cret-PASSWORD@h/d",
        "postgres://u:s3cret-PASSWORD@h/d?sslmode=allow",
        "postgres://u:s3cret-PASSWORD@h/d?sslmode",
        "postgres://u:s3cret-PASSWORD@h/d?password=s3cret-PASSWORD",
        "postgres://u:s3cret-PASSWORD@[::1/d",
        "postgres://u:s3cret-PASSWORD@[::1]x/d",
        // A password with an unencoded ":" and "/" and no "@" at all: all of it looks like a
        // host and port.
        "postgres://u:s3cret-PASSWORD/d",
    ])
    func badURL(_ url: String) {
        let error = #expect(throws: SyncError.self) { _ = try SyncServer(url: url) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("malformed PostgreSQL URL") == true)
        #expect(error.map { !"\($0)".contains(Self.password) && !String(reflecting: $0).contains(Self.password) } == true)
    }

    // MARK: Description

    @Test func descriptionHidesThePassword() throws {
        let server = try SyncServer(url: "postgres://alice:s3cret-PASSWORD@db.example.com:6543/app")
        #expect(server.description == "postgres://alice:***@db.example.com:6543/app")
        #expect(!"\(server)".contains(Self.password))
        let plain = SyncServer(host: "h", username: "u", password: Self.password, database: "d", tls: .disable)
        #expect(plain.description == "postgres://u:***@h:5432/d?sslmode=disable")
        let none = SyncServer(host: "h", port: 1, username: "u", database: "d", tls: .require(.makeClientConfiguration()))
        #expect(none.description == "postgres://u@h:1/d?sslmode=require")
    }

    // MARK: Connections

    @Test func closedPortIsAConnectionErrorWithoutThePassword() async throws {
        // Port 1 on the loopback address: nothing listens there.
        let server = SyncServer(host: "127.0.0.1", port: 1, username: "u", password: Self.password, database: "d",
                                tls: .disable)
        let error = await #expect(throws: SyncError.self) { _ = try await server.connect(logger: TestServer.logger) }
        #expect(error?.code == .connection)
        #expect(error?.message.contains("postgres://u:***@127.0.0.1:1/d?sslmode=disable") == true)
        #expect(error.map { !"\($0)".contains(Self.password) && !String(reflecting: $0).contains(Self.password) } == true)
    }

    @Test(.enabled(if: TestServer.enabled, TestServer.skipped))
    func selectOne() async throws {
        let connection = try await TestServer.server().connect(logger: TestServer.logger)
        do {
            var values: [Int] = []
            for try await value in try await connection.query("SELECT 1", logger: TestServer.logger).decode(Int.self) {
                values.append(value)
            }
            #expect(values == [1])
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }

    @Test(.enabled(if: TestServer.enabled, TestServer.skipped))
    func loginRefusedIsAConnectionErrorWithoutThePassword() async throws {
        // The throwaway server trusts every login, so a wrong password gets in: a database that
        // does not exist, and a role that does not exist, are refused instead (SQLSTATE 3D000,
        // 28000), with a password in the configuration all the same.
        var noDatabase = try TestServer.server()
        noDatabase.database = "no_such_database"
        noDatabase.password = Self.password
        var noRole = try TestServer.server()
        noRole.username = "no_such_role"
        noRole.password = Self.password
        for server in [noDatabase, noRole] {
            let error = await #expect(throws: SyncError.self) { _ = try await server.connect(logger: TestServer.logger) }
            #expect(error?.code == .connection)
            #expect(error?.message.contains("SQLSTATE") == true)
            #expect(error.map { !"\($0)".contains(Self.password) && !String(reflecting: $0).contains(Self.password) } == true)
        }
    }

    @Test(.enabled(if: TestServer.enabled, TestServer.skipped))
    func freshSchemaIsDroppedAfterwards() async throws {
        let schema = try await TestServer.freshSchema { connection, schema in
            try await connection.query("CREATE TABLE objects (id bigint PRIMARY KEY)", logger: TestServer.logger)
            try await connection.query("INSERT INTO objects VALUES (1), (2)", logger: TestServer.logger)
            var count = 0
            for try await n in try await connection.query("SELECT count(*) FROM \(unescaped: schema).objects",
                                                          logger: TestServer.logger).decode(Int.self) {
                count = n
            }
            #expect(count == 2)
            return schema
        }
        #expect(schema.hasPrefix("t_") && schema.count == 18)
        let connection = try await TestServer.server().connect(logger: TestServer.logger)
        var found = 0
        for try await n in try await connection.query(
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name = \(schema)", logger: TestServer.logger
        ).decode(Int.self) {
            found = n
        }
        try await connection.close()
        #expect(found == 0)
    }

    @Test(.enabled(if: TestServer.enabled, TestServer.skipped))
    func serverErrorKeepsItsSQLState() async throws {
        try await TestServer.freshSchema { connection, _ in
            let error = await #expect(throws: PSQLError.self) {
                try await connection.query("SELECT * FROM no_such_table", logger: TestServer.logger)
            }
            let wrapped = error.map { SyncError($0, doing: "reading", password: Self.password) }
            #expect(wrapped?.code == .server)
            #expect(wrapped?.message.contains("SQLSTATE 42P01") == true)
            #expect(wrapped?.message.contains("no_such_table") == true)
        }
    }
}
