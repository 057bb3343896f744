import ArgumentParser
@_spi(Tools) import Cellar
@_spi(Tools) import CellarBrowseKit
import Foundation
import Hummingbird
import Logging

/// `cellar-browse <directory> [--port N] [--host H]`: serves the data browser over the store in
/// `directory`, read-only, and prints the URL to open (it holds the access token).
@main
struct CellarBrowseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cellar-browse",
        abstract: "Browse a store in a web browser: entities, objects (sorted, filtered, paged), relations, the model, health. Read-only.",
        discussion: """
            Listens on 127.0.0.1 unless --host says otherwise, and prints the URL to open: it holds a random access \
            token, without which every request gets 403. The store is opened read-only: another process may write \
            it meanwhile, and a reload shows its newest commit. An encrypted store's key comes from CELLAR_KEY \
            (64 hex digits) or CELLAR_PASSPHRASE, or --ask-passphrase; never from an argument.
            """)

    @Argument(help: "The store's directory.")
    var directory: String

    @Option(help: "The port to listen on (default: a free one).")
    var port: Int = 0

    @Option(help: "The address to listen on. Anything but a loopback address lets other machines reach the store (the token is still needed; the connection is plain HTTP).")
    var host: String = "127.0.0.1"

    @Flag(help: "Allow changing objects (not supported yet: the browser is read-only).")
    var writable = false

    @Flag(help: "Ask for an encrypted store's passphrase on the terminal (not echoed).")
    var askPassphrase = false

    func validate() throws {
        if writable { throw ValidationError("--writable is not supported yet: the data browser is read-only") }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
    }

    func run() async throws {
        let key: EncryptionKey?
        let inspector: StoreInspector
        do {
            key = try storeKey(askPrompt: askPassphrase ? "Passphrase: " : nil)
            inspector = try StoreInspector(directoryPath: directory, encryptionKey: key)
        } catch {
            FileHandle.standardError.write(Data("cellar-browse: \(error)\n".utf8))
            throw ExitCode.failure
        }
        defer { inspector.close() }
        let token = AccessToken.random()
        let browser = Browser(inspector: inspector, token: token)
        if !["127.0.0.1", "localhost", "::1"].contains(host) {
            FileHandle.standardError.write(Data("cellar-browse: listening on \(host): other machines can reach it (plain HTTP; the token is still needed)\n".utf8))
        }
        var logger = Logger(label: "cellar-browse")
        logger.logLevel = .warning
        let shownHost = host.contains(":") ? "[\(host)]" : host
        let app = Application(
            router: browser.router(),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in
                let actual = channel.localAddress?.port ?? port
                // Written at once (not buffered): a script may wait for the URL on a pipe.
                FileHandle.standardOutput.write(Data("cellar-browse: \(directory) (read-only) at\nhttp://\(shownHost):\(actual)/?token=\(token)\n".utf8))
            },
            logger: logger)
        try await app.runService()
    }
}
