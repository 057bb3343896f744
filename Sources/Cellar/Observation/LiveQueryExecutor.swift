import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The thread that runs a store's live-query passes (see `LiveQueryHub`), at a lower priority
/// than the app's threads (Linux: nice 10; Apple platforms: the utility quality of service), so
/// that the updates take the time the writer and the app leave.
///
/// Work is run in order of its due time (ties in order of scheduling). The thread starts with
/// the first work and ends after a second without any; it holds nothing of the store.
final class LiveQueryExecutor: @unchecked Sendable {
    // Thread safety: everything under `condition`.
    private let condition = NSCondition()
    /// Pending work, ascending by (due, sequence).
    private var tasks: [(due: UInt64, sequence: UInt64, work: @Sendable () -> Void)] = []
    private var sequence: UInt64 = 0
    private var running = false
    /// How long the thread waits for work before it ends (ns).
    static var idleTimeout: UInt64 { 1_000_000_000 }
    /// The nice value of the thread on Linux (higher is less urgent).
    static var niceness: Int32 { 10 }

    init() {}

    /// Runs `work` on the executor's thread once the monotonic clock reaches `due` (uptime ns).
    func schedule(at due: UInt64, _ work: @escaping @Sendable () -> Void) {
        condition.lock()
        defer { condition.unlock() }
        sequence += 1
        let entry = (due, sequence, work)
        let at = tasks.firstIndex { ($0.due, $0.sequence) > (due, sequence) } ?? tasks.count
        tasks.insert(entry, at: at)
        if running {
            condition.signal()
        } else {
            running = true
            let thread = Thread { [self] in run() }
            thread.name = "cellar.live-queries"
            thread.qualityOfService = .utility
            thread.start()
        }
    }

    /// The thread's loop: waits for the earliest task's due time, runs it, ends when idle.
    private func run() {
        #if os(Linux) && !CELLAR_PORTABLE_POSIX
        // On Linux the nice value belongs to the calling thread (`who` 0 is the caller).
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.niceness)
        #endif
        condition.lock()
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            guard let first = tasks.first else {
                // Nothing to do: wait a while for work, then end.
                if !condition.wait(until: Date(timeIntervalSinceNow: Double(Self.idleTimeout) / 1e9)) && tasks.isEmpty {
                    running = false
                    condition.unlock()
                    return
                }
                continue
            }
            if first.due > now {
                _ = condition.wait(until: Date(timeIntervalSinceNow: Double(first.due - now) / 1e9))
                continue
            }
            tasks.removeFirst()
            condition.unlock()
            first.work()
            condition.lock()
        }
    }
}
