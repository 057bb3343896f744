#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Threads of their own (not a dispatch pool, whose width on Linux is the number of cores), for
/// tests and child processes that need more threads running at once than there are cores.
public enum Threads {
    private final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Starts a detached thread running `body`.
    public static func start(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        let result = pthread_create(&thread, nil, { argument in
            #if canImport(Darwin)
            let box = Unmanaged<Box>.fromOpaque(argument).takeRetainedValue()
            #else
            let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
            #endif
            box.body()
            return nil
        }, box)
        precondition(result == 0, "pthread_create failed: \(result)")
        #if canImport(Darwin)
        pthread_detach(thread!)
        #else
        pthread_detach(thread)
        #endif
    }
}
