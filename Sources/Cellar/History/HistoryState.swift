import CellarStorage

/// The history's own bookkeeping, under `history` in the meta tree (`StorageLayout.historyKey`):
/// its presence is the marker that the store records history (from then on, whatever the
/// options say). 25 bytes, little-endian:
///
/// ```
/// u8   format version: 1
/// u64  the last sequence number given (0: none yet)
/// u64  the last timestamp given (HybridTimestamp.rawValue; 0: none yet)
/// u64  the first sequence number kept: those before it were pruned (1: none were)
/// ```
///
/// Kept apart from the entries so that pruning them all keeps the sequence and the clock going.
struct HistoryState: Equatable {
    static let version: UInt8 = 1
    static let size = 25

    var lastSequence: UInt64 = 0
    var lastTimestamp = HybridTimestamp(rawValue: 0)
    var firstKept: UInt64 = 1

    /// The state stored in `meta`; nil when the store does not record history.
    static func read(_ meta: Tree, in txn: ReadTransaction) throws -> HistoryState? {
        try StorageLayout.historyKey.withUnsafeBytes { key in
            try txn.withValue(meta, key: key) { bytes in try bytes.map(decode) }
        }
    }

    /// The state stored in `meta`; nil when the store does not record history.
    static func read(_ meta: Tree, in txn: WriteTransaction) throws -> HistoryState? {
        try StorageLayout.historyKey.withUnsafeBytes { key in
            try txn.withValue(meta, key: key) { bytes in try bytes.map(decode) }
        }
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> HistoryState {
        guard bytes.count == size, bytes[0] == version else {
            throw CellarError.fileCorrupt("the history's state has \(bytes.count) bytes and format \(bytes.first.map(String.init) ?? "none"); this build reads \(size) bytes of format \(version)")
        }
        let state = HistoryState(lastSequence: bytes.loadLE(UInt64.self, at: 1),
                                 lastTimestamp: HybridTimestamp(rawValue: bytes.loadLE(UInt64.self, at: 9)),
                                 firstKept: bytes.loadLE(UInt64.self, at: 17))
        guard state.firstKept >= 1, state.firstKept <= state.lastSequence &+ 1 else {
            throw CellarError.fileCorrupt("the history's state keeps entries from \(state.firstKept), but its last entry is \(state.lastSequence)")
        }
        return state
    }

    var encoded: [UInt8] {
        var out: [UInt8] = [Self.version]
        HistoryEncoding.appendFixed(lastSequence, to: &out)
        HistoryEncoding.appendFixed(lastTimestamp.rawValue, to: &out)
        HistoryEncoding.appendFixed(firstKept, to: &out)
        return out
    }

    func write(_ meta: Tree, in txn: WriteTransaction) throws {
        try txn.put(meta, key: StorageLayout.historyKey, value: encoded)
    }
}
