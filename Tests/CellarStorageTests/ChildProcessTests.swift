import CellarTestSupport
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// The kill tests' children start with standard input, output and error only: a descriptor the
/// test process holds (a file another test is writing and is about to run) must not live on in
/// them.
@Suite struct ChildProcessTests {
    @Test func aChildDoesNotKeepTheParentsDescriptors() throws {
        let directory = TestDirectory("child-descriptors")
        defer { directory.remove() }
        // Opened without close-on-exec, as Foundation opens the files it writes.
        let fd = open(directory.path + "/being-written", O_WRONLY | O_CREAT, 0o644)
        try #require(fd > 2)
        defer { close(fd) }
        let child = try ChildProcess.spawn("/bin/sh", ["-c", "if [ -e /dev/fd/\(fd) ]; then echo open; else echo closed; fi; [ -e /dev/fd/2 ] && echo standard"])
        var status: Int32 = 0
        waitpid(child.pid, &status, 0)
        var output: [UInt8] = []
        ChildProcess.drain(child.output, into: &output)
        close(child.output)
        #expect(String(decoding: output, as: UTF8.self) == "closed\nstandard\n")
    }
}
