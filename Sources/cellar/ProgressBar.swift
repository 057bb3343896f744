#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// A progress line on standard error for commands that can take a while:
/// `compacting  45% [#########           ] 1,234,567 of 2,740,000  310,402/s  5 s left`.
///
/// Drawn only when standard error is a terminal, or when `CELLAR_PROGRESS=always` (for logs and
/// tests), at most ten times a second; `finish` clears a terminal's line. Called from one thread
/// at a time (the command's, or the compaction's it waits for).
final class ProgressBar: @unchecked Sendable {
    private let label: String
    private let enabled: Bool
    private let terminal: Bool
    private let started = DispatchTime.now().uptimeNanoseconds
    private var lastDrawn: UInt64 = 0
    private var drawn = false

    init(_ label: String) {
        self.label = label
        terminal = isatty(STDERR_FILENO) != 0
        enabled = terminal || getenv("CELLAR_PROGRESS").map { String(cString: $0) } == "always"
    }

    /// `done` of `total` units are done.
    func update(_ done: Int, of total: Int) {
        guard enabled else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        guard now - lastDrawn >= 100_000_000 || done >= total else { return }
        lastDrawn = now
        let seconds = Double(now - started) / 1e9
        let share = total > 0 ? min(Double(done) / Double(total), 1) : 1
        let rate = seconds > 0 ? Double(done) / seconds : 0
        let left = rate > 0 ? Double(max(total - done, 0)) / rate : 0
        let width = 20
        let filled = Int(share * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        let line = "\(label) \(Self.pad(String(Int(share * 100)), 3))% [\(bar)] \(Self.grouped(done)) of \(Self.grouped(total))"
            + "  \(Self.grouped(Int(rate)))/s  \(Self.duration(left)) left"
        fputs(terminal ? "\r\(line)\u{1B}[K" : "\(line)\n", stderr)
        drawn = true
    }

    /// Ends the line (cleared on a terminal).
    func finish() {
        guard enabled, drawn else { return }
        fputs(terminal ? "\r\u{1B}[K" : "", stderr)
        drawn = false
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }

    /// 1234567 as "1,234,567".
    static func grouped(_ value: Int) -> String {
        let digits = String(value)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 && digit != "-" { out.append(",") }
            out.append(digit)
        }
        return out
    }

    private static func duration(_ seconds: Double) -> String {
        seconds < 90 ? "\(Int(seconds.rounded())) s" : "\(Int((seconds / 60).rounded())) min"
    }
}
