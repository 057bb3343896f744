#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutual-exclusion lock guarding a value (`pthread_mutex`, on every platform). For short
/// critical sections off the hot paths.
///
/// Cellar's own stand-in for `Synchronization.Mutex`, which needs macOS 15 / iOS 18: this one runs
/// on every OS version the package supports. The mutex lives on the heap, never in a stored
/// property, so that it never moves while locked. `package`, so that Cellar and the tests use it
/// too.
package final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, under the lock.
    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
