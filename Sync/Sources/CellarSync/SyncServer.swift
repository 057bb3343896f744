import Logging
import NIOSSL
import PostgresNIO

/// The PostgreSQL server a store syncs with: where it is, who logs in, which database.
///
/// Made from a URL, `postgres://user:password@host:port/database?sslmode=require`, or member by
/// member. Its ``description`` never shows the password (`postgres://user:***@host:5432/db`),
/// and neither do the errors of ``init(url:)`` and ``connect(logger:)``: credentials never
/// reach a log or an error message.
public struct SyncServer: Sendable, CustomStringConvertible {
    /// Whether the connection is encrypted.
    public enum TLSMode: Sendable {
        /// Never: plain TCP.
        case disable
        /// When the server offers TLS; plain TCP when it does not (PostgreSQL's own default).
        case prefer(TLSConfiguration)
        /// Always: a server without TLS is an error.
        case require(TLSConfiguration)
    }

    /// The server's host name or IP address.
    public var host: String
    /// The server's TCP port.
    public var port: Int
    /// The role to log in as.
    public var username: String
    /// The role's password, if the server asks for one.
    public var password: String?
    /// The database whose tables hold the synced data.
    public var database: String
    /// Whether the connection is encrypted.
    public var tls: TLSMode

    public init(host: String, port: Int = 5432, username: String, password: String? = nil, database: String,
                tls: TLSMode = .prefer(.makeClientConfiguration())) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.tls = tls
    }

    /// The server of a URL, `postgres://user:password@host:port/database?sslmode=MODE`
    /// (`postgresql://` too).
    ///
    /// The user name and password are percent-decoded (`%40` for `@`, `%3A` for `:`); the port
    /// is 5432 when absent; an IPv6 address stands in brackets (`[::1]`). `sslmode` is
    /// `disable`, `prefer` (the default) or `require`; `verify-full` is taken as `require`,
    /// which checks the server's certificate and name against the system's trust roots (a
    /// stricter `require` than libpq's, which checks neither).
    ///
    /// - Throws: ``SyncError`` with the code ``SyncError/Code/invalidArgument`` for a malformed
    ///   URL; its message names the part that is wrong, never the URL's text.
    public init(url: String) throws(SyncError) {
        func bad(_ what: String) -> SyncError {
            SyncError(.invalidArgument, "malformed PostgreSQL URL: \(what) (expected postgres://user:password@host:port/database?sslmode=disable|prefer|require)")
        }
        var rest = Substring(url)
        if let scheme = ["postgres://", "postgresql://"].first(where: { rest.hasPrefix($0) }) {
            rest = rest.dropFirst(scheme.count)
        } else {
            throw bad("it does not start with postgres:// or postgresql://")
        }
        // The user information ends at the last "@", so that a password with an "@", a "/" or a
        // "?" that was not percent-encoded still parses.
        guard let at = rest.lastIndex(of: "@") else { throw bad("no user name (user@host)") }
        let userInfo = rest[..<at]
        rest = rest[rest.index(after: at)...]
        let rawUser: Substring
        var rawPassword: Substring?
        if let colon = userInfo.firstIndex(of: ":") {
            rawUser = userInfo[..<colon]
            rawPassword = userInfo[userInfo.index(after: colon)...]
        } else {
            rawUser = userInfo
        }
        guard let user = Self.percentDecoded(rawUser) else { throw bad("a bad percent-encoding in the user name") }
        guard !user.isEmpty else { throw bad("an empty user name") }
        var password: String?
        if let rawPassword {
            guard let decoded = Self.percentDecoded(rawPassword) else { throw bad("a bad percent-encoding in the password") }
            password = decoded.isEmpty ? nil : decoded
        }

        // host[:port], up to the path or the query.
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        rest = rest[authorityEnd...]
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw bad("an IPv6 address without its closing bracket") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw bad("text after the IPv6 address that is not a port") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw bad("no host") }
        var port = 5432
        if let portText {
            guard let number = Int(portText), (1...65_535).contains(number) else {
                throw bad("the port is not a number from 1 to 65535")
            }
            port = number
        }

        // /database
        var database = ""
        if rest.hasPrefix("/") {
            let pathEnd = rest.firstIndex(of: "?") ?? rest.endIndex
            guard let decoded = Self.percentDecoded(rest.dropFirst()[..<pathEnd]) else {
                throw bad("a bad percent-encoding in the database name")
            }
            database = decoded
            rest = rest[pathEnd...]
        }
        guard !database.isEmpty else { throw bad("no database (host:port/database)") }

        // ?sslmode=…
        var tls = TLSMode.prefer(.makeClientConfiguration())
        if rest.hasPrefix("?") {
            for parameter in rest.dropFirst().split(separator: "&") {
                let pair = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard pair.count == 2, pair[0] == "sslmode" else {
                    throw bad("an unknown parameter (only sslmode is understood)")
                }
                switch pair[1] {
                case "disable": tls = .disable
                case "prefer": tls = .prefer(.makeClientConfiguration())
                case "require", "verify-full": tls = .require(.makeClientConfiguration())
                default: throw bad("sslmode is not disable, prefer or require")
                }
            }
        }
        self.init(host: String(host), port: port, username: user, password: password, database: database, tls: tls)
    }

    /// `postgres://user:***@host:port/database`, with `?sslmode=` when it is not `prefer`: the
    /// password is never shown, only whether there is one.
    public var description: String {
        let hostText = host.contains(":") ? "[\(host)]" : host
        var text = "postgres://\(username)\(password == nil ? "" : ":***")@\(hostText):\(port)/\(database)"
        switch tls {
        case .disable: text += "?sslmode=disable"
        case .prefer: break
        case .require: text += "?sslmode=require"
        }
        return text
    }

    /// postgres-nio's configuration of one connection to this server.
    func connectionConfiguration() throws(SyncError) -> PostgresConnection.Configuration {
        let connectionTLS: PostgresConnection.Configuration.TLS
        do {
            switch tls {
            case .disable: connectionTLS = .disable
            case .prefer(let configuration): connectionTLS = .prefer(try NIOSSLContext(configuration: configuration))
            case .require(let configuration): connectionTLS = .require(try NIOSSLContext(configuration: configuration))
            }
        } catch {
            throw SyncError(.invalidArgument, "the TLS configuration for \(self) is not usable: \(error)")
        }
        return PostgresConnection.Configuration(host: host, port: port, username: username, password: password,
                                                database: database, tls: connectionTLS)
    }

    /// A new connection to the server, logged in; close it with `close()`.
    ///
    /// - Throws: ``SyncError`` (``SyncError/Code/connection`` when the server cannot be reached
    ///   or refuses the login), whose message names the server as ``description`` does, never
    ///   the password; `CancellationError` when the task is cancelled.
    public func connect(logger: Logger) async throws -> PostgresConnection {
        let configuration = try connectionConfiguration()
        do {
            return try await PostgresConnection.connect(configuration: configuration, id: .random(in: 1...Int.max),
                                                        logger: logger)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw SyncError(error, doing: "connecting to \(self)", password: password)
        }
    }

    /// `text` with its %XX escapes decoded as UTF-8; nil for a malformed escape or bytes that are
    /// not UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(Self.hexValue), let low = iterator.next().flatMap(Self.hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        // Bytes that are not UTF-8 decode to U+FFFD, which changes them.
        let decoded = String(decoding: bytes, as: UTF8.self)
        return Array(decoded.utf8) == bytes ? decoded : nil
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
