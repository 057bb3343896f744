import Foundation
import PostgresNIO

/// Server work that must answer within a time limit.
///
/// A connection whose server died, or whose network went silent, may leave a query waiting for
/// an answer that never comes. Past the limit the work is abandoned: its task is cancelled, its
/// connection closed (without waiting), and ``run(_:limit:closing:_:)`` throws a
/// ``SyncError/Code/connection`` error at once, so that the caller connects again. Only server
/// reads and writes go in here: the store is written after the work returns, never by work that
/// may be abandoned.
enum Deadline {
    static func run<Value: Sendable>(_ what: String, limit: Duration, closing connection: PostgresConnection?,
                                     _ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let race = Race<Value>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                race.start(continuation,
                           work: Task {
                               do { race.finish(.success(try await work())) } catch { race.finish(.failure(error)) }
                           },
                           timer: Task {
                               do { try await Task.sleep(for: limit) } catch { return }  // finished first
                               let expired = SyncError(.connection, "no answer from the server within \(limit) while \(what)")
                               if race.finish(.failure(expired)) { try? await connection?.close() }
                           })
            }
        } onCancel: {
            race.cancel()
        }
    }

    /// The first of the work and its timer to finish resumes the caller; the other is cancelled.
    private final class Race<Value: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var continuation: CheckedContinuation<Value, any Error>?
        private var early: Result<Value, any Error>?
        private var work: Task<Void, Never>?
        private var timer: Task<Void, Never>?

        func start(_ continuation: CheckedContinuation<Value, any Error>, work: Task<Void, Never>, timer: Task<Void, Never>) {
            let done: Result<Value, any Error>? = lock.withLock {
                self.work = work
                self.timer = timer
                if let early { return early }
                self.continuation = continuation
                return nil
            }
            if let done {
                work.cancel()
                timer.cancel()
                continuation.resume(with: done)
            }
        }

        /// Resumes the caller with `result` unless something finished first; true when this did.
        @discardableResult
        func finish(_ result: Result<Value, any Error>) -> Bool {
            let (continuation, tasks): (CheckedContinuation<Value, any Error>?, [Task<Void, Never>]) = lock.withLock {
                if let continuation = self.continuation {
                    self.continuation = nil
                    return (continuation, [work, timer].compactMap { $0 })
                }
                if early == nil, work == nil { early = result; return (nil, []) }  // before start(): kept for it
                return (nil, [])
            }
            guard let continuation else { return false }
            for task in tasks { task.cancel() }
            continuation.resume(with: result)
            return true
        }

        func cancel() {
            finish(.failure(CancellationError()))
        }
    }
}
