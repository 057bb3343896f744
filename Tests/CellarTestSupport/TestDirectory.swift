#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fresh directory for one test, on disk (not tmpfs where avoidable), removed by `remove()`.
public struct TestDirectory: Sendable {
    public let path: String

    public init(_ label: String = "test") {
        var template = Array("/tmp/cellar-\(label)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
    }

    /// A path inside the directory.
    public func sub(_ name: String) -> String { path + "/" + name }

    /// Removes the directory and everything in it (in this process: no `system`, whose fork would
    /// briefly share every open descriptor, store locks included, with a child).
    public func remove() {
        Self.removeTree(path)
    }

    private static func removeTree(_ path: String) {
        if let dir = opendir(path) {
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name == "." || name == ".." { continue }
                let child = path + "/" + name
                var info = stat()
                if lstat(child, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
                    removeTree(child)
                } else {
                    unlink(child)
                }
            }
            closedir(dir)
        }
        rmdir(path)
    }

    /// Whether anything (file or directory) exists at `path`.
    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// Writes `bytes` as the whole content of `file`.
    public static func write(_ bytes: [UInt8], to file: String) {
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        precondition(fd >= 0, "open \(file) failed")
        bytes.withUnsafeBytes { b in
            var done = 0
            while done < b.count {
                let n = systemWrite(fd, b.baseAddress! + done, b.count - done)
                precondition(n > 0, "write failed")
                done += n
            }
        }
        close(fd)
    }

    /// Writes `bytes` to a new file at `file`, unlinking any old one first. Unlike `write`, ext4 does
    /// not flush it on close (it does for a file truncated and rewritten).
    public static func replace(_ file: String, with bytes: [UInt8]) {
        unlink(file)
        write(bytes, to: file)
    }

    /// The whole content of `file`.
    public static func read(_ file: String) -> [UInt8] {
        let fd = open(file, O_RDONLY)
        precondition(fd >= 0, "open \(file) failed")
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress!, $0.count) }
            if n <= 0 { break }
            out += chunk[0..<n]
        }
        return out
    }
}

private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.write(fd, buffer, count)
    #else
    return Darwin.write(fd, buffer, count)
    #endif
}

private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.read(fd, buffer, count)
    #else
    return Darwin.read(fd, buffer, count)
    #endif
}
