#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Child processes for the kill -9 tests: started with their standard output on a pipe, read
/// without blocking, acknowledgements (`ack K` lines) found in what they printed, killed at a
/// counted point of what they printed (never at a moment: what a round reaches must not depend on
/// how fast the machine is).
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
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        try onlyStandardDescriptors(&actions, &attributes)
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        #if canImport(Darwin)
        let environment = _NSGetEnviron().pointee
        #else
        let environment = environ
        #endif
        let result = posix_spawn(&pid, program, &actions, &attributes, argv, environment)
        close(fds[1])
        guard result == 0 else { close(fds[0]); throw Failure("posix_spawn \(program) failed: \(result)") }
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        return (pid, fds[0])
    }

    /// Makes the child start with standard input, output and error only. Without it a child
    /// keeps every descriptor this process opened without close-on-exec (Foundation's file
    /// writes among them) for as long as it lives; one that holds a file open for writing makes
    /// running that file fail with "Text file busy" (ETXTBSY) in any test, and one that holds a
    /// pipe's write end keeps the pipe from ending.
    static func onlyStandardDescriptors(_ actions: inout posix_spawn_file_actions_t, _ attributes: inout posix_spawnattr_t) throws {
        #if canImport(Darwin)
        guard posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_CLOEXEC_DEFAULT)) == 0 else {
            throw Failure("posix_spawnattr_setflags failed")
        }
        posix_spawn_file_actions_addinherit_np(&actions, 0)
        posix_spawn_file_actions_addinherit_np(&actions, 1)
        posix_spawn_file_actions_addinherit_np(&actions, 2)
        #else
        // glibc 2.34 and later; Glibc's module map does not declare it.
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np"),
              unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3) == 0 else {
            throw Failure("posix_spawn_file_actions_addclosefrom_np is missing (glibc 2.34 or later is needed)")
        }
        #endif
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

    /// Starts `program` with `arguments` and kills it with SIGKILL as soon as `killNow` says so;
    /// returns all it printed. `killNow` is asked with the microseconds since the start and what
    /// the child printed so far, whenever the child printed more (woken by `poll`, not by a
    /// sleep) and at least every 50 ms. A child that exits on its own (an error) throws instead of
    /// being waited for, and so does one that `killNow` has not wanted killed after `hangGuard`
    /// seconds: a guard against a hung child, not a pace any machine must keep. Between the
    /// counted point and the kill lies a random pause of up to `jitter` microseconds, so that
    /// kills spread over the work that follows the point (the middle of the next commit, its sync,
    /// the moment after it) instead of all landing where the child was when it printed.
    public static func run(_ program: String, _ arguments: [String],
                           hangGuard: Int = 600, jitter: UInt32 = 3_000,
                           killWhen killNow: (_ waited: Int, _ output: [UInt8]) -> Bool) throws -> [UInt8] {
        let child = try spawn(program, arguments)
        let clock = ContinuousClock()
        let start = clock.now
        var output: [UInt8] = []
        var status: Int32 = 0
        while true {
            drain(child.output, into: &output)
            let (seconds, attoseconds) = (clock.now - start).components
            if killNow(Int(seconds) * 1_000_000 + Int(attoseconds / 1_000_000_000_000), output) { break }
            if seconds >= hangGuard {
                kill(child.pid, SIGKILL)
                waitpid(child.pid, &status, 0)
                close(child.output)
                throw Failure("the child did not reach its kill point in \(hangGuard) s: \(String(decoding: output.suffix(300), as: UTF8.self))")
            }
            if waitpid(child.pid, &status, WNOHANG) == child.pid {
                drain(child.output, into: &output)
                close(child.output)
                throw Failure("the child exited on its own (status \(status)): \(String(decoding: output.suffix(300), as: UTF8.self))")
            }
            // Wakes when the child prints (or its pipe closes), at the latest after 50 ms.
            var descriptor = pollfd(fd: child.output, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 50)
        }
        if jitter > 0 { usleep(UInt32.random(in: 0..<jitter)) }
        kill(child.pid, SIGKILL)
        waitpid(child.pid, &status, 0)
        drain(child.output, into: &output)
        close(child.output)
        return output
    }

    /// Reads what the child prints on `fd` into `buffer` until `condition` holds of it (woken by
    /// `poll` when it prints); false when the pipe closed (the child ended) first, or after
    /// `hangGuard` seconds (a guard against a hung child, not a pace).
    public static func wait(for condition: ([UInt8]) -> Bool, on fd: Int32, into buffer: inout [UInt8],
                            hangGuard: Int = 600) -> Bool {
        let clock = ContinuousClock()
        let start = clock.now
        while true {
            drain(fd, into: &buffer)
            if condition(buffer) { return true }
            if clock.now - start > .seconds(hangGuard) { return false }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, 1_000) > 0 && descriptor.revents & Int16(POLLIN) == 0 {
                // POLLHUP without data: the child closed its output.
                drain(fd, into: &buffer)
                return condition(buffer)
            }
        }
    }

    /// A counted kill point for a round: 1 to `most` acknowledgements, or, one round in eight, 0
    /// (as soon as the child says `opening`: the kill lands in its open and recovery, or its first
    /// commit).
    public static func killPoint(_ rng: inout SplitMix64, most: Int = 12) -> Int {
        rng.next() % 8 == 0 ? 0 : 1 + Int(rng.next() % UInt64(most))
    }

    /// Whether `output` reached the kill point `target` (`killPoint`): `target` lines starting
    /// with `prefix`, or for 0 an `opening` line.
    public static func reached(_ target: Int, in output: [UInt8], counting prefix: String = "ack ") -> Bool {
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
        return target == 0 ? lines.contains("opening") : lines.count { $0.hasPrefix(prefix) } >= target
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
