#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process of a kill -9 test that is killed with SIGKILL and started again, keeping count
/// of what its incarnations acknowledged (`ack K` lines, see `ChildProcess`).
public final class RestartableChild {
    public let program: String
    public let arguments: [String]
    public private(set) var pid: pid_t
    public private(set) var output: Int32
    /// What this incarnation printed so far.
    public var printed: [UInt8] = []
    /// The highest `ack K` of any incarnation.
    public private(set) var acknowledged = 0
    /// `ack` lines of the earlier incarnations.
    public private(set) var ackLinesBefore = 0
    /// `compacted` lines of the earlier incarnations.
    public private(set) var compactedBefore = 0

    public init(_ program: String, _ arguments: [String]) throws {
        self.program = program
        self.arguments = arguments
        (pid, output) = try ChildProcess.spawn(program, arguments)
    }

    public var lines: [Substring] { String(decoding: printed, as: UTF8.self).split(separator: "\n") }

    /// Reads what it printed since.
    public func drain() {
        ChildProcess.drain(output, into: &printed)
        acknowledged = max(acknowledged, ChildProcess.acknowledged(printed) ?? 0)
    }

    /// `ack` lines over all incarnations.
    public var commits: Int { ackLinesBefore + ChildProcess.acknowledgements(printed) }

    /// `compacted` lines over all incarnations.
    public var compacted: Int { compactedBefore + lines.count { $0 == "compacted" } }

    /// Kills it (when still running) and returns its problems: it ended by itself.
    public func stop() -> [String] {
        var status: Int32 = 0
        let exited = waitpid(pid, &status, WNOHANG) == pid
        if !exited {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
        }
        drain()
        close(output)
        ackLinesBefore += ChildProcess.acknowledgements(printed)
        compactedBefore += lines.count { $0 == "compacted" }
        let tail = String(decoding: printed.suffix(300), as: UTF8.self)
        printed = []
        return exited ? ["\(arguments) ended by itself (status \(status)): \(tail)"] : []
    }

    /// Kills it and starts it again; returns its problems.
    public func restart() throws -> [String] {
        let problems = stop()
        (pid, output) = try ChildProcess.spawn(program, arguments)
        return problems
    }

    /// Its problems when it ended by itself while running; nil while it runs.
    public func exitedProblems() -> [String]? {
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        drain()
        return ["\(arguments) ended by itself (status \(status)): \(String(decoding: printed.suffix(300), as: UTF8.self))"]
    }
}
