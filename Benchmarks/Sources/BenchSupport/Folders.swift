import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The folder the temporary stores go in: `explicit` (`--dir`), else $TMPDIR or /tmp, unless that
/// is tmpfs: then `.build/<tool>-tmp` under the current folder. An explicit folder on tmpfs is an
/// error that gives `reason` (why the stores need a real disk).
public func scratchParent(_ explicit: String?, tool: String, reason: String) throws -> (path: String, fs: String) {
    if let explicit {
        _ = try makeFolder(explicit)
        let fs = fileSystemName(explicit)
        if fs == "tmpfs" || fs == "ramfs" {
            throw BenchError("--dir \(explicit) is on \(fs); \(reason)")
        }
        return (explicit, fs)
    }
    let env = getenv("TMPDIR").map { String(cString: $0) }
    let tmp = (env?.isEmpty == false ? env! : "/tmp")
    let fs = fileSystemName(tmp)
    if fs != "tmpfs" && fs != "ramfs" { return (tmp, fs) }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
    guard getcwd(&buffer, buffer.count) != nil else { throw BenchError("getcwd failed") }
    let cwd = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let fallback = try makeFolder(cwd + "/.build/\(tool)-tmp")
    return (fallback, fileSystemName(fallback))
}

/// The type of the file system holding `path`, from the longest matching mount point in /proc/mounts.
public func fileSystemName(_ path: String) -> String {
    guard let resolved = realpath(path, nil) else { return "unknown" }
    let full = String(cString: resolved)
    free(resolved)
    guard let f = fopen("/proc/mounts", "r") else { return "unknown" }
    defer { fclose(f) }
    var best = (length: -1, type: "unknown")
    var line: UnsafeMutablePointer<CChar>?
    var capacity = 0
    while getline(&line, &capacity, f) > 0 {
        let fields = String(cString: line!).split(separator: " ")
        guard fields.count >= 3 else { continue }
        let mount = fields[1].replacingOccurrences(of: "\\040", with: " ")
        let matches = mount == "/" || full == mount || full.hasPrefix(mount + "/")
        if matches && mount.count > best.length { best = (mount.count, String(fields[2])) }
    }
    free(line)
    return best.type
}

@discardableResult
public func makeFolder(_ path: String) throws -> String {
    if mkdir(path, 0o755) != 0 && errno != EEXIST {
        throw BenchError("mkdir \(path): \(String(cString: strerror(errno)))")
    }
    return path
}

/// A new folder `<prefix>-XXXXXX` in `parent`.
public func makeTemporaryFolder(in parent: String, prefix: String) throws -> String {
    var template = Array((parent + "/\(prefix)-XXXXXX").utf8CString)
    guard let p = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        throw BenchError("mkdtemp in \(parent): \(String(cString: strerror(errno)))")
    }
    return String(cString: p)
}

/// rm -r of a folder this program made (regular files and folders only).
public func removeTree(_ path: String) {
    if let dir = opendir(path) {
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            let child = path + "/" + name
            var st = stat()
            if lstat(child, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR { removeTree(child) } else { unlink(child) }
        }
        closedir(dir)
    }
    rmdir(path)
}
