import Foundation

/// What the live loop (``SyncClient/run()``) sleeps on between its turns: a local commit or the
/// server's announcement signals it, and the loop takes its next turn at once instead of at the
/// end of a poll interval. A signal that comes while the loop is busy is kept for its next wait.
final class Wakeup: @unchecked Sendable {
    private let lock = NSLock()
    /// A signal no wait has taken yet.
    private var signalled = false
    /// The waiting turn and the ticket of its wait.
    private var waiter: (ticket: Int, continuation: CheckedContinuation<Void, Never>)?
    private var tickets = 0
    /// The newest wait whose time ran out, or that was cancelled, before it started waiting.
    private var ended = 0

    /// Wakes the waiting turn, or the next one to wait.
    func signal() {
        lock.lock()
        if let waiter {
            self.waiter = nil
            lock.unlock()
            waiter.continuation.resume()
        } else {
            signalled = true
            lock.unlock()
        }
    }

    /// Returns after a signal (one given since the last wait counts), after `limit`, or once the
    /// task is cancelled, whichever comes first.
    func wait(upTo limit: Duration) async {
        let ticket = lock.withLock {
            tickets += 1
            return tickets
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: limit)
            self?.end(ticket)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                lock.lock()
                if signalled || ended >= ticket {
                    signalled = false
                    lock.unlock()
                    continuation.resume()
                } else {
                    waiter = (ticket, continuation)
                    lock.unlock()
                }
            }
        } onCancel: {
            self.end(ticket)
        }
        timer.cancel()
    }

    /// Ends the wait of `ticket`: resumes it when it is waiting, or lets it return at once when
    /// it has not started waiting yet. A later wait is left alone.
    private func end(_ ticket: Int) {
        lock.lock()
        ended = max(ended, ticket)
        if let waiter, waiter.ticket == ticket {
            self.waiter = nil
            lock.unlock()
            waiter.continuation.resume()
        } else {
            lock.unlock()
        }
    }
}
