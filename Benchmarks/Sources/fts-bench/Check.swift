import BenchSupport
import Foundation

/// Throws `check failed: <what> (<detail>)` unless `ok`.
func check(_ what: String, _ ok: Bool, _ detail: @autoclosure () -> String = "") throws {
    guard ok else { throw BenchError("check failed: \(what)" + { let d = detail(); return d.isEmpty ? "" : " (\(d))" }()) }
}

/// st_size of `path`; 0 if it does not exist.
func fileBytes(_ path: String) -> Int {
    var st = stat()
    return stat(path, &st) == 0 ? Int(st.st_size) : 0
}
