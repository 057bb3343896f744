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
    // The list lives behind a pointer: Box calls look it up on every call, and a class's stored
    // `var`s would cost a runtime exclusivity check each time. The contexts are not retained
    // here: each is owned by the `inWriteContext` / `inReadContext` call that pushed it and
    // pops it before it returns.
    private struct List {
        var items: UnsafeMutablePointer<Unmanaged<TransactionContext>>
        var count = 0
        var capacity: Int
    }

    private let list: UnsafeMutablePointer<List>

    private init() {
        list = .allocate(capacity: 1)
        list.initialize(to: List(items: .allocate(capacity: 4), capacity: 4))
    }

    deinit {
        list.pointee.items.deallocate()
        list.deinitialize(count: 1)
        list.deallocate()
    }

    /// The transaction of `store` open on this thread, if any (the innermost).
    @usableFromInline
    static func current(for store: Store) -> TransactionContext? {
        guard let raw = pthread_getspecific(threadKey) else { return nil }
        let list = Unmanaged<ThreadTransactions>.fromOpaque(raw).takeUnretainedValue().list
        var i = list.pointee.count
        while i > 0 {
            i -= 1
            let context = list.pointee.items[i]
            if context._withUnsafeGuaranteedRef({ $0.store === store }) { return context.takeUnretainedValue() }
        }
        return nil
    }

    static func push(_ context: TransactionContext) {
        let threadList: ThreadTransactions
        if let raw = pthread_getspecific(threadKey) {
            threadList = Unmanaged<ThreadTransactions>.fromOpaque(raw).takeUnretainedValue()
        } else {
            threadList = ThreadTransactions()
            // Released by the key's destructor when the thread ends.
            pthread_setspecific(threadKey, Unmanaged.passRetained(threadList).toOpaque())
        }
        let list = threadList.list
        if list.pointee.count == list.pointee.capacity {
            let bigger = UnsafeMutablePointer<Unmanaged<TransactionContext>>.allocate(capacity: list.pointee.capacity * 2)
            bigger.moveInitialize(from: list.pointee.items, count: list.pointee.count)
            list.pointee.items.deallocate()
            list.pointee.items = bigger
            list.pointee.capacity *= 2
        }
        (list.pointee.items + list.pointee.count).initialize(to: .passUnretained(context))
        list.pointee.count += 1
    }

    static func pop(_ context: TransactionContext) {
        guard let raw = pthread_getspecific(threadKey) else { return }
        let list = Unmanaged<ThreadTransactions>.fromOpaque(raw).takeUnretainedValue().list
        // Normally the last one; search in case of an unusual order.
        var i = list.pointee.count
        while i > 0 {
            i -= 1
            guard list.pointee.items[i].toOpaque() == Unmanaged.passUnretained(context).toOpaque() else { continue }
            for j in i..<(list.pointee.count - 1) { list.pointee.items[j] = list.pointee.items[j + 1] }
            list.pointee.count -= 1
            return
        }
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
