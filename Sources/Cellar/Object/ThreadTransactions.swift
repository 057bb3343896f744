#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The transactions open on the current thread, innermost last, so that a transaction started
/// inside another on the same thread (and a `Box` call inside one) joins it. Transactions are
/// bound to their thread, as in ObjectBox: a closure that hops threads is outside them.
@usableFromInline
final class ThreadTransactions {
    private var open: [TransactionContext] = []

    /// The transaction of `store` open on this thread, if any.
    @usableFromInline
    static func current(for store: Store) -> TransactionContext? {
        guard let raw = pthread_getspecific(threadKey) else { return nil }
        let list = Unmanaged<ThreadTransactions>.fromOpaque(raw).takeUnretainedValue()
        for context in list.open.reversed() where context.store === store { return context }
        return nil
    }

    static func push(_ context: TransactionContext) {
        let list: ThreadTransactions
        if let raw = pthread_getspecific(threadKey) {
            list = Unmanaged<ThreadTransactions>.fromOpaque(raw).takeUnretainedValue()
        } else {
            list = ThreadTransactions()
            // Released by the key's destructor when the thread ends.
            pthread_setspecific(threadKey, Unmanaged.passRetained(list).toOpaque())
        }
        list.open.append(context)
    }

    static func pop(_ context: TransactionContext) {
        guard let raw = pthread_getspecific(threadKey) else { return }
        let list = Unmanaged<ThreadTransactions>.fromOpaque(raw).takeUnretainedValue()
        if let index = list.open.lastIndex(where: { $0 === context }) { list.open.remove(at: index) }
    }
}

#if canImport(Darwin)
private let threadKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key) { Unmanaged<ThreadTransactions>.fromOpaque($0).release() }
    return key
}()
#else
private let threadKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key) { raw in
        if let raw { Unmanaged<ThreadTransactions>.fromOpaque(raw).release() }
    }
    return key
}()
#endif
