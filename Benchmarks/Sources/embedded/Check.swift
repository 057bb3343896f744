import BenchSupport

/// Throws `check failed: <what> (<detail>)` unless `ok`.
func check(_ what: String, _ ok: Bool, _ detail: @autoclosure () -> String = "") throws {
    guard ok else { throw BenchError("check failed: \(what)" + { let d = detail(); return d.isEmpty ? "" : " (\(d))" }()) }
}
