import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A program the tests run (posix_spawn) and wait for on a thread of its own (waitpid), so that
/// no task blocks; its standard output and error go to a file that ``output`` reads.
final class ChildProcess: @unchecked Sendable {
    let executable: String
    let arguments: [String]
    private let log: String
    private(set) var pid: pid_t = 0
    private let exited = AsyncStream<Int32>.makeStream()
    private let lock = NSLock()
    private var ended = false

    init(_ executable: String, _ arguments: [String]) {
        self.executable = executable
        self.arguments = arguments
        log = NSTemporaryDirectory() + "cellar-sync-child-" + UUID().uuidString + ".log"
    }

    func start() throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for arg in argv { free(arg) } }
        let status = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard status == 0 else { throw Failed(description: "cannot run \(executable): error \(status)") }
        let (pid, continuation) = (self.pid, exited.continuation)
        Thread.detachNewThread { [self] in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1, errno == EINTR {}
            lock.withLock { ended = true }
            continuation.yield(status)
            continuation.finish()
        }
    }

    var isRunning: Bool { lock.withLock { !ended } }

    /// Sends SIGKILL.
    func kill() { if isRunning { Foundation.kill(pid, SIGKILL) } }

    /// Waits for the exit: the exit status, and whether a signal ended the program.
    func exit() async -> (status: Int32, signalled: Bool) {
        var raw: Int32 = -1
        for await value in exited.stream { raw = value }
        let signal = raw & 0x7f
        return signal != 0 ? (signal, true) : ((raw >> 8) & 0xff, false)
    }

    var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    deinit { try? FileManager.default.removeItem(atPath: log) }

    /// Runs `bash -c script` to its end; throws with its output when it fails.
    static func shell(_ script: String) async throws -> String {
        let child = ChildProcess("/bin/bash", ["-c", script])
        try child.start()
        let (status, signalled) = await child.exit()
        guard status == 0, !signalled else { throw Failed(description: "`\(script)` exited with \(status): \(child.output)") }
        return child.output
    }

    struct Failed: Error, CustomStringConvertible { var description: String }
}

/// The repository's root, from this file's path.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path
