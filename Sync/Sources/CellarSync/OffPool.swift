import Dispatch

/// Synchronous work of the sync engine that takes a while (the store's gathering and applying of
/// a batch, reading a batch's rows into changes), run on a Dispatch queue instead of a thread of
/// Swift's cooperative pool. That pool has one thread per core: on two cores, the store applying
/// one batch and this process reading the next would hold both threads, and the task that sends
/// the server its next statement would wait for one of them, leaving the server idle.
enum OffPool {
    private static let queue = DispatchQueue(label: "cellar.sync.work", attributes: .concurrent)

    static func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }
}
