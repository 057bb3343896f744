#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value behind a mutex (pthread, so that the support target needs no Foundation), shared by
/// the threads of a test: failure messages, a stop flag, a file opened in a `@Sendable` closure.
public final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, under the lock.
    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// A copy of the value.
    public var current: Value { withLock { $0 } }
}

extension Locked where Value == Void {
    /// A plain mutex, guarding state kept elsewhere.
    public convenience init() { self.init(()) }

    /// Runs `body` under the lock.
    public func with<R>(_ body: () throws -> R) rethrows -> R {
        try withLock { _ in try body() }
    }
}

extension Locked where Value == [String] {
    /// Appends a message (a failure seen on some thread).
    public func add(_ message: String) { withLock { $0.append(message) } }
}
