@_spi(Sync) import Cellar
@testable import CellarSync
import Foundation
import NIOSSL
import PostgresNIO
import Testing

/// Sync through a server that takes TCP connections only over TLS, with a certificate signed by
/// a certificate authority of the test's own (`scripts/postgres.sh require-tls`): stores sync
/// when they trust that authority; a plain connection, and a TLS one that does not trust it, are
/// refused with an error that never shows the password.
@Suite(.serialized, .enabled(if: TestServer.enabled, TestServer.skipped))
struct TLSTests {
    /// A password the server never asks for (it trusts local roles): what must not leak.
    static let password = "tls-test-secret-Zq8"

    @Test func storesSyncOverTLSAndOtherConnectionsAreRefused() async throws {
        try await PrivateServer.with { server in
            let authority = try await server.requireTLS()
            var base = try SyncServer(url: server.url)
            base.password = Self.password

            var trusting = TLSConfiguration.makeClientConfiguration()
            trusting.trustRoots = .file(authority)
            trusting.certificateVerification = .fullVerification
            var secure = base
            secure.tls = .require(trusting)

            // The connection is encrypted: the server says so of its own end.
            let connection = try await secure.connect(logger: TestServer.logger)
            let rows = try await connection.rows("SELECT ssl::text, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                                                 logger: TestServer.logger)
            try? await connection.close()
            #expect(rows.first?.first == "true", "pg_stat_ssl of the connection: \(rows)")
            #expect(rows.first?.last??.hasPrefix("TLS") == true, "pg_stat_ssl of the connection: \(rows)")

            // Two stores sync through it, both ways.
            let harness = try SyncHarness(schema: "tls")
            defer { Task { await harness.close() } }
            harness.server = secure
            let (a, clientA) = try harness.addStore()
            let (b, clientB) = try harness.addStore()
            try a.box(for: Item.self).put(Item(title: "sent over TLS"))
            try await clientA.sync()
            try await clientB.sync()
            let item = try #require(try b.box(for: Item.self).all().first { $0.title == "sent over TLS" })
            item.count = 7
            try b.box(for: Item.self).put(item)
            try await clientB.sync()
            try await clientA.sync()
            #expect(try a.box(for: Item.self).all().map(\.count) == [7])
            #expect(try SyncHarness.picture(of: a) == SyncHarness.picture(of: b))

            // Refused: plain TCP, and TLS against the system's trust roots (which do not hold the
            // test's authority). Neither error shows the password.
            var plain = base
            plain.tls = .disable
            var untrusted = base
            untrusted.tls = .require(.makeClientConfiguration())
            for (what, refused) in [("plain TCP", plain), ("an untrusted certificate", untrusted)] {
                do {
                    let connection = try await refused.connect(logger: TestServer.logger)
                    try? await connection.close()
                    Issue.record("a connection over \(what) was taken")
                } catch let error as SyncError {
                    #expect(error.code == .connection, "\(what): \(error)")
                    #expect(!"\(error)".contains(Self.password), "\(what): \(error)")
                }
            }

            // A store configured for plain TCP cannot sync, and keeps its change to push later.
            harness.server = plain
            let (c, clientC) = try harness.addStore()
            try c.box(for: Item.self).put(Item(title: "waits for TLS"))
            await #expect(throws: SyncError.self) { try await clientC.sync() }
            #expect(try clientC.hasPendingChanges())
        }
    }
}

extension PrivateServer {
    /// Makes the server take TCP connections only over TLS (`scripts/postgres.sh require-tls`);
    /// returns the path of the certificate of the authority that signed its certificate.
    func requireTLS() async throws -> String {
        let output = try await ChildProcess.shell("'\(repositoryRoot)/scripts/postgres.sh' require-tls '\(directory)'")
        return try Self.printed("CELLAR_SYNC_POSTGRES_CA", in: output)
    }
}
