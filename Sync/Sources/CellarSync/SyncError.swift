import PostgresNIO

/// An error of the sync package: what went wrong (``code``) and a message for people.
///
/// The message never holds a password: errors of PostgreSQL's client are turned into one from
/// their code and the server's message and SQLSTATE only (their debug description can hold far
/// more), and the connection's password, should it appear anyway, is replaced by `***`.
public struct SyncError: Error, CustomStringConvertible, Sendable {
    /// The kind of error.
    public enum Code: String, Sendable, Hashable, CustomStringConvertible {
        /// The server could not be reached, refused the connection or the login, or the
        /// connection was lost.
        case connection
        /// The server answered a statement with an error.
        case server
        /// The tables on the server are not what this version of the sync package expects.
        case schema
        /// An argument was wrong (a malformed server URL, say).
        case invalidArgument

        public var description: String { rawValue }
    }

    /// The kind of error.
    public var code: Code
    /// What went wrong, for people; never a password.
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "SyncError.\(code): \(message)" }
}

extension SyncError {
    /// `error`, thrown by PostgreSQL's client while `doing` (such as "connecting to
    /// postgres://user:***@host:5432/db"), as a SyncError whose message does not contain
    /// `password`.
    init(_ error: any Error, doing: String, password: String?) {
        // A failed transaction: the error inside it.
        if let failed = error as? PostgresTransactionError,
           let inner = failed.closureError ?? failed.commitError ?? failed.beginError ?? failed.rollbackError {
            self.init(inner, doing: doing, password: password)
            return
        }
        var code = Code.connection
        var message: String
        if let error = error as? SyncError {
            code = error.code
            message = error.message
        } else if let error = error as? PSQLError {
            message = "\(doing): \(Self.describe(error))"
            if error.code == .server {
                code = .server
                // The login itself refused (SQLSTATE class 28: invalid authorization; 3D: no
                // such database) is a connection error, as an unreachable server is.
                if let state = error.serverInfo?[.sqlState], state.hasPrefix("28") || state.hasPrefix("3D") {
                    code = .connection
                }
            }
        } else {
            // Errors of SwiftNIO (connection refused, a timeout, a name that does not resolve).
            message = "\(doing): \(String(describing: error))"
        }
        if let password, !password.isEmpty {
            message = message.replacing(password, with: "***")
        }
        self.init(code, message)
    }

    /// A PSQLError told by its code, and for a server's error its SQLSTATE and message; for a
    /// connection error, the error underneath (SwiftNIO's, which names the address only).
    static func describe(_ error: PSQLError) -> String {
        var text = "\(error.code)"
        if let info = error.serverInfo {
            if let state = info[.sqlState] { text += " (SQLSTATE \(state))" }
            if let message = info[.message] { text += ": \(message)" }
        } else if let underlying = error.underlying {
            text += ": \(String(describing: underlying))"
        }
        return text
    }
}
