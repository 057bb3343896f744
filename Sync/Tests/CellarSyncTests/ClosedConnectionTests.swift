@testable import CellarSync
import Foundation
import Logging
import PostgresNIO
import Testing

/// The server closes a connection while a large result is still arriving (a restart, a killed
/// backend): the statement fails with an error and the process goes on. Read as a stream that
/// waits for its reader, PostgresNIO would meet the rows NIO hands over at the close in a state
/// it does not expect and stop the process on a precondition.
@Suite(.enabled(if: TestServer.enabled, TestServer.skipped))
struct ClosedConnectionTests {
    @Test func aConnectionClosedInTheMiddleOfARowsResultIsAnError() async throws {
        for round in 0..<3 {
            let connection = try await TestServer.server().connect(logger: TestServer.logger)
            // The backend ends itself at a counted row: the rows before it are on their way.
            let sql = """
                SELECT CASE WHEN i = \(40_000 + 10_000 * round) THEN pg_terminate_backend(pg_backend_pid())::text
                            ELSE repeat('x', 200) END
                FROM generate_series(1, 200000) AS i
                """
            await #expect(throws: (any Error).self) { try await connection.rows(sql, logger: TestServer.logger) }
            try? await connection.close()
        }
        // The server still answers.
        let connection = try await TestServer.server().connect(logger: TestServer.logger)
        #expect(try await connection.rows("SELECT 'one'::text", logger: TestServer.logger) == [["one"]])
        try await connection.close()
    }
}
