import Foundation
import Logging
import PostgresNIO

/// Small helpers for the statements the sync engine builds.
enum SQL {
    /// `name` as a quoted identifier.
    static func quote(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// A `text[]` literal of `texts` (nil: NULL), each element quoted: one bind parameter that
    /// carries a whole column of rows to `unnest`.
    static func array(_ texts: some Sequence<String?>) -> String {
        var literal: [UInt8] = [UInt8(ascii: "{")]
        literal.reserveCapacity(texts.underestimatedCount * 32 + 2)
        for text in texts {
            if literal.count > 1 { literal.append(UInt8(ascii: ",")) }
            guard var text else { literal.append(contentsOf: "NULL".utf8); continue }
            literal.append(UInt8(ascii: "\""))
            text.withUTF8 { utf8 in
                // Most texts hold neither a quote nor a backslash: copied whole.
                guard utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                    literal.append(contentsOf: utf8)
                    return
                }
                for byte in utf8 {
                    if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { literal.append(UInt8(ascii: "\\")) }
                    literal.append(byte)
                }
            }
            literal.append(UInt8(ascii: "\""))
        }
        literal.append(UInt8(ascii: "}"))
        return String(decoding: literal, as: UTF8.self)
    }

    /// The SQLSTATE of the server's error in `error` (also inside a failed transaction's); nil
    /// for any other error.
    static func state(of error: any Error) -> String? {
        if let failed = error as? PostgresTransactionError {
            return (failed.closureError ?? failed.commitError ?? failed.beginError).flatMap(state(of:))
        }
        return (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    /// Bind parameters from texts (nil: NULL).
    static func binds(_ texts: [String?]) -> PostgresBindings {
        var binds = PostgresBindings(capacity: texts.count)
        binds.append(texts: texts)
        return binds
    }

    /// One bind parameter: `ids` as a binary `uuid[]` (16 bytes an id, nothing for the server to
    /// parse from text).
    static func binds(ids: [UUID]) -> PostgresBindings {
        var binds = PostgresBindings(capacity: 1)
        binds.append(ids)
        return binds
    }
}

extension PostgresBindings {
    /// Appends `texts` as text parameters (nil: NULL).
    mutating func append(texts: [String?]) {
        for text in texts {
            if let text { append(text) } else { appendNull() }
        }
    }
}

extension PostgresConnection {
    /// Runs `sql` with text parameters; every row's cells as text (nil: NULL).
    @discardableResult
    func rows(_ sql: String, _ texts: [String?] = [], logger: Logger) async throws -> [[String?]] {
        try await rows(sql, binds: SQL.binds(texts), logger: logger)
    }

    /// Runs `sql` with `binds` (for a parameter sent in binary, such as a `uuid[]` of many ids,
    /// which the server then need not parse from text); every row's cells as text.
    func rows(_ sql: String, binds: PostgresBindings, logger: Logger) async throws -> [[String?]] {
        let sequence = try await query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
        var rows: [[String?]] = []
        for try await row in sequence {
            rows.append(try row.map { try $0.decode(String?.self) })
        }
        return rows
    }

    /// Runs `sql` with text parameters, its rows (if any) left unread.
    func execute(_ sql: String, _ texts: [String?] = [], logger: Logger) async throws {
        let sequence = try await query(PostgresQuery(unsafeSQL: sql, binds: SQL.binds(texts)), logger: logger)
        for try await _ in sequence {}
    }
}
