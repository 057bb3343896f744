import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// Small helpers for the statements the sync engine builds.
enum SQL {
    /// `name` as a quoted identifier.
    static func quote(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

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

    /// One bind parameter, in its binary form: ids as a `uuid[]` are 16 bytes each, nothing for
    /// the server to parse from text.
    static func binds(one value: some PostgresNonThrowingEncodable) -> PostgresBindings {
        var binds = PostgresBindings(capacity: 1)
        binds.append(value)
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
        let rows = NIOLockedValueBox<[[String?]]>([])
        try await eachRow(sql, binds: binds, logger: logger) { row in
            let cells = try row.map { try $0.decode(String?.self) }
            rows.withLockedValue { $0.append(cells) }
        }
        return rows.withLockedValue { $0 }
    }

    /// Runs `sql` with text parameters; every row's `columns` cells as bytes, in one buffer.
    func cells(_ sql: String, _ texts: [String?], columns: Int, logger: Logger) async throws -> CellBuffer {
        let buffer = NIOLockedValueBox(CellBuffer(columns: columns))
        try await eachRow(sql, binds: SQL.binds(texts), logger: logger) { row in
            try buffer.withLockedValue { try $0.append(row) }
        }
        return buffer.withLockedValue { $0 }
    }

    /// Runs `sql` with text parameters, its rows (if any) left unread.
    func execute(_ sql: String, _ texts: [String?] = [], logger: Logger) async throws {
        try await eachRow(sql, binds: SQL.binds(texts), logger: logger) { _ in }
    }

    /// Runs `sql`, handing each row to `body` on the connection's event loop as it arrives.
    /// Every statement of the sync engine goes through here, never through the row stream
    /// (`query` as an `AsyncSequence`): a stream that waits for its reader holds back the
    /// socket's reads, and when the server closes the connection then (a restart, a killed
    /// backend) NIO hands over the held-back rows anyway, which PostgresNIO's row stream does not
    /// expect: a precondition failure, the app's process gone. Here each batch of rows asks for
    /// the next at once, and a closed connection is an error.
    private func eachRow(_ sql: String, binds: PostgresBindings, logger: Logger,
                         _ body: @escaping @Sendable (PostgresRow) throws -> Void) async throws {
        _ = try await query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger, body).get()
    }
}

/// A column of texts (nil: NULL) as one binary `text[]` parameter: each element's length and
/// bytes, which the server takes as they are (a text literal of the array would be parsed,
/// quotes and escapes, element by element). It carries a whole column of rows to `unnest`.
struct TextArray: PostgresNonThrowingEncodable {
    static var psqlType: PostgresDataType { .textArray }
    static var psqlFormat: PostgresFormat { .binary }

    let texts: [String?]

    init(_ texts: [String?]) { self.texts = texts }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        buffer.writeArrayHeader(count: texts.count, nulls: texts.contains(nil), of: .text)
        for text in texts {
            guard let text else {
                buffer.writeInteger(-1, as: Int32.self)
                continue
            }
            buffer.writeInteger(Int32(text.utf8.count))
            buffer.writeString(text)
        }
    }
}

/// A column of ids as one binary `uuid[]` parameter: 16 bytes each, written straight into the
/// message (PostgresNIO's own encoding of a `[UUID]` goes element by element through its
/// generic array path: in a profile of `sync-bench`, 2.5 times the samples of this one).
struct UUIDArray: PostgresNonThrowingEncodable {
    static var psqlType: PostgresDataType { .uuidArray }
    static var psqlFormat: PostgresFormat { .binary }

    let ids: [UUID]

    init(_ ids: [UUID]) { self.ids = ids }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        buffer.writeArray(ids, of: .uuid, width: 16) { buffer, id in withUnsafeBytes(of: id.uuid) { _ = buffer.writeBytes($0) } }
    }
}

/// A column of numbers as one binary `int4[]` parameter.
struct Int32Array: PostgresNonThrowingEncodable {
    static var psqlType: PostgresDataType { .int4Array }
    static var psqlFormat: PostgresFormat { .binary }

    let numbers: [Int32]

    init(_ numbers: [Int32]) { self.numbers = numbers }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        buffer.writeArray(numbers, of: .int4, width: 4) { $0.writeInteger($1) }
    }
}

extension ByteBuffer {
    /// The start of a one-dimensional binary array of `count` elements of type `element`:
    /// the dimensions, whether any element is NULL, the elements' type; then (unless empty) the
    /// dimension's length and lower bound. Each element follows as its length and its bytes.
    fileprivate mutating func writeArrayHeader(count: Int, nulls: Bool, of element: PostgresDataType) {
        writeInteger(count == 0 ? 0 : 1, as: Int32.self)
        writeInteger(nulls ? 1 : 0, as: Int32.self)
        writeInteger(element.rawValue)
        guard count > 0 else { return }
        writeInteger(Int32(count))
        writeInteger(1, as: Int32.self)
    }

    /// A one-dimensional binary array of `elements` of a type `width` bytes wide, none NULL:
    /// `write` writes one element's bytes.
    fileprivate mutating func writeArray<Element>(_ elements: [Element], of type: PostgresDataType, width: Int32,
                                                  _ write: (inout ByteBuffer, Element) -> Void) {
        writeArrayHeader(count: elements.count, nulls: false, of: type)
        reserveCapacity(minimumWritableBytes: elements.count * (4 + Int(width)))
        for element in elements {
            writeInteger(width)
            write(&self, element)
        }
    }
}
