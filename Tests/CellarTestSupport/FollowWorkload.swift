#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Model {
    /// A 64-bit digest of the content (FNV-1a over the trees, keys and values in order, each
    /// length-prefixed): what the processes of the multi-process test compare states by.
    public var digest: UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ bytes: some Sequence<UInt8>) {
            for byte in bytes {
                hash ^= UInt64(byte)
                hash &*= 0x100_0000_01b3
            }
        }
        func mixLength(_ count: Int) { withUnsafeBytes(of: UInt64(count).littleEndian) { mix($0) } }
        for name in trees.keys.sorted() {
            mixLength(name.utf8.count)
            mix(name.utf8)
            let entries = trees[name]!
            mixLength(entries.count)
            for key in entries.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                mixLength(key.count)
                mix(key)
                mixLength(entries[key]!.count)
                mix(entries[key]!)
            }
        }
        return hash
    }
}

/// The states a writer process announced, read from the file it appends `expect <id> <digest>`
/// lines to (each line with one `write`, before the commit it describes; `compaction <id>` before
/// a compaction): a reader looks a
/// snapshot up here. Several digests may be announced for one id (a writer killed before its
/// commit, then restarted, announces that id again for another content).
public struct PublishedStates {
    private let path: String
    private var offset = 0
    private var pending: [UInt8] = []
    public private(set) var states: [UInt64: Set<UInt64>] = [:]
    /// The ids a compaction was announced from (`compaction <id>` lines).
    public private(set) var compactedFrom: Set<UInt64> = []

    public init(path: String) { self.path = path }

    /// Reads what was appended since the last call.
    public mutating func update() {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, $0.count, off_t(offset)) }
            if n <= 0 { break }
            offset += n
            pending += chunk[0..<n]
        }
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            let parts = String(decoding: pending[..<newline], as: UTF8.self).split(separator: " ")
            pending.removeSubrange(...newline)
            if parts.count == 3, parts[0] == "expect", let id = UInt64(parts[1]), let digest = UInt64(parts[2]) {
                states[id, default: []].insert(digest)
            } else if parts.count == 2, parts[0] == "compaction", let id = UInt64(parts[1]) {
                compactedFrom.insert(id)
            }
        }
    }

    /// Whether the state (`id`, `digest`) was announced; reads the file again when not yet. A
    /// compaction changes no content but may raise the id (its copy's commits take ids of their
    /// own): a state is also accepted as the content of the highest announced id below `id` when
    /// a compaction was announced from that id.
    public mutating func contains(id: UInt64, digest: UInt64) -> Bool {
        if states[id]?.contains(digest) == true { return true }
        update()
        if states[id]?.contains(digest) == true { return true }
        guard let below = states.keys.filter({ $0 < id }).max(), compactedFrom.contains(below) else { return false }
        return states[below]?.contains(digest) == true
    }

    /// Appends `expect <id> <digest>` (or, with `compaction`, `compaction <id>`: a compaction
    /// starts from the state of `id`) to the file open as `fd`, with one write.
    public static func announce(id: UInt64, digest: UInt64, compaction: Bool = false, to fd: Int32) {
        let line = Array((compaction ? "compaction \(id)\n" : "expect \(id) \(digest)\n").utf8)
        let written = line.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
        precondition(written == line.count, "announcing a state failed")
    }
}
