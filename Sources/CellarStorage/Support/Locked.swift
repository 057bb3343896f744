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

/// A reader-writer lock guarding a value (`pthread_rwlock`): any number of readers at once, or one
/// writer. For state that many threads read and one changes now and then (an HNSW graph searched
/// by readers and changed by commits). Like ``Locked``, the lock lives on the heap.
package final class ReadWriteLocked<Value>: @unchecked Sendable {
    private let rwlock: UnsafeMutablePointer<pthread_rwlock_t>
    private var value: Value

    package init(_ value: Value) {
        self.value = value
        rwlock = .allocate(capacity: 1)
        pthread_rwlock_init(rwlock, nil)
    }

    deinit {
        pthread_rwlock_destroy(rwlock)
        rwlock.deallocate()
    }

    /// Runs `body` with the value, beside other readers.
    package func reading<R>(_ body: (Value) throws -> R) rethrows -> R {
        pthread_rwlock_rdlock(rwlock)
        defer { pthread_rwlock_unlock(rwlock) }
        return try body(value)
    }

    /// Runs `body` with the value, alone.
    package func writing<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_rwlock_wrlock(rwlock)
        defer { pthread_rwlock_unlock(rwlock) }
        return try body(&value)
    }
}
