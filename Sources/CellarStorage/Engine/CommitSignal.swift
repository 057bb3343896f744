#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// How the processes that write one store (`StorageOptions.sharedWriting`) wake each other's
/// observers: each commit is followed by a post, and a listening engine looks for new commits
/// when one arrives (`StorageEngine.watchOtherProcesses`). The post carries nothing: the listener
/// finds what changed in the log, as any reader does, so a post that is lost (a process killed
/// between its commit and its post) only delays the news until the next post, or the safety look
/// a listener makes every `safetyInterval` whatever it hears.
///
/// A post is one byte written to the store's `notify` file. How a listener hears it is one
/// mechanism per platform, behind this one type:
/// - Linux: `inotify` (`IN_MODIFY`);
/// - Apple platforms: a dispatch source on the file (`DISPATCH_SOURCE_TYPE_VNODE`, `.write`:
///   kqueue), which works across the processes of an App Group container;
/// - elsewhere, and in the portable build (`CELLAR_PORTABLE_POSIX`): the listener looks every
///   `pollInterval`.
final class CommitSignal: @unchecked Sendable {
    // Thread safety: `post` only uses immutable state; `listen` and `cancel` are called under the
    // engine's lifecycle (open, close), `sources` behind its mutex.
    /// The name of the file written to on Linux, in the store's directory.
    static let fileName = "notify"
    /// How often a listener looks for new commits whatever it heard: the bound on the delay of a
    /// commit whose post was lost.
    static let safetyInterval: DispatchTimeInterval = .seconds(1)
    /// How often a listener looks where no post exists (the portable path).
    static let pollInterval: DispatchTimeInterval = .milliseconds(20)

    private let path: String
    /// The `notify` file, open for the signal's life; -1 when it could not be opened (then posts
    /// go nowhere and listeners poll).
    private let descriptor: Int32
    private let sources = Locked<[any DispatchSourceProtocol]>([])

    /// The signal of the store in `directory`; `posting`: this process writes (the file is made
    /// when missing), else it only listens.
    init(directory: String, posting: Bool) {
        path = directory + "/" + Self.fileName
        descriptor = (try? Syscall.open(path, flags: posting ? O_RDWR | O_CREAT : O_RDONLY, mode: 0o644)) ?? -1
    }

    deinit {
        cancel()
        if descriptor >= 0 { Syscall.close(descriptor) }
    }

    /// After a commit: tells the listeners. Never fails (a post that does not go out only
    /// delays the news).
    func post() {
        guard descriptor >= 0 else { return }
        var byte: UInt8 = 1
        _ = pwrite(descriptor, &byte, 1, 0)
    }

    /// Calls `handler` on `queue` after posts (several posts may make one call) and every
    /// `safetyInterval`, or every `pollInterval` where there are no posts, until `cancel`.
    func listen(on queue: DispatchQueue, _ handler: @escaping @Sendable () -> Void) {
        var made: [any DispatchSourceProtocol] = []
        var interval = Self.safetyInterval
        #if os(Linux) && !CELLAR_PORTABLE_POSIX
        let watch = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        if watch >= 0, inotify_add_watch(watch, path, UInt32(IN_MODIFY)) >= 0 {
            let source = DispatchSource.makeReadSource(fileDescriptor: watch, queue: queue)
            source.setEventHandler {
                // The events only wake; what changed is found in the log.
                var events = [UInt8](repeating: 0, count: 4096)
                while events.withUnsafeMutableBytes({ read(watch, $0.baseAddress!, $0.count) }) > 0 {}
                handler()
            }
            source.setCancelHandler { Syscall.close(watch) }
            source.resume()
            made.append(source)
        } else {
            if watch >= 0 { Syscall.close(watch) }
            interval = Self.pollInterval
        }
        #elseif canImport(Darwin) && !CELLAR_PORTABLE_POSIX
        if descriptor >= 0 {
            let source = DispatchSource.makeFileSystemObjectSource(fileDescriptor: descriptor, eventMask: .write, queue: queue)
            source.setEventHandler(handler: handler)
            source.resume()
            made.append(source)
        } else {
            interval = Self.pollInterval
        }
        #else
        interval = Self.pollInterval
        #endif
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler(handler: handler)
        timer.resume()
        made.append(timer)
        sources.withLock { $0 += made }
    }

    /// Stops listening. Idempotent.
    func cancel() {
        for source in sources.withLock({ sources in defer { sources = [] }; return sources }) { source.cancel() }
    }
}
