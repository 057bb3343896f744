import CellarStorage
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A data file that misbehaves on purpose, for the fault-injection tests.
///
/// It passes everything to a real `PosixFile` and counts the calls. It can fail the Nth write or
/// the Nth sync with an errno, cut the Nth write short, interrupt calls with `EINTR`, and simulate
/// a crash at the Nth sync: it keeps, in memory, the file as of the last successful sync plus the
/// writes since, and from those builds the bytes a disk could hold after power loss at that point
/// (every unsynced write kept, dropped, or garbled).
package final class FaultInjectingFile: StorageFile, @unchecked Sendable {
    // Called under the engine's writer lock, and by a group commit's sync leader without it; all
    // state is behind `lock`.
    package enum Fault: Sendable, Equatable {
        case none
        /// The Nth `writeOnce` fails with `errno`, writing nothing.
        case failWrite(number: Int, errno: Int32)
        /// The Nth `writeOnce` writes only half of what it was asked, then the next write call fails with `errno`.
        case shortWriteThenFail(number: Int, errno: Int32)
        /// Every write is cut in half (the caller must loop) and every other call is interrupted first.
        case shortAndInterrupted
        /// The Nth `syncOnce` fails with `errno`.
        case failSync(number: Int, errno: Int32)
        /// The Nth `syncOnce` is the moment of a crash: it records a crash image and fails with EIO,
        /// and from then on every call fails (the process is "dead").
        case crashAtSync(number: Int)
    }

    /// What a crash does to writes that were not synced.
    package enum CrashMode: Sendable, CaseIterable {
        case keepAll, dropAll, garble, keepRandomSubset
    }

    /// Thrown by every call after a simulated crash.
    package struct Crashed: Error {}

    package let path: String
    private let real: PosixFile
    private let fault: Fault
    /// Guards the state below. Not a `Locked<Void>`: ThreadSanitizer reports the exclusivity
    /// accesses to a zero-sized value as races when several threads call in at once (a sync
    /// leader beside the writer).
    private let lock = Locked<Int>(0)
    private var writes = 0
    private var syncs = 0
    private var calls = 0
    private var failNextWrite: Int32?
    private var dead = false
    /// The file as of the last successful sync.
    private var durable: [UInt8] = []
    /// Writes since the last successful sync, in order.
    private var unsynced: [(offset: UInt64, bytes: [UInt8])] = []
    private var unsyncedTruncate: UInt64?
    /// The bytes a crash left, once `crashAtSync` has fired.
    package private(set) var crashImage: [UInt8]?
    private let crashMode: CrashMode
    private var rng: SplitMix64
    /// How long each sync takes at least (a slow disk), in microseconds.
    private let syncDelay: UInt32
    /// Called as each sync starts, outside the file's lock: a test holds a sync there until what
    /// it waits for has happened.
    private let beforeSync: (@Sendable () -> Void)?
    /// Every write made, in order, when `recordsWrites` (for tests that look at what was ever
    /// written, not only at what the file holds in the end).
    package var recordsWrites = false
    private var writeHistory: [(offset: UInt64, bytes: [UInt8])] = []
    package var everyWrite: [(offset: UInt64, bytes: [UInt8])] { lock.withLock { _ in writeHistory } }

    package init(path: String, create: Bool, readOnly: Bool, fault: Fault, crashMode: CrashMode = .dropAll, seed: UInt64 = 1,
                syncDelayMicroseconds: UInt32 = 0, beforeSync: (@Sendable () -> Void)? = nil) throws {
        self.path = path
        self.beforeSync = beforeSync
        self.real = try PosixFile(path: path, create: create, readOnly: readOnly)
        self.fault = fault
        self.crashMode = crashMode
        self.syncDelay = syncDelayMicroseconds
        self.rng = SplitMix64(seed: seed)
        // What is on disk when we start counts as durable.
        let size = try real.size()
        durable = [UInt8](repeating: 0, count: Int(size))
        if size > 0 { _ = try durable.withUnsafeMutableBytes { try real.read(into: $0, at: 0) } }
    }

    /// How many writes and syncs were made.
    package var counts: (writes: Int, syncs: Int) { lock.withLock { _ in (writes, syncs) } }

    package func size() throws -> UInt64 {
        try lock.withLock { _ in try checkAlive() }
        return try real.size()
    }

    package func readOnce(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        try lock.withLock { _ in try checkAlive() }
        return try real.readOnce(into: buffer, at: offset)
    }

    package func writeOnce(_ buffer: UnsafeRawBufferPointer, at offset: UInt64) throws -> Int {
        let count: Int = try lock.withLock { _ in
            try checkAlive()
            calls += 1
            if let code = failNextWrite {
                failNextWrite = nil
                throw StorageError.io(operation: "pwrite", errno: code, path: path)
            }
            writes += 1
            switch fault {
            case .failWrite(let number, let code) where number == writes:
                throw StorageError.io(operation: "pwrite", errno: code, path: path)
            case .shortWriteThenFail(let number, let code) where number == writes:
                failNextWrite = code
                return max(buffer.count / 2, 1)
            case .shortAndInterrupted:
                if calls % 2 == 0 { throw StorageError.io(operation: "pwrite", errno: EINTR, path: path) }
                return max(buffer.count / 2, 1)
            default:
                return buffer.count
            }
        }
        let part = UnsafeRawBufferPointer(rebasing: buffer[0..<min(count, buffer.count)])
        let n = try real.writeOnce(part, at: offset)
        lock.withLock { _ in
            unsynced.append((offset, Array(part[0..<n])))
            if recordsWrites { writeHistory.append((offset, Array(part[0..<n]))) }
        }
        return n
    }

    package func syncOnce() throws {
        beforeSync?()
        // Only the writes made before the sync starts are durable when it returns.
        let covered: Int = try lock.withLock { _ in
            try checkAlive()
            calls += 1
            syncs += 1
            switch fault {
            case .failSync(let number, let code) where number == syncs:
                throw StorageError.io(operation: "fdatasync", errno: code, path: path)
            case .crashAtSync(let number) where number == syncs:
                crashImage = makeCrashImage()
                dead = true
                throw Crashed()
            case .shortAndInterrupted where calls % 2 == 0:
                throw StorageError.io(operation: "fdatasync", errno: EINTR, path: path)
            default:
                break
            }
            return unsynced.count
        }
        if syncDelay > 0 { usleep(syncDelay) }
        try real.syncOnce()
        lock.withLock { _ in
            durable = apply(Array(unsynced.prefix(covered)), truncate: unsyncedTruncate, to: durable)
            unsynced.removeFirst(covered)
            unsyncedTruncate = nil
        }
    }

    package func truncate(to length: UInt64) throws {
        try lock.withLock { _ in
            try checkAlive()
            unsyncedTruncate = length
            // Later writes below the cut still count; earlier pending writes past it are cut too.
            unsynced = unsynced.compactMap { write in
                guard write.offset < length else { return nil }
                return (write.offset, Array(write.bytes.prefix(Int(length - write.offset))))
            }
        }
        try real.truncate(to: length)
    }

    package func map(length: Int) throws -> MappedRegion {
        try lock.withLock { _ in try checkAlive() }
        return try real.map(length: length)
    }

    package func close() { real.close() }

    private func checkAlive() throws {
        if dead { throw Crashed() }
    }

    private func makeCrashImage() -> [UInt8] {
        switch crashMode {
        case .keepAll:
            return apply(unsynced, truncate: unsyncedTruncate, to: durable)
        case .dropAll:
            return durable
        case .garble:
            // Each unsynced write lands as random bytes, or half of it does, or nothing.
            let garbled = unsynced.compactMap { write -> (offset: UInt64, bytes: [UInt8])? in
                switch rng.next() % 3 {
                case 0: return nil
                case 1: return (write.offset, write.bytes.map { _ in UInt8(truncatingIfNeeded: rng.next()) })
                default: return (write.offset, Array(write.bytes.prefix(write.bytes.count / 2)))
                }
            }
            return apply(garbled, truncate: nil, to: durable)
        case .keepRandomSubset:
            // Out-of-order write-back: any subset of the 4 KiB pages written since the last sync.
            var image = apply(unsynced, truncate: unsyncedTruncate, to: durable)
            let page = 4096
            var p = 0
            while p < image.count {
                if rng.next() % 2 == 0 {
                    for i in p..<min(p + page, image.count) { image[i] = i < durable.count ? durable[i] : 0 }
                }
                p += page
            }
            return image
        }
    }

    private func apply(_ writes: [(offset: UInt64, bytes: [UInt8])], truncate: UInt64?, to base: [UInt8]) -> [UInt8] {
        var image = base
        if let truncate, Int(truncate) < image.count { image.removeLast(image.count - Int(truncate)) }
        for write in writes {
            let end = Int(write.offset) + write.bytes.count
            if image.count < end { image += [UInt8](repeating: 0, count: end - image.count) }
            image.replaceSubrange(Int(write.offset)..<end, with: write.bytes)
        }
        return image
    }
}
