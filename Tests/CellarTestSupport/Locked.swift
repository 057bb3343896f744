import CellarStorage

// The tests share state between threads through CellarStorage's `Locked` (failure messages, a
// stop flag, a file opened in a `@Sendable` closure); these are their conveniences on it.

extension Locked {
    /// A copy of the value.
    package var current: Value { withLock { $0 } }
}

extension Locked where Value == Void {
    /// A plain mutex, guarding state kept elsewhere.
    package convenience init() { self.init(()) }

    /// Runs `body` under the lock.
    package func with<R>(_ body: () throws -> R) rethrows -> R {
        try withLock { _ in try body() }
    }
}

extension Locked where Value == [String] {
    /// Appends a message (a failure seen on some thread).
    package func add(_ message: String) { withLock { $0.append(message) } }
}
