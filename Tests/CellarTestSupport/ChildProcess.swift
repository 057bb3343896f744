#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Child processes for the kill -9 tests: started with their standard output on a pipe, read
/// without blocking, acknowledgements (`ack K` lines) found in what they printed.
public enum ChildProcess {
    /// A failure to start a child.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// Starts `program` with `arguments`; returns its pid and the read end of its standard
    /// output's pipe (non-blocking).
    public static func spawn(_ program: String, _ arguments: [String]) throws -> (pid: pid_t, output: Int32) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw Failure("pipe failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        #if canImport(Darwin)
        let environment = _NSGetEnviron().pointee
        #else
        let environment = environ
        #endif
        let result = posix_spawn(&pid, program, &actions, nil, argv, environment)
        close(fds[1])
        guard result == 0 else { close(fds[0]); throw Failure("posix_spawn \(program) failed: \(result)") }
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        return (pid, fds[0])
    }

    /// Appends what the child wrote so far on `fd` to `buffer`.
    public static func drain(_ fd: Int32, into buffer: inout [UInt8]) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n <= 0 { break }
            buffer += chunk[0..<n]
        }
    }

    /// How many `ack K` lines `output` holds.
    public static func acknowledgements(_ output: [UInt8]) -> Int {
        String(decoding: output, as: UTF8.self).split(separator: "\n").count { $0.hasPrefix("ack ") }
    }

    /// The highest `ack K` line in `output`, nil when there is none.
    public static func acknowledged(_ output: [UInt8]) -> Int? {
        String(decoding: output, as: UTF8.self).split(separator: "\n")
            .compactMap { $0.hasPrefix("ack ") ? Int($0.dropFirst(4)) : nil }.max()
    }
}
